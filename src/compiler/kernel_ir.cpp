// The kernel IR (kernel_ir.h): affine forms, verification, dimension collapsing, text and the
// reference evaluator.
#include "compiler/kernel_ir.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "tessera/errors.h"

namespace tessera::compiler::kir {

// ---------------------------------------------------------------- Affine

Affine Affine::constant(int64_t c, size_t rank) {
  Affine a;
  a.coeff.assign(rank, 0);
  a.offset = c;
  return a;
}

Affine Affine::dim(size_t d, size_t rank) {
  Affine a = constant(0, rank);
  a.coeff[d] = 1;
  return a;
}

Affine Affine::operator+(const Affine& o) const {
  Affine r = *this;
  if (r.coeff.size() < o.coeff.size()) r.coeff.resize(o.coeff.size(), 0);
  for (size_t d = 0; d < o.coeff.size(); ++d) r.coeff[d] += o.coeff[d];
  r.offset += o.offset;
  return r;
}

bool Affine::operator==(const Affine& o) const {
  if (offset != o.offset) return false;
  const size_t n = std::max(coeff.size(), o.coeff.size());
  for (size_t d = 0; d < n; ++d)
    if ((d < coeff.size() ? coeff[d] : 0) != (d < o.coeff.size() ? o.coeff[d] : 0)) return false;
  return true;
}

Affine Affine::scaled(int64_t k) const {
  Affine r = *this;
  for (int64_t& c : r.coeff) c *= k;
  r.offset *= k;
  return r;
}

bool Affine::is_constant() const {
  for (int64_t c : coeff)
    if (c != 0) return false;
  return true;
}

int64_t Affine::min_over(std::span<const int64_t> dims) const {
  int64_t v = offset;
  for (size_t d = 0; d < coeff.size() && d < dims.size(); ++d)
    if (coeff[d] < 0 && dims[d] > 0) v += coeff[d] * (dims[d] - 1);
  return v;
}

int64_t Affine::at(std::span<const int64_t> idx) const {
  int64_t v = offset;
  for (size_t d = 0; d < idx.size() && d < coeff.size(); ++d) v += coeff[d] * idx[d];
  return v;
}

int64_t Affine::max_over(std::span<const int64_t> dims) const {
  int64_t v = offset;
  for (size_t d = 0; d < coeff.size() && d < dims.size(); ++d)
    if (coeff[d] > 0 && dims[d] > 0) v += coeff[d] * (dims[d] - 1);
  return v;
}

std::string Affine::str() const {
  std::string s;
  for (size_t d = 0; d < coeff.size(); ++d) {
    if (coeff[d] == 0) continue;
    if (!s.empty()) s += " + ";
    if (coeff[d] != 1) {
      s += std::to_string(coeff[d]);
      s += '*';
    }
    s += 'i';
    s += std::to_string(d);
  }
  if (offset != 0 || s.empty()) {
    if (!s.empty()) s += " + ";
    s += std::to_string(offset);
  }
  return s;
}

int64_t BufferType::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// ---------------------------------------------------------------- Guard, Load

bool Guard::holds(std::span<const int64_t> idx) const {
  const int64_t v = value.at(idx);
  return lo <= v && v < hi;
}

std::string Guard::str() const {
  return std::to_string(lo) + " <= " + value.str() + " < " + std::to_string(hi);
}

namespace {
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
}  // namespace

std::optional<std::pair<int64_t, int64_t>> Load::index_range(std::span<const int64_t> dims) const {
  std::vector<int64_t> lo(dims.size(), 0), hi(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] <= 0) return std::nullopt;
    hi[d] = dims[d] - 1;
  }
  for (const Guard& g : guards) {
    size_t only = SIZE_MAX, count = 0;
    for (size_t d = 0; d < dims.size() && d < g.value.coeff.size(); ++d)
      if (g.value.coeff[d] != 0 && dims[d] > 1) {
        only = d;
        ++count;
      }
    const int64_t off = g.value.offset;
    if (count == 0) {
      if (off < g.lo || off >= g.hi) return std::nullopt;
    } else if (count == 1) {
      // lo - off <= c * i <= hi - 1 - off.
      const int64_t c = g.value.coeff[only];
      const int64_t a = g.lo - off, b = g.hi - 1 - off;
      if (c > 0) {
        lo[only] = std::max(lo[only], ceil_div(a, c));
        hi[only] = std::min(hi[only], floor_div(b, c));
      } else {
        lo[only] = std::max(lo[only], ceil_div(b, c));
        hi[only] = std::min(hi[only], floor_div(a, c));
      }
    }
  }
  for (size_t d = 0; d < dims.size(); ++d)
    if (lo[d] > hi[d]) return std::nullopt;
  auto coeff = [](const Affine& a, size_t d) { return d < a.coeff.size() ? a.coeff[d] : 0; };
  // The index's part along a guard over several variables, when it is c * (the guard's value
  // minus its offset), ranges over c * [lo - offset, hi - 1 - offset] (dynamic_update_slice's
  // window, i - s over an iteration index and a symbol); those variables are bounded so.
  std::vector<char> used(dims.size(), 0);
  int64_t mn = index.offset, mx = index.offset;
  for (const Guard& g : guards) {
    std::vector<size_t> vars;
    for (size_t d = 0; d < dims.size(); ++d)
      if (coeff(g.value, d) != 0 && dims[d] > 1) vars.push_back(d);
    if (vars.size() < 2) continue;
    bool ok = true;
    for (size_t d : vars) ok = ok && !used[d];
    const int64_t g0 = coeff(g.value, vars[0]), i0 = coeff(index, vars[0]);
    if (!ok || i0 == 0 || i0 % g0 != 0) continue;
    const int64_t c = i0 / g0;
    for (size_t d : vars) ok = ok && coeff(index, d) == c * coeff(g.value, d);
    if (!ok) continue;
    const int64_t a = g.lo - g.value.offset, b = g.hi - 1 - g.value.offset;
    if (a > b) return std::nullopt;
    mn += c > 0 ? c * a : c * b;
    mx += c > 0 ? c * b : c * a;
    for (size_t d : vars) used[d] = 1;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (used[d]) continue;
    const int64_t c = coeff(index, d);
    mn += c * (c > 0 ? lo[d] : hi[d]);
    mx += c * (c > 0 ? hi[d] : lo[d]);
  }
  return std::make_pair(mn, mx);
}

// ---------------------------------------------------------------- Kernel

int64_t Kernel::num_points() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {

[[noreturn]] void bad(const Kernel& k, const std::string& why) {
  throw_internal("compiler/kernel_ir", "kernel " + k.name + " is ill-formed: " + why);
}

}  // namespace

int64_t Kernel::num_outer() const {
  int64_t n = 1;
  for (size_t d = 0; d + inner < dims.size(); ++d) n *= dims[d];
  return n;
}

int64_t Kernel::num_inner() const {
  int64_t n = 1;
  for (size_t d = dims.size() - std::min(inner, dims.size()); d < dims.size(); ++d) n *= dims[d];
  return n;
}

size_t Kernel::num_row_values() const {
  size_t n = 0;
  for (const Stage& s : stages) n += s.reducers.size();
  return n;
}

size_t Kernel::num_saved() const {
  size_t n = 0;
  for (const Stage& s : stages) n += s.saves;
  return n;
}

std::vector<int64_t> Kernel::extended_dims() const {
  std::vector<int64_t> d(dims.begin(), dims.end());
  for (const Symbol& s : symbols) d.push_back(s.extent());
  return d;
}

int64_t Symbol::clamp(const scalar::ScalarValue& v, int64_t lo, int64_t hi) {
  if (v.type == DType::kUInt64 && static_cast<int64_t>(v.bits) < 0) return hi;
  return std::clamp(v.as_int(), lo, hi);
}

std::vector<int64_t> Kernel::extended_index(std::span<const void* const> in,
                                            std::span<const int64_t> idx) const {
  std::vector<int64_t> x(idx.begin(), idx.end());
  for (const Symbol& s : symbols) {
    const DType t = inputs[static_cast<size_t>(s.param)].dtype;
    const scalar::ScalarValue v =
        read_element(in[static_cast<size_t>(s.param)], t, s.index.at(idx));
    x.push_back(Symbol::clamp(v, s.lo, s.hi) - s.lo);
  }
  return x;
}

bool Reducer::supported(scalar::Op op, DType t) {
  if (is_extended(t) || t == DType::kFloat16 || t == DType::kBFloat16) return false;
  switch (op) {
    case scalar::Op::kAdd:
    case scalar::Op::kMul:
      return t != DType::kBool;
    case scalar::Op::kMax:
    case scalar::Op::kMin:
      return t != DType::kBool;  // on bool: kOr, kAnd
    case scalar::Op::kAnd:
    case scalar::Op::kOr:
    case scalar::Op::kXor:
      return !is_floating(t);
    default:
      return false;
  }
}

scalar::ScalarValue Reducer::identity() const {
  using SV = scalar::ScalarValue;
  const bool fl = is_floating(type);
  const int w = type == DType::kBool ? 1 : static_cast<int>(itemsize(type) * 8);
  const double inf = std::numeric_limits<double>::infinity();
  const bool sgn = is_signed_integer(type);
  const int64_t least =
      sgn ? (w == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (w - 1))) : 0;
  const int64_t greatest =
      sgn ? (w == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (w - 1)) - 1) : -1;
  switch (op) {
    case scalar::Op::kAdd:
    case scalar::Op::kOr:
    case scalar::Op::kXor:
      return fl ? SV::of_double(0.0, type) : SV::of_int(0, type);
    case scalar::Op::kMul:
      return fl ? SV::of_double(1.0, type) : SV::of_int(1, type);
    case scalar::Op::kAnd:
      return SV::of_int(type == DType::kBool ? 1 : -1, type);
    case scalar::Op::kMax:
      return fl ? SV::of_double(-inf, type) : SV::of_int(least, type);
    case scalar::Op::kMin:
      return fl ? SV::of_double(inf, type) : SV::of_int(greatest, type);
    default:
      throw_internal("compiler/kernel_ir", std::string("no reducer ") + scalar::op_name(op));
  }
}

namespace {

// One body with its loads and index values: inputs (loads, index values, `rows` row values).
void verify_body(const Kernel& k, const std::string& what, const std::vector<Load>& loads,
                 const std::vector<IndexValue>& indices, const scalar::Program& body,
                 std::span<const DType> rows) {
  const size_t rank = k.dims.size() + k.symbols.size();
  const std::vector<int64_t> ext = k.extended_dims();
  const size_t n_in = loads.size() + indices.size() + rows.size();
  if (body.inputs.size() != n_in)
    bad(k, what + " takes " + std::to_string(body.inputs.size()) + " inputs, it has " +
               std::to_string(loads.size()) + " loads, " + std::to_string(indices.size()) +
               " index values and " + std::to_string(rows.size()) + " row values");
  const int64_t points = k.num_points();
  for (size_t i = 0; i < loads.size(); ++i) {
    const Load& l = loads[i];
    const std::string name = what + " load " + std::to_string(i);
    if (l.param < 0 || static_cast<size_t>(l.param) >= k.inputs.size())
      bad(k, name + " reads a missing input");
    if (l.index.coeff.size() != rank) bad(k, name + " has a wrong rank");
    const BufferType& in = k.inputs[static_cast<size_t>(l.param)];
    if (body.inputs[i] != in.dtype) bad(k, name + " has a wrong dtype");
    for (const Guard& g : l.guards)
      if (g.value.coeff.size() != rank) bad(k, name + " has a guard of a wrong rank");
    const auto range = l.index_range(ext);
    if (points > 0 && range && (range->first < 0 || range->second >= in.size()))
      bad(k, name + " (" + l.index.str() + ") leaves input " + std::to_string(l.param) + " of " +
                 std::to_string(in.size()) + " elements");
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i].value.coeff.size() != rank)
      bad(k, what + " index value " + std::to_string(i) + " has a wrong rank");
    if (body.inputs[loads.size() + i] != DType::kInt64)
      bad(k, what + " index value " + std::to_string(i) + " is not int64");
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (body.inputs[loads.size() + indices.size() + i] != rows[i])
      bad(k, what + " row value " + std::to_string(i) + " has a wrong dtype");
}

bool depends_on_inner(const Affine& a, size_t rank, size_t inner) {
  for (size_t d = rank - inner; d < rank; ++d)
    if (a.coeff[d] != 0) return true;
  return false;
}

}  // namespace

void Kernel::verify() const {
  for (int64_t d : dims)
    if (d < 0) bad(*this, "a negative dimension");
  if (inner > dims.size()) bad(*this, "more inner dimensions than dimensions");
  if (stages.empty() && (inner != 0 || row_outputs))
    bad(*this, "inner dimensions or row outputs without stages");
  if (columns < 0 || (columns > 0 && (!row_outputs || stages.size() != 1 || stages[0].saves != 0 ||
                                      !symbols.empty() || num_outer() % columns != 0)))
    bad(*this,
        "a column order needs row outputs, one stage without saved values, no symbols "
        "and a whole number of column rows");
  for (size_t k = 0; k < symbols.size(); ++k) {
    const Symbol& sy = symbols[k];
    const std::string name = "symbol " + std::to_string(k);
    if (sy.param < 0 || static_cast<size_t>(sy.param) >= inputs.size())
      bad(*this, name + " reads a missing input");
    const BufferType& in = inputs[static_cast<size_t>(sy.param)];
    if (!is_integer(in.dtype)) bad(*this, name + " reads a buffer that is not of integers");
    if (sy.index.coeff.size() != dims.size()) bad(*this, name + " has a wrong rank");
    if (sy.lo > sy.hi) bad(*this, name + " has an empty range");
    if (!stages.empty() && depends_on_inner(sy.index, dims.size(), inner))
      bad(*this, name + " depends on an inner dimension");
    if (num_points() > 0 && (sy.index.min_over(dims) < 0 || sy.index.max_over(dims) >= in.size()))
      bad(*this, name + " (" + sy.index.str() + ") leaves input " + std::to_string(sy.param));
  }
  std::vector<DType> rows, saved;
  auto visible = [&](bool with_saved) {
    std::vector<DType> v = rows;
    if (with_saved) v.insert(v.end(), saved.begin(), saved.end());
    return v;
  };
  for (size_t s = 0; s < stages.size(); ++s) {
    const Stage& st = stages[s];
    const std::string what = "stage " + std::to_string(s);
    verify_body(*this, what, st.loads, st.indices, st.body, visible(true));
    const std::vector<DType> out = st.body.output_types();
    if (out.size() != st.reducers.size() + st.saves || st.reducers.empty())
      bad(*this, what + " has " + std::to_string(out.size()) + " outputs, " +
                     std::to_string(st.reducers.size()) + " reducers and " +
                     std::to_string(st.saves) + " saved values");
    for (size_t r = 0; r < st.reducers.size(); ++r) {
      if (out[r] != st.reducers[r].type || !Reducer::supported(st.reducers[r].op, out[r]))
        bad(*this, what + " reducer " + std::to_string(r) + " does not fold its output");
      rows.push_back(out[r]);
    }
    saved.insert(saved.end(), out.begin() + static_cast<std::ptrdiff_t>(st.reducers.size()),
                 out.end());
  }
  verify_body(*this, "the body", loads, indices, body, visible(!row_outputs));
  if (row_outputs) {
    for (const Load& l : loads) {
      bool inner_guard = false;
      for (const Guard& g : l.guards) inner_guard |= depends_on_inner(g.value, dims.size(), inner);
      if (depends_on_inner(l.index, dims.size(), inner) || inner_guard)
        bad(*this, "a row-output load depends on an inner dimension");
    }
    for (const IndexValue& v : indices)
      if (depends_on_inner(v.value, dims.size(), inner))
        bad(*this, "a row-output index value depends on an inner dimension");
  }
  const int64_t points = row_outputs ? num_outer() : num_points();
  const std::vector<DType> out_types = body.output_types();
  if (out_types.size() != outputs.size())
    bad(*this, "the body has " + std::to_string(out_types.size()) + " outputs, the kernel " +
                   std::to_string(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (out_types[k] != outputs[k].dtype)
      bad(*this, "output " + std::to_string(k) + " has a wrong dtype");
    if (outputs[k].size() != points)
      bad(*this, "output " + std::to_string(k) + " is not the size of the space it is stored over");
  }
}

Kernel Kernel::collapsed() const {
  // Dimension d merges into d+1 when both are outer or both inner and every form has
  // coeff[d] == coeff[d+1] * dims[d+1] (the row-major stores always do). Unit dimensions drop
  // first.
  Kernel k = *this;
  auto forms = [&k]() {
    std::vector<Affine*> f;
    auto add_load = [&f](Load& l) {
      f.push_back(&l.index);
      for (Guard& g : l.guards) f.push_back(&g.value);
    };
    for (Load& l : k.loads) add_load(l);
    for (Symbol& sy : k.symbols) f.push_back(&sy.index);
    for (IndexValue& v : k.indices) f.push_back(&v.value);
    for (Stage& s : k.stages) {
      for (Load& l : s.loads) add_load(l);
      for (IndexValue& v : s.indices) f.push_back(&v.value);
    }
    return f;
  };
  auto erase_dim = [&](size_t d) {
    if (d + k.inner >= k.dims.size()) --k.inner;
    k.dims.erase(k.dims.begin() + static_cast<std::ptrdiff_t>(d));
    for (Affine* a : forms()) a->coeff.erase(a->coeff.begin() + static_cast<std::ptrdiff_t>(d));
  };
  if (k.num_points() == 0) return k;
  for (size_t d = k.dims.size(); d-- > 0;)
    if (k.dims[d] == 1) erase_dim(d);
  for (size_t d = k.dims.size(); d-- > 1;) {
    // Try to merge d-1 into d.
    const size_t first_inner = k.dims.size() - k.inner;
    if (d == first_inner) continue;
    bool ok = true;
    for (Affine* a : forms())
      if (a->coeff[d - 1] != a->coeff[d] * k.dims[d]) ok = false;
    if (!ok) continue;
    k.dims[d] *= k.dims[d - 1];
    erase_dim(d - 1);
  }
  return k;
}

namespace {

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ',';
    r += std::to_string(s[i]);
  }
  r += ']';
  return r;
}

std::string buffer_types_str(const std::vector<BufferType>& bs) {
  std::string s;
  for (size_t i = 0; i < bs.size(); ++i) {
    if (i) s += ", ";
    s += dtype_short_name(bs[i].dtype);
    s += shape_str(bs[i].shape);
  }
  return s;
}

}  // namespace

namespace {

// Loads, index values and the body of one stage or of the kernel, indented by `pad`; input
// numbers as the body sees them.
void body_text(std::string& s, const std::string& pad, const std::vector<Load>& loads,
               const std::vector<IndexValue>& indices, size_t rows, size_t saved,
               const scalar::Program& body) {
  for (size_t k = 0; k < loads.size(); ++k) {
    s += pad;
    s += "in";
    s += std::to_string(k);
    s += " = load p";
    s += std::to_string(loads[k].param);
    s += '[';
    s += loads[k].index.str();
    s += ']';
    for (size_t g = 0; g < loads[k].guards.size(); ++g) {
      s += g ? ", " : " if ";
      s += loads[k].guards[g].str();
    }
    s += '\n';
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    s += pad;
    s += "in";
    s += std::to_string(loads.size() + k);
    s += " = index ";
    s += indices[k].value.str();
    s += '\n';
  }
  for (size_t k = 0; k < rows; ++k) {
    s += pad;
    s += "in";
    s += std::to_string(loads.size() + indices.size() + k);
    s += " = row r";
    s += std::to_string(k);
    s += '\n';
  }
  for (size_t k = 0; k < saved; ++k) {
    s += pad;
    s += "in";
    s += std::to_string(loads.size() + indices.size() + rows + k);
    s += " = saved s";
    s += std::to_string(k);
    s += '\n';
  }
  std::string b = body.str();
  s += pad;
  for (char c : b) {
    s += c;
    if (c == '\n') s += pad;
  }
  if (!s.empty() && s.back() == ' ') s.resize(s.find_last_not_of(' ') + 1);
  if (!s.empty() && s.back() != '\n') s += '\n';
}

}  // namespace

std::string Kernel::signature_text() const {
  std::string s = "kernel dims=";
  s += shape_str(dims);
  if (!stages.empty()) {
    s += " inner=";
    s += std::to_string(inner);
    if (row_outputs) s += " row_outputs";
    if (columns > 0) s += " columns=" + std::to_string(columns);
  }
  s += " (";
  s += buffer_types_str(inputs);
  s += ") -> (";
  s += buffer_types_str(outputs);
  s += ") {\n";
  for (size_t k = 0; k < symbols.size(); ++k) {
    s += "  i";
    s += std::to_string(dims.size() + k);
    s += " = clamp(load p";
    s += std::to_string(symbols[k].param);
    s += '[';
    s += symbols[k].index.str();
    s += "], ";
    s += std::to_string(symbols[k].lo);
    s += ", ";
    s += std::to_string(symbols[k].hi);
    s += ") - ";
    s += std::to_string(symbols[k].lo);
    s += '\n';
  }
  size_t rows = 0, saved = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const Stage& st = stages[k];
    s += "  stage ";
    s += std::to_string(k);
    s += " ->";
    for (size_t r = 0; r < st.reducers.size(); ++r) {
      s += r ? ", r" : " r";
      s += std::to_string(rows + r);
      s += " = ";
      s += scalar::op_name(st.reducers[r].op);
    }
    for (size_t v = 0; v < st.saves; ++v) {
      s += ", s";
      s += std::to_string(saved + v);
      s += " = saved";
    }
    s += " {\n";
    body_text(s, "    ", st.loads, st.indices, rows, saved, st.body);
    s += "  }\n";
    rows += st.reducers.size();
    saved += st.saves;
  }
  body_text(s, "  ", loads, indices, rows, row_outputs ? 0 : saved, body);
  s += '}';
  return s;
}

std::string Kernel::text() const {
  std::string s = name;
  s += ": ";
  s += signature_text();
  return s;
}

// ---------------------------------------------------------------- reference evaluator

scalar::ScalarValue read_element(const void* base, DType t, int64_t i) {
  const char* p = static_cast<const char*>(base) + static_cast<size_t>(i) * itemsize(t);
  auto get = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case DType::kBool:
      return scalar::ScalarValue::of_int(get(uint8_t{}) != 0, t);
    case DType::kInt8:
      return scalar::ScalarValue::of_int(get(int8_t{}), t);
    case DType::kInt16:
      return scalar::ScalarValue::of_int(get(int16_t{}), t);
    case DType::kInt32:
      return scalar::ScalarValue::of_int(get(int32_t{}), t);
    case DType::kInt64:
      return scalar::ScalarValue::of_int(get(int64_t{}), t);
    case DType::kUInt8:
      return scalar::ScalarValue::of_int(get(uint8_t{}), t);
    case DType::kUInt16:
      return scalar::ScalarValue::of_int(get(uint16_t{}), t);
    case DType::kUInt32:
      return scalar::ScalarValue::of_int(get(uint32_t{}), t);
    case DType::kUInt64:
      return scalar::ScalarValue::of_int(static_cast<int64_t>(get(uint64_t{})), t);
    case DType::kFloat16:
      return scalar::ScalarValue::of_double(half_bits_to_float(get(uint16_t{})), t);
    case DType::kBFloat16:
      return scalar::ScalarValue::of_double(bfloat16_bits_to_float(get(uint16_t{})), t);
    case DType::kFloat32:
      return scalar::ScalarValue::of_double(get(float{}), t);
    case DType::kFloat64:
      return scalar::ScalarValue::of_double(get(double{}), t);
    default:
      throw_internal("compiler/kernel_ir", "evaluate: an extended dtype");
  }
}

namespace {

void write(void* base, DType t, int64_t i, const scalar::ScalarValue& v) {
  char* p = static_cast<char*>(base) + static_cast<size_t>(i) * itemsize(t);
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case DType::kBool:
      put(static_cast<uint8_t>(v.bits != 0));
      break;
    case DType::kInt8:
    case DType::kUInt8:
      put(static_cast<uint8_t>(v.bits));
      break;
    case DType::kInt16:
    case DType::kUInt16:
      put(static_cast<uint16_t>(v.bits));
      break;
    case DType::kInt32:
    case DType::kUInt32:
      put(static_cast<uint32_t>(v.bits));
      break;
    case DType::kInt64:
    case DType::kUInt64:
      put(v.bits);
      break;
    case DType::kFloat16:
      put(double_to_half_bits(v.as_double()));
      break;
    case DType::kBFloat16:
      put(double_to_bfloat16_bits(v.as_double()));
      break;
    case DType::kFloat32:
      put(static_cast<float>(v.as_double()));
      break;
    case DType::kFloat64:
      put(v.as_double());
      break;
    default:
      throw_internal("compiler/kernel_ir", "evaluate: an extended dtype");
  }
}

}  // namespace

namespace {

scalar::ScalarValue combine(const Reducer& r, const scalar::ScalarValue& a,
                            const scalar::ScalarValue& b) {
  const DType types[2] = {r.type, r.type};
  scalar::Builder bl(types);
  const scalar::Value v = bl.binary(r.op, bl.input(0), bl.input(1));
  const scalar::Program p = std::move(bl).finish({&v, 1});
  const scalar::ScalarValue args[2] = {a, b};
  return scalar::evaluate(p, args).at(0);
}

// The inputs of one body at point idx: loads, index values, row values.
std::vector<scalar::ScalarValue> body_args(const Kernel& k, std::span<const void* const> inputs,
                                           const std::vector<Load>& loads,
                                           const std::vector<IndexValue>& indices,
                                           std::span<const scalar::ScalarValue> rows,
                                           const std::vector<int64_t>& point) {
  const std::vector<int64_t> idx = k.extended_index(inputs, point);
  std::vector<scalar::ScalarValue> args;
  args.reserve(loads.size() + indices.size() + rows.size());
  for (const Load& l : loads) {
    const DType t = k.inputs[static_cast<size_t>(l.param)].dtype;
    bool reads = true;
    for (const Guard& g : l.guards) reads = reads && g.holds(idx);
    args.push_back(reads ? read_element(inputs[static_cast<size_t>(l.param)], t, l.index.at(idx))
                         : scalar::ScalarValue{t, 0});
  }
  for (const IndexValue& v : indices)
    args.push_back(scalar::ScalarValue::of_int(v.value.at(idx), DType::kInt64));
  args.insert(args.end(), rows.begin(), rows.end());
  return args;
}

// Next index of dimensions [lo, hi), row-major; false after the last.
bool next_index(std::vector<int64_t>& idx, const Shape& dims, size_t lo, size_t hi) {
  for (size_t d = hi; d-- > lo;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

}  // namespace

void evaluate(const Kernel& k, std::span<const void* const> inputs,
              std::span<void* const> outputs) {
  k.verify();
  if (inputs.size() != k.inputs.size() || outputs.size() != k.outputs.size())
    throw_internal("compiler/kernel_ir", "evaluate: wrong number of buffers");
  const size_t rank = k.dims.size(), first_inner = rank - k.inner;
  if (k.num_points() == 0 && !(k.row_outputs && k.num_outer() > 0)) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t out_pos = 0;
  for (bool outer_left = k.num_outer() > 0; outer_left;
       outer_left = next_index(idx, k.dims, 0, first_inner)) {
    // The stages, sequentially over the inner points, in the reducers' types; saved values
    // per inner point (flattened row-major).
    std::vector<scalar::ScalarValue> rows;
    std::vector<std::vector<scalar::ScalarValue>> saved;
    auto with_saved = [&](int64_t t) {
      std::vector<scalar::ScalarValue> v = rows;
      for (const auto& s : saved) v.push_back(s[static_cast<size_t>(t)]);
      return v;
    };
    for (const Stage& st : k.stages) {
      std::vector<scalar::ScalarValue> acc;
      for (const Reducer& r : st.reducers) acc.push_back(r.identity());
      std::vector<std::vector<scalar::ScalarValue>> keep(st.saves);
      if (k.num_inner() > 0) {
        int64_t t = 0;
        do {
          const std::vector<scalar::ScalarValue> v = scalar::evaluate(
              st.body, body_args(k, inputs, st.loads, st.indices, with_saved(t), idx));
          for (size_t r = 0; r < acc.size(); ++r)
            acc[r] = k.num_inner() == 1 ? v[r] : combine(st.reducers[r], acc[r], v[r]);
          for (size_t s = 0; s < st.saves; ++s) keep[s].push_back(v[acc.size() + s]);
          ++t;
        } while (next_index(idx, k.dims, first_inner, rank));
      }
      rows.insert(rows.end(), acc.begin(), acc.end());
      for (auto& s : keep) saved.push_back(std::move(s));
    }
    int64_t t = 0;
    auto run_body = [&] {
      const std::vector<scalar::ScalarValue> res = scalar::evaluate(
          k.body,
          body_args(k, inputs, k.loads, k.indices, k.row_outputs ? rows : with_saved(t++), idx));
      for (size_t o = 0; o < res.size(); ++o)
        write(outputs[o], k.outputs[o].dtype, out_pos, res[o]);
      ++out_pos;
    };
    if (k.row_outputs) {
      run_body();
    } else if (k.num_inner() > 0) {
      do run_body();
      while (next_index(idx, k.dims, first_inner, rank));
    }
  }
}

}  // namespace tessera::compiler::kir
