// The cumulative primitives (cumsum, cumprod, cummax, cummin, cumlogsumexp), lax.associative_scan
// and the jnp cumulative functions. References are plain loops written here: floats in double,
// integers in exact modular arithmetic; derivatives against central finite differences in
// float64; vmap against a loop; associative_scan with custom combining functions (2x2 matrix
// products, the linear recurrence h = a h + b) against sequential loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tessera/lax_assoc_scan.h"
#include "tessera/numpy_cumulative.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using testing::X64Scope;
namespace tnp = numpy;

constexpr DType kF16 = DType::kFloat16, kBF16 = DType::kBFloat16, kF32 = DType::kFloat32,
                kF64 = DType::kFloat64, kI8 = DType::kInt8, kI16 = DType::kInt16,
                kI32 = DType::kInt32, kI64 = DType::kInt64, kU8 = DType::kUInt8,
                kU32 = DType::kUInt32, kBool = DType::kBool;

enum class Op { kSum, kProd, kMax, kMin, kLse };
const char* op_name(Op op) {
  static const char* names[] = {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"};
  return names[static_cast<int>(op)];
}
Array apply(Op op, const Array& x, int64_t axis, bool reverse) {
  switch (op) {
    case Op::kSum:
      return lax::cumsum(x, axis, reverse);
    case Op::kProd:
      return lax::cumprod(x, axis, reverse);
    case Op::kMax:
      return lax::cummax(x, axis, reverse);
    case Op::kMin:
      return lax::cummin(x, axis, reverse);
    default:
      return lax::cumlogsumexp(x, axis, reverse);
  }
}

Array make(const Shape& s, DType dt, const std::vector<double>& v) {
  Array a = empty_array(Aval{s, dt, false}, "test");
  for (size_t i = 0; i < v.size(); ++i)
    store_from_double(dt, static_cast<char*>(a.buffer()->data()) + i * itemsize(dt), v[i]);
  return a;
}

double eps_of(DType d) {
  switch (d) {
    case DType::kFloat16:
      return std::ldexp(1.0, -10);
    case DType::kBFloat16:
      return std::ldexp(1.0, -7);
    case DType::kFloat32:
      return std::ldexp(1.0, -23);
    default:
      return std::ldexp(1.0, -52);
  }
}

// An integer value wrapped to dtype d (two's complement), as a double.
double wrap_int(DType d, uint64_t v) {
  const int bits = static_cast<int>(itemsize(d)) * 8;
  if (bits < 64) v &= (uint64_t{1} << bits) - 1;
  if (is_signed_integer(d)) {
    if (bits < 64 && (v >> (bits - 1)) & 1) return static_cast<double>(v) - std::ldexp(1.0, bits);
    if (bits == 64) return static_cast<double>(static_cast<int64_t>(v));
  }
  return static_cast<double>(v);
}

// The reference scan of x (values xs, shape s) along axis; floats in double. abs_sum receives
// the running sum of |x| (the accumulation error scale of cumsum).
std::vector<double> ref_scan(Op op, const std::vector<double>& xs, const Shape& s, int64_t axis,
                             bool reverse, DType d, std::vector<double>* abs_sum = nullptr) {
  int64_t O = 1, I = 1;
  for (int64_t k = 0; k < axis; ++k) O *= s[k];
  for (int64_t k = axis + 1; k < static_cast<int64_t>(s.size()); ++k) I *= s[k];
  const int64_t N = s[axis];
  std::vector<double> out(xs.size());
  if (abs_sum) abs_sum->assign(xs.size(), 0.0);
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i) {
      double acc = 0, aacc = 0;
      uint64_t iacc = 0;
      for (int64_t k = 0; k < N; ++k) {
        const int64_t n = reverse ? N - 1 - k : k;
        const size_t at = static_cast<size_t>((o * N + n) * I + i);
        const double v = xs[at];
        if (is_integer(d)) {
          const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(v));
          if (k == 0)
            iacc = u;
          else if (op == Op::kSum)
            iacc += u;
          else if (op == Op::kProd)
            iacc *= u;
          else
            iacc = static_cast<uint64_t>(static_cast<int64_t>(
                op == Op::kMax ? std::max(wrap_int(d, iacc), v) : std::min(wrap_int(d, iacc), v)));
          out[at] = wrap_int(d, iacc);
          continue;
        }
        if (k == 0) {
          acc = v;
        } else {
          switch (op) {
            case Op::kSum:
              acc += v;
              break;
            case Op::kProd:
              acc *= v;
              break;
            case Op::kMax:
              acc = (std::isnan(acc) || std::isnan(v)) ? NAN : std::max(acc, v);
              break;
            case Op::kMin:
              acc = (std::isnan(acc) || std::isnan(v)) ? NAN : std::min(acc, v);
              break;
            case Op::kLse: {
              const double hi = std::max(acc, v), lo = std::min(acc, v);
              acc = hi == -INFINITY ? hi : hi + std::log1p(std::exp(lo - hi));
              break;
            }
          }
        }
        aacc += std::fabs(v);
        out[at] = acc;
        if (abs_sum) (*abs_sum)[at] = aacc;
      }
    }
  return out;
}

// Checks op on x along every axis, both directions, against the reference.
void check_forward(Op op, const Array& x) {
  const DType d = x.dtype();
  const std::vector<double> xs = to_doubles(x);
  for (int64_t axis = 0; axis < x.ndim(); ++axis)
    for (bool reverse : {false, true}) {
      SCOPED_TRACE(std::string(op_name(op)) + " " + x.aval().str() + " axis " +
                   std::to_string(axis) + (reverse ? " reverse" : ""));
      Array y = apply(op, x, axis, reverse);
      ASSERT_EQ(y.aval(), x.aval());
      std::vector<double> abs_sum;
      const std::vector<double> want = ref_scan(op, xs, x.shape(), axis, reverse, d, &abs_sum);
      const std::vector<double> got = to_doubles(y);
      if (is_integer(d) || op == Op::kMax || op == Op::kMin) {
        EXPECT_EQ(compare(got, want, 0, 0), "");
        continue;
      }
      // Accumulations: 16-bit floats accumulate in float32 and round each output once.
      const double acc_eps = itemsize(d) == 2 ? eps_of(kF32) : eps_of(d);
      const double n = static_cast<double>(x.shape()[axis]);
      for (size_t i = 0; i < got.size(); ++i) {
        double tol;
        if (op == Op::kSum)
          tol = eps_of(d) * std::fabs(want[i]) + 2 * n * acc_eps * abs_sum[i];
        else if (op == Op::kLse)  // max + log1p(...): the error scales with the larger term
          tol = eps_of(d) * std::fabs(want[i]) + 4 * (n + 1) * acc_eps * (std::fabs(want[i]) + 4);
        else
          tol = (eps_of(d) + 4 * n * acc_eps) * std::fabs(want[i]) + 1e-300;
        ASSERT_LE(std::fabs(got[i] - want[i]), tol)
            << "at " << i << ": got " << got[i] << " want " << want[i];
      }
    }
}

Array draw(Op op, const Shape& s, DType d) {
  if (is_integer(d)) {
    if (op == Op::kProd) return random_array(s, d, -3, 3);
    return random_array(s, d);
  }
  if (op == Op::kProd) {  // magnitudes in [0.7, 1.4], random sign: no overflow
    Array a = random_array(s, kF64, 0.7, 1.4);
    std::vector<double> v = to_doubles(a);
    std::uniform_int_distribution<int> coin(0, 1);
    for (double& e : v)
      if (coin(rng())) e = -e;
    return make(s, d, v);
  }
  return random_array(s, d, -3.0, 3.0);
}

TEST(Cumulative, ForwardAllOpsDtypesAxes) {
  const std::vector<Shape> shapes = {{7}, {3, 5}, {2, 3, 4}, {1, 6, 1}, {0, 3}, {4, 0}, {2, 9, 3}};
  for (Op op : {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kLse}) {
    std::vector<DType> dts = {kF16, kBF16, kF32, kF64};
    if (op != Op::kLse) dts.insert(dts.end(), {kI8, kI16, kI32, kI64, kU8, kU32});
    X64Scope x64;
    for (DType d : dts)
      for (const Shape& s : shapes) check_forward(op, draw(op, s, d));
  }
}

// The column kernel with more columns than one block, and long rows cut into chunks.
TEST(Cumulative, ForwardBigInputs) {
  testing::Threads threads(4);
  for (Op op : {Op::kSum, Op::kMax, Op::kLse}) check_forward(op, draw(op, {3, 5, 1100}, kF32));
  check_forward(Op::kSum, draw(Op::kSum, {3, 5, 1100}, kI32));
  check_forward(Op::kProd, draw(Op::kProd, {2, 4, 700}, kF32));
  for (DType d : {kF32, kI32, kU8}) {
    SCOPED_TRACE(dtype_name(d));
    check_forward(Op::kSum, draw(Op::kSum, {300001}, d));
    check_forward(Op::kMin, draw(Op::kMin, {2, 140000}, d));
  }
  check_forward(Op::kLse, draw(Op::kLse, {200003}, kF32));
}

TEST(Cumulative, NanInfAndWrapping) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  Array x = make({6}, kF32, {1, 3, nan, 2, 5, 0});
  EXPECT_EQ(compare(to_doubles(lax::cummax(x)), {1, 3, nan, nan, nan, nan}, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(lax::cummin(x, 0, true)), {nan, nan, nan, 0, 0, 0}, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(lax::cumsum(x)), {1, 4, nan, nan, nan, nan}, 0, 0), "");
  Array l = make({4}, kF32, {-inf, -inf, 0, inf});
  EXPECT_EQ(compare(to_doubles(lax::cumlogsumexp(l)), {-inf, -inf, 0, inf}, 0, 0), "");
  Array i8 = make({4}, kI8, {100, 100, 100, -128});
  EXPECT_EQ(compare(to_doubles(lax::cumsum(i8)), {100, -56, 44, -84}, 0, 0), "");
  Array u8 = make({3}, kU8, {16, 16, 3});
  EXPECT_EQ(compare(to_doubles(lax::cumprod(u8)), {16, 0, 0}, 0, 0), "");
}

TEST(Cumulative, Errors) {
  EXPECT_ERROR(TypeError, lax::cumsum(make({3}, kBool, {1, 0, 1})),
               "cumsum does not accept dtype bool. Accepted dtypes are subtypes of number");
  EXPECT_ERROR(TypeError, lax::cummax(make({3}, kBool, {1, 0, 1})), "cummax does not accept");
  EXPECT_ERROR(TypeError, lax::cumlogsumexp(make({3}, kI32, {1, 0, 1})),
               "cumlogsumexp does not accept dtype int32");
  EXPECT_ERROR(ValueError, lax::cumsum(make({3}, kF32, {1, 0, 1}), 1),
               "axis 1 is out of bounds for array of shape (3,)");
  EXPECT_ERROR(ValueError, lax::cumprod(make({3}, kF32, {1, 0, 1}), -1), "out of bounds");
  EXPECT_ERROR(ValueError, lax::cumsum(make({}, kF32, {1}), 0), "out of bounds");
}

TEST(Cumulative, JaxprText) {
  Array x = random_array({3, 4}, kF32);
  std::string s = to_string(flat::make_jaxpr(
      [](std::span<const Array> a) {
        return std::vector<Array>{lax::cumsum(a[0], 1, true), lax::cummax(a[0], 0)};
      },
      std::vector<Array>{x}));
  EXPECT_NE(s.find("cumsum[axis=1 reverse=True]"), std::string::npos) << s;
  EXPECT_NE(s.find("cummax[axis=0 reverse=False]"), std::string::npos) << s;
}

// ---------------------------------------------------------------- derivatives

// The gradient and a directional derivative of sum(w * op(x)) vs central differences.
double sum_all(const Array& a) {
  double s = 0;
  for (double v : to_doubles(a)) s += v;
  return s;
}

void check_grad(Op op, const std::vector<double>& xv, const Shape& s, int64_t axis, bool reverse,
                double tol) {
  SCOPED_TRACE(std::string(op_name(op)) + " axis " + std::to_string(axis) +
               (reverse ? " reverse" : ""));
  Array x = make(s, kF64, xv);
  Array w = random_array(s, kF64);
  auto f = [&](std::span<const Array> a) {
    Array y = apply(op, a[0], axis, reverse);
    std::vector<int64_t> all;
    for (int64_t k = 0; k < y.ndim(); ++k) all.push_back(k);
    return std::vector<Array>{lax::reduce_sum(lax::mul(y, w), all)};
  };
  auto fd = [&](const std::vector<double>& v) {
    return sum_all(lax::mul(apply(op, make(s, kF64, v), axis, reverse), w));
  };
  std::vector<Array> args{x};
  flat::ValueAndGrad vg = flat::value_and_grad(f, args, false);
  const std::vector<double> g = to_doubles(vg.grads[0]);
  // Forward mode along a random direction.
  Array t = random_array(s, kF64);
  std::vector<Array> ts{t};
  auto [outs, touts] = flat::jvp(f, args, ts);
  const std::vector<double> tv = to_doubles(t);
  const double h = 1e-6;
  double dir_fd;
  {
    std::vector<double> p = xv, m = xv;
    for (size_t i = 0; i < p.size(); ++i) p[i] += h * tv[i], m[i] -= h * tv[i];
    dir_fd = (fd(p) - fd(m)) / (2 * h);
  }
  EXPECT_NEAR(touts[0].item<double>(), dir_fd, tol * (1 + std::fabs(dir_fd)));
  for (size_t i = 0; i < xv.size(); ++i) {
    std::vector<double> p = xv, m = xv;
    p[i] += h;
    m[i] -= h;
    const double want = (fd(p) - fd(m)) / (2 * h);
    EXPECT_NEAR(g[i], want, tol * (1 + std::fabs(want))) << "element " << i;
  }
}

TEST(Cumulative, GradientsVsFiniteDifferences) {
  X64Scope x64;
  for (Op op : {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kLse})
    for (const Shape& s : std::vector<Shape>{{7}, {3, 4}, {2, 3, 2}})
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis)
        for (bool reverse : {false, true}) {
          std::vector<double> xv = to_doubles(draw(op, s, kF64));
          check_grad(op, xv, s, axis, reverse, 1e-6);
        }
}

// cumprod through zeros: the derivative is the product of the others (no division), also
// with two zeros in a row and a zero at either end.
TEST(Cumulative, CumprodGradWithZeros) {
  X64Scope x64;
  check_grad(Op::kProd, {0.0, 1.5, -0.8, 1.2, 0.9}, {5}, 0, false, 1e-7);
  check_grad(Op::kProd, {1.1, 0.0, 0.0, -1.3, 0.7, 2.0}, {6}, 0, false, 1e-7);
  check_grad(Op::kProd, {1.1, 0.0, 0.0, -1.3, 0.7, 2.0}, {6}, 0, true, 1e-7);
  check_grad(Op::kProd, {1.1, 0.9, 1.3, 0.0}, {2, 2}, 1, false, 1e-7);
  // Exact values: d/dx1 of cumprod([x0, x1, x2]) summed = x0 + x0 x2 at x1 = 0.
  Array x = make({3}, kF64, {2.0, 0.0, 3.0});
  auto f = [](std::span<const Array> a) {
    return std::vector<Array>{lax::reduce_sum(lax::cumprod(a[0]), {0})};
  };
  std::vector<Array> args{x};
  EXPECT_EQ(compare(to_doubles(flat::value_and_grad(f, args, false).grads[0]), {1, 8, 0}, 0, 0),
            "");
}

// cummax's tangent is the tangent of the running maximum's position.
TEST(Cumulative, CummaxTangentFollowsArgmax) {
  X64Scope x64;
  Array x = make({6}, kF64, {1, 3, 2, 5, 4, 0});
  Array t = make({6}, kF64, {10, 20, 30, 40, 50, 60});
  auto f = [](std::span<const Array> a) { return std::vector<Array>{lax::cummax(a[0])}; };
  std::vector<Array> xs{x}, ts{t};
  auto [o, to] = flat::jvp(f, xs, ts);
  EXPECT_EQ(compare(to_doubles(to[0]), {10, 20, 20, 40, 40, 40}, 0, 0), "");
  auto g = [](std::span<const Array> a) { return std::vector<Array>{lax::cummin(a[0], 0, true)}; };
  std::vector<Array> xs2{make({6}, kF64, {1, 3, 2, 5, 4, 6})};
  auto [o2, to2] = flat::jvp(g, xs2, ts);
  EXPECT_EQ(compare(to_doubles(to2[0]), {10, 30, 30, 50, 50, 60}, 0, 0), "");
}

// The second derivative of cumprod and cumlogsumexp (jvp of grad) vs differences of grads.
TEST(Cumulative, SecondOrder) {
  X64Scope x64;
  for (Op op : {Op::kProd, Op::kLse}) {
    SCOPED_TRACE(op_name(op));
    const Shape s{5};
    Array x = draw(op, s, kF64), w = random_array(s, kF64), v = random_array(s, kF64);
    auto loss = [&](std::span<const Array> a) {
      return std::vector<Array>{lax::reduce_sum(lax::mul(apply(op, a[0], 0, false), w), {0})};
    };
    auto grad = [&](std::span<const Array> a) {
      std::vector<Array> args{a[0]};
      return flat::value_and_grad(loss, args, false).grads;
    };
    std::vector<Array> xs{x}, vs{v};
    auto [g, hv] = flat::jvp(grad, xs, vs);
    const double h = 1e-5;
    const std::vector<double> xv = to_doubles(x), vv = to_doubles(v);
    std::vector<double> p = xv, m = xv;
    for (size_t i = 0; i < p.size(); ++i) p[i] += h * vv[i], m[i] -= h * vv[i];
    std::vector<Array> pa{make(s, kF64, p)}, ma{make(s, kF64, m)};
    const std::vector<double> gp = to_doubles(grad(pa)[0]), gm = to_doubles(grad(ma)[0]);
    const std::vector<double> got = to_doubles(hv[0]);
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = (gp[i] - gm[i]) / (2 * h);
      EXPECT_NEAR(got[i], want, 1e-5 * (1 + std::fabs(want))) << i;
    }
  }
}

// cumsum's transpose is the reversed cumsum.
TEST(Cumulative, CumsumTranspose) {
  Array x = random_array({4, 5}, kF32);
  Array ct = random_array({4, 5}, kF32);
  for (bool reverse : {false, true}) {
    auto f = [reverse](std::span<const Array> a) {
      return std::vector<Array>{lax::cumsum(a[0], 1, reverse)};
    };
    std::vector<Array> args{x}, cts{ct};
    std::vector<Array> got = flat::linear_transpose(f, args)(cts);
    EXPECT_EQ(compare(to_doubles(got[0]), to_doubles(lax::cumsum(ct, 1, !reverse)), 1e-6, 1e-6),
              "");
  }
}

// ---------------------------------------------------------------- vmap

TEST(Cumulative, VmapMatchesLoop) {
  for (Op op : {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kLse})
    for (int64_t bdim : {0, 1, 2})
      for (int64_t axis : {0, 1})
        for (bool reverse : {false, true}) {
          SCOPED_TRACE(std::string(op_name(op)) + " bdim " + std::to_string(bdim));
          Shape s{3, 4};
          s.insert(s.begin() + bdim, 5);
          Array xb = draw(op, s, kF32);
          auto f = [op, axis, reverse](std::span<const Array> a) {
            return std::vector<Array>{apply(op, a[0], axis, reverse)};
          };
          std::vector<Array> args{xb};
          std::vector<std::optional<int64_t>> in_axes{bdim};
          std::vector<Array> got = flat::vmap(
              f, args, in_axes, [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
          std::vector<Array> rows;
          for (int64_t b = 0; b < 5; ++b) {
            Array xi = lax::squeeze(lax::slice_in_dim(xb, b, b + 1, 1, bdim), {bdim});
            rows.push_back(lax::expand_dims(apply(op, xi, axis, reverse), {0}));
          }
          EXPECT_EQ(compare(to_doubles(got[0]), to_doubles(lax::concatenate(rows, 0)), 0, 0), "");
        }
}

// ---------------------------------------------------------------- associative_scan

// The linear recurrence h_t = a_t h_{t-1} + b_t as the scan of affine maps (a, b):
// (a1, b1) then (a2, b2) composes to (a1 a2, a2 b1 + b2).
std::vector<Array> affine(std::span<const Array> x) {
  return {lax::mul(x[0], x[2]), lax::add(lax::mul(x[2], x[1]), x[3])};
}

TEST(AssociativeScan, LinearRecurrenceVsLoop) {
  X64Scope x64;
  for (int64_t n : {0, 1, 2, 3, 4, 5, 8, 13, 16, 17, 64, 100})
    for (bool reverse : {false, true}) {
      SCOPED_TRACE("n " + std::to_string(n) + (reverse ? " reverse" : ""));
      Array a = random_array({n, 3}, kF64, -1.2, 1.2), b = random_array({n, 3}, kF64);
      std::vector<Array> out = lax::associative_scan(affine, {a, b}, reverse, 0);
      const std::vector<double> av = to_doubles(a), bv = to_doubles(b);
      std::vector<double> wa(av.size()), wb(bv.size());
      for (int64_t c = 0; c < 3; ++c) {
        double pa = 1, pb = 0;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t t = reverse ? n - 1 - k : k;
          const size_t at = static_cast<size_t>(t * 3 + c);
          pb = av[at] * pb + bv[at];
          pa = pa * av[at];
          wa[at] = pa;
          wb[at] = pb;
        }
      }
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[1].shape(), b.shape());
      EXPECT_EQ(compare(to_doubles(out[0]), wa, 1e-12, 1e-12), "");
      EXPECT_EQ(compare(to_doubles(out[1]), wb, 1e-12, 1e-12), "");
    }
}

// 2x2 matrix products (not commutative), elems = the four entries, scanned along axis 1.
TEST(AssociativeScan, MatrixProductsAlongAxis1) {
  X64Scope x64;
  auto matmul = [](std::span<const Array> x) {
    // a = [[x0 x1] [x2 x3]], b = [[x4 x5] [x6 x7]]: a @ b.
    auto dot2 = [&](int i, int j, int k, int l) {
      return lax::add(lax::mul(x[i], x[j]), lax::mul(x[k], x[l]));
    };
    return std::vector<Array>{dot2(0, 4, 1, 6), dot2(0, 5, 1, 7), dot2(2, 4, 3, 6),
                              dot2(2, 5, 3, 7)};
  };
  for (int64_t n : {1, 6, 11})
    for (bool reverse : {false, true}) {
      std::vector<Array> m;
      for (int e = 0; e < 4; ++e) m.push_back(random_array({2, n}, kF64, -1.0, 1.0));
      std::vector<Array> out = lax::associative_scan(matmul, m, reverse, -1);
      std::vector<std::vector<double>> mv, got;
      for (int e = 0; e < 4; ++e) mv.push_back(to_doubles(m[e])), got.push_back(to_doubles(out[e]));
      for (int64_t r = 0; r < 2; ++r) {
        double p[4] = {1, 0, 0, 1};
        for (int64_t k = 0; k < n; ++k) {
          const int64_t t = reverse ? n - 1 - k : k;
          const size_t at = static_cast<size_t>(r * n + t);
          const double q[4] = {mv[0][at], mv[1][at], mv[2][at], mv[3][at]};
          // Forward: p = p @ q (earlier on the left); reverse: the earlier in scan order (later
          // position) is fn's first argument, so p = p @ q as well.
          const double np[4] = {p[0] * q[0] + p[1] * q[2], p[0] * q[1] + p[1] * q[3],
                                p[2] * q[0] + p[3] * q[2], p[2] * q[1] + p[3] * q[3]};
          std::memcpy(p, np, sizeof p);
          for (int e = 0; e < 4; ++e)
            EXPECT_NEAR(got[e][at], p[e], 1e-12) << "n " << n << " t " << t << " entry " << e;
        }
      }
    }
}

TEST(AssociativeScan, GradAndVmapThroughIt) {
  X64Scope x64;
  const int64_t n = 9;
  Array a = random_array({n}, kF64, -1.0, 1.0), b = random_array({n}, kF64);
  Array w = random_array({n}, kF64);
  auto loss = [&](std::span<const Array> x) {
    std::vector<Array> h = lax::associative_scan(affine, {x[0], x[1]});
    return std::vector<Array>{lax::reduce_sum(lax::mul(h[1], w), {0})};
  };
  auto value = [&](const std::vector<double>& av, const std::vector<double>& bv) {
    double h = 0, s = 0;
    const std::vector<double> wv = to_doubles(w);
    for (int64_t t = 0; t < n; ++t) {
      h = av[t] * h + bv[t];
      s += wv[t] * h;
    }
    return s;
  };
  std::vector<Array> args{a, b};
  flat::ValueAndGrad vg = flat::value_and_grad(loss, args, false);
  const std::vector<double> av = to_doubles(a), bv = to_doubles(b);
  EXPECT_NEAR(vg.outs[0].item<double>(), value(av, bv), 1e-12);
  const double h = 1e-6;
  for (int which = 0; which < 2; ++which) {
    const std::vector<double> g = to_doubles(vg.grads[which]);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> ap = av, am = av, bp = bv, bm = bv;
      (which ? bp : ap)[i] += h;
      (which ? bm : am)[i] -= h;
      const double want = (value(ap, bp) - value(am, bm)) / (2 * h);
      EXPECT_NEAR(g[i], want, 1e-7 * (1 + std::fabs(want))) << which << " " << i;
    }
  }
  // vmap over a leading batch of 4 (elems scanned along their own axis 0).
  Array ab = random_array({4, n}, kF64, -1.0, 1.0), bb = random_array({4, n}, kF64);
  auto scan = [](std::span<const Array> x) { return lax::associative_scan(affine, {x[0], x[1]}); };
  std::vector<Array> bargs{ab, bb};
  std::vector<std::optional<int64_t>> in_axes{0, 0};
  std::vector<Array> got = flat::vmap(
      scan, bargs, in_axes, [](size_t k) { return std::vector<std::optional<int64_t>>(k, 0); });
  std::vector<Array> direct = lax::associative_scan(affine, {ab, bb}, false, 1);
  EXPECT_EQ(compare(to_doubles(got[1]), to_doubles(direct[1]), 1e-14, 1e-14), "");
}

TEST(AssociativeScan, CumulativeOpsAgreeWithScanOfTheirMonoid) {
  Array x = random_array({37, 3}, kF32);
  auto add = [](std::span<const Array> v) { return std::vector<Array>{lax::add(v[0], v[1])}; };
  auto mx = [](std::span<const Array> v) { return std::vector<Array>{lax::max(v[0], v[1])}; };
  Array i = random_array({37, 3}, kI32);
  EXPECT_EQ(
      compare(to_doubles(lax::associative_scan(add, {i})[0]), to_doubles(lax::cumsum(i)), 0, 0),
      "");
  EXPECT_EQ(compare(to_doubles(lax::associative_scan(mx, {x}, true)[0]),
                    to_doubles(lax::cummax(x, 0, true)), 0, 0),
            "");
  // Bool elems (logical or as the monoid).
  Array p = random_array({10}, kBool);
  auto lor = [](std::span<const Array> v) {
    return std::vector<Array>{lax::bitwise_or(v[0], v[1])};
  };
  const std::vector<double> pv = to_doubles(p),
                            got = to_doubles(lax::associative_scan(lor, {p})[0]);
  double acc = 0;
  for (size_t k = 0; k < pv.size(); ++k) {
    acc = std::max(acc, pv[k]);
    EXPECT_EQ(got[k], acc) << k;
  }
}

TEST(AssociativeScan, Errors) {
  Array a = random_array({3, 2}, kF32), b = random_array({4, 2}, kF32);
  auto add2 = [](std::span<const Array> v) {
    return std::vector<Array>{lax::add(v[0], v[2]), lax::add(v[1], v[3])};
  };
  EXPECT_ERROR(ValueError, lax::associative_scan(add2, {a, b}),
               "Array inputs to associative_scan must have the same first dimension. (saw: [(3, "
               "2), (4, 2)])");
  EXPECT_ERROR(ValueError, lax::associative_scan(add2, {a, a}, false, 2), "out of bounds");
  auto wrong_count = [](std::span<const Array> v) { return std::vector<Array>{v[0]}; };
  EXPECT_ERROR(ValueError, lax::associative_scan(wrong_count, {a, a}),
               "fn must return one array per element of elems (2), got 1");
  auto wrong_shape = [](std::span<const Array> v) {
    return std::vector<Array>{lax::reduce_sum(lax::add(v[0], v[1]), {1})};
  };
  EXPECT_ERROR(ValueError, lax::associative_scan(wrong_shape, {a}),
               "fn must return arrays of the shapes and dtypes of its inputs");
  EXPECT_ERROR(ValueError, lax::associative_scan(add2, {}), "at least one array");
}

// ---------------------------------------------------------------- jnp

TEST(NumpyCumulative, DtypesAxesAndNan) {
  Array x = random_array({2, 3, 4}, kF32);
  // axis=None flattens.
  Array flat_cs = tnp::cumsum(x);
  EXPECT_EQ(flat_cs.shape(), Shape({24}));
  EXPECT_EQ(compare(to_doubles(flat_cs), to_doubles(lax::cumsum(lax::reshape(x, {24}))), 0, 0), "");
  EXPECT_EQ(compare(to_doubles(tnp::cumprod(x, -1)), to_doubles(lax::cumprod(x, 2)), 0, 0), "");
  EXPECT_ERROR(ValueError, tnp::cumsum(x, 3), "axis 3 is out of bounds for array of dimension 3");
  // Dtypes as jnp: bool accumulates in the default int; int8 keeps int8; dtype= converts.
  Array p = make({5}, kBool, {1, 1, 0, 1, 1});
  EXPECT_EQ(tnp::cumsum(p).dtype(), kI32);
  EXPECT_EQ(compare(to_doubles(tnp::cumsum(p)), {1, 2, 2, 3, 4}, 0, 0), "");
  Array i8 = make({3}, kI8, {100, 100, 1});
  EXPECT_EQ(tnp::cumsum(i8).dtype(), kI8);
  EXPECT_EQ(compare(to_doubles(tnp::cumsum(i8, std::nullopt, kI32)), {100, 200, 201}, 0, 0), "");
  EXPECT_EQ(tnp::cumsum(p, std::nullopt, kBool).dtype(), kBool);
  EXPECT_EQ(compare(to_doubles(tnp::cumprod(p, std::nullopt, kBool)), {1, 1, 0, 0, 0}, 0, 0), "");
  EXPECT_EQ(tnp::cumsum(make({2}, kF16, {1, 2})).dtype(), kF16);
  // Scalars flatten to (1,).
  EXPECT_EQ(tnp::cumsum(tnp::ArrayLike(2.5)).shape(), Shape({1}));
  // NaN as the identity.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Array n = make({2, 3}, kF32, {1, 2, nan, 4, nan, 6});
  EXPECT_EQ(compare(to_doubles(tnp::nancumsum(n)), {1, 3, 3, 7, 7, 13}, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(tnp::nancumprod(n, 1)), {1, 2, 2, 4, 4, 24}, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(tnp::cumsum(n)), {1, 3, nan, nan, nan, nan}, 0, 0), "");
}

TEST(NumpyCumulative, CumulativeSumProd) {
  Array x = make({2, 3}, kI8, {1, 2, 3, 4, 5, 6});
  Array s = tnp::cumulative_sum(x, 1, std::nullopt, true);
  EXPECT_EQ(s.dtype(), kI32);  // promote_integers
  EXPECT_EQ(compare(to_doubles(s), {0, 1, 3, 6, 0, 4, 9, 15}, 0, 0), "");
  Array pr = tnp::cumulative_prod(x, 1, std::nullopt, true);
  EXPECT_EQ(pr.dtype(), kI8);
  EXPECT_EQ(compare(to_doubles(pr), {1, 1, 2, 6, 1, 4, 20, 120}, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(tnp::cumulative_sum(make({3}, kF32, {1, 2, 3}))), {1, 3, 6}, 0, 0),
            "");
  EXPECT_ERROR(ValueError, tnp::cumulative_sum(x),
               "The input array has rank 2, however axis was not set to an explicit value");
  EXPECT_ERROR(ValueError, tnp::cumulative_prod(make({}, kF32, {1})),
               "The input must be non-scalar to take a cumulative product");
  // Gradient through the jnp layer.
  X64Scope x64;
  Array v = make({4}, kF64, {1.5, -2.0, 0.5, 3.0});
  auto f = [](std::span<const Array> a) {
    return std::vector<Array>{lax::reduce_sum(tnp::cumsum(a[0]), {0})};
  };
  std::vector<Array> args{v};
  EXPECT_EQ(compare(to_doubles(flat::value_and_grad(f, args, false).grads[0]), {4, 3, 2, 1}, 0, 0),
            "");
}

}  // namespace
}  // namespace tessera
