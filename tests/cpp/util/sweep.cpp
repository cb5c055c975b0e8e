// The primitive sweep's checks (sweep.h). Inputs and references are built on the host; every
// comparison names the row, the case (dtypes, shapes, batch axes) and the seed.
#include "util/sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "tessera/transforms_flat.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera::sweep {

using testing::rng;
using testing::test_seed;
using testing::to_doubles;

// ---------------------------------------------------------------- operands and dtypes

Operand any(double lo, double hi) {
  Operand o;
  o.lo = lo, o.hi = hi;
  return o;
}
Operand positive(double lo, double hi) {
  Operand o = any(lo, hi);
  o.int_lo = 1;
  return o;
}
Operand nonzero(double min_abs, double max_abs) {
  Operand o = any(-max_abs, max_abs);
  o.min_abs = min_abs;
  return o;
}
Operand index(int64_t n) {
  Operand o;
  o.int_lo = 0, o.int_hi = n - 1, o.dtype = DType::kInt32, o.diff = false;
  return o;
}
Operand predicate() {
  Operand o;
  o.dtype = DType::kBool, o.diff = false;
  return o;
}
Operand weak(Operand o) {
  o.weak = true;
  return o;
}
Operand of_dtype(DType d, Operand o) {
  o.dtype = d;
  return o;
}

std::vector<DType> floats() {
  return {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
}
std::vector<DType> numbers() {
  std::vector<DType> v = floats();
  for (DType d : {DType::kInt8, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt32})
    v.push_back(d);
  return v;
}
std::vector<DType> all_types() {
  std::vector<DType> v = numbers();
  v.push_back(DType::kBool);
  return v;
}

namespace {

constexpr int64_t kB = 3;  // vmap batch size

std::string sn(DType d) { return std::string(dtype_short_name(d)); }

std::string avals_str(const Args& xs) {
  std::string s;
  for (const Array& x : xs) {
    if (!s.empty()) s += ' ';
    s += x.aval().str();
  }
  return s.empty() ? "()" : s;
}

std::string where(const Row& row, const std::string& what) {
  return "[" + row.name + "] " + what + " (TESSERA_TEST_SEED=" + std::to_string(test_seed()) + ")";
}

// Seconds of extra random rounds each check may spend per row after its fixed cases.
double time_box_s() {
  static const double s = [] {
    const char* e = std::getenv("TESSERA_SWEEP_SECONDS");
    return e ? std::atof(e) : 0.03;
  }();
  return s;
}

// Runs round(0) for every shape pattern, then random patterns until the time box is over.
template <class F>
void rounds(const Row& row, F&& round) {
  for (size_t i = 0; i < row.shapes.size(); ++i) round(i);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(time_box_s());
  std::uniform_int_distribution<size_t> pick(0, row.shapes.size() - 1);
  for (int k = 0; k < 16 && std::chrono::steady_clock::now() < end; ++k) round(pick(rng()));
}

bool is_64(DType d) { return testing::is_64bit(d); }

DType operand_dtype(const Operand& o, DType row_dtype) { return o.dtype.value_or(row_dtype); }

bool needs_x64(const Row& row, DType d) {
  if (row.needs_x64 || is_64(d)) return true;
  for (const Operand& o : row.operands)
    if (o.dtype && is_64(*o.dtype)) return true;
  return false;
}

Array from_doubles(const std::vector<double>& v, const Shape& s, DType d, bool weak = false) {
  Array out = empty_array(Aval{s, d, weak}, "sweep");
  auto* p = static_cast<char*>(out.buffer()->data());
  const size_t item = itemsize(d);
  for (size_t i = 0; i < v.size(); ++i) store_from_double(d, p + i * item, v[i]);
  return out;
}

Array draw(const Operand& o, const Shape& s, DType d) {
  std::vector<double> v(static_cast<size_t>(shape_size(s)));
  if (is_floating(d)) {
    std::uniform_real_distribution<double> u(o.lo, o.hi);
    for (double& x : v) {
      do x = u(rng());
      while (std::fabs(x) < o.min_abs);
    }
  } else if (is_bool(d)) {
    std::bernoulli_distribution c(0.5);
    for (double& x : v) x = c(rng()) ? 1.0 : 0.0;
  } else {
    const IInfo info = iinfo(d);
    const int64_t lo = std::max<int64_t>(o.int_lo, info.min);
    const int64_t hi =
        std::min<int64_t>(o.int_hi, static_cast<int64_t>(std::min<uint64_t>(info.max, INT64_MAX)));
    std::uniform_int_distribution<int64_t> u(lo, std::max(lo, hi));
    for (double& x : v) {
      int64_t k;
      do k = u(rng());
      while (static_cast<double>(std::llabs(k)) < o.min_abs && lo < hi);
      x = static_cast<double>(k);
    }
  }
  return from_doubles(v, s, d, o.weak);
}

Args draw_all(const Row& row, const std::vector<Shape>& shapes, DType d) {
  Args xs;
  for (size_t i = 0; i < row.operands.size(); ++i)
    xs.push_back(draw(row.operands[i], shapes[i], operand_dtype(row.operands[i], d)));
  return xs;
}

// Draws inputs away from the op's kinks (derivative checks).
Args draw_smooth(const Row& row, const std::vector<Shape>& shapes, DType d) {
  Args xs = draw_all(row, shapes, d);
  for (int k = 0; row.kink && row.kink(xs) < row.min_kink; ++k) {
    if (k == 200) {
      ADD_FAILURE() << where(row, "cannot draw " + avals_str(xs) + " away from kinks");
      break;
    }
    xs = draw_all(row, shapes, d);
  }
  return xs;
}

bool differentiable(const Row& row, size_t i, const Array& x) {
  return row.operands[i].diff && is_floating(x.dtype());
}

// Random tangents in [-1, 1] for the differentiable operands; undefined (zero) for the rest.
Args directions(const Row& row, const Args& xs) {
  Args vs(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    if (differentiable(row, i, xs[i])) vs[i] = draw(any(-1.0, 1.0), xs[i].shape(), xs[i].dtype());
  return vs;
}

// xs + h * vs on the host (operands without a direction unchanged).
Args shifted(const Args& xs, double h, const Args& vs) {
  Args out = xs;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!vs[i].defined()) continue;
    std::vector<double> x = to_doubles(xs[i]), v = to_doubles(vs[i]);
    for (size_t k = 0; k < x.size(); ++k) x[k] += h * v[k];
    out[i] = from_doubles(x, xs[i].shape(), xs[i].dtype(), xs[i].weak_type());
  }
  return out;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
double norm(const std::vector<double>& a) { return std::sqrt(dot(a, a)); }

flat::Fun wrap(const Row& row) {
  return [&row](std::span<const Array> xs) {
    return std::vector<Array>{row.fn(Args(xs.begin(), xs.end()))};
  };
}

// "" when a and b have one aval and equal values (NaN == NaN), else what differs.
std::string same(const Array& got, const Array& want, double rtol = 0.0, double atol = 0.0) {
  if (got.aval() != want.aval())  // shape, dtype and weak type
    return "aval " + got.aval().str() + (got.weak_type() ? "{weak}" : "") + ", expected " +
           want.aval().str() + (want.weak_type() ? "{weak}" : "");
  return testing::compare(to_doubles(got), to_doubles(want), rtol, atol);
}

// Element i of a tolerance comparison, with the reference's scale.
std::string close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                  double atol = 0.0) {
  if (got.size() != want.size()) return "sizes differ";
  const double scale = max_abs(want) + 1.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - want[i]) <= rtol * (std::fabs(want[i]) + scale) + atol) continue;
    std::ostringstream os;
    os.precision(12);
    os << "element " << i << ": got " << got[i] << ", want " << want[i] << " (rtol " << rtol
       << ", atol " << atol << ")";
    return os.str();
  }
  return "";
}

std::string values_at(const Args& xs) {
  std::ostringstream os;
  os.precision(10);
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> v = to_doubles(xs[i]);
    os << (i ? "; " : "") << "x" << i << "=[";
    for (size_t k = 0; k < std::min<size_t>(v.size(), 6); ++k) os << (k ? "," : "") << v[k];
    os << (v.size() > 6 ? ",...]" : "]");
  }
  return os.str();
}

// ---------------------------------------------------------------- host slicing

int64_t prod(const Shape& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; ++i) p *= s[i];
  return p;
}

// x[..., i, ...] along axis, copied on the host.
Array take(const Array& x, int64_t axis, int64_t i) {
  const Shape& s = x.shape();
  Shape out = s;
  out.erase(out.begin() + axis);
  const int64_t outer = prod(s, 0, axis), n = s[axis];
  const int64_t inner = prod(s, axis + 1, s.size()) * static_cast<int64_t>(itemsize(x.dtype()));
  std::vector<char> buf(static_cast<size_t>(outer * inner) + 1);
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t o = 0; o < outer; ++o)
    if (inner) std::memcpy(buf.data() + o * inner, src + (o * n + i) * inner, inner);
  return array_from_host(Aval{out, x.dtype(), x.weak_type()}, buf.data());
}

// Stacks arrays of one aval along a new leading axis, on the host.
Array stack(const Args& xs) {
  const Aval& a = xs.at(0).aval();
  const size_t nb = a.nbytes();
  std::vector<char> buf(nb * xs.size() + 1);
  for (size_t k = 0; k < xs.size(); ++k)
    if (nb) std::memcpy(buf.data() + k * nb, xs[k].raw_data(), nb);
  Shape s = a.shape;
  s.insert(s.begin(), static_cast<int64_t>(xs.size()));
  return array_from_host(Aval{s, a.dtype, a.weak_type}, buf.data());
}

double eps_of(DType d) { return is_floating(d) ? finfo(d).eps : 0.0; }

// (plus - minus) / 2h elementwise.
std::vector<double> central(const Array& plus, const Array& minus, double h) {
  std::vector<double> p = to_doubles(plus), m = to_doubles(minus);
  for (size_t k = 0; k < p.size(); ++k) p[k] = (p[k] - m[k]) / (2 * h);
  return p;
}

// Example b of vmap's arguments: batched ones sliced on the host (axes may be negative).
Args example_of(const Args& args, const std::vector<std::optional<int64_t>>& axes, int64_t b) {
  Args ex = args;
  for (size_t i = 0; i < args.size(); ++i)
    if (axes[i]) ex[i] = take(args[i], *axes[i] < 0 ? *axes[i] + args[i].ndim() : *axes[i], b);
  return ex;
}

}  // namespace

// ---------------------------------------------------------------- table sanity

std::string validate(const Row& row) {
  if (row.name.empty()) return "a row without a name";
  for (char c : row.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return "row name '" + row.name + "' must use letters, digits and '_' only";
  if (!row.fn) return row.name + ": no fn";
  if (row.prim.empty() || row.family.empty()) return row.name + ": prim and family are required";
  if (row.shapes.empty()) return row.name + ": no shape patterns";
  for (const auto& p : row.shapes)
    if (p.size() != row.operands.size())
      return row.name + ": a shape pattern has " + std::to_string(p.size()) + " shapes for " +
             std::to_string(row.operands.size()) + " operands";
  bool free_dtype = false;
  for (const Operand& o : row.operands) free_dtype |= !o.dtype;
  if (free_dtype && row.dtypes.empty()) return row.name + ": operands need dtypes";
  if (row.oracle_op.empty() && !row.ref) return row.name + ": needs oracle_op or ref";
  if (row.deriv != Deriv::kNone && row.operands.empty())
    return row.name + ": a derivative check needs operands (use Deriv::kNone)";
  if (row.deriv == Deriv::kSmooth) {
    bool any_float = false;
    for (const Operand& o : row.operands)
      any_float |= o.diff && (o.dtype ? is_floating(*o.dtype)
                                      : std::any_of(row.dtypes.begin(), row.dtypes.end(),
                                                    [](DType d) { return is_floating(d); }));
    if (!any_float) return row.name + ": kSmooth needs a differentiable float operand";
  }
  return "";
}

std::vector<std::string> bound_primitives(const Row& row) {
  DType d = row.dtypes.empty() ? DType::kFloat32 : row.dtypes.front();
  testing::X64Scope x64(needs_x64(row, d));
  Args xs = draw_all(row, row.shapes.front(), d);
  ClosedJaxpr j = flat::make_jaxpr(wrap(row), xs);
  std::vector<std::string> out;
  for (const JaxprEqn& e : j.jaxpr->eqns) out.push_back(e.primitive->name());
  return out;
}

// ---------------------------------------------------------------- forward

Stats check_forward(const std::vector<const Row*>& rows, const std::string& family) {
  Stats st;
  const bool oracle = testing::oracle_available();
  testing::OracleBatch batch("sweep." + family);
  for (const Row* rp : rows) {
    const Row& row = *rp;
    std::vector<DType> dts = row.dtypes;
    if (dts.empty()) dts.push_back(DType::kFloat32);  // rows without free operands: once
    for (DType d : dts) {
      for (const auto& shapes : row.shapes) {
        testing::X64Scope x64(needs_x64(row, d));
        Args xs = draw_all(row, shapes, d);
        std::string name = row.name + " " + (row.dtypes.empty() ? "" : sn(d) + " ") + avals_str(xs);
        if (!row.oracle_op.empty()) {
          if (!oracle) continue;
          batch.add(name, row.oracle_op, row.oracle_params, xs, [&] { return row.fn(xs); });
          ++st.cases;
          continue;
        }
        ++st.cases;
        try {
          Array got = row.fn(xs);
          std::vector<std::vector<double>> vals;
          std::vector<Aval> avals;
          for (const Array& x : xs) {
            vals.push_back(to_doubles(x));
            avals.push_back(x.aval());
          }
          RefOut want = row.ref(vals, avals);
          if (got.shape() != want.shape || got.dtype() != want.dtype) {
            ADD_FAILURE() << where(row, name) << ": got " << got.aval().str() << ", expected "
                          << Aval{want.shape, want.dtype, false}.str();
            continue;
          }
          std::string m =
              testing::compare(to_doubles(got), want.values, row.ref_rtol, row.ref_atol);
          if (!m.empty()) ADD_FAILURE() << where(row, name) << ": " << m << "; " << values_at(xs);
        } catch (const std::exception& e) {
          ADD_FAILURE() << where(row, name) << " raised: " << e.what();
        }
      }
    }
  }
  if (batch.size()) {
    testing::OracleBatch::Summary s = batch.run();
    if (s.skipped)
      ADD_FAILURE() << "sweep." << family << ": the oracle skipped " << s.skipped
                    << " cases (every row's cases must have a reference)";
  }
  return st;
}

// ---------------------------------------------------------------- jvp

Stats check_jvp(const Row& row) {
  Stats st;
  testing::X64Scope x64(true);
  const flat::Fun f = wrap(row);
  rounds(row, [&](size_t si) {
    Args xs = draw_smooth(row, row.shapes[si], DType::kFloat64);
    const std::string label = "jvp at " + avals_str(xs);
    try {
      Args vs = directions(row, xs);
      Array y = row.fn(xs);
      auto [po, to] = flat::jvp(f, xs, vs);
      ++st.cases;
      if (std::string m = same(po[0], y); !m.empty())
        ADD_FAILURE() << where(row, label) << ": jvp's primal output differs from eager: " << m;
      if (row.deriv == Deriv::kZeroTangent) {
        const Array& t = to[0];
        if (!is_floating(y.dtype())) {
          if (t.dtype() != DType::kFloat0 || t.shape() != y.shape())
            ADD_FAILURE() << where(row, label) << ": tangent " << t.aval().str() << " for output "
                          << y.aval().str() << ", expected float0";
        } else if (std::string m = same(
                       t, from_doubles(std::vector<double>(y.size(), 0.0), y.shape(), y.dtype()));
                   !m.empty()) {
          ADD_FAILURE() << where(row, label) << ": the tangent must be zero: " << m;
        }
        return;
      }
      if (to[0].aval() != Aval{y.shape(), y.dtype(), false}) {
        ADD_FAILURE() << where(row, label) << ": tangent " << to[0].aval().str() << " for output "
                      << y.aval().str();
        return;
      }
      // First order: central differences along vs.
      double xmax = 1.0;
      for (size_t i = 0; i < xs.size(); ++i)
        if (vs[i].defined()) xmax = std::max(xmax, max_abs(to_doubles(xs[i])));
      const double h = row.fd_h * xmax;
      const Array plus = row.fn(shifted(xs, h, vs)), minus = row.fn(shifted(xs, -h, vs));
      std::vector<double> fd = central(plus, minus, h);
      // The outputs' own rounding enters the difference quotient: each of f(x +- h) is off by
      // up to half an ulp of the output dtype, so the quotient by eps * max|f| / (2h), and the
      // tangent (rounded to the output dtype too) by eps * |t|. Negligible for float64
      // outputs; for lossy ones (convert to bf16) it is the bound, not the seed's luck.
      const double out_eps = eps_of(y.dtype());
      const double noise =
          out_eps * (std::max(max_abs(to_doubles(plus)), max_abs(to_doubles(minus))) / (2 * h) +
                     max_abs(to_doubles(to[0])));
      if (std::string m = close(to_doubles(to[0]), fd, row.jvp_rtol, noise); !m.empty())
        ADD_FAILURE() << where(row, label) << ": jvp vs finite differences: " << m << "; "
                      << values_at(xs) << "; v: " << values_at(vs);
      if (!row.second_order) return;
      // Second order: the jvp of x -> jvp(f, x, v).tangent along ws vs its central differences.
      Args ws = directions(row, xs);
      flat::Fun g = [&](std::span<const Array> as) { return flat::jvp(f, as, vs).second; };
      auto [go, gt] = flat::jvp(g, xs, ws);
      ++st.cases;
      const double h2 = row.fd_h2 * xmax;
      std::vector<double> fd2 = central(g(shifted(xs, h2, ws))[0], g(shifted(xs, -h2, ws))[0], h2);
      if (std::string m = close(to_doubles(gt[0]), fd2, row.jvp2_rtol); !m.empty())
        ADD_FAILURE() << where(row, label) << ": second-order jvp vs finite differences: " << m
                      << "; " << values_at(xs) << "; v: " << values_at(vs)
                      << "; w: " << values_at(ws);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where(row, label) << " raised: " << e.what();
    }
  });
  return st;
}

// ---------------------------------------------------------------- vjp

namespace {

// "" when <u, L w> == <L^T u, w> for random u (one per float output of `lin`).
std::string adjoint_mismatch(const flat::Linearized& lin, const Args& ws, double tol) {
  Args lw = lin.jvp(ws), us;
  double lhs = 0, scale = 1e-300;
  for (size_t o = 0; o < lw.size(); ++o) {
    const Aval& a = lin.out_avals()[o];
    if (!is_floating(a.dtype)) {
      us.emplace_back();
      continue;
    }
    us.push_back(draw(any(-1.0, 1.0), a.shape, a.dtype));
    std::vector<double> u = to_doubles(us.back()), l = to_doubles(lw[o]);
    lhs += dot(u, l);
    scale += norm(u) * norm(l);
  }
  Args lt = lin.vjp(us);
  double rhs = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    if (!ws[i].defined()) continue;
    std::vector<double> c = to_doubles(lt[i]), w = to_doubles(ws[i]);
    rhs += dot(c, w);
    scale += norm(c) * norm(w);
  }
  if (std::fabs(lhs - rhs) <= tol * scale) return "";
  std::ostringstream os;
  os.precision(17);
  os << "<u, L w> = " << lhs << " but <L^T u, w> = " << rhs << " (tolerance " << tol * scale << ")";
  return os.str();
}

// Second order through reverse mode, in float64: g(x) = jvp(f, x, v).tangent linearized and
// transposed (reverse over forward), and h(x) = vjp(f, x)(u) differentiated forward against
// finite differences and linearized and transposed (forward and reverse over reverse).
void check_second_order_ad(const Row& row, const flat::Fun& f, const Args& xs, const Args& vs,
                           const std::string& label, Stats& st) {
  double tol = 64 * finfo(DType::kFloat64).eps;
  for (const Array& x : xs) tol = std::max(tol, 64 * eps_of(x.dtype()));
  Array y = row.fn(xs);
  tol = std::max(tol, 64 * eps_of(y.dtype()));
  Args ws = directions(row, xs);
  // The second-order maps are evaluated through intermediate terms (e.g. atanh's
  // 2x/(1-x^2)^2 near its poles) whose rounding exceeds 64 ulp of the Cauchy-Schwarz scale of
  // the pairing; a wrong rule is off by O(1), so 64 x 64 ulp still separates the two.
  const double adjoint_tol = tol * std::max(row.adjoint_tol_scale, 64.0);
  flat::Fun g = [&](std::span<const Array> as) { return flat::jvp(f, as, vs).second; };
  flat::Linearized lg = flat::linearize(g, xs);
  ++st.cases;
  if (std::string m =
          close(to_doubles(lg.jvp(ws)[0]), to_doubles(flat::jvp(g, xs, ws).second[0]), tol);
      !m.empty())
    ADD_FAILURE() << where(row, label)
                  << ": linearize of the jvp differs from jvp of the jvp: " << m;
  if (std::string m = adjoint_mismatch(lg, ws, adjoint_tol); !m.empty())
    ADD_FAILURE() << where(row, label) << ": reverse over forward: " << m;

  Array u = draw(any(-1.0, 1.0), y.shape(), y.dtype());
  std::vector<size_t> diff;
  for (size_t i = 0; i < xs.size(); ++i)
    if (vs[i].defined()) diff.push_back(i);
  flat::Fun h = [&](std::span<const Array> as) {
    Args cts = flat::linearize(f, as).vjp(Args{u}), out;
    for (size_t i : diff) out.push_back(cts[i]);
    return out;
  };
  ++st.cases;
  double xmax = 1.0;
  for (size_t i : diff) xmax = std::max(xmax, max_abs(to_doubles(xs[i])));
  const double h2 = row.fd_h2 * xmax;
  Args ht = flat::jvp(h, xs, ws).second;
  Args hp = h(shifted(xs, h2, ws)), hm = h(shifted(xs, -h2, ws));
  for (size_t j = 0; j < diff.size(); ++j) {
    if (std::string msg = close(to_doubles(ht[j]), central(hp[j], hm[j], h2), row.jvp2_rtol);
        !msg.empty())
      ADD_FAILURE() << where(row, label) << ": forward over reverse (cotangent of operand "
                    << diff[j] << ") vs finite differences: " << msg << "; " << values_at(xs);
  }
  if (std::string m = adjoint_mismatch(flat::linearize(h, xs), ws, adjoint_tol); !m.empty())
    ADD_FAILURE() << where(row, label) << ": reverse over reverse: " << m;
}

}  // namespace

Stats check_vjp(const Row& row) {
  Stats st;
  const flat::Fun f = wrap(row);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing::X64Scope x64(needs_x64(row, dt));
    rounds(row, [&](size_t si) {
      Args xs = draw_smooth(row, row.shapes[si], dt);
      const std::string label = "vjp at " + avals_str(xs);
      try {
        Array y = row.fn(xs);
        flat::Linearized lin = flat::linearize(f, xs);
        ++st.cases;
        if (std::string m = same(lin.outs()[0], y); !m.empty())
          ADD_FAILURE() << where(row, label) << ": linearize's output differs from eager: " << m;
        if (!is_floating(y.dtype())) {
          // A non-float output pulls back (a float0 cotangent) to zero cotangents.
          Args cts = lin.vjp(Args{Array()});
          for (size_t i = 0; i < xs.size(); ++i) {
            const bool has_t = is_floating(xs[i].dtype());
            // As JAX: a weakly typed input gets a weakly typed cotangent.
            Aval want{xs[i].shape(), has_t ? xs[i].dtype() : DType::kFloat0,
                      has_t && xs[i].weak_type()};
            if (cts[i].aval() != want)
              ADD_FAILURE() << where(row, label) << ": cotangent " << i << " is "
                            << cts[i].aval().str() << ", expected " << want.str();
            else if (has_t && max_abs(to_doubles(cts[i])) != 0)
              ADD_FAILURE() << where(row, label) << ": cotangent " << i << " must be zero";
          }
          return;
        }
        Args vs = directions(row, xs);
        Array jv = lin.jvp(vs)[0];
        Array jv_direct = flat::jvp(f, xs, vs).second[0];
        double tol = 64 * std::max(eps_of(dt), eps_of(y.dtype()));
        for (const Array& x : xs) tol = std::max(tol, 64 * eps_of(x.dtype()));
        if (std::string m = close(to_doubles(jv), to_doubles(jv_direct), tol); !m.empty())
          ADD_FAILURE() << where(row, label) << ": linearize's jvp differs from jvp: " << m;
        Array u = draw(any(-1.0, 1.0), y.shape(), y.dtype());
        Args cts = lin.vjp(Args{u});
        double rhs = 0, rscale = 0;
        for (size_t i = 0; i < xs.size(); ++i) {
          const bool has_t = is_floating(xs[i].dtype());
          // As JAX: a weakly typed input gets a weakly typed cotangent.
          Aval want{xs[i].shape(), has_t ? xs[i].dtype() : DType::kFloat0,
                    has_t && xs[i].weak_type()};
          if (cts[i].aval() != want) {
            ADD_FAILURE() << where(row, label) << ": cotangent " << i << " is "
                          << cts[i].aval().str() << ", expected " << want.str();
            return;
          }
          if (!vs[i].defined()) continue;
          std::vector<double> c = to_doubles(cts[i]), v = to_doubles(vs[i]);
          rhs += dot(c, v);
          rscale += norm(c) * norm(v);
        }
        std::vector<double> uv = to_doubles(u), jvv = to_doubles(jv);
        const double lhs = dot(uv, jvv);
        const double scale = norm(uv) * norm(jvv) + rscale + 1e-300;
        if (!(std::fabs(lhs - rhs) <= tol * scale))
          ADD_FAILURE() << where(row, label) << ": <u, J v> = " << lhs
                        << " but <J^T u, v> = " << rhs << " (tolerance " << tol * scale << "); "
                        << values_at(xs);
        if (row.deriv == Deriv::kZeroTangent && (lhs != 0 || rhs != 0 || max_abs(jvv) != 0))
          ADD_FAILURE() << where(row, label) << ": a zero-tangent op has a nonzero linearization";
        if (dt == DType::kFloat64 && row.deriv == Deriv::kSmooth && row.second_order)
          check_second_order_ad(row, f, xs, vs, label, st);
        // grad of sum(f) == vjp with ones.
        flat::Fun loss = [&](std::span<const Array> as) {
          Array o = row.fn(Args(as.begin(), as.end()));
          std::vector<int64_t> axes(o.shape().size());
          for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int64_t>(k);
          return std::vector<Array>{lax::reduce_sum(o, axes)};
        };
        flat::ValueAndGrad vg = flat::value_and_grad(loss, xs, /*allow_int=*/true);
        ++st.cases;
        Array ones = from_doubles(std::vector<double>(y.size(), 1.0), y.shape(), y.dtype());
        Args g1 = lin.vjp(Args{ones});
        for (size_t i = 0; i < xs.size(); ++i) {
          if (!differentiable(row, i, xs[i])) continue;
          if (std::string m = close(to_doubles(vg.grads[i]), to_doubles(g1[i]), tol); !m.empty())
            ADD_FAILURE() << where(row, label)
                          << ": grad(sum f) differs from vjp(ones) for operand " << i << ": " << m;
        }
        double sum = 0;
        for (double v : to_doubles(y)) sum += v;
        if (std::string m = close(to_doubles(vg.outs[0]), {sum}, tol * (y.size() + 1)); !m.empty())
          ADD_FAILURE() << where(row, label) << ": value_and_grad's value: " << m;
      } catch (const std::exception& e) {
        ADD_FAILURE() << where(row, label) << " raised: " << e.what();
      }
    });
  }
  return st;
}

// ---------------------------------------------------------------- vmap

namespace {

std::string axes_str(const std::vector<std::optional<int64_t>>& axes) {
  std::ostringstream os;
  os << "in_axes=(";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i) os << ",";
    if (axes[i]) {
      os << *axes[i];
    } else {
      os << "None";
    }
  }
  os << ")";
  return os.str();
}

// Compares vmap's result (batch axis `out_axis`) with the per-example outputs; a batch of
// size 0 has none, so `example` (one example's output aval) gives the expected aval.
// ulps >= 0 overrides the row's exactness (vmap of jvp/vjp: a tolerance).
void compare_batched(const Row& row, const std::string& label, const Array& got, int64_t out_axis,
                     const Args& per_example, double ulps = -1.0, const Aval* example = nullptr) {
  const int64_t nb = static_cast<int64_t>(per_example.size());
  if (got.ndim() == 0 || out_axis < 0 || got.shape()[out_axis] != nb) {
    ADD_FAILURE() << where(row, label) << ": vmap's output " << got.aval().str()
                  << " has no batch axis of size " << nb << " at " << out_axis;
    return;
  }
  if (nb == 0) {
    Shape s = example->shape;
    s.insert(s.begin() + out_axis, 0);
    const Aval want{s, example->dtype, example->weak_type};
    if (got.aval() != want)
      ADD_FAILURE() << where(row, label) << ": vmap over an empty batch gave " << got.aval().str()
                    << ", expected " << want.str();
    return;
  }
  Args parts;
  for (int64_t b = 0; b < nb; ++b) parts.push_back(take(got, out_axis, b));
  Array g = stack(parts), w = stack(per_example);
  double atol = 0.0;
  if (ulps < 0 && !row.vmap_exact) ulps = row.vmap_ulps;
  if (ulps > 0) atol = ulps * eps_of(w.dtype()) * (max_abs(to_doubles(w)) + 1.0);
  if (std::string m = same(g, w, 0.0, atol); !m.empty())
    ADD_FAILURE() << where(row, label) << ": vmap vs loop-and-stack: " << m;
}

}  // namespace

// ---------------------------------------------------------------- jit

Stats check_jit(const Row& row) {
  Stats st;
  const flat::Fun f = wrap(row);
  std::vector<DType> dts = row.dtypes;
  if (dts.empty()) dts.push_back(DType::kFloat32);
  for (DType d : dts) {
    for (const auto& shapes : row.shapes) {
      testing::X64Scope x64(needs_x64(row, d));
      Args xs = draw_all(row, shapes, d);
      const std::string label = "jit " + sn(d) + " " + avals_str(xs);
      ++st.cases;
      try {
        Array want = row.fn(xs);
        JitOptions o;
        o.name = row.name;
        flat::JitCache cache(o);
        TreeDef out_def;
        std::vector<TreeDef> leaves(xs.size(), TreeDef::leaf());
        std::vector<Array> got = cache.call(TreeDef::tuple(leaves), xs, f, out_def);
        if (std::string m = same(got.at(0), want); !m.empty())
          ADD_FAILURE() << where(row, label) << ": jit differs from eager: " << m << "; "
                        << values_at(xs);
      } catch (const std::exception& e) {
        ADD_FAILURE() << where(row, label) << " raised: " << e.what();
      }
    }
  }
  return st;
}

Stats check_vmap(const Row& row) {
  Stats st;
  const flat::Fun f = wrap(row);
  const size_t n = row.operands.size();
  // vmap of args (batch size nb) against the loop, the output batched at the front or back.
  auto run = [&](const Args& args, const std::vector<std::optional<int64_t>>& in_axes, int64_t nb,
                 const std::string& label, bool out_back) {
    ++st.cases;
    try {
      Args per;
      Aval example;
      for (int64_t b = 0; b < std::max<int64_t>(nb, 1); ++b) {
        Args ex = nb > 0 ? example_of(args, in_axes, b) : args;
        for (size_t i = 0; i < n && nb == 0; ++i) {
          if (!in_axes[i]) continue;
          Shape s = args[i].shape();  // an empty batch has no example: draw one
          s.erase(s.begin() + (*in_axes[i] < 0 ? *in_axes[i] + args[i].ndim() : *in_axes[i]));
          ex[i] = draw(row.operands[i], s, args[i].dtype());
        }
        Array y = row.fn(ex);
        example = y.aval();
        if (nb > 0) per.push_back(y);
      }
      auto outs_for = [&](size_t k) {
        return std::vector<std::optional<int64_t>>(k, out_back ? std::optional<int64_t>(-1) : 0);
      };
      Array got = flat::vmap(f, args, in_axes, outs_for)[0];
      compare_batched(row, label, got, out_back ? got.ndim() - 1 : 0, per, -1.0, &example);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where(row, label) << " raised: " << e.what();
    }
  };
  enum Place { kFront, kBack, kMiddle, kMixed };
  // Every batched/unbatched combination of the operands (at least one batched), with the
  // batch axes at the given places.
  auto sweep_combos = [&](DType d, const std::vector<Shape>& shapes, int64_t nb, bool all_places) {
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
      int batched = 0, max_rank = 0;
      for (size_t i = 0; i < n; ++i)
        if (mask >> i & 1) {
          ++batched;
          max_rank = std::max(max_rank, static_cast<int>(shapes[i].size()));
        }
      std::vector<Place> places = {kFront};
      if (all_places && max_rank >= 1) places.push_back(kBack);
      if (all_places && max_rank >= 2) places.push_back(kMiddle);
      if (all_places && batched >= 2 && max_rank >= 1) places.push_back(kMixed);
      for (Place pl : places) {
        Args args;
        std::vector<std::optional<int64_t>> in_axes(n);
        for (size_t i = 0; i < n; ++i) {
          const DType od = operand_dtype(row.operands[i], d);
          if (!(mask >> i & 1)) {
            args.push_back(draw(row.operands[i], shapes[i], od));
            continue;
          }
          const int64_t r = static_cast<int64_t>(shapes[i].size());
          int64_t pos = 0;
          if (pl == kBack) pos = r;
          if (pl == kMiddle) pos = r / 2;
          if (pl == kMixed) pos = std::uniform_int_distribution<int64_t>(0, r)(rng());
          Shape s = shapes[i];
          s.insert(s.begin() + pos, nb);
          args.push_back(draw(row.operands[i], s, od));
          in_axes[i] = pos == r && r > 0 ? -1 : pos;  // the back as a negative axis
        }
        run(args, in_axes, nb, "vmap " + sn(d) + " " + avals_str(args) + " " + axes_str(in_axes),
            false);
      }
    }
  };
  std::vector<DType> dts = row.dtypes;
  if (dts.empty()) dts.push_back(DType::kFloat32);  // every operand has a fixed dtype
  for (DType d : dts) {
    testing::X64Scope x64(needs_x64(row, d));
    for (const auto& shapes : row.shapes) sweep_combos(d, shapes, kB, true);
  }
  const DType d0 = dts.front();
  testing::X64Scope x64(needs_x64(row, d0));
  // Batches of one (beside lax's size-1 broadcasting) and of none.
  for (int64_t nb : {1, 0})
    for (const auto& shapes : row.shapes) sweep_combos(d0, shapes, nb, false);
  // Nested vmap (batch sizes 2 inside 3), random operands batched at each level at random
  // places, against the double loop.
  for (const auto& shapes : row.shapes) {
    const unsigned all = (1u << n) - 1;
    for (unsigned outer_mask : {all, std::uniform_int_distribution<unsigned>(1, all)(rng())}) {
      const unsigned inner_mask = std::uniform_int_distribution<unsigned>(1, all)(rng());
      constexpr int64_t kInner = 2;
      Args args;
      std::vector<std::optional<int64_t>> outer(n), inner(n);
      for (size_t i = 0; i < n; ++i) {
        Shape s = shapes[i];
        if (inner_mask >> i & 1) {
          inner[i] = std::uniform_int_distribution<int64_t>(0, s.size())(rng());
          s.insert(s.begin() + *inner[i], kInner);
        }
        if (outer_mask >> i & 1) {
          outer[i] = std::uniform_int_distribution<int64_t>(0, s.size())(rng());
          s.insert(s.begin() + *outer[i], kB);
        }
        args.push_back(draw(row.operands[i], s, operand_dtype(row.operands[i], d0)));
      }
      const std::string label = "nested vmap " + avals_str(args) + " outer " + axes_str(outer) +
                                " inner " + axes_str(inner);
      ++st.cases;
      try {
        auto out0 = [](size_t k) { return std::vector<std::optional<int64_t>>(k, 0); };
        flat::Fun inner_fn = [&](std::span<const Array> xs) {
          return flat::vmap(f, xs, inner, out0);
        };
        Array got = flat::vmap(inner_fn, args, outer, out0, kB)[0];
        Args per;
        for (int64_t b = 0; b < kB; ++b) {
          Args mid;
          for (int64_t c = 0; c < kInner; ++c) {
            Args ex = args;
            for (size_t i = 0; i < n; ++i) {
              if (outer[i]) ex[i] = take(ex[i], *outer[i], b);
              if (inner[i]) ex[i] = take(ex[i], *inner[i], c);
            }
            mid.push_back(row.fn(ex));
          }
          per.push_back(stack(mid));
        }
        compare_batched(row, label, got, 0, per);
      } catch (const std::exception& e) {
        ADD_FAILURE() << where(row, label) << " raised: " << e.what();
      }
    }
  }
  // out_axes at the back, once: every operand batched at the front.
  Args args;
  std::vector<std::optional<int64_t>> in_axes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    Shape s = row.shapes.front()[i];
    s.insert(s.begin(), kB);
    args.push_back(draw(row.operands[i], s, operand_dtype(row.operands[i], d0)));
  }
  run(args, in_axes, kB, "vmap " + avals_str(args) + " out_axes=-1", true);
  return st;
}

// ---------------------------------------------------------------- vmap of jvp and vjp

Stats check_vmap_of_ad(const Row& row) {
  Stats st;
  const flat::Fun f = wrap(row);
  const size_t n = row.operands.size();
  std::vector<size_t> diff;  // operands with tangents (row dtype float32)
  for (size_t i = 0; i < n; ++i)
    if (row.operands[i].diff && is_floating(operand_dtype(row.operands[i], DType::kFloat32)))
      diff.push_back(i);
  const size_t k = diff.size();
  testing::X64Scope x64(needs_x64(row, DType::kFloat32));
  rounds(row, [&](size_t si) {
    const auto& shapes = row.shapes[si];
    // Primals: all unbatched (jacfwd/jacrev's pattern), all batched, or a random subset, at
    // the front or the back; tangents and cotangents batched at the front.
    const unsigned all = (1u << n) - 1;
    for (unsigned mask : {0u, all, std::uniform_int_distribution<unsigned>(0, all)(rng())}) {
      const bool back = std::bernoulli_distribution(0.5)(rng());
      Args args;
      std::vector<std::optional<int64_t>> in_axes;
      for (size_t i = 0; i < n; ++i) {
        Shape s = shapes[i];
        const int64_t pos = back ? static_cast<int64_t>(s.size()) : 0;
        if (mask >> i & 1) s.insert(s.begin() + pos, kB);
        args.push_back(draw(row.operands[i], s, operand_dtype(row.operands[i], DType::kFloat32)));
        in_axes.push_back(mask >> i & 1 ? std::optional<int64_t>(pos) : std::nullopt);
      }
      for (size_t j : diff) {
        Shape s = shapes[j];
        s.insert(s.begin(), kB);
        args.push_back(draw(any(-1.0, 1.0), s, args[j].dtype()));
        in_axes.push_back(0);
      }
      // jvp: (xs, tangents of the differentiable operands) -> the output tangent.
      flat::Fun jvp_fn = [&](std::span<const Array> as) {
        Args xs(as.begin(), as.begin() + n), vs(n);
        for (size_t j = 0; j < k; ++j) vs[diff[j]] = as[n + j];
        return flat::jvp(f, xs, vs).second;
      };
      const std::string label = "vmap of jvp/vjp " + avals_str(args) + " " + axes_str(in_axes);
      try {
        ++st.cases;
        Args per;
        for (int64_t b = 0; b < kB; ++b) per.push_back(jvp_fn(example_of(args, in_axes, b))[0]);
        auto out0 = [](size_t m) { return std::vector<std::optional<int64_t>>(m, 0); };
        Array got = flat::vmap(jvp_fn, args, in_axes, out0)[0];
        compare_batched(row, "jvp " + label, got, 0, per, 64.0);
        // vjp: (xs, u) -> the cotangents of the differentiable operands.
        Args vargs(args.begin(), args.begin() + n);
        std::vector<std::optional<int64_t>> vaxes(in_axes.begin(), in_axes.begin() + n);
        const Args ex0 = example_of(args, in_axes, 0);
        Array y0 = row.fn(Args(ex0.begin(), ex0.begin() + n));
        Shape us = y0.shape();
        us.insert(us.begin(), kB);
        vargs.push_back(draw(any(-1.0, 1.0), us, y0.dtype()));
        vaxes.push_back(0);
        flat::Fun vjp_fn = [&](std::span<const Array> as) {
          Args xs(as.begin(), as.begin() + n);
          Args cts = flat::linearize(f, xs).vjp(Args{as[n]});
          Args out;
          for (size_t j : diff) out.push_back(cts[j]);
          return out;
        };
        std::vector<Args> per_ct(k);
        for (int64_t b = 0; b < kB; ++b) {
          Args c = vjp_fn(example_of(vargs, vaxes, b));
          for (size_t j = 0; j < k; ++j) per_ct[j].push_back(c[j]);
        }
        Args got_ct = flat::vmap(vjp_fn, vargs, vaxes, out0);
        for (size_t j = 0; j < k; ++j)
          compare_batched(row, "vjp (operand " + std::to_string(diff[j]) + ") " + label, got_ct[j],
                          0, per_ct[j], 64.0);
      } catch (const std::exception& e) {
        ADD_FAILURE() << where(row, label) << " raised: " << e.what();
      }
    }
  });
  return st;
}

// ---------------------------------------------------------------- kinks

double min_pairwise_gap(const Array& x) {
  std::vector<double> v = to_doubles(x);
  std::sort(v.begin(), v.end());
  double g = std::numeric_limits<double>::infinity();
  for (size_t i = 1; i < v.size(); ++i) g = std::min(g, v[i] - v[i - 1]);
  return g;
}

double min_abs_diff(const Array& x, const Array& y) {
  std::vector<double> v = to_doubles(lax::sub(x, y));
  double g = std::numeric_limits<double>::infinity();
  for (double d : v) g = std::min(g, std::fabs(d));
  return g;
}

}  // namespace tessera::sweep
