// JVP and transpose rules of the elementwise families (add ... pow, the unary math ops,
// comparisons, select_n, convert_element_type). Rules are called directly on concrete float64
// arrays: JVPs against central finite differences of the primitive itself, transposes through
// the dot-product identity <u, J v> == <J^T u, v>, plus symbolic zeros, lax broadcasting (rank-0
// and size-1 operands), JAX's even split of max/min ties and pow's care at x == 0.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "prims/prims.h"
#include "tessera/lax.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::to_doubles;
using Fn = std::function<Array(const std::vector<Array>&)>;

class AdRules : public ::testing::Test {
 protected:
  void SetUp() override {
    register_all();  // the rules are set by the families' registration functions
    saved_ = x64_enabled();
    set_x64_enabled(true);
  }
  void TearDown() override { set_x64_enabled(saved_); }
  bool saved_ = false;
};

constexpr DType kF64 = DType::kFloat64;

Array from_doubles(const Shape& shape, DType d, const std::vector<double>& v) {
  Array a = empty_array(Aval{shape, d, false}, "test");
  const size_t item = itemsize(d);
  auto* p = static_cast<unsigned char*>(a.buffer()->data());
  for (size_t i = 0; i < v.size(); ++i) store_from_double(d, p + i * item, v[i]);
  return a;
}

Array rnd(const Shape& s, double lo = -2.0, double hi = 2.0) {
  return random_array(s, kF64, lo, hi);
}

// x + s * t on the host (t undefined: x itself).
Array shifted(const Array& x, const Array& t, double s) {
  if (!t.defined()) return x;
  std::vector<double> a = to_doubles(x), b = to_doubles(t);
  for (size_t i = 0; i < a.size(); ++i) a[i] += s * b[i];
  return from_doubles(x.shape(), x.dtype(), a);
}

double dot(const Array& a, const Array& b) {
  std::vector<double> x = to_doubles(a), y = to_doubles(b);
  EXPECT_EQ(x.size(), y.size());
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// Runs p.jvp and checks: primal output == f(primals) exactly; tangent has the output's aval
// (or is undefined exactly when every tangent is); tangent == central differences of f.
void check_jvp(const Primitive& p, const Fn& f, const std::vector<Array>& primals,
               const std::vector<Array>& tangents, const Params& params = Params(),
               double rtol = 1e-5, double atol = 1e-7) {
  SCOPED_TRACE(p.name());
  ASSERT_TRUE(p.jvp) << p.name() << " has no jvp rule";
  auto [outs, touts] = p.jvp(primals, tangents, params);
  ASSERT_EQ(outs.size(), 1u);
  ASSERT_EQ(touts.size(), 1u);
  Array want = f(primals);
  EXPECT_EQ(outs[0].aval(), want.aval());
  EXPECT_EQ(compare(to_doubles(outs[0]), to_doubles(want), 0, 0), "");
  bool any = false;
  for (const Array& t : tangents) any = any || t.defined();
  if (!any) {
    EXPECT_FALSE(touts[0].defined());
    return;
  }
  ASSERT_TRUE(touts[0].defined());
  EXPECT_EQ(touts[0].shape(), want.shape());
  EXPECT_EQ(touts[0].dtype(), want.dtype());
  const double h = 1e-6;
  std::vector<Array> plus, minus;
  for (size_t i = 0; i < primals.size(); ++i) {
    plus.push_back(shifted(primals[i], tangents[i], h));
    minus.push_back(shifted(primals[i], tangents[i], -h));
  }
  std::vector<double> fp = to_doubles(f(plus)), fm = to_doubles(f(minus)), fd(fp.size());
  for (size_t i = 0; i < fp.size(); ++i) fd[i] = (fp[i] - fm[i]) / (2 * h);
  EXPECT_EQ(compare(to_doubles(touts[0]), fd, rtol, atol), "");
}

Fn bin(Array (*op)(const Array&, const Array&)) {
  return [op](const std::vector<Array>& a) { return op(a[0], a[1]); };
}

struct ShapePair {
  Shape x, y;
};
const ShapePair kShapes[] = {{{3, 4}, {3, 4}}, {{3, 4}, {}},           {{}, {3, 4}},
                             {{3, 1}, {1, 4}}, {{2, 3, 4}, {2, 1, 4}}, {{}, {}}};

// Operands x, y of the given shapes with values suited to op (max/min: kept >= 0.5 apart).
std::pair<Array, Array> operands(const std::string& op, const ShapePair& s) {
  if (op == "div") return {rnd(s.x), rnd(s.y, 0.5, 2.0)};
  if (op == "pow") return {rnd(s.x, 0.5, 2.0), rnd(s.y, -1.5, 1.5)};
  if (op == "max" || op == "min") {
    std::vector<double> a = to_doubles(rnd(s.x, -3, 3)), b = to_doubles(rnd(s.y, -3, 3));
    for (double& v : a) v = std::round(v);
    for (double& v : b) v = std::round(v) + 0.5;
    return {from_doubles(s.x, kF64, a), from_doubles(s.y, kF64, b)};
  }
  return {rnd(s.x), rnd(s.y)};
}

TEST_F(AdRules, BinaryJvpMatchesFiniteDifferences) {
  struct Op {
    const Primitive& p;
    Array (*f)(const Array&, const Array&);
  };
  const Op ops[] = {{prims::add, lax::add}, {prims::sub, lax::sub}, {prims::mul, lax::mul},
                    {prims::div, lax::div}, {prims::max, lax::max}, {prims::min, lax::min},
                    {prims::pow, lax::pow}};
  for (const Op& op : ops) {
    for (const ShapePair& s : kShapes) {
      SCOPED_TRACE((Aval{s.x, kF64, false}.str() + " op " + Aval{s.y, kF64, false}.str()));
      auto [x, y] = operands(op.p.name(), s);
      Array tx = rnd(s.x), ty = rnd(s.y);
      check_jvp(op.p, bin(op.f), {x, y}, {tx, ty});
      check_jvp(op.p, bin(op.f), {x, y}, {tx, Array()});  // symbolic zero in y
      check_jvp(op.p, bin(op.f), {x, y}, {Array(), ty});  // symbolic zero in x
      check_jvp(op.p, bin(op.f), {x, y}, {Array(), Array()});
    }
  }
}

TEST_F(AdRules, MaxMinSplitTiesEvenly) {
  Array x = rnd({4, 5});
  std::vector<double> xv = to_doubles(x);
  // y equals x on even positions (ties) and is 1 larger / smaller elsewhere.
  for (bool is_max : {true, false}) {
    std::vector<double> yv = xv;
    for (size_t i = 1; i < yv.size(); i += 2) yv[i] += (i % 4 == 1) ? 1.0 : -1.0;
    Array y = from_doubles({4, 5}, kF64, yv);
    Array tx = rnd({4, 5}), ty = rnd({4, 5});
    const Primitive& p = is_max ? prims::max : prims::min;
    auto [outs, touts] = p.jvp(std::vector<Array>{x, y}, std::vector<Array>{tx, ty}, Params());
    std::vector<double> a = to_doubles(tx), b = to_doubles(ty), want(a.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (xv[i] == yv[i])
        want[i] = 0.5 * (a[i] + b[i]);
      else
        want[i] = ((xv[i] > yv[i]) == is_max) ? a[i] : b[i];
    }
    EXPECT_EQ(compare(to_doubles(touts[0]), want, 1e-15, 0), "") << p.name();
  }
}

TEST_F(AdRules, PowJvpIsFiniteAtZeroBase) {
  // x == 0: d/dx is 0 where y == 0 (not 0 * inf), 2 * 0 for y == 2, and the log term uses
  // log(1) * 0^y == 0 instead of -inf * 0.
  Array x = from_doubles({3}, kF64, {0.0, 0.0, 0.0});
  Array y = from_doubles({3}, kF64, {0.0, 2.0, 0.5});
  Array t = from_doubles({3}, kF64, {1.0, 1.0, 1.0});
  auto [o1, tx] =
      prims::pow.jvp(std::vector<Array>{x, y}, std::vector<Array>{t, Array()}, Params());
  EXPECT_EQ(compare(to_doubles(tx[0]), {0.0, 0.0, INFINITY}, 0, 0), "");
  auto [o2, ty] =
      prims::pow.jvp(std::vector<Array>{x, y}, std::vector<Array>{Array(), t}, Params());
  EXPECT_EQ(compare(to_doubles(ty[0]), {0.0, 0.0, 0.0}, 0, 0), "");
}

TEST_F(AdRules, UnaryJvpMatchesFiniteDifferences) {
  struct Op {
    const Primitive& p;
    Array (*f)(const Array&);
    double lo, hi;
  };
  const Op ops[] = {{prims::neg, lax::neg, -2, 2},           {prims::exp, lax::exp, -2, 2},
                    {prims::log, lax::log, 0.5, 3},          {prims::sin, lax::sin, -3, 3},
                    {prims::cos, lax::cos, -3, 3},           {prims::tanh, lax::tanh, -2, 2},
                    {prims::logistic, lax::logistic, -4, 4}, {prims::sqrt, lax::sqrt, 0.5, 3}};
  for (const Op& op : ops) {
    for (const Shape& s : {Shape{5, 3}, Shape{}}) {
      Array x = rnd(s, op.lo, op.hi);
      Fn f = [&](const std::vector<Array>& a) { return op.f(a[0]); };
      check_jvp(op.p, f, {x}, {rnd(s)});
      check_jvp(op.p, f, {x}, {Array()});
    }
  }
  for (int64_t y : {0, 1, 2, 3, 5, -1, -2}) {
    SCOPED_TRACE("y=" + std::to_string(y));
    Array x = rnd({4, 3}, 0.5, 2.0);
    Fn f = [y](const std::vector<Array>& a) { return lax::integer_pow(a[0], y); };
    Array t = rnd({4, 3});
    if (y == 0) {  // constant: a symbolic zero tangent
      auto [o, tt] =
          prims::integer_pow.jvp(std::vector<Array>{x}, std::vector<Array>{t}, Params{{"y", y}});
      EXPECT_TRUE(!tt[0].defined() ||
                  compare(to_doubles(tt[0]), std::vector<double>(12, 0.0), 0, 0) == "");
      continue;
    }
    check_jvp(prims::integer_pow, f, {x}, {t}, Params{{"y", y}});
  }
}

TEST_F(AdRules, IntegerInputsHaveZeroTangents) {
  Array a = random_array({3, 4}, DType::kInt32), b = random_array({3, 4}, DType::kInt32);
  auto [o, t] =
      prims::mul.jvp(std::vector<Array>{a, b}, std::vector<Array>{Array(), Array()}, Params());
  EXPECT_FALSE(t[0].defined());
  EXPECT_EQ(compare(to_doubles(o[0]), to_doubles(lax::mul(a, b)), 0, 0), "");
  auto [o2, t2] = prims::integer_pow.jvp(std::vector<Array>{a}, std::vector<Array>{Array()},
                                         Params{{"y", int64_t{2}}});
  EXPECT_FALSE(t2[0].defined());
}

TEST_F(AdRules, ComparisonsHaveNoTangent) {
  struct Op {
    const Primitive& p;
    Array (*f)(const Array&, const Array&);
  };
  const Op ops[] = {{prims::eq, lax::eq}, {prims::ne, lax::ne}, {prims::lt, lax::lt},
                    {prims::le, lax::le}, {prims::gt, lax::gt}, {prims::ge, lax::ge}};
  for (const Op& op : ops) {
    Array x = rnd({3, 4}), y = rnd({1, 4});
    auto [o, t] =
        op.p.jvp(std::vector<Array>{x, y}, std::vector<Array>{rnd({3, 4}), rnd({1, 4})}, Params());
    EXPECT_FALSE(t[0].defined()) << op.p.name();
    EXPECT_EQ(o[0].aval(), op.f(x, y).aval());
    EXPECT_EQ(compare(to_doubles(o[0]), to_doubles(op.f(x, y)), 0, 0), "") << op.p.name();
  }
}

Array random_which(const Shape& s, int ncases) {
  if (ncases == 2) return random_array(s, DType::kBool);
  std::vector<double> v = to_doubles(rnd(s, 0, ncases));
  for (double& e : v) e = std::floor(e);
  return from_doubles(s, DType::kInt32, v);
}

TEST_F(AdRules, SelectNJvp) {
  for (int n : {2, 3}) {
    for (const Shape& ws : {Shape{3, 4}, Shape{}}) {
      Array which = random_which(ws, n);
      std::vector<Array> primals{which}, tangents{Array()};
      for (int i = 0; i < n; ++i) {
        primals.push_back(rnd({3, 4}));
        tangents.push_back(rnd({3, 4}));
      }
      Fn f = [](const std::vector<Array>& a) {
        return lax::select_n(a[0], std::vector<Array>(a.begin() + 1, a.end()));
      };
      check_jvp(prims::select_n, f, primals, tangents);
      tangents[1] = Array();  // symbolic zero case
      check_jvp(prims::select_n, f, primals, tangents);
      for (int i = 1; i <= n; ++i) tangents[i] = Array();
      check_jvp(prims::select_n, f, primals, tangents);
    }
  }
}

TEST_F(AdRules, ConvertElementTypeJvp) {
  auto conv = [](DType d) { return Params{{"new_dtype", d}, {"weak_type", false}}; };
  Array x = rnd({3, 4});
  // f64 -> f32: the tangent is the converted tangent (finite differences are meaningless at
  // float32 resolution).
  Array t = rnd({3, 4});
  auto [o0, t0] = prims::convert_element_type.jvp(std::vector<Array>{x}, std::vector<Array>{t},
                                                  conv(DType::kFloat32));
  EXPECT_EQ(o0[0].aval(), lax::convert_element_type(x, DType::kFloat32).aval());
  EXPECT_EQ(t0[0].aval(), o0[0].aval());
  std::vector<double> tw = to_doubles(t);
  for (double& e : tw) e = static_cast<float>(e);
  EXPECT_EQ(compare(to_doubles(t0[0]), tw, 0, 0), "");
  Fn same = [](const std::vector<Array>& a) { return lax::convert_element_type(a[0], kF64); };
  check_jvp(prims::convert_element_type, same, {x}, {rnd({3, 4})}, conv(kF64));
  // To and from integers: zero tangents.
  auto [o1, t1] = prims::convert_element_type.jvp(
      std::vector<Array>{x}, std::vector<Array>{rnd({3, 4})}, conv(DType::kInt32));
  EXPECT_FALSE(t1[0].defined());
  EXPECT_EQ(
      compare(to_doubles(o1[0]), to_doubles(lax::convert_element_type(x, DType::kInt32)), 0, 0),
      "");
  Array xi = random_array({3, 4}, DType::kInt32);
  auto [o2, t2] = prims::convert_element_type.jvp(std::vector<Array>{xi},
                                                  std::vector<Array>{Array()}, conv(kF64));
  EXPECT_FALSE(t2[0].defined());
  // f32 -> f64 carries the tangent exactly.
  Array x32 = random_array({5}, DType::kFloat32), t32 = random_array({5}, DType::kFloat32);
  auto [o3, t3] =
      prims::convert_element_type.jvp(std::vector<Array>{x32}, std::vector<Array>{t32}, conv(kF64));
  EXPECT_EQ(t3[0].dtype(), kF64);
  EXPECT_EQ(compare(to_doubles(t3[0]), to_doubles(t32), 0, 0), "");
}

// ---------------------------------------------------------------- transposes

// For a primitive linear in the inputs marked `linear` (the others fixed at `primals`):
// J v from the jvp rule, J^T u from the transpose rule; checks shapes and <u,Jv> == <J^T u,v>.
void check_transpose(const Primitive& p, const std::vector<Array>& primals,
                     const std::vector<bool>& linear, const Params& params = Params(),
                     double rtol = 1e-12) {
  SCOPED_TRACE(p.name());
  ASSERT_TRUE(p.transpose) << p.name() << " has no transpose rule";
  std::vector<Array> v(primals.size()), args(primals.size());
  std::vector<Aval> avals;
  for (size_t i = 0; i < primals.size(); ++i) {
    avals.push_back(primals[i].aval());
    if (linear[i]) {
      v[i] = random_array(primals[i].shape(), primals[i].dtype());
    } else {
      args[i] = primals[i];
    }
  }
  auto [outs, jv] = p.jvp(primals, v, params);
  ASSERT_TRUE(jv[0].defined());
  Array u = random_array(outs[0].shape(), outs[0].dtype());
  std::vector<Array> ct = p.transpose(std::vector<Array>{u}, args, avals, params);
  ASSERT_EQ(ct.size(), primals.size());
  double lhs = dot(u, jv[0]), rhs = 0;
  for (size_t i = 0; i < primals.size(); ++i) {
    if (!linear[i]) {
      EXPECT_FALSE(ct[i].defined()) << "non-linear input " << i << " got a cotangent";
      continue;
    }
    ASSERT_TRUE(ct[i].defined()) << "input " << i;
    EXPECT_EQ(ct[i].aval(), avals[i]) << "input " << i;
    rhs += dot(ct[i], v[i]);
  }
  EXPECT_NEAR(lhs, rhs, rtol * (std::abs(lhs) + 1.0));
}

TEST_F(AdRules, BinaryTransposesSatisfyDotIdentity) {
  for (const ShapePair& s : kShapes) {
    SCOPED_TRACE((Aval{s.x, kF64, false}.str() + " op " + Aval{s.y, kF64, false}.str()));
    Array x = rnd(s.x), y = rnd(s.y, 0.5, 2.0);
    for (auto lin : {std::vector<bool>{true, true}, {true, false}, {false, true}}) {
      check_transpose(prims::add, {x, y}, lin);
      check_transpose(prims::sub, {x, y}, lin);
    }
    check_transpose(prims::mul, {x, y}, {true, false});
    check_transpose(prims::mul, {x, y}, {false, true});
    check_transpose(prims::div, {x, y}, {true, false});
  }
  EXPECT_THROW(
      prims::mul.transpose(std::vector<Array>{rnd({2})}, std::vector<Array>{Array(), Array()},
                           std::vector<Aval>{Aval{{2}, kF64}, Aval{{2}, kF64}}, Params()),
      InternalError);
  EXPECT_THROW(
      prims::div.transpose(std::vector<Array>{rnd({2})}, std::vector<Array>{rnd({2}), Array()},
                           std::vector<Aval>{Aval{{2}, kF64}, Aval{{2}, kF64}}, Params()),
      InternalError);
}

TEST_F(AdRules, UnaryAndConvertTransposes) {
  check_transpose(prims::neg, {rnd({3, 4})}, {true});
  check_transpose(prims::neg, {rnd({})}, {true});
  check_transpose(prims::convert_element_type, {rnd({3, 4})}, {true},
                  Params{{"new_dtype", kF64}, {"weak_type", false}});
  // f32 -> f64 and back: <u, Jv> in f64 vs <J^T u, v> with J^T u rounded to f32.
  check_transpose(prims::convert_element_type, {random_array({3, 4}, DType::kFloat32)}, {true},
                  Params{{"new_dtype", kF64}, {"weak_type", false}}, 1e-6);
  // Integer inputs get no cotangent.
  std::vector<Array> ct = prims::convert_element_type.transpose(
      std::vector<Array>{rnd({3})}, std::vector<Array>{Array()},
      std::vector<Aval>{Aval{{3}, DType::kInt32}},
      Params{{"new_dtype", kF64}, {"weak_type", false}});
  EXPECT_FALSE(ct[0].defined());
}

TEST_F(AdRules, SelectNTransposeSatisfiesDotIdentity) {
  for (int n : {2, 3}) {
    for (const Shape& ws : {Shape{3, 4}, Shape{}}) {
      std::vector<Array> primals{random_which(ws, n)};
      for (int i = 0; i < n; ++i) primals.push_back(rnd({3, 4}));
      std::vector<bool> lin(n + 1, true);
      lin[0] = false;
      check_transpose(prims::select_n, primals, lin);
      lin[1] = false;  // case 0 is a non-linear (fixed) operand
      check_transpose(prims::select_n, primals, lin);
    }
  }
  EXPECT_THROW(
      prims::select_n.transpose(
          std::vector<Array>{rnd({2})}, std::vector<Array>{Array(), Array(), Array()},
          std::vector<Aval>{Aval{{2}, DType::kBool}, Aval{{2}, kF64}, Aval{{2}, kF64}}, Params()),
      InternalError);
}

}  // namespace
}  // namespace tessera
