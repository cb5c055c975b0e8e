// Windowed reductions (reduce_window_sum/max/min, the generic reduce_window, select_and_gather_add
// and select_and_scatter_add) against naive float64 loops written here, on fresh random inputs:
// ranks 1-4, strides, explicit/SAME/VALID padding, base and window dilation, float and integer
// dtypes; gradients against float64 central differences (first and second order); vmap against a
// loop; jit against eager; thread-count independence; jaxpr text; JAX's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "prims/prims.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/lax_window.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;
using Ints = std::vector<int64_t>;

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64;

struct Win {
  Ints dims, strides, bdil, wdil;
  lax::Pads pads;
};

enum class RefOp { kSum, kMax, kMin, kProd };

int64_t dilated(int64_t d, int64_t k) { return d == 0 ? 0 : (d - 1) * k + 1; }

// The output shape, computed here from the definition.
Shape ref_shape(const Shape& in, const Win& w) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t padded = dilated(in[d], w.bdil[d]) + w.pads[d].first + w.pads[d].second;
    const int64_t win = dilated(w.dims[d], w.wdil[d]);
    out.push_back(padded < win ? 0 : (padded - win) / w.strides[d] + 1);
  }
  return out;
}

// The naive windowed reduction: every output, every window position; padding and holes read
// `init`.
std::vector<double> ref_reduce(const std::vector<double>& x, const Shape& in, const Win& w,
                               RefOp op, double init) {
  const Shape out = ref_shape(in, w);
  const size_t r = in.size();
  int64_t n_out = 1, n_win = 1;
  for (size_t d = 0; d < r; ++d) n_out *= out[d], n_win *= w.dims[d];
  std::vector<double> res(static_cast<size_t>(n_out));
  Ints o(r), k(r);
  for (int64_t fo = 0; fo < n_out; ++fo) {
    int64_t t = fo;
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) o[d] = t % out[d], t /= out[d];
    double acc = init;
    for (int64_t fk = 0; fk < n_win; ++fk) {
      int64_t u = fk;
      for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d)
        k[d] = u % w.dims[d], u /= w.dims[d];
      bool valid = true;
      int64_t flat = 0;
      for (size_t d = 0; d < r; ++d) {
        const int64_t pos = o[d] * w.strides[d] + k[d] * w.wdil[d] - w.pads[d].first;
        if (pos < 0 || pos % w.bdil[d] != 0 || pos / w.bdil[d] >= in[d]) {
          valid = false;
          break;
        }
        flat = flat * in[d] + pos / w.bdil[d];
      }
      const double v = valid ? x[flat] : init;
      switch (op) {
        case RefOp::kSum:
          acc += v;
          break;
        case RefOp::kProd:
          acc *= v;
          break;
        case RefOp::kMax:
          acc = std::isnan(v) || v > acc ? v : acc;
          break;
        case RefOp::kMin:
          acc = std::isnan(v) || v < acc ? v : acc;
          break;
      }
    }
    res[fo] = acc;
  }
  return res;
}

int64_t uniform(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(testing::rng());
}

// A random window over a random shape of `rank`, with padding (sometimes negative), strides and
// dilations, whose output is not empty.
std::pair<Shape, Win> random_case(int64_t rank, bool dilations = true, bool negative_pads = true) {
  for (;;) {
    Shape in;
    Win w;
    for (int64_t d = 0; d < rank; ++d) {
      in.push_back(uniform(1, 6));
      w.dims.push_back(uniform(1, 3));
      w.strides.push_back(uniform(1, 3));
      w.bdil.push_back(dilations ? uniform(1, 2) : 1);
      w.wdil.push_back(dilations ? uniform(1, 2) : 1);
      const int64_t lo = uniform(negative_pads ? -1 : 0, 2),
                    hi = uniform(negative_pads ? -1 : 0, 2);
      w.pads.push_back({lo, hi});
    }
    const Shape out = ref_shape(in, w);
    bool ok = true;
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t padded = dilated(in[d], w.bdil[d]) + w.pads[d].first + w.pads[d].second;
      ok = ok && padded >= dilated(w.dims[d], w.wdil[d]) && out[d] > 0;
    }
    if (ok) return {in, w};
  }
}

std::string case_str(const Shape& in, const Win& w) {
  std::string s = "in " + shape_str(in) + " window " + shape_str(w.dims) + " strides " +
                  shape_str(w.strides) + " bdil " + shape_str(w.bdil) + " wdil " +
                  shape_str(w.wdil) + " pads";
  for (auto [lo, hi] : w.pads) s += " (" + std::to_string(lo) + "," + std::to_string(hi) + ")";
  return s;
}

Array apply(RefOp op, const Array& x, const Win& w) {
  switch (op) {
    case RefOp::kSum:
      return lax::reduce_window_sum(x, w.dims, w.strides, w.pads, w.bdil, w.wdil);
    case RefOp::kMax:
      return lax::reduce_window_max(x, w.dims, w.strides, w.pads, w.bdil, w.wdil);
    case RefOp::kMin:
      return lax::reduce_window_min(x, w.dims, w.strides, w.pads, w.bdil, w.wdil);
    case RefOp::kProd:
      return lax::reduce_window(
          x, numpy::scalar(1.0, x.dtype()),
          [](const Array& a, const Array& b) { return lax::mul(a, b); }, w.dims, w.strides, w.pads,
          w.bdil, w.wdil);
  }
  return Array();
}

double identity(RefOp op) {
  const double inf = std::numeric_limits<double>::infinity();
  return op == RefOp::kSum ? 0.0 : op == RefOp::kProd ? 1.0 : op == RefOp::kMax ? -inf : inf;
}

TEST(ReduceWindow, MonoidsMatchNaiveLoops) {
  testing::Threads threads(2);
  for (int trial = 0; trial < 160; ++trial) {
    const int64_t rank = 1 + trial % 4;
    auto [in, w] = random_case(rank);
    for (DType dt : {kF32, kF64, DType::kInt32, DType::kBFloat16, DType::kUInt8}) {
      Array x = random_array(in, dt);
      const auto xv = to_doubles(x);
      for (RefOp op : {RefOp::kSum, RefOp::kMax, RefOp::kMin}) {
        SCOPED_TRACE(case_str(in, w) + " " + std::string(dtype_name(dt)) + " op " +
                     std::to_string(static_cast<int>(op)));
        Array y = apply(op, x, w);
        ASSERT_EQ(y.shape(), ref_shape(in, w));
        ASSERT_EQ(y.dtype(), dt);
        std::vector<double> want = ref_reduce(xv, in, w, op, identity(op));
        if (!is_floating(dt)) {
          // Integer identities are the dtype's lowest / highest; sums wrap (the values are small).
          for (double& v : want) {
            if (std::isinf(v) && dt == DType::kInt32)
              v = v < 0 ? std::numeric_limits<int32_t>::lowest()
                        : std::numeric_limits<int32_t>::max();
            if (std::isinf(v) && dt == DType::kUInt8) v = v < 0 ? 0 : 255;
            if (dt == DType::kUInt8 && op == RefOp::kSum) v = std::fmod(v, 256.0);
          }
        }
        const double tol = dt == DType::kBFloat16 ? 1e-2 : dt == kF32 ? 1e-5 : 0.0;
        const std::string msg = testing::compare(to_doubles(y), want, tol, tol);
        ASSERT_EQ(msg, "");
      }
    }
  }
}

TEST(ReduceWindow, GenericComputationsMatchNaiveLoops) {
  for (int trial = 0; trial < 40; ++trial) {
    auto [in, w] = random_case(1 + trial % 3);
    SCOPED_TRACE(case_str(in, w));
    Array x = random_array(in, kF64, 0.5, 1.5);
    Array z = random_array(in, kF64);
    const auto xv = to_doubles(x), zv = to_doubles(z);
    // A product (no monoid primitive): the generic primitive.
    EXPECT_EQ(testing::compare(to_doubles(apply(RefOp::kProd, x, w)),
                               ref_reduce(xv, in, w, RefOp::kProd, 1.0), 1e-12, 0),
              "");
    // Two operands in one computation, with a closed-over constant: (sum of c*x, max of z).
    Array c = numpy::scalar(3.0, kF64);
    std::vector<Array> outs = lax::reduce_window(
        {x, z}, {numpy::scalar(0.0, kF64), numpy::scalar(-INFINITY, kF64)},
        [&](const std::vector<Array>& a, const std::vector<Array>& b) {
          return std::vector<Array>{lax::add(a[0], lax::mul(c, b[0])), lax::max(a[1], b[1])};
        },
        w.dims, w.strides, w.pads, w.bdil, w.wdil);
    std::vector<double> s = ref_reduce(xv, in, w, RefOp::kSum, 0.0);
    for (double& v : s) v *= 3.0;
    EXPECT_EQ(testing::compare(to_doubles(outs[0]), s, 1e-12, 1e-12), "");
    EXPECT_EQ(
        testing::compare(to_doubles(outs[1]), ref_reduce(zv, in, w, RefOp::kMax, -INFINITY), 0, 0),
        "");
    // A non-identity init value is folded into every window (and fills the padding).
    Array y = lax::reduce_window(
        x, numpy::scalar(2.0, kF64), [](const Array& a, const Array& b) { return lax::add(a, b); },
        w.dims, w.strides, w.pads, w.bdil, w.wdil);
    EXPECT_EQ(
        testing::compare(to_doubles(y), ref_reduce(xv, in, w, RefOp::kSum, 2.0), 1e-12, 1e-12), "");
  }
}

TEST(ReduceWindow, PaddingStringsResolveAsJax) {
  Array x = random_array({2, 7, 5, 3}, kF32);
  const Ints dims{1, 3, 2, 1}, strides{1, 2, 1, 1};
  for (const char* pad : {"SAME", "VALID", "same_lower"}) {
    const lax::Pads pairs = lax::padtype_to_pads(x.shape(), dims, strides, pad);
    EXPECT_EQ(to_doubles(lax::reduce_window_max(x, dims, strides, pad)),
              to_doubles(lax::reduce_window_max(x, dims, strides, pairs)));
  }
  // SAME keeps ceil(in / stride) positions.
  EXPECT_EQ(lax::reduce_window_sum(x, dims, strides, "SAME").shape(), (Shape{2, 4, 5, 3}));
  // With window dilation, SAME pads for the dilated window (JAX's reduce_window).
  Array y = lax::reduce_window_sum(x, dims, strides, lax::PaddingType::kSame, {}, {1, 2, 2, 1});
  EXPECT_EQ(y.shape(), (Shape{2, 4, 5, 3}));
}

TEST(ReduceWindow, MonoidDetectionAndJaxprText) {
  Array x = random_array({4, 6}, kF32);
  auto text = [&](auto f) {
    return to_string(
        flat::make_jaxpr([&](std::span<const Array> a) { return std::vector<Array>{f(a[0])}; },
                         std::vector<Array>{x}));
  };
  const std::string sum = text([](const Array& a) {
    return lax::reduce_window(
        a, numpy::scalar(0.0, kF32), [](const Array& p, const Array& q) { return lax::add(p, q); },
        {2, 2}, {1, 2}, lax::Pads{{0, 1}, {1, 0}});
  });
  EXPECT_NE(sum.find("reduce_window_sum["), std::string::npos) << sum;
  EXPECT_NE(sum.find("padding=((0, 1), (1, 0))"), std::string::npos) << sum;
  EXPECT_NE(sum.find("window_dimensions=(2, 2)"), std::string::npos) << sum;
  EXPECT_NE(sum.find("window_strides=(1, 2)"), std::string::npos) << sum;
  // Not the identity: the generic primitive.
  const std::string gen = text([](const Array& a) {
    return lax::reduce_window(a, numpy::scalar(1.0, kF32),
                              [](const Array& p, const Array& q) { return lax::max(p, q); },
                              {2, 2});
  });
  EXPECT_NE(gen.find("reduce_window["), std::string::npos) << gen;
  const std::string mx = text([](const Array& a) {
    return lax::reduce_window(a, numpy::scalar(-INFINITY, kF32),
                              [](const Array& p, const Array& q) { return lax::max(p, q); },
                              {2, 2});
  });
  EXPECT_NE(mx.find("reduce_window_max["), std::string::npos) << mx;
  // The JVP of max pooling gathers tangents with select_prim=ge.
  const std::string jv = to_string(flat::make_jaxpr(
      [](std::span<const Array> a) {
        auto [o, t] = flat::jvp(
            [](std::span<const Array> b) {
              return std::vector<Array>{lax::reduce_window_max(b[0], {2, 2}, {2, 2})};
            },
            std::vector<Array>{a[0]}, std::vector<Array>{a[1]});
        return std::vector<Array>{t[0]};
      },
      std::vector<Array>{x, x}));
  EXPECT_NE(jv.find("select_and_gather_add["), std::string::npos) << jv;
  EXPECT_NE(jv.find("select_prim=ge"), std::string::npos) << jv;
}

TEST(ReduceWindow, JaxprTextParsesBackAndEvaluates) {
  // Every primitive of the family, printed, parsed and evaluated against eager.
  Array x = random_array({3, 8, 6, 2}, kF32);
  Array t = random_array({3, 8, 6, 2}, kF32);
  auto f = [](std::span<const Array> a) {
    auto pool = [](std::span<const Array> b) {
      return std::vector<Array>{lax::reduce_window_max(b[0], {1, 3, 2, 1}, {1, 2, 2, 1}, "SAME")};
    };
    auto [o, to] = flat::jvp(pool, std::vector<Array>{a[0]}, std::vector<Array>{a[1]});
    Array s = lax::reduce_window_sum(a[0], {1, 2, 2, 1}, {}, "VALID", {1, 2, 1, 1});
    Array m =
        lax::reduce_window_min(a[0], {1, 2, 3, 1}, {}, lax::Pads{{0, 0}, {1, 0}, {0, 1}, {0, 0}});
    Array p = lax::reduce_window(a[0], numpy::scalar(1.0, kF32),
                                 [](const Array& u, const Array& v) { return lax::mul(u, v); },
                                 {1, 2, 1, 1});
    Array sc = lax::select_and_scatter_add(
        to[0], a[0], true, {1, 3, 2, 1}, {1, 2, 2, 1},
        lax::padtype_to_pads(a[0].shape(), Ints{1, 3, 2, 1}, Ints{1, 2, 2, 1}, "SAME"));
    return std::vector<Array>{to[0], s, m, p, sc};
  };
  std::vector<Array> args{x, t};
  ClosedJaxpr j = flat::make_jaxpr(f, args);
  const std::string text = to_string(*j.jaxpr);
  Jaxpr back = parse_jaxpr(text);
  EXPECT_EQ(to_string(back), text);
  std::vector<Array> got = eval_jaxpr(back, j.consts, args), want = f(args);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(to_doubles(got[i]), to_doubles(want[i])) << i;
}

TEST(ReduceWindow, GenericClosesOverTracedValues) {
  // Under jit and grad, a value the computation closes over is a tracer: a const of the jaxpr,
  // passed as a trailing operand.
  testing::X64Scope x64;
  Array x = random_array({5, 4}, kF64, 0.5, 1.5);
  Array c = numpy::scalar(0.7, kF64);
  auto f = [](const Array& a, const Array& k) {
    return lax::reduce_window(
        a, numpy::scalar(0.0, kF64),
        [&](const Array& u, const Array& v) { return lax::add(u, lax::mul(k, v)); }, {2, 2}, {1, 1},
        "SAME");
  };
  Array want = f(x, c);
  const Win w{{2, 2},
              {1, 1},
              {1, 1},
              {1, 1},
              lax::padtype_to_pads(x.shape(), Ints{2, 2}, Ints{1, 1}, "SAME")};
  std::vector<double> ref = ref_reduce(to_doubles(x), x.shape(), w, RefOp::kSum, 0.0);
  for (double& v : ref) v *= 0.7;
  EXPECT_EQ(testing::compare(to_doubles(want), ref, 1e-14, 1e-14), "");
  auto jf = jit([&](const Array& a, const Array& k) { return f(a, k); });
  EXPECT_EQ(testing::compare(to_doubles(jf(x, c)), to_doubles(want), 1e-14, 1e-14), "");
  // d/dk sum(f) = sum of the windows' sums of x.
  auto loss = [&](const Array& k) { return numpy::sum(f(x, k)); };
  double s = 0;
  for (double v : ref) s += v / 0.7;
  EXPECT_NEAR(grad(loss)(c).item<double>(), s, 1e-10 * (1 + std::fabs(s)));
}

// sum(wt * op(x)) for the derivative checks.
Array weighted(RefOp op, const Array& x, const Win& w, const Array& wt) {
  Array y = apply(op, x, w);
  // Windows entirely in padding or holes give -inf / +inf: left out.
  y = lax::select_n(lax::is_finite(y), {numpy::zeros_like(y), y});
  Ints all;
  for (int64_t d = 0; d < y.ndim(); ++d) all.push_back(d);
  return lax::reduce_sum(lax::mul(y, wt), all);
}

TEST(ReduceWindow, GradientsMatchFiniteDifferences) {
  testing::X64Scope x64;
  for (int trial = 0; trial < 16; ++trial) {
    for (RefOp op : {RefOp::kSum, RefOp::kMax, RefOp::kMin, RefOp::kProd}) {
      // Max/min: no window dilation (JAX has no VJP for it); distinct random values.
      const bool chooser = op == RefOp::kMax || op == RefOp::kMin;
      auto [in, w] = random_case(1 + trial % 3, true, true);
      if (chooser) w.wdil.assign(w.wdil.size(), 1);
      bool empty = false;
      for (int64_t s : ref_shape(in, w)) empty = empty || s == 0;
      if (empty) continue;
      SCOPED_TRACE(case_str(in, w) + " op " + std::to_string(static_cast<int>(op)));
      Array x = op == RefOp::kProd ? random_array(in, kF64, 0.5, 1.5) : random_array(in, kF64);
      Array wt = random_array(ref_shape(in, w), kF64);
      const auto xv = to_doubles(x);
      auto f = [&](const Array& a) { return weighted(op, a, w, wt); };
      const auto g = to_doubles(grad(f)(x));
      const double h = 1e-6;
      for (size_t i = 0; i < xv.size(); ++i) {
        std::vector<double> p = xv, m = xv;
        p[i] += h;
        m[i] -= h;
        const double fd =
            (f(numpy::array(p, in)).item<double>() - f(numpy::array(m, in)).item<double>()) /
            (2 * h);
        ASSERT_NEAR(g[i], fd, 1e-6 * (1 + std::fabs(fd))) << "element " << i;
      }
      // Second order: the Hessian along a direction (jvp of grad) vs differences of the grad.
      Array v = random_array(in, kF64);
      auto gf = [&](std::span<const Array> a) { return std::vector<Array>{grad(f)(a[0])}; };
      auto [gv, hv] = flat::jvp(gf, std::vector<Array>{x}, std::vector<Array>{v});
      const auto vv = to_doubles(v);
      std::vector<double> p = xv, m = xv;
      for (size_t i = 0; i < xv.size(); ++i) p[i] += h * vv[i], m[i] -= h * vv[i];
      const auto gp = to_doubles(grad(f)(numpy::array(p, in)));
      const auto gm = to_doubles(grad(f)(numpy::array(m, in)));
      const auto hvv = to_doubles(hv[0]);
      for (size_t i = 0; i < xv.size(); ++i)
        ASSERT_NEAR(hvv[i], (gp[i] - gm[i]) / (2 * h), 1e-5 * (1 + std::fabs(hvv[i])));
    }
  }
}

TEST(ReduceWindow, ForwardModeWithWindowDilationAndVjpError) {
  testing::X64Scope x64;
  Array x = random_array({2, 9}, kF64);
  Array t = random_array({2, 9}, kF64);
  const Win w{{1, 3}, {1, 2}, {1, 1}, {1, 2}, {{0, 0}, {1, 1}}};
  auto f = [&](std::span<const Array> a) {
    return std::vector<Array>{
        lax::reduce_window_max(a[0], w.dims, w.strides, w.pads, w.bdil, w.wdil)};
  };
  auto [o, to] = flat::jvp(f, std::vector<Array>{x}, std::vector<Array>{t});
  const double h = 1e-6;
  auto xv = to_doubles(x), tv = to_doubles(t), p = xv, m = xv;
  for (size_t i = 0; i < xv.size(); ++i) p[i] += h * tv[i], m[i] -= h * tv[i];
  const auto yp = to_doubles(f(std::vector<Array>{numpy::array(p, {2, 9})})[0]);
  const auto ym = to_doubles(f(std::vector<Array>{numpy::array(m, {2, 9})})[0]);
  const auto got = to_doubles(to[0]);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], (yp[i] - ym[i]) / (2 * h), 1e-7);
  auto loss = [&](const Array& a) { return numpy::sum(f(std::vector<Array>{a})[0]); };
  EXPECT_ERROR(NotImplementedError, grad(loss)(x),
               "VJP not implemented for select_and_gather (MaxPool) with window dilation");
}

TEST(ReduceWindow, TiesGoToTheFirstElementInWindowOrder) {
  // [1, 3, 3, 2] windows of 2, stride 1: the middle window's tie goes to index 1.
  Array x = numpy::array(std::vector<double>{1, 3, 3, 2}, {4});
  auto f = [](const Array& a) { return numpy::sum(lax::reduce_window_max(a, {2}, {1}, "VALID")); };
  EXPECT_EQ(to_doubles(grad(f)(x)), (std::vector<double>{0, 2, 1, 0}));
  auto g = [](const Array& a) { return numpy::sum(lax::reduce_window_min(a, {3}, {1}, "SAME")); };
  // Windows (pad, 1, 3) (1, 3, 3) (3, 3, 2) (3, 2, pad): min 1, 1, 2, 2.
  EXPECT_EQ(to_doubles(grad(g)(x)), (std::vector<double>{2, 0, 0, 2}));
}

TEST(ReduceWindow, VmapMatchesLoopAndJitMatchesEager) {
  for (int trial = 0; trial < 12; ++trial) {
    auto [in, w] = random_case(1 + trial % 3, true, false);
    if (trial % 2) w.wdil.assign(w.wdil.size(), 1);  // max/min gradients need no window dilation
    const bool wdil = std::any_of(w.wdil.begin(), w.wdil.end(), [](int64_t d) { return d != 1; });
    SCOPED_TRACE(case_str(in, w));
    const int64_t B = 3, axis = uniform(0, static_cast<int64_t>(in.size()));
    Shape bs = in;
    bs.insert(bs.begin() + axis, B);
    Array xb = random_array(bs, kF32);
    for (RefOp op : {RefOp::kSum, RefOp::kMax, RefOp::kMin, RefOp::kProd}) {
      auto f = [&](const Array& a) { return apply(op, a, w); };
      // grad of max/min pooling: select_and_gather_add's transpose, select_and_scatter_add.
      auto gf = [&](const Array& a) {
        return grad([&](const Array& b) { return numpy::sum(f(b)); })(a);
      };
      std::vector<std::function<Array(const Array&)>> fns{f};
      if (!(wdil && (op == RefOp::kMax || op == RefOp::kMin))) fns.push_back(gf);
      for (const auto& fn : fns) {
        std::vector<Array> loop;
        for (int64_t b = 0; b < B; ++b) loop.push_back(fn(lax::index_in_dim(xb, b, axis, false)));
        Array want = numpy::stack(loop);
        EXPECT_EQ(testing::compare(to_doubles(vmap(fn, {axis})(xb)), to_doubles(want), 1e-6, 1e-6),
                  "");
        Array x0 = lax::index_in_dim(xb, 0, axis, false);
        EXPECT_EQ(testing::compare(to_doubles(jit(fn)(x0)), to_doubles(fn(x0)), 1e-6, 1e-6), "");
      }
    }
  }
}

TEST(ReduceWindow, SelectPrimitivesAreAdjoint) {
  testing::X64Scope x64;
  for (int trial = 0; trial < 30; ++trial) {
    auto [in, w] = random_case(1 + trial % 4, false, true);
    SCOPED_TRACE(case_str(in, w));
    // Few distinct values: many ties, resolved the same way by both.
    Array x = lax::convert_element_type(lax::round(random_array(in, kF64, -2, 2)), kF64);
    Array t = random_array(in, kF64);
    for (bool ge : {true, false}) {
      Array g = lax::select_and_gather_add(t, x, ge, w.dims, w.strides, w.pads);
      Array u = random_array(g.shape(), kF64);
      Array s = lax::select_and_scatter_add(u, x, ge, w.dims, w.strides, w.pads);
      ASSERT_EQ(s.shape(), in);
      const double lhs = numpy::sum(lax::mul(g, u)).item<double>();
      const double rhs = numpy::sum(lax::mul(t, s)).item<double>();
      EXPECT_NEAR(lhs, rhs, 1e-10 * (1 + std::fabs(lhs)));
      // Gather = the tangent at the reference max/min (values drawn equal are never both
      // selected: the gathered tangent is one of the window's).
      const auto mx = ref_reduce(to_doubles(x), in, w, ge ? RefOp::kMax : RefOp::kMin,
                                 ge ? -INFINITY : INFINITY);
      Array want = ge ? lax::reduce_window_max(x, w.dims, w.strides, w.pads)
                      : lax::reduce_window_min(x, w.dims, w.strides, w.pads);
      EXPECT_EQ(to_doubles(want), mx);
    }
  }
}

TEST(ReduceWindow, ResultsDoNotDependOnThreadCount) {
  Array x = random_array({4, 40, 36, 16}, kF32);
  auto run = [&] {
    std::vector<double> r =
        to_doubles(lax::reduce_window_sum(x, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME"));
    auto loss = [](const Array& a) {
      return numpy::sum(lax::reduce_window_max(a, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME"));
    };
    for (double v : to_doubles(grad(loss)(x))) r.push_back(v);
    return r;
  };
  std::vector<double> one, two;
  {
    testing::Threads t(1);
    one = run();
  }
  {
    testing::Threads t(2);
    two = run();
  }
  EXPECT_EQ(one, two);
}

TEST(ReduceWindow, Errors) {
  Array x = random_array({4, 5}, kF32);
  EXPECT_ERROR(TypeError, lax::reduce_window_sum(x, {2}),
               "reduce_window got the wrong number of window_dimensions for operand: got "
               "operand shape (4, 5) with window_dimensions (2,).");
  EXPECT_ERROR(TypeError, lax::reduce_window_max(x, {2, 0}),
               "window_dimensions must have every element be strictly positive");
  EXPECT_ERROR(TypeError, lax::reduce_window_max(x, {2, 2}, {1, 0}),
               "window_strides must have every element be strictly positive");
  EXPECT_ERROR(TypeError, lax::reduce_window_max(x, {2, 2}, {1, 1, 1}),
               "got inconsistent window_strides and window_dimensions");
  EXPECT_ERROR(TypeError, lax::reduce_window_min(x, {2, 2}, {1, 1}, "VALID", {1, 0}),
               "All dilations must be positive");
  EXPECT_ERROR(ValueError, lax::reduce_window_max(x, {6, 2}), "is larger than the padded operand");
  EXPECT_ERROR(TypeError,
               lax::reduce_window_sum(lax::convert_element_type(x, DType::kBool), {2, 2}),
               "operand to reduce_window_sum must have a number dtype, got bool");
  EXPECT_ERROR(Error, lax::reduce_window_sum(x, {2, 2}, {1, 1}, "FULL"),
               "Unrecognized padding type");
  auto add = [](const std::vector<Array>& a, const std::vector<Array>& b) {
    return std::vector<Array>{lax::add(a[0], b[0])};
  };
  EXPECT_ERROR(TypeError, lax::reduce_window({x}, {numpy::scalar(1.0, kF64)}, add, {2, 2}),
               "reduce_window got inconsistent dtypes for operands and init_values");
  EXPECT_ERROR(ValueError, lax::reduce_window({x, x}, {numpy::scalar(1.0, kF32)}, add, {2, 2}),
               "Must have same total number of operands as init_values");
  EXPECT_ERROR(ValueError, lax::reduce_window({}, {}, add, {}), "at least one operand");
  EXPECT_ERROR(TypeError,
               lax::select_and_gather_add(x, lax::convert_element_type(x, DType::kInt32), true,
                                          {2, 2}, {1, 1}, {{0, 0}, {0, 0}}),
               "requires a floating operand");
}

}  // namespace
}  // namespace tessera
