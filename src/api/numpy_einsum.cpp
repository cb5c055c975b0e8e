// tessera::numpy products (numpy_manip.h): tensordot, outer, inner, vdot, kron and einsum.
//
// einsum: the subscripts are parsed into integer labels (letters; ellipsis dims get labels of
// their own, aligned from the right as NumPy broadcasts them). Each operand is first reduced on
// its own: repeated labels become diagonals, labels used by no other operand nor the output are
// summed, and size-1 dims broadcast against a larger size elsewhere are dropped. Then operands
// are contracted pairwise, greedily picking the pair whose result is smallest (opt_einsum's
// "greedy" idea), each pair one dot_general whose batch dims are the shared labels still needed
// later and whose contracting dims are the shared labels needed nowhere else. A final transpose
// puts the labels in output order.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

using namespace detail;

// ---------------------------------------------------------------- tensordot and friends

Array tensordot(const Array& a, const Array& b, const std::vector<int64_t>& a_axes,
                const std::vector<int64_t>& b_axes) {
  const char* op = "tensordot";
  check_defined(op, a);
  check_defined(op, b);
  if (a_axes.size() != b_axes.size())
    throw TypeError(op_message(op, "tensordot requires axes lists of the same length, got " +
                                       tuple_str(a_axes) + " and " + tuple_str(b_axes)));
  std::vector<int64_t> ca, cb;
  for (size_t i = 0; i < a_axes.size(); ++i) {
    ca.push_back(normalize_axis(op, a_axes[i], a.ndim()));
    cb.push_back(normalize_axis(op, b_axes[i], b.ndim()));
    if (a.shape()[ca.back()] != b.shape()[cb.back()])
      throw TypeError(op_message(op, "shape mismatch: axis " + std::to_string(a_axes[i]) + " of " +
                                         shape_str(a.shape()) + " and axis " +
                                         std::to_string(b_axes[i]) + " of " + shape_str(b.shape()) +
                                         " differ"));
  }
  std::vector<Array> p = promote(op, {a, b});
  return lax::dot_general(p[0], p[1], lax::DotDimensionNumbers{ca, cb, {}, {}});
}

Array tensordot(const Array& a, const Array& b, int64_t axes) {
  const char* op = "tensordot";
  check_defined(op, a);
  check_defined(op, b);
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    throw TypeError(op_message(op, "Number of tensordot axes (axes=" + std::to_string(axes) +
                                       ") exceeds input ranks (" + shape_str(a.shape()) + " and " +
                                       shape_str(b.shape()) + ")"));
  std::vector<int64_t> ca, cb;
  for (int64_t i = 0; i < axes; ++i) {
    ca.push_back(a.ndim() - axes + i);
    cb.push_back(i);
  }
  return tensordot(a, b, ca, cb);
}

Array outer(const Array& a, const Array& b) {
  check_defined("outer", a);
  check_defined("outer", b);
  return multiply(reshape(a, {a.size(), 1}), ravel(b));
}

Array inner(const Array& a, const Array& b) {
  check_defined("inner", a);
  check_defined("inner", b);
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  return tensordot(a, b, std::vector<int64_t>{-1}, std::vector<int64_t>{-1});
}

Array vdot(const Array& a, const Array& b) {
  check_defined("vdot", a);
  check_defined("vdot", b);
  if (a.size() != b.size())
    throw TypeError(op_message("vdot", "needs arrays of the same size, got shapes " +
                                           shape_str(a.shape()) + " and " + shape_str(b.shape())));
  return tensordot(ravel(a), ravel(b), 1);
}

Array kron(const Array& a, const Array& b) {
  check_defined("kron", a);
  check_defined("kron", b);
  const int64_t n = std::max(a.ndim(), b.ndim());
  Shape as(static_cast<size_t>(n - a.ndim()), 1), bs(static_cast<size_t>(n - b.ndim()), 1);
  as.insert(as.end(), a.shape().begin(), a.shape().end());
  bs.insert(bs.end(), b.shape().begin(), b.shape().end());
  // a on the even axes, b on the odd ones, then merge each pair.
  Shape ae, be, out;
  for (int64_t i = 0; i < n; ++i) {
    ae.push_back(as[i]);
    ae.push_back(1);
    be.push_back(1);
    be.push_back(bs[i]);
    out.push_back(as[i] * bs[i]);
  }
  return reshape(multiply(reshape(a, ae), reshape(b, be)), out);
}

// ---------------------------------------------------------------- einsum

namespace {

constexpr const char* kOp = "einsum";

struct Term {
  Array x;
  std::vector<int> labels;  // one per axis
};

[[noreturn]] void bad(const std::string& why) { throw ValueError(op_message(kOp, why)); }

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  bad(std::string("invalid subscript '") + c + "'; subscripts are letters a-z, A-Z and '...'");
}

// Ellipsis dim k counted from the right (k = 0 is the last) gets label 100 + k.
constexpr int kEllipsisBase = 100;

// Parses one term ("ab...c") for an operand of rank `ndim` (-1 for the output, whose ellipsis
// width is `ell_width`). Returns labels and whether it had an ellipsis.
std::vector<int> parse_term(const std::string& t, int64_t ndim, int64_t ell_width, bool* had_ell,
                            int64_t* width) {
  std::vector<int> before, after;
  bool ell = false;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, 3, "...") == 0) {
      if (ell) bad("more than one ellipsis in the term '" + t + "'");
      ell = true;
      i += 3;
    } else if (t[i] == '.') {
      bad("invalid ellipsis in the term '" + t + "' (write three dots)");
    } else {
      (ell ? after : before).push_back(letter_label(t[i]));
      ++i;
    }
  }
  const int64_t named = static_cast<int64_t>(before.size() + after.size());
  int64_t w = 0;
  if (ndim >= 0) {
    if (ell ? named > ndim : named != ndim)
      bad("the term '" + t + "' has " + std::to_string(named) +
          " subscripts but its operand has rank " + std::to_string(ndim));
    w = ell ? ndim - named : 0;
  } else {
    w = ell ? ell_width : 0;
  }
  std::vector<int> out = before;
  for (int64_t k = w - 1; k >= 0; --k) out.push_back(kEllipsisBase + static_cast<int>(k));
  out.insert(out.end(), after.begin(), after.end());
  if (had_ell) *had_ell = ell;
  if (width) *width = w;
  return out;
}

// Sums the axes whose labels are not in `keep`; takes diagonals of repeated labels.
Term reduce_alone(Term t, const std::multiset<int>& keep) {
  // Diagonals of repeated labels.
  for (;;) {
    bool found = false;
    for (size_t i = 0; i < t.labels.size() && !found; ++i)
      for (size_t j = i + 1; j < t.labels.size() && !found; ++j)
        if (t.labels[i] == t.labels[j]) {
          if (t.x.shape()[i] != t.x.shape()[j])
            bad("the repeated subscript of one operand labels axes of sizes " +
                std::to_string(t.x.shape()[i]) + " and " + std::to_string(t.x.shape()[j]));
          const int l = t.labels[i];
          t.x = diagonal(t.x, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
          std::vector<int> nl;
          for (size_t k = 0; k < t.labels.size(); ++k)
            if (k != i && k != j) nl.push_back(t.labels[k]);
          nl.push_back(l);
          t.labels = nl;
          found = true;
        }
    if (!found) break;
  }
  std::vector<int64_t> axes;
  std::vector<int> nl;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (keep.count(t.labels[i]) == 0)
      axes.push_back(static_cast<int64_t>(i));
    else
      nl.push_back(t.labels[i]);
  }
  if (!axes.empty()) {
    t.x = lax::reduce_sum(t.x, axes);
    t.labels = nl;
  }
  return t;
}

}  // namespace

Array einsum(const std::string& subscripts_in, const std::vector<Array>& operands_in,
             std::optional<DType> preferred_element_type) {
  std::string s;
  for (char ch : subscripts_in)
    if (ch != ' ') s.push_back(ch);
  const size_t arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  std::vector<std::string> terms;
  {
    size_t start = 0;
    for (;;) {
      const size_t comma = lhs.find(',', start);
      terms.push_back(
          lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (terms.size() != operands_in.size())
    bad("the subscripts '" + subscripts_in + "' name " + std::to_string(terms.size()) +
        " operands but " + std::to_string(operands_in.size()) + " were given");
  for (const Array& x : operands_in) check_defined(kOp, x);
  std::vector<Array> ops = promote(kOp, operands_in);

  // Parse the inputs; sizes per label (1 broadcasts against a larger size).
  std::vector<Term> in;
  int64_t ell_width = 0;
  std::map<int, int64_t> size;
  for (size_t k = 0; k < ops.size(); ++k) {
    int64_t w = 0;
    Term t{ops[k], parse_term(terms[k], ops[k].ndim(), 0, nullptr, &w)};
    ell_width = std::max(ell_width, w);
    for (size_t i = 0; i < t.labels.size(); ++i) {
      const int64_t d = t.x.shape()[i];
      auto [it, fresh] = size.emplace(t.labels[i], d);
      if (!fresh && it->second != d) {
        if (it->second == 1) {
          it->second = d;
        } else if (d != 1) {
          bad("size of label '" + terms[k] + "' axis " + std::to_string(i) + " is " +
              std::to_string(d) + " but another operand has " + std::to_string(it->second) +
              " for the same subscript; the sizes must agree (or be 1 for ellipsis dims)");
        }
      }
    }
    in.push_back(std::move(t));
  }

  // The output labels.
  std::vector<int> out;
  if (arrow != std::string::npos) {
    bool had = false;
    out = parse_term(s.substr(arrow + 2), -1, ell_width, &had, nullptr);
    std::set<int> seen;
    for (int l : out) {
      if (!seen.insert(l).second) bad("an output subscript appears more than once");
      if (!size.count(l)) bad("an output subscript does not appear in any input term");
    }
  } else {
    // Implicit: the ellipsis dims, then the letters used exactly once, alphabetically.
    std::map<int, int> count;
    for (const Term& t : in)
      for (int l : t.labels) ++count[l];
    for (int64_t k = ell_width - 1; k >= 0; --k) out.push_back(kEllipsisBase + static_cast<int>(k));
    for (const auto& [l, c] : count)
      if (l < kEllipsisBase && c == 1) out.push_back(l);
  }

  // Drop size-1 dims that broadcast against a larger size elsewhere (an absent label).
  for (Term& t : in) {
    std::vector<int64_t> drop;
    std::vector<int> nl;
    for (size_t i = 0; i < t.labels.size(); ++i) {
      if (t.x.shape()[i] == 1 && size[t.labels[i]] != 1)
        drop.push_back(static_cast<int64_t>(i));
      else
        nl.push_back(t.labels[i]);
    }
    if (!drop.empty()) {
      t.x = lax::squeeze(t.x, drop);
      t.labels = nl;
    }
  }

  // Labels needed outside term k: the output's and the other terms'.
  auto needed_except = [&](const std::vector<const Term*>& skip) {
    std::multiset<int> keep(out.begin(), out.end());
    for (const Term& t : in) {
      if (std::find(skip.begin(), skip.end(), &t) != skip.end()) continue;
      keep.insert(t.labels.begin(), t.labels.end());
    }
    return keep;
  };
  for (Term& t : in) t = reduce_alone(t, needed_except({&t}));

  // Greedy pairwise contraction.
  while (in.size() > 1) {
    size_t bi = 0, bj = 1;
    double best = -1;
    for (size_t i = 0; i < in.size(); ++i)
      for (size_t j = i + 1; j < in.size(); ++j) {
        const std::multiset<int> keep = needed_except({&in[i], &in[j]});
        std::set<int> res;
        for (int l : in[i].labels)
          if (keep.count(l)) res.insert(l);
        for (int l : in[j].labels)
          if (keep.count(l)) res.insert(l);
        double sz = 1;
        for (int l : res) sz *= static_cast<double>(size[l]);
        if (best < 0 || sz < best) {
          best = sz;
          bi = i;
          bj = j;
        }
      }
    const Term& a = in[bi];
    const Term& b = in[bj];
    const std::multiset<int> keep = needed_except({&a, &b});
    lax::DotDimensionNumbers dn;
    std::vector<int> batch, afree, bfree;
    for (size_t i = 0; i < a.labels.size(); ++i) {
      const int l = a.labels[i];
      auto it = std::find(b.labels.begin(), b.labels.end(), l);
      if (it == b.labels.end()) {
        afree.push_back(l);
        continue;
      }
      const int64_t j = it - b.labels.begin();
      if (keep.count(l)) {
        dn.lhs_batch.push_back(static_cast<int64_t>(i));
        dn.rhs_batch.push_back(j);
        batch.push_back(l);
      } else {
        dn.lhs_contracting.push_back(static_cast<int64_t>(i));
        dn.rhs_contracting.push_back(j);
      }
    }
    for (int l : b.labels)
      if (std::find(a.labels.begin(), a.labels.end(), l) == a.labels.end()) bfree.push_back(l);
    Term r;
    r.x = lax::dot_general(a.x, b.x, dn, preferred_element_type);
    r.labels = batch;
    r.labels.insert(r.labels.end(), afree.begin(), afree.end());
    r.labels.insert(r.labels.end(), bfree.begin(), bfree.end());
    in.erase(in.begin() + static_cast<std::ptrdiff_t>(bj));
    in.erase(in.begin() + static_cast<std::ptrdiff_t>(bi));
    in.push_back(std::move(r));
    in.back() = reduce_alone(in.back(), needed_except({&in.back()}));
  }

  Term& t = in[0];
  // Output labels whose size-1 dims were dropped everywhere come back as size-1 axes; the rest
  // is a transpose into output order.
  std::vector<int64_t> perm;
  Shape shape;
  std::vector<int64_t> bdims;
  for (size_t o = 0; o < out.size(); ++o) {
    auto it = std::find(t.labels.begin(), t.labels.end(), out[o]);
    if (it == t.labels.end()) continue;
    perm.push_back(it - t.labels.begin());
  }
  Array r = transpose(t.x, perm);
  if (static_cast<int64_t>(perm.size()) != static_cast<int64_t>(out.size())) {
    size_t src = 0;
    for (int l : out) {
      const bool present = std::find(t.labels.begin(), t.labels.end(), l) != t.labels.end();
      if (present) bdims.push_back(static_cast<int64_t>(shape.size()));
      shape.push_back(present ? r.shape()[src++] : size[l]);
    }
    r = lax::broadcast_in_dim(r, shape, bdims);
  }
  if (preferred_element_type && r.dtype() != *preferred_element_type)
    r = lax::convert_element_type(r, *preferred_element_type);
  return r;
}

}  // namespace tessera::numpy
