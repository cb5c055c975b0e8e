// tessera::numpy: promotion (dtype and weak flag), broadcasting, ufuncs, where, reductions,
// creation, shapes, matmul/dot and error messages. Numbers are checked on fresh random inputs
// against plain double-precision loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tnp = tessera::numpy;
using tessera::Array;
using tessera::DType;
using tessera::Shape;
using tessera::testing::compare;
using tessera::testing::random_array;
using tessera::testing::to_doubles;

namespace {

// Runs f and checks that it throws E whose message contains `needle`.
template <class E, class F>
void expect_throw(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing: " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

// ---- reference broadcasting ----
Shape ref_broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    int64_t db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Flat index into `in` (trailing-aligned, size-1 dims broadcast) of the output multi-index.
int64_t src_index(const std::vector<int64_t>& idx, const Shape& in) {
  int64_t flat = 0;
  size_t off = idx.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) flat = flat * in[i] + (in[i] == 1 ? 0 : idx[off + i]);
  return flat;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t i = s.size(); i-- > 0;) {
    idx[i] = s[i] ? flat % s[i] : 0;
    if (s[i]) flat /= s[i];
  }
  return idx;
}

std::vector<double> ref_binary(const Array& x, const Array& y,
                               const std::function<double(double, double)>& f) {
  Shape out = ref_broadcast(x.shape(), y.shape());
  std::vector<double> xv = to_doubles(x), yv = to_doubles(y);
  std::vector<double> r(static_cast<size_t>(tessera::shape_size(out)));
  for (size_t i = 0; i < r.size(); ++i) {
    auto idx = unravel(static_cast<int64_t>(i), out);
    r[i] = f(xv[src_index(idx, x.shape())], yv[src_index(idx, y.shape())]);
  }
  return r;
}

void expect_aval(const Array& a, DType d, bool weak, const Shape& shape) {
  EXPECT_EQ(a.dtype(), d) << a.aval().str();
  EXPECT_EQ(a.weak_type(), weak) << a.aval().str();
  EXPECT_EQ(a.shape(), shape) << a.aval().str();
}

struct X64Scope {
  bool prev = tessera::x64_enabled();
  explicit X64Scope(bool on) { tessera::set_x64_enabled(on); }
  ~X64Scope() { tessera::set_x64_enabled(prev); }
};

}  // namespace

// ---------------------------------------------------------------- promotion

TEST(NumpyPromotion, ResultDtypeAndWeakFlagTable) {
  struct Case {
    Array x, y;
    DType dtype;
    bool weak;
  };
  auto arr = [](DType d) { return random_array({3}, d, 0.0, 3.0); };
  std::vector<Case> cases = {
      {arr(DType::kFloat16), tnp::weak_scalar(2.0), DType::kFloat16, false},
      // jnp: an int array with a Python float gives a weakly typed float32 (the lattice's f*).
      {arr(DType::kInt32), tnp::weak_scalar(2.5), DType::kFloat32, true},
      {arr(DType::kInt8), arr(DType::kInt16), DType::kInt16, false},
      {arr(DType::kUInt8), arr(DType::kInt8), DType::kInt16, false},
      {arr(DType::kBool), tnp::weak_scalar_int(1), DType::kInt32, true},
      {arr(DType::kFloat16), arr(DType::kBFloat16), DType::kFloat32, false},
      {tnp::weak_scalar(2.0), tnp::weak_scalar_int(3), DType::kFloat32, true},
      {arr(DType::kUInt8), tnp::weak_scalar_int(3), DType::kUInt8, false},
      {arr(DType::kInt32), arr(DType::kFloat16), DType::kFloat16, false},
      {arr(DType::kBFloat16), tnp::weak_scalar_int(7), DType::kBFloat16, false},
      {arr(DType::kUInt16), arr(DType::kInt8), DType::kInt32, false},
  };
  for (const Case& c : cases) {
    Array r = tnp::add(c.x, c.y);
    EXPECT_EQ(r.dtype(), c.dtype) << c.x.aval().str() << " + " << c.y.aval().str();
    EXPECT_EQ(r.weak_type(), c.weak) << c.x.aval().str() << " + " << c.y.aval().str();
    EXPECT_EQ(tnp::result_type({c.x, c.y}), c.dtype);
    // Values: the sum of the operands rounded to the result dtype.
    std::vector<double> want = ref_binary(c.x, c.y, [](double a, double b) { return a + b; });
    for (double& w : want) w = to_doubles(tnp::scalar(w, c.dtype))[0];
    EXPECT_EQ(compare(to_doubles(r), want, 0, 0), "")
        << c.x.aval().str() << " + " << c.y.aval().str();
  }
}

TEST(NumpyPromotion, CppScalarsAreWeak) {
  Array h = random_array({4}, DType::kFloat16);
  expect_aval(h * 2.0, DType::kFloat16, false, {4});
  expect_aval(2 * h, DType::kFloat16, false, {4});
  Array i = random_array({4}, DType::kInt32);
  expect_aval(i + 2.5, DType::kFloat32, true, {4});
  expect_aval(i + 1, DType::kInt32, false, {4});
  expect_aval(tnp::weak_scalar(1.0) + 1, DType::kFloat32, true, {});
  // bool is strong: bool + bool stays bool (logical or), as jnp.
  Array b = tnp::array(std::vector<bool>{true, false, false, true}, {4});
  Array c = tnp::array(std::vector<bool>{true, true, false, false}, {4});
  Array o = b + c;
  expect_aval(o, DType::kBool, false, {4});
  EXPECT_EQ(to_doubles(o), (std::vector<double>{1, 1, 0, 1}));
  EXPECT_EQ(to_doubles(b * c), (std::vector<double>{1, 0, 0, 0}));
  expect_aval(b + true, DType::kBool, false, {4});
}

TEST(NumpyPromotion, WeakIntOutOfRangeRaises) {
  Array u = random_array({3}, DType::kUInt8);
  expect_throw<tessera::ValueError>([&] { tnp::multiply(u, 300); },
                                    "[multiply] Python int 300 too large to convert to uint8");
  expect_throw<tessera::ValueError>([&] { (void)(u + -1); }, "Python int -1 too large");
  Array i8 = random_array({3}, DType::kInt8);
  expect_throw<tessera::ValueError>([&] { (void)(i8 - 200); }, "[subtract] Python int 200");
  // In range: fine, and the float path never checks.
  EXPECT_EQ((u + 255).dtype(), DType::kUInt8);
  EXPECT_EQ((u * 300.0).dtype(), DType::kFloat32);
  expect_throw<tessera::ValueError>([] { tnp::weak_scalar_int(int64_t{1} << 40); },
                                    "too large to convert to int32");
}

// ---------------------------------------------------------------- arithmetic

TEST(NumpyMath, BinaryOpsBroadcastAgainstReference) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4}},    {{2, 1, 5}, {3, 1}},    {{}, {2, 3}},
      {{4, 1}, {1, 5}}, {{0, 3}, {3}},          {{5}, {}},
      {{}, {}},         {{2, 3, 4}, {2, 3, 4}}, {{1}, {3, 1, 2}},
  };
  using Ref = std::function<double(double, double)>;
  struct Op {
    const char* name;
    Array (*f)(const tnp::ArrayLike&, const tnp::ArrayLike&);
    Ref ref;
  };
  const std::vector<Op> ops = {
      {"add", tnp::add, [](double a, double b) { return a + b; }},
      {"subtract", tnp::subtract, [](double a, double b) { return a - b; }},
      {"multiply", tnp::multiply, [](double a, double b) { return a * b; }},
      {"divide", tnp::divide, [](double a, double b) { return a / b; }},
      {"maximum", tnp::maximum, [](double a, double b) { return std::max(a, b); }},
      {"minimum", tnp::minimum, [](double a, double b) { return std::min(a, b); }},
  };
  for (const auto& [sx, sy] : shapes) {
    Array x = random_array(sx, DType::kFloat32);
    Array y = random_array(sy, DType::kFloat32, 0.5, 3.0);
    for (const Op& op : ops) {
      Array r = op.f(x, y);
      expect_aval(r, DType::kFloat32, false, ref_broadcast(sx, sy));
      EXPECT_EQ(compare(to_doubles(r), ref_binary(x, y, op.ref), 1e-6, 1e-6), "")
          << op.name << " " << tessera::shape_str(sx) << " " << tessera::shape_str(sy);
    }
  }
}

TEST(NumpyMath, IntegerArithmeticIsExact) {
  Array x = random_array({4, 5}, DType::kInt32);
  Array y = random_array({5}, DType::kInt32);
  EXPECT_EQ(to_doubles(x * y), ref_binary(x, y, [](double a, double b) { return a * b; }));
  EXPECT_EQ(to_doubles(x - y), ref_binary(x, y, [](double a, double b) { return a - b; }));
  // True division of ints gives float32.
  Array yp = tnp::maximum(y, 1);
  EXPECT_EQ((x / yp).dtype(), DType::kFloat32);
  EXPECT_EQ(compare(to_doubles(x / yp), ref_binary(x, yp, [](double a, double b) { return a / b; }),
                    1e-6, 0),
            "");
  expect_aval(tnp::divide(tnp::weak_scalar_int(3), 2), DType::kFloat32, true, {});
}

TEST(NumpyMath, BroadcastErrorNamesOpAndShapes) {
  Array a = tnp::zeros({3}), b = tnp::zeros({4});
  expect_throw<tessera::ValueError>(
      [&] { tnp::add(a, b); },
      "[add] operands could not be broadcast together with shapes (3,) (4,)");
  expect_throw<tessera::ValueError>(
      [&] {
        (void)(tnp::zeros({2, 3}) * tnp::zeros({3, 2}));
      },
      "[multiply] operands could not be broadcast together with "
      "shapes (2, 3) (3, 2)");
  expect_throw<tessera::ValueError>([&] { tnp::where(true, a, b); }, "[where]");
  expect_throw<tessera::ValueError>([&] { tnp::add(Array(), a); }, "[add] got an undefined Array");
}

TEST(NumpyMath, UnaryFloatOpsAgainstStd) {
  struct Op {
    const char* name;
    Array (*f)(const tnp::ArrayLike&);
    double (*ref)(double);
    double lo;
  };
  const std::vector<Op> ops = {
      {"exp", tnp::exp, [](double v) { return std::exp(v); }, -3},
      {"log", tnp::log, [](double v) { return std::log(v); }, 0.01},
      {"sin", tnp::sin, [](double v) { return std::sin(v); }, -3},
      {"cos", tnp::cos, [](double v) { return std::cos(v); }, -3},
      {"tanh", tnp::tanh, [](double v) { return std::tanh(v); }, -3},
      {"sqrt", tnp::sqrt, [](double v) { return std::sqrt(v); }, 0},
  };
  for (const Op& op : ops) {
    Array x = random_array({7, 3}, DType::kFloat32, op.lo, 3.0);
    Array r = op.f(x);
    expect_aval(r, DType::kFloat32, false, {7, 3});
    std::vector<double> want = to_doubles(x);
    for (double& v : want) v = op.ref(v);
    EXPECT_EQ(compare(to_doubles(r), want, 2e-6, 1e-6), "") << op.name;
    // Integers promote to float32; a weak int scalar to a weak float.
    Array xi = random_array({5}, DType::kInt32, 0, 50);
    Array ri = op.f(tnp::maximum(xi, 1));
    expect_aval(ri, DType::kFloat32, false, {5});
    expect_aval(op.f(2), DType::kFloat32, true, {});
    // float16 stays float16.
    EXPECT_EQ(op.f(random_array({3}, DType::kFloat16, op.lo, 2.0)).dtype(), DType::kFloat16);
  }
}

TEST(NumpyMath, PowerFloatIntegerAndErrors) {
  Array x = random_array({6}, DType::kFloat32, 0.1, 3.0);
  Array y = random_array({6}, DType::kFloat32, -2.0, 2.0);
  EXPECT_EQ(
      compare(to_doubles(tnp::power(x, y)),
              ref_binary(x, y, [](double a, double b) { return std::pow(a, b); }), 1e-5, 1e-6),
      "");
  // Concrete C++ int exponent: integer_pow, dtype of x.
  Array h = random_array({4}, DType::kFloat16, -2.0, 2.0);
  expect_aval(tnp::power(h, 3), DType::kFloat16, false, {4});
  Array i = random_array({3, 4}, DType::kInt32, -9, 9);
  Array i3 = tnp::power(i, 3);
  expect_aval(i3, DType::kInt32, false, {3, 4});
  std::vector<double> want = to_doubles(i);
  for (double& v : want) v = v * v * v;
  EXPECT_EQ(to_doubles(i3), want);
  // Integer array exponents: binary exponentiation, exact with int32 wrap-around.
  Array base = random_array({2, 8}, DType::kInt32);
  Array ex = tnp::maximum(random_array({8}, DType::kInt32), 0);
  std::vector<double> got = to_doubles(tnp::power(base, ex));
  std::vector<double> ref = ref_binary(base, ex, [](double a, double b) {
    uint32_t acc = 1, m = static_cast<uint32_t>(static_cast<int32_t>(a));
    for (int k = 0; k < static_cast<int>(b); ++k) acc *= m;
    return static_cast<double>(static_cast<int32_t>(acc));
  });
  EXPECT_EQ(got, ref);
  // Negative exponents in an array: real result truncated toward zero.
  Array bs = tnp::array(std::vector<int32_t>{1, -1, -1, 2, 0, 5}, {6});
  Array es = tnp::array(std::vector<int32_t>{-3, -3, -2, -1, 0, 0}, {6});
  EXPECT_EQ(to_doubles(tnp::power(bs, es)), (std::vector<double>{1, -1, 1, 0, 1, 1}));
  expect_throw<tessera::TypeError>([&] { tnp::power(i, -1); },
                                   "[power] integers cannot be raised to negative powers");
  Array b = tnp::array(std::vector<bool>{true}, {1});
  expect_throw<tessera::TypeError>([&] { tnp::power(b, b); }, "[power]");
  // square: integer_pow(x, 2); bool -> int32.
  expect_aval(tnp::square(b), DType::kInt32, false, {1});
  EXPECT_EQ(compare(to_doubles(tnp::square(x)),
                    ref_binary(x, x, [](double a, double) { return a * a; }), 1e-6, 0),
            "");
}

TEST(NumpyMath, NegativeMaximumNaNAndBoolErrors) {
  Array x = random_array({5}, DType::kFloat32);
  std::vector<double> want = to_doubles(x);
  for (double& v : want) v = -v;
  EXPECT_EQ(to_doubles(-x), want);
  EXPECT_EQ(to_doubles(tnp::positive(x)), to_doubles(x));
  Array b = tnp::array(std::vector<bool>{true, false}, {2});
  expect_throw<tessera::TypeError>([&] { (void)(-b); }, "[negative] the numpy boolean negative");
  expect_throw<tessera::TypeError>([&] { (void)(b - b); }, "[subtract] numpy boolean subtract");
  double nan = std::numeric_limits<double>::quiet_NaN();
  Array n = tnp::array({nan, 1.0, 2.0});
  Array m = tnp::array({0.0, nan, 1.0});
  std::vector<double> mx = to_doubles(tnp::maximum(n, m)), mn = to_doubles(tnp::minimum(n, m));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 2.0);
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 1.0);
}

TEST(NumpyMath, ComparisonsPromoteThenCompare) {
  Array x = random_array({4, 3}, DType::kFloat32);
  Array y = random_array({3}, DType::kFloat32);
  struct Op {
    Array (*f)(const tnp::ArrayLike&, const tnp::ArrayLike&);
    std::function<double(double, double)> ref;
  };
  const std::vector<Op> ops = {
      {tnp::equal, [](double a, double b) { return double(a == b); }},
      {tnp::not_equal, [](double a, double b) { return double(a != b); }},
      {tnp::less, [](double a, double b) { return double(a < b); }},
      {tnp::less_equal, [](double a, double b) { return double(a <= b); }},
      {tnp::greater, [](double a, double b) { return double(a > b); }},
      {tnp::greater_equal, [](double a, double b) { return double(a >= b); }},
  };
  for (const Op& op : ops) {
    Array r = op.f(x, y);
    expect_aval(r, DType::kBool, false, {4, 3});
    EXPECT_EQ(to_doubles(r), ref_binary(x, y, op.ref));
  }
  // int32 vs 2.5: compared in float32, not truncated.
  Array i = tnp::array(std::vector<int32_t>{1, 2, 3}, {3});
  EXPECT_EQ(to_doubles(i > 2.5), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(to_doubles(i == 2), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(to_doubles(x == x), std::vector<double>(12, 1.0));
  EXPECT_EQ(to_doubles(2 <= i), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(to_doubles(i != 3), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(to_doubles(i < 2), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(to_doubles(i >= 2), (std::vector<double>{0, 1, 1}));
}

TEST(NumpyMath, WhereBroadcastsAndPromotes) {
  Array c = random_array({3, 1}, DType::kBool);
  Array x = random_array({1, 4}, DType::kFloat16);
  Array r = tnp::where(c, x, 2.5);
  expect_aval(r, DType::kFloat16, false, {3, 4});
  std::vector<double> cv = to_doubles(c), xv = to_doubles(x), rv = to_doubles(r);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(rv[i * 4 + j], cv[i] ? xv[j] : 2.5);
  // Non-bool condition: nonzero (and NaN) is true.
  double nan = std::numeric_limits<double>::quiet_NaN();
  Array cf = tnp::array({0.0, nan, -1.0});
  Array w = tnp::where(cf, 1, tnp::array(std::vector<int32_t>{7, 8, 9}, {3}));
  expect_aval(w, DType::kInt32, false, {3});
  EXPECT_EQ(to_doubles(w), (std::vector<double>{7, 1, 1}));
  // Scalar condition.
  EXPECT_EQ(to_doubles(tnp::where(false, x, 0.0)), std::vector<double>(4, 0.0));
  expect_aval(tnp::where(true, 1.0, 2), DType::kFloat32, true, {});
}

// ---------------------------------------------------------------- reductions

namespace {

// Reference sum/max/mean over `axes` of a row-major array; keepdims shape handled by caller.
std::vector<double> ref_reduce(const std::vector<double>& v, const Shape& s,
                               const std::vector<int64_t>& axes, int kind) {
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(axes.begin(), axes.end(), int64_t(i)) == axes.end()) out.push_back(s[i]);
  std::vector<double> r(static_cast<size_t>(tessera::shape_size(out)),
                        kind == 1 ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<int64_t> cnt(r.size(), 0);
  for (int64_t f = 0; f < tessera::shape_size(s); ++f) {
    auto idx = unravel(f, s);
    int64_t o = 0;
    size_t k = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (std::find(axes.begin(), axes.end(), int64_t(i)) != axes.end()) continue;
      o = o * out[k++] + idx[i];
    }
    if (kind == 1)
      r[o] = std::max(r[o], v[f]);
    else
      r[o] += v[f];
    cnt[o]++;
  }
  if (kind == 2)
    for (size_t i = 0; i < r.size(); ++i) r[i] /= static_cast<double>(cnt[i]);
  return r;
}

}  // namespace

TEST(NumpyReductions, SumMaxMeanAxesAndKeepdims) {
  const Shape s{2, 3, 4};
  Array x = random_array(s, DType::kFloat32);
  std::vector<double> xv = to_doubles(x);
  const std::vector<std::pair<tnp::Axes, std::vector<int64_t>>> axes = {
      {std::nullopt, {0, 1, 2}},
      {std::vector<int64_t>{0}, {0}},
      {std::vector<int64_t>{-1}, {2}},
      {std::vector<int64_t>{0, 2}, {0, 2}},
      {std::vector<int64_t>{-3, 1}, {0, 1}},
      {std::vector<int64_t>{}, {}}};
  for (const auto& [ax, norm] : axes) {
    for (bool keep : {false, true}) {
      Shape want_shape;
      for (size_t i = 0; i < s.size(); ++i) {
        bool red = std::find(norm.begin(), norm.end(), int64_t(i)) != norm.end();
        if (!red)
          want_shape.push_back(s[i]);
        else if (keep)
          want_shape.push_back(1);
      }
      Array sm = tnp::sum(x, ax, keep), mx = tnp::max(x, ax, keep), mn = tnp::mean(x, ax, keep);
      expect_aval(sm, DType::kFloat32, false, want_shape);
      expect_aval(mx, DType::kFloat32, false, want_shape);
      expect_aval(mn, DType::kFloat32, false, want_shape);
      EXPECT_EQ(compare(to_doubles(sm), ref_reduce(xv, s, norm, 0), 1e-5, 1e-5), "");
      EXPECT_EQ(compare(to_doubles(mx), ref_reduce(xv, s, norm, 1), 0, 0), "");
      EXPECT_EQ(compare(to_doubles(mn), ref_reduce(xv, s, norm, 2), 1e-5, 1e-6), "");
    }
  }
  EXPECT_EQ(compare(to_doubles(tnp::sum(x, -2)), ref_reduce(xv, s, {1}, 0), 1e-5, 1e-5), "");
  expect_aval(tnp::max(x, 1, true), DType::kFloat32, false, {2, 1, 4});
  expect_aval(tnp::mean(x, 0), DType::kFloat32, false, {3, 4});
}

TEST(NumpyReductions, DtypeRules) {
  // Small integers accumulate in the default int / uint, as jnp.sum.
  Array i8 = random_array({50}, DType::kInt8);
  Array s8 = tnp::sum(i8);
  expect_aval(s8, DType::kInt32, false, {});
  double want = 0;
  for (double v : to_doubles(i8)) want += v;
  EXPECT_EQ(to_doubles(s8)[0], want);
  EXPECT_EQ(tnp::sum(random_array({4}, DType::kUInt8)).dtype(), DType::kUInt32);
  EXPECT_EQ(tnp::sum(random_array({4}, DType::kUInt16)).dtype(), DType::kUInt32);
  EXPECT_EQ(tnp::sum(random_array({4}, DType::kInt16)).dtype(), DType::kInt32);
  Array b = random_array({30}, DType::kBool);
  Array sb = tnp::sum(b);
  expect_aval(sb, DType::kInt32, false, {});
  double trues = 0;
  for (double v : to_doubles(b)) trues += v;
  EXPECT_EQ(to_doubles(sb)[0], trues);
  EXPECT_EQ(tnp::sum(i8, std::nullopt, false, DType::kFloat32).dtype(), DType::kFloat32);
  // float16 sums in float32 then rounds once: 2048 ones + 1s would stall in pure f16.
  Array h = tnp::ones({4096}, DType::kFloat16);
  Array sh = tnp::sum(h);
  expect_aval(sh, DType::kFloat16, false, {});
  EXPECT_EQ(to_doubles(sh)[0], 4096.0);
  EXPECT_EQ(to_doubles(tnp::mean(h))[0], 1.0);
  EXPECT_EQ(tnp::mean(h).dtype(), DType::kFloat16);
  // mean of ints -> float32; of a weak scalar -> strong.
  Array iv = tnp::array(std::vector<int32_t>{1, 2, 4}, {3});
  expect_aval(tnp::mean(iv), DType::kFloat32, false, {});
  EXPECT_NEAR(to_doubles(tnp::mean(iv))[0], 7.0 / 3.0, 1e-6);
  expect_aval(tnp::sum(tnp::weak_scalar(2.0)), DType::kFloat32, false, {});
  expect_aval(tnp::max(iv), DType::kInt32, false, {});
  EXPECT_EQ(to_doubles(tnp::max(iv))[0], 4.0);
}

TEST(NumpyReductions, EmptyRankZeroAndErrors) {
  Array e = tnp::zeros({0, 3});
  expect_aval(tnp::sum(e, 0), DType::kFloat32, false, {3});
  EXPECT_EQ(to_doubles(tnp::sum(e, 0)), std::vector<double>(3, 0.0));
  EXPECT_EQ(to_doubles(tnp::sum(e, 1)).size(), 0u);
  EXPECT_TRUE(std::isnan(to_doubles(tnp::mean(e))[0]));
  expect_throw<tessera::ValueError>(
      [&] { tnp::max(e, 0); },
      "[max] zero-size array to reduction operation max which has no identity");
  EXPECT_EQ(tnp::max(e, 1).shape(), (Shape{0}));  // the empty axis is not reduced
  expect_throw<tessera::ValueError>(
      [&] {
        tnp::sum(e, std::vector<int64_t>{0, -2});
      },
      "[sum] duplicate value in 'axis'");
  expect_throw<tessera::IndexError>([&] { tnp::mean(e, 2); }, "[mean] axis 2 is out of bounds");
  Array s = tnp::scalar(3.5, DType::kFloat32);
  EXPECT_EQ(to_doubles(tnp::sum(s))[0], 3.5);
  EXPECT_EQ(to_doubles(tnp::max(s))[0], 3.5);
  EXPECT_EQ(tnp::sum(s, std::nullopt, true).shape(), Shape{});
}

// ---------------------------------------------------------------- creation

TEST(NumpyCreation, ArraysFromHostData) {
  Array a = tnp::array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.5}});
  expect_aval(a, DType::kFloat32, false, {2, 3});
  EXPECT_EQ(to_doubles(a), (std::vector<double>{1, 2, 3, 4, 5, 6.5}));
  expect_aval(tnp::array({1.7, -2.2}, DType::kInt32), DType::kInt32, false, {2});
  EXPECT_EQ(to_doubles(tnp::array({1.7, -2.2}, DType::kInt32)), (std::vector<double>{1, -2}));
  expect_throw<tessera::ValueError>(
      [] {
        tnp::array({{1.0, 2.0}, {3.0}});
      },
      "[array] ragged nested list");
  expect_throw<tessera::ValueError>(
      [] {
        tnp::array(std::vector<double>{1, 2, 3}, {2, 2});
      },
      "[array] 3 values cannot fill shape (2, 2)");
  expect_aval(tnp::array(std::vector<float>{1, 2}, {2, 1}), DType::kFloat32, false, {2, 1});
  expect_aval(tnp::array(std::vector<int32_t>{1, 2}, {2}), DType::kInt32, false, {2});
  Array i64 = tnp::array(std::vector<int64_t>{-5, 7}, {2});
  expect_aval(i64, DType::kInt32, false, {2});
  EXPECT_EQ(to_doubles(i64), (std::vector<double>{-5, 7}));
  expect_throw<tessera::ValueError>([] { tnp::array(std::vector<int64_t>{int64_t{1} << 35}, {1}); },
                                    "too large");
  {
    X64Scope x64(true);
    const int64_t big = (int64_t{1} << 53) + 1;  // not representable as a double
    Array w = tnp::array(std::vector<int64_t>{big, -big}, {2});
    ASSERT_EQ(w.dtype(), DType::kInt64);
    EXPECT_EQ(w.to_vector<int64_t>(), (std::vector<int64_t>{big, -big}));
    EXPECT_EQ(tnp::array({0.5}).dtype(), DType::kFloat64);
  }
  expect_aval(tnp::array(std::vector<bool>{true, false, true}, {3}), DType::kBool, false, {3});
  EXPECT_EQ(to_doubles(tnp::array(std::vector<bool>{true, false, true}, {3})),
            (std::vector<double>{1, 0, 1}));
  Array x = random_array({3}, DType::kFloat32);
  EXPECT_TRUE(tnp::asarray(x).is(x));
  expect_aval(tnp::asarray(x, DType::kFloat16), DType::kFloat16, false, {3});
  expect_aval(tnp::asarray(2.0), DType::kFloat32, true, {});
}

TEST(NumpyCreation, FillsAndLikes) {
  expect_aval(tnp::zeros({2, 3}), DType::kFloat32, false, {2, 3});
  EXPECT_EQ(to_doubles(tnp::ones({2}, DType::kInt8)), (std::vector<double>{1, 1}));
  EXPECT_EQ(to_doubles(tnp::empty({2})), (std::vector<double>{0, 0}));
  // jnp.full with a Python float and no dtype is weakly typed (lax.full).
  Array f = tnp::full({2, 2}, 2.5);
  expect_aval(f, DType::kFloat32, true, {2, 2});
  EXPECT_EQ(to_doubles(f), std::vector<double>(4, 2.5));
  expect_aval(tnp::full({3}, 7.0, DType::kInt32), DType::kInt32, false, {3});
  Array h = random_array({2, 2}, DType::kFloat16);
  expect_aval(tnp::zeros_like(h), DType::kFloat16, false, {2, 2});
  expect_aval(tnp::ones_like(h, DType::kInt32), DType::kInt32, false, {2, 2});
  expect_aval(tnp::full_like(tnp::weak_scalar(1.0), 3.0), DType::kFloat32, true, {});
  EXPECT_EQ(to_doubles(tnp::full_like(h, -1.5)), std::vector<double>(4, -1.5));
  expect_aval(tnp::empty_like(h), DType::kFloat16, false, {2, 2});
  expect_aval(tnp::zeros({0, 4}), DType::kFloat32, false, {0, 4});
  expect_throw<tessera::ValueError>(
      [] {
        tnp::zeros({-1, 2});
      },
      "[zeros] negative dimensions are not allowed");
}

TEST(NumpyCreation, ArangeLinspaceEye) {
  Array a = tnp::arange(5);
  expect_aval(a, DType::kInt32, false, {5});
  EXPECT_EQ(to_doubles(a), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(to_doubles(tnp::arange(2, 11, 3)), (std::vector<double>{2, 5, 8}));
  EXPECT_EQ(to_doubles(tnp::arange(5, -4, -3)), (std::vector<double>{5, 2, -1}));
  EXPECT_EQ(tnp::arange(3, 3).size(), 0);
  EXPECT_EQ(tnp::arange(int64_t{4}, DType::kFloat32).dtype(), DType::kFloat32);
  // Floats: length ceil((stop-start)/step), values start + step*i in float32 (as jnp).
  Array f = tnp::arange(0.5, 2.0, 0.1);
  expect_aval(f, DType::kFloat32, false, {15});
  std::vector<double> fv = to_doubles(f);
  for (int i = 0; i < 15; ++i) {
    float t = static_cast<float>(0.1) * static_cast<float>(i);
    EXPECT_EQ(fv[i], static_cast<double>(static_cast<float>(0.5) + t)) << i;
  }
  EXPECT_EQ(to_doubles(tnp::arange(3.5)), (std::vector<double>{0, 1, 2, 3}));
  expect_throw<tessera::ValueError>([] { tnp::arange(0, 5, 0); }, "[arange] step");

  // linspace: start * (1 - t) + stop * t, t = i / div, in float32; last exactly stop.
  for (auto [num, endpoint] : std::vector<std::pair<int64_t, bool>>{{7, true}, {5, false}}) {
    const double start = -1.3, stop = 2.9;
    Array l = tnp::linspace(start, stop, num, endpoint);
    expect_aval(l, DType::kFloat32, false, {num});
    std::vector<double> lv = to_doubles(l);
    const float div = static_cast<float>(endpoint ? num - 1 : num);
    for (int64_t i = 0; i < num; ++i) {
      float t = static_cast<float>(i) / div;
      float one_minus = 1.0f - t;
      float lhs = static_cast<float>(start) * one_minus;
      float rhs = static_cast<float>(stop) * t;
      EXPECT_EQ(lv[i], static_cast<double>(lhs + rhs)) << i;
    }
    if (endpoint) {
      EXPECT_EQ(lv.back(), static_cast<double>(static_cast<float>(stop)));
    }
  }
  EXPECT_EQ(to_doubles(tnp::linspace(2.0, 5.0, 1)), (std::vector<double>{2.0}));
  EXPECT_EQ(tnp::linspace(2.0, 5.0, 0).shape(), (Shape{0}));
  EXPECT_EQ(to_doubles(tnp::linspace(-2.0, 2.0, 5, true, DType::kInt32)),
            (std::vector<double>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(to_doubles(tnp::linspace(-1.0, 0.0, 3, true, DType::kInt32)),
            (std::vector<double>{-1, -1, 0}));  // floor, not truncation
  expect_throw<tessera::ValueError>([] { tnp::linspace(0.0, 1.0, -1); }, "[linspace]");

  Array e = tnp::eye(3, 4, 1);
  expect_aval(e, DType::kFloat32, false, {3, 4});
  EXPECT_EQ(to_doubles(e), (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(to_doubles(tnp::eye(3, 2, -1, DType::kInt32)), (std::vector<double>{0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(to_doubles(tnp::identity(2, DType::kBool)), (std::vector<double>{1, 0, 0, 1}));
}

// ---------------------------------------------------------------- shapes

TEST(NumpyShape, ReshapeTransposeBroadcast) {
  Array x = random_array({3, 4}, DType::kFloat32);
  std::vector<double> xv = to_doubles(x);
  Array r = tnp::reshape(x, {2, -1});
  expect_aval(r, DType::kFloat32, false, {2, 6});
  EXPECT_EQ(to_doubles(r), xv);
  expect_throw<tessera::ValueError>(
      [&] { tnp::reshape(x, {5}); },
      "[reshape] cannot reshape array of shape (3, 4) (size 12) into shape (5,)");
  expect_throw<tessera::ValueError>([&] { tnp::reshape(x, {-1, -1}); }, "one unknown dimension");
  expect_throw<tessera::ValueError>([&] { tnp::reshape(x, {5, -1}); }, "cannot reshape");

  Array t = tnp::transpose(x);
  expect_aval(t, DType::kFloat32, false, {4, 3});
  std::vector<double> tv = to_doubles(t);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(tv[j * 3 + i], xv[i * 4 + j]);
  Array y = random_array({2, 3, 4}, DType::kInt32);
  Array yt = tnp::transpose(y, std::vector<int64_t>{1, -1, 0});
  expect_aval(yt, DType::kInt32, false, {3, 4, 2});
  std::vector<double> yv = to_doubles(y), ytv = to_doubles(yt);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(ytv[(b * 4 + c) * 2 + a], yv[(a * 3 + b) * 4 + c]);
  expect_throw<tessera::ValueError>(
      [&] {
        tnp::transpose(y, std::vector<int64_t>{0, 0, 1});
      },
      "[transpose] axes (0, 0, 1) are not a permutation");
  expect_throw<tessera::ValueError>(
      [&] {
        tnp::transpose(y, std::vector<int64_t>{0, 1});
      },
      "[transpose]");

  Array v = random_array({3, 1}, DType::kFloat32);
  Array bt = tnp::broadcast_to(v, {2, 3, 4});
  expect_aval(bt, DType::kFloat32, false, {2, 3, 4});
  std::vector<double> vv = to_doubles(v), bv = to_doubles(bt);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(bv[i], vv[(i / 4) % 3]);
  expect_throw<tessera::ValueError>(
      [&] {
        tnp::broadcast_to(v, {3, 2, 5});
      },
      "[broadcast_to] cannot broadcast an array of shape (3, 1)");
  EXPECT_EQ(tnp::broadcast_shapes({2, 1, 3}, {5, 1}), (Shape{2, 5, 3}));
  EXPECT_EQ(tnp::broadcast_shapes({}, {0}), (Shape{0}));
  expect_throw<tessera::ValueError>([] { tnp::broadcast_shapes({2}, {3}, "myop"); },
                                    "[myop] operands could not be broadcast together");
  expect_aval(tnp::astype(x, DType::kInt32), DType::kInt32, false, {3, 4});
  expect_aval(tnp::astype(tnp::weak_scalar(1.0), DType::kFloat32), DType::kFloat32, false, {});
  EXPECT_EQ(tnp::result_type({x, 2, true}), DType::kFloat32);
  EXPECT_EQ(tnp::result_type({1, 2}), DType::kInt32);
}

// ---------------------------------------------------------------- matmul / dot

namespace {

// NumPy matmul by definition, in doubles.
std::vector<double> ref_matmul(const Array& a, const Array& b, Shape* out_shape) {
  Shape as = a.shape(), bs = b.shape();
  bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Shape batch = ref_broadcast(ab, bb);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  std::vector<double> av = to_doubles(a), bv = to_doubles(b);
  int64_t nb = tessera::shape_size(batch);
  std::vector<double> out(static_cast<size_t>(nb * M * N), 0.0);
  for (int64_t p = 0; p < nb; ++p) {
    auto idx = unravel(p, batch);
    int64_t pa = src_index(idx, ab), pb = src_index(idx, bb);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += av[(pa * M + i) * K + k] * bv[(pb * K + k) * N + j];
        out[(p * M + i) * N + j] = s;
      }
  }
  *out_shape = batch;
  if (!a1) out_shape->push_back(M);
  if (!b1) out_shape->push_back(N);
  return out;
}

}  // namespace

TEST(NumpyLinalg, MatmulBroadcastsBatchDims) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4, 5}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{4}, {4}},
      {{2, 3, 4}, {4, 5}},
      {{4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}},
      {{1, 3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 1}},
      {{0, 3, 4}, {4, 2}},
      {{3, 0}, {0, 2}},
  };
  for (const auto& [sa, sb] : shapes) {
    Array a = random_array(sa, DType::kFloat32);
    Array b = random_array(sb, DType::kFloat32);
    Shape want_shape;
    std::vector<double> want = ref_matmul(a, b, &want_shape);
    Array r = tnp::matmul(a, b);
    expect_aval(r, DType::kFloat32, false, want_shape);
    EXPECT_EQ(compare(to_doubles(r), want, 1e-5, 1e-5), "")
        << tessera::shape_str(sa) << " @ " << tessera::shape_str(sb);
  }
  // Integers stay integers and are exact; mixed dtypes promote first.
  Array ia = random_array({2, 3, 4}, DType::kInt32), ib = random_array({4, 2}, DType::kInt8);
  Array ir = tnp::matmul(ia, ib);
  Shape ws;
  EXPECT_EQ(ir.dtype(), DType::kInt32);
  EXPECT_EQ(to_doubles(ir), ref_matmul(ia, ib, &ws));
  EXPECT_EQ(tnp::matmul(random_array({2, 2}, DType::kFloat16), random_array({2}, DType::kFloat32))
                .dtype(),
            DType::kFloat32);
  expect_throw<tessera::ValueError>(
      [] {
        tnp::matmul(tnp::zeros({3, 4}), tnp::zeros({5, 6}));
      },
      "[matmul] size mismatch in contracted dimension: (3, 4) @ (5, 6)");
  expect_throw<tessera::ValueError>(
      [] {
        tnp::matmul(tnp::zeros({2, 3, 4}), tnp::zeros({3, 4, 5}));
      },
      "[matmul] operands could not be broadcast together with shapes (2,) (3,)");
  expect_throw<tessera::ValueError>(
      [] { tnp::matmul(tnp::scalar(1, DType::kFloat32), tnp::zeros({2})); },
      "[matmul] input operand 0 is a scalar");
}

TEST(NumpyLinalg, DotFollowsNumPy) {
  // N-d dot: sum over the last axis of a and the second-to-last of b.
  Array a = random_array({2, 3, 4}, DType::kFloat32);
  Array b = random_array({5, 4, 6}, DType::kFloat32);
  Array r = tnp::dot(a, b);
  expect_aval(r, DType::kFloat32, false, {2, 3, 5, 6});
  std::vector<double> av = to_doubles(a), bv = to_doubles(b), rv = to_doubles(r);
  std::vector<double> want(rv.size());
  for (int i = 0; i < 6; ++i)
    for (int p = 0; p < 5; ++p)
      for (int j = 0; j < 6; ++j) {
        double s = 0;
        for (int k = 0; k < 4; ++k) s += av[i * 4 + k] * bv[(p * 4 + k) * 6 + j];
        want[(i * 5 + p) * 6 + j] = s;
      }
  EXPECT_EQ(compare(rv, want, 1e-5, 1e-5), "");
  Array v = random_array({4}, DType::kFloat32);
  Shape s;
  EXPECT_EQ(compare(to_doubles(tnp::dot(a, v)), ref_matmul(a, v, &s), 1e-5, 1e-5), "");
  EXPECT_EQ(compare(to_doubles(tnp::dot(v, v)), ref_matmul(v, v, &s), 1e-5, 1e-5), "");
  // Scalars multiply.
  Array d = tnp::dot(tnp::scalar(2, DType::kFloat32), a);
  std::vector<double> twice = av;
  for (double& x : twice) x *= 2;
  EXPECT_EQ(to_doubles(d), twice);
  expect_throw<tessera::ValueError>(
      [] {
        tnp::dot(tnp::zeros({3, 4}), tnp::zeros({5, 6}));
      },
      "[dot] shapes (3, 4) and (5, 6) not aligned");
}

TEST(NumpyOperators, ScalarsOnEitherSide) {
  Array x = random_array({2, 3}, DType::kFloat32, 0.5, 2.0);
  std::vector<double> xv = to_doubles(x);
  auto check = [&](const Array& r, const std::function<double(double)>& f) {
    std::vector<double> want = xv;
    for (double& v : want) v = static_cast<float>(f(v));
    EXPECT_EQ(compare(to_doubles(r), want, 1e-6, 0), "");
    EXPECT_EQ(r.dtype(), DType::kFloat32);
  };
  check(x + 1, [](double v) { return v + 1; });
  check(2.0 - x, [](double v) { return 2 - v; });
  check(x * 3, [](double v) { return v * 3; });
  check(1 / x, [](double v) { return 1 / v; });
  check(-x, [](double v) { return -v; });
  check(x / 4.0f, [](double v) { return v / 4; });
}
