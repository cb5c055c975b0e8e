// lax.associative_scan (a composite of lax ops, JAX's parallel prefix) and the lax functions of
// the cumulative primitives (rules in src/prims/cumulative.cpp).
#include "tessera/lax_assoc_scan.h"

#include <string>
#include <vector>

#include "prims/cumulative.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/primitive.h"

namespace tessera::lax {

namespace {

constexpr const char* kOp = "associative_scan";

// Python's tuple spelling of a shape, for JAX's message: (3,), (2, 4), ().
std::string py_shape(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

// fn over the flat lists a and b, with the count, shapes and dtypes of the results checked.
std::vector<Array> combine(const flat::Fun& fn, const std::vector<Array>& a,
                           const std::vector<Array>& b) {
  std::vector<Array> ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  std::vector<Array> c = fn(ab);
  if (c.size() != a.size())
    throw ValueError(op_message(kOp, "fn must return one array per element of elems (" +
                                         std::to_string(a.size()) + "), got " +
                                         std::to_string(c.size()) + "."));
  for (size_t i = 0; i < c.size(); ++i) {
    if (!c[i].defined())
      throw ValueError(
          op_message(kOp, "fn returned an undefined array at output " + std::to_string(i) + "."));
    if (c[i].shape() != a[i].shape() || c[i].dtype() != a[i].dtype())
      throw ValueError(op_message(
          kOp, "fn must return arrays of the shapes and dtypes of its inputs: output " +
                   std::to_string(i) + " is " + c[i].aval().str() + " for inputs " +
                   a[i].aval().str() + " and " + b[i].aval().str() +
                   " (fn combines two slices of elems elementwise along the scanned axis)."));
  }
  return c;
}

// a (ceil(n/2) along axis) and b (floor(n/2)) interleaved: a0 b0 a1 b1 ... — b's entries
// paired with a's by a concatenate along a new axis after `axis` and a reshape.
Array interleave(const Array& a, const Array& b, int64_t axis) {
  const int64_t na = a.shape()[axis], nb = b.shape()[axis];
  const Array head = na == nb ? a : slice_in_dim(a, 0, nb, 1, axis);
  Shape pair_shape = b.shape();
  pair_shape.insert(pair_shape.begin() + axis + 1, 1);
  Array pairs = concatenate({reshape(head, pair_shape), reshape(b, pair_shape)}, axis + 1);
  Shape flat_shape = b.shape();
  flat_shape[axis] = 2 * nb;
  Array out = reshape(pairs, flat_shape);
  if (na == nb) return out;
  return concatenate({out, slice_in_dim(a, nb, na, 1, axis)}, axis);
}

std::vector<Array> scan_rec(const flat::Fun& fn, const std::vector<Array>& elems, int64_t axis) {
  const int64_t n = elems[0].shape()[axis];
  if (n < 2) return elems;
  const size_t k = elems.size();
  std::vector<Array> lhs(k), rhs(k);
  for (size_t i = 0; i < k; ++i) {
    lhs[i] = slice_in_dim(elems[i], 0, n - 1, 2, axis);
    rhs[i] = slice_in_dim(elems[i], 1, n, 2, axis);
  }
  // Positions 1, 3, 5, ...: the scan of the pairwise combinations.
  const std::vector<Array> odd = scan_rec(fn, combine(fn, lhs, rhs), axis);
  // Positions 2, 4, ...: the odd results combined with the next element.
  std::vector<Array> prev(k), next(k);
  for (size_t i = 0; i < k; ++i) {
    prev[i] = n % 2 == 0 ? slice_in_dim(odd[i], 0, odd[i].shape()[axis] - 1, 1, axis) : odd[i];
    next[i] = slice_in_dim(elems[i], 2, n, 2, axis);
  }
  std::vector<Array> even = combine(fn, prev, next);
  std::vector<Array> out(k);
  for (size_t i = 0; i < k; ++i) {
    even[i] = concatenate({slice_in_dim(elems[i], 0, 1, 1, axis), even[i]}, axis);
    out[i] = interleave(even[i], odd[i], axis);
  }
  return out;
}

Array bind_cum(const Primitive& prim, const Array& x, int64_t axis, bool reverse) {
  return tessera::bind1(prim, {x}, Params{{"axis", axis}, {"reverse", reverse}});
}

}  // namespace

std::vector<Array> associative_scan(const flat::Fun& fn, const std::vector<Array>& elems,
                                    bool reverse, int64_t axis) {
  if (!fn) throw TypeError("lax.associative_scan: fn argument should be callable.");
  if (elems.empty()) throw ValueError(op_message(kOp, "elems must hold at least one array."));
  for (const Array& e : elems)
    if (!e.defined()) throw ValueError(op_message(kOp, "elems holds an undefined array."));
  const int64_t ndim = elems[0].ndim();
  if (axis < -ndim || axis >= ndim)
    throw ValueError(op_message(kOp, "axis " + std::to_string(axis) +
                                         " is out of bounds for array of dimension " +
                                         std::to_string(ndim)));
  if (axis < 0) axis += ndim;
  const int64_t n = elems[0].shape()[axis];
  bool same = true;
  for (const Array& e : elems) same = same && axis < e.ndim() && e.shape()[axis] == n;
  if (!same) {
    std::string saw = "[";
    for (size_t i = 0; i < elems.size(); ++i) saw += (i ? ", " : "") + py_shape(elems[i].shape());
    throw ValueError(op_message(kOp,
                                "Array inputs to associative_scan must have the same first "
                                "dimension. (saw: " +
                                    saw + "])"));
  }
  std::vector<Array> xs = elems;
  if (reverse)
    for (Array& x : xs) x = rev(x, {axis});
  std::vector<Array> out = scan_rec(fn, xs, axis);
  if (reverse)
    for (Array& x : out) x = rev(x, {axis});
  return out;
}

Array cumsum(const Array& x, int64_t axis, bool reverse) {
  return bind_cum(prims::cumsum, x, axis, reverse);
}
Array cumprod(const Array& x, int64_t axis, bool reverse) {
  return bind_cum(prims::cumprod, x, axis, reverse);
}
Array cummax(const Array& x, int64_t axis, bool reverse) {
  return bind_cum(prims::cummax, x, axis, reverse);
}
Array cummin(const Array& x, int64_t axis, bool reverse) {
  return bind_cum(prims::cummin, x, axis, reverse);
}
Array cumlogsumexp(const Array& x, int64_t axis, bool reverse) {
  return bind_cum(prims::cumlogsumexp, x, axis, reverse);
}

}  // namespace tessera::lax
