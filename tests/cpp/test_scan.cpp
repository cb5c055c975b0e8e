// lax.scan / fori_loop / map (tessera/control_flow.h) and the scan primitive's rules: forward
// values against float64 C++ loops, jvp/grad/grad-of-grad/linearize/vjp against float64 finite
// differences and a hand-written BPTT, vmap against loops of unbatched scans, DCE of unused
// carries and ys, jaxpr text, and JAX's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ir/passes/dce.h"
#include "tessera/control_flow.h"
#include "tessera/debug.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

#define EXPECT_CLOSE(got, want, tol) EXPECT_EQ(compare(to_doubles(got), want, tol, tol), "")

using Vec = std::vector<double>;
constexpr DType f32 = DType::kFloat32;

struct X64 {
  X64() : prev(x64_enabled()) { set_x64_enabled(true); }
  ~X64() { set_x64_enabled(prev); }
  bool prev;
};

double dsum(const Vec& v) {
  double s = 0;
  for (double e : v) s += e;
  return s;
}

// ---- forward ----

TEST(Scan, ForwardPytreeCarrySeveralXsYsAndReverse) {
  const int64_t T = 5, H = 3;
  Array h0 = random_array({H}, f32), a = random_array({T, H}, f32), b = random_array({T}, f32);
  for (bool reverse : {false, true}) {
    auto body = [](const std::pair<Array, Array>& c, const std::pair<Array, Array>& x) {
      Array h = lax::add(lax::mul(c.first, tnp::asarray(0.5)), lax::mul(x.first, x.second));
      Array s = lax::add(c.second, tnp::sum(x.first));
      return std::make_pair(std::make_pair(h, s), std::make_tuple(lax::mul(h, h), s));
    };
    lax::ScanOptions o;
    o.reverse = reverse;
    auto [carry, ys] =
        lax::scan(body, std::make_pair(h0, tnp::asarray(1.0f)), std::make_pair(a, b), o);
    // float64 reference
    Vec h = to_doubles(h0), av = to_doubles(a), bv = to_doubles(b);
    double s = 1.0;
    Vec y0(T * H), y1(T);
    for (int64_t i = 0; i < T; ++i) {
      int64_t t = reverse ? T - 1 - i : i;
      for (int64_t k = 0; k < H; ++k) {
        h[k] = 0.5 * h[k] + av[t * H + k] * bv[t];
        s += av[t * H + k];
      }
      for (int64_t k = 0; k < H; ++k) y0[t * H + k] = h[k] * h[k];
      y1[t] = s;
    }
    EXPECT_CLOSE(carry.first, h, 1e-5);
    EXPECT_CLOSE(carry.second, Vec{s}, 1e-5);
    EXPECT_EQ(std::get<0>(ys).shape(), (Shape{T, H}));
    EXPECT_CLOSE(std::get<0>(ys), y0, 1e-5);
    EXPECT_CLOSE(std::get<1>(ys), y1, 1e-5);
  }
}

TEST(Scan, LengthWithoutXsLengthZeroAndUnroll) {
  Array c0 = random_array({2}, f32);
  auto body = [](const Array& c, std::nullopt_t) {
    Array n = lax::add(lax::mul(c, tnp::asarray(1.5)), tnp::asarray(1.0));
    return std::make_pair(n, lax::neg(n));
  };
  for (int64_t unroll : {1, 2, 0}) {
    lax::ScanOptions o;
    o.length = 4;
    o.unroll = unroll;
    auto [c, ys] = lax::scan(body, c0, std::nullopt, o);
    Vec cv = to_doubles(c0), yv;
    Vec ys_want;
    for (int i = 0; i < 4; ++i) {
      for (double& e : cv) e = e * 1.5 + 1.0;
      for (double e : cv) ys_want.push_back(-e);
    }
    EXPECT_CLOSE(c, cv, 1e-5);
    EXPECT_EQ(ys.shape(), (Shape{4, 2}));
    EXPECT_CLOSE(ys, ys_want, 1e-5);
  }
  lax::ScanOptions z;
  z.length = 0;
  auto [c, ys] = lax::scan(body, c0, std::nullopt, z);
  EXPECT_CLOSE(c, to_doubles(c0), 0);
  EXPECT_EQ(ys.shape(), (Shape{0, 2}));
  // A zero-length scan over xs.
  auto [c2, ys2] =
      lax::scan([](const Array& c, const Array& x) { return std::make_pair(lax::add(c, x), x); },
                c0, tnp::zeros({0, 2}));
  EXPECT_CLOSE(c2, to_doubles(c0), 0);
  EXPECT_EQ(ys2.shape(), (Shape{0, 2}));
}

TEST(Scan, WeakTypedInitialCarryTakesTheBodyDtype) {
  Array xs = random_array({4}, f32);
  auto [c, ys] = lax::scan(
      [](const Array& c, const Array& x) { return std::make_pair(lax::add(c, x), c); }, 0.0, xs);
  EXPECT_EQ(c.dtype(), f32);
  EXPECT_NEAR(c.item_double(), dsum(to_doubles(xs)), 1e-5);
}

// ---- differentiation ----

// y = scan over xs of c = sin(c * a) + x * c, final c and sum of ys; as a flat function of
// (a, c0, xs) in float64.
flat::Fun sin_scan(bool reverse) {
  return [reverse](std::span<const Array> v) {
    Array a = v[0];
    flat::Fun body = [a](std::span<const Array> cx) {
      Array c = lax::add(lax::sin(lax::mul(cx[0], a)), lax::mul(cx[1], cx[0]));
      return std::vector<Array>{c, lax::mul(c, c)};
    };
    flat::ScanOptions o;
    o.reverse = reverse;
    flat::ScanResult r = flat::scan(body, {&v[1], 1}, {&v[2], 1}, o);
    return std::vector<Array>{r.carry[0], r.ys[0]};
  };
}

Vec sin_scan_ref(double a, double c, const Vec& xs, bool reverse, Vec* ys) {
  size_t T = xs.size();
  ys->assign(T, 0);
  for (size_t i = 0; i < T; ++i) {
    size_t t = reverse ? T - 1 - i : i;
    c = std::sin(c * a) + xs[t] * c;
    (*ys)[t] = c * c;
  }
  return {c};
}

TEST(ScanAD, JvpMatchesFiniteDifferences) {
  X64 x64;
  const DType d = DType::kFloat64;
  for (bool reverse : {false, true}) {
    Array a = random_array({}, d, 0.5, 1.5), c0 = random_array({3}, d),
          xs = random_array({4, 3}, d, -0.5, 0.5);
    Array ta = random_array({}, d), tc = random_array({3}, d), tx = random_array({4, 3}, d);
    std::vector<Array> primals{a, c0, xs}, tans{ta, tc, tx};
    auto [outs, touts] = flat::jvp(sin_scan(reverse), primals, tans);
    const double eps = 1e-6;
    auto eval = [&](double s) {
      std::vector<Array> p;
      for (size_t i = 0; i < 3; ++i)
        p.push_back(lax::add(primals[i], lax::mul(tans[i], tnp::asarray(s, d))));
      return sin_scan(reverse)(p);
    };
    auto plus = eval(eps), minus = eval(-eps);
    for (size_t k = 0; k < 2; ++k) {
      Vec p = to_doubles(plus[k]), m = to_doubles(minus[k]), fd(p.size());
      for (size_t i = 0; i < p.size(); ++i) fd[i] = (p[i] - m[i]) / (2 * eps);
      EXPECT_CLOSE(touts[k], fd, 1e-6);
    }
    // and the primal outputs against the float64 loop (per column of c)
    Vec av = to_doubles(a), cv = to_doubles(c0), xv = to_doubles(xs);
    for (int64_t j = 0; j < 3; ++j) {
      Vec col, ys;
      for (int64_t t = 0; t < 4; ++t) col.push_back(xv[t * 3 + j]);
      Vec c = sin_scan_ref(av[0], cv[j], col, reverse, &ys);
      EXPECT_NEAR(to_doubles(outs[0])[j], c[0], 1e-12);
    }
  }
}

// The RNN h' = tanh(W h + U x_t), loss = sum_t c_t . h_{t+1} + sum(h_T): grad against a
// hand-written float64 backpropagation through time.
TEST(ScanAD, GradOfRnnMatchesHandWrittenBptt) {
  const int64_t T = 6, H = 4, D = 3;
  Array W = random_array({H, H}, f32, -0.6, 0.6), U = random_array({H, D}, f32, -0.6, 0.6);
  Array h0 = random_array({H}, f32), xs = random_array({T, D}, f32), cs = random_array({T, H}, f32);
  flat::Fun loss = [&](std::span<const Array> v) {
    Array w = v[0], u = v[1];
    flat::Fun body = [w, u](std::span<const Array> a) {
      Array h = lax::tanh(lax::add(lax::dot(w, a[0]), lax::dot(u, a[1])));
      return std::vector<Array>{h, tnp::sum(lax::mul(h, a[2]))};
    };
    std::vector<Array> scanned{xs, cs};
    flat::ScanResult r = flat::scan(body, {&v[2], 1}, scanned);
    return std::vector<Array>{lax::add(tnp::sum(r.ys[0]), tnp::sum(r.carry[0]))};
  };
  flat::ValueAndGrad vg = flat::value_and_grad(loss, std::vector<Array>{W, U, h0}, false);

  Vec w = to_doubles(W), u = to_doubles(U), x = to_doubles(xs), c = to_doubles(cs);
  std::vector<Vec> hs{to_doubles(h0)};
  double L = 0;
  for (int64_t t = 0; t < T; ++t) {
    Vec h(H);
    for (int64_t i = 0; i < H; ++i) {
      double s = 0;
      for (int64_t j = 0; j < H; ++j) s += w[i * H + j] * hs[t][j];
      for (int64_t j = 0; j < D; ++j) s += u[i * D + j] * x[t * D + j];
      h[i] = std::tanh(s);
      L += c[t * H + i] * h[i];
    }
    hs.push_back(h);
  }
  L += dsum(hs[T]);
  Vec dW(H * H, 0), dU(H * D, 0), dh(H, 1.0);
  for (int64_t t = T - 1; t >= 0; --t) {
    Vec da(H);
    for (int64_t i = 0; i < H; ++i) {
      dh[i] += c[t * H + i];
      da[i] = dh[i] * (1 - hs[t + 1][i] * hs[t + 1][i]);
    }
    for (int64_t i = 0; i < H; ++i) {
      for (int64_t j = 0; j < H; ++j) dW[i * H + j] += da[i] * hs[t][j];
      for (int64_t j = 0; j < D; ++j) dU[i * D + j] += da[i] * x[t * D + j];
    }
    Vec nd(H, 0);
    for (int64_t j = 0; j < H; ++j)
      for (int64_t i = 0; i < H; ++i) nd[j] += w[i * H + j] * da[i];
    dh = nd;
  }
  EXPECT_NEAR(vg.outs[0].item_double(), L, 1e-4);
  EXPECT_CLOSE(vg.grads[0], dW, 1e-4);
  EXPECT_CLOSE(vg.grads[1], dU, 1e-4);
  EXPECT_CLOSE(vg.grads[2], dh, 1e-4);
}

// Scalar a -> sum of the final carry of sin_scan: grad and grad(grad) against finite
// differences of the function and of its gradient.
TEST(ScanAD, GradOfGradMatchesFiniteDifferences) {
  X64 x64;
  const DType d = DType::kFloat64;
  Array c0 = random_array({2}, d), xs = random_array({5, 2}, d, -0.5, 0.5);
  auto f = [&](const Array& a) {
    return tnp::sum(sin_scan(false)(std::vector<Array>{a, c0, xs})[0]);
  };
  auto g = [&](const Array& a) {
    return flat::value_and_grad(
               [&](std::span<const Array> v) { return std::vector<Array>{f(v[0])}; },
               std::vector<Array>{a}, false)
        .grads[0];
  };
  auto gg = [&](const Array& a) {
    return flat::value_and_grad(
               [&](std::span<const Array> v) { return std::vector<Array>{g(v[0])}; },
               std::vector<Array>{a}, false)
        .grads[0];
  };
  double a = 0.8, eps = 1e-5;
  auto A = [&](double v) { return tnp::asarray(v, d); };
  double fd1 = (f(A(a + eps)).item_double() - f(A(a - eps)).item_double()) / (2 * eps);
  double fd2 = (g(A(a + eps)).item_double() - g(A(a - eps)).item_double()) / (2 * eps);
  EXPECT_NEAR(g(A(a)).item_double(), fd1, 1e-7);
  EXPECT_NEAR(gg(A(a)).item_double(), fd2, 1e-6 * std::max(1.0, std::abs(fd2)));
}

TEST(ScanAD, LinearizeJvpAndReverseScanVjp) {
  X64 x64;
  const DType d = DType::kFloat64;
  for (bool reverse : {false, true}) {
    Array a = random_array({}, d, 0.5, 1.5), c0 = random_array({3}, d),
          xs = random_array({4, 3}, d, -0.5, 0.5);
    std::vector<Array> primals{a, c0, xs};
    flat::Linearized lin = flat::linearize(sin_scan(reverse), primals);
    std::vector<Array> tans{random_array({}, d), random_array({3}, d), random_array({4, 3}, d)};
    auto [outs, touts] = flat::jvp(sin_scan(reverse), primals, tans);
    std::vector<Array> lt = lin.jvp(tans);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_CLOSE(lin.outs()[k], to_doubles(outs[k]), 1e-12);
      EXPECT_CLOSE(lt[k], to_doubles(touts[k]), 1e-10);
    }
    // vjp: <ct, J t> == <J^T ct, t> for random ct and t (J t from the jvp above, checked
    // against finite differences in JvpMatchesFiniteDifferences).
    std::vector<Array> cts{random_array({3}, d), random_array({4, 3}, d)};
    std::vector<Array> in_cts = lin.vjp(cts);
    double lhs = 0, rhs = 0;
    for (size_t k = 0; k < 2; ++k) {
      Vec c = to_doubles(cts[k]), t = to_doubles(touts[k]);
      for (size_t i = 0; i < c.size(); ++i) lhs += c[i] * t[i];
    }
    for (size_t k = 0; k < 3; ++k) {
      Vec c = to_doubles(in_cts[k]), t = to_doubles(tans[k]);
      ASSERT_EQ(in_cts[k].shape(), primals[k].shape());
      for (size_t i = 0; i < c.size(); ++i) rhs += c[i] * t[i];
    }
    EXPECT_NEAR(lhs, rhs, 1e-9 * std::max(1.0, std::abs(lhs)));
  }
}

// A body with an integer counter carry, a carry passed through unchanged, a y that is the x
// slice itself and a y that does not depend on the inputs: grad (every input) and vmap(grad)
// against finite differences.
TEST(ScanAD, PassThroughCarriesIntegerCarryAndForwardedYs) {
  X64 x64;
  const DType d = DType::kFloat64;
  auto f = [](std::span<const Array> v) {
    flat::Fun body = [](std::span<const Array> c) {
      Array n = lax::add(c[0], tnp::asarray(1, DType::kInt32));
      Array z = lax::add(lax::mul(c[2], lax::cos(c[3])),
                         lax::mul(c[1], lax::convert_element_type(n, DType::kFloat64)));
      return std::vector<Array>{n, c[1], z, c[3], tnp::full({2}, 3.0, DType::kFloat64)};
    };
    std::vector<Array> init{tnp::asarray(0, DType::kInt32), v[0], v[1]};
    flat::ScanResult r = flat::scan(body, init, {&v[2], 1});
    Array loss = lax::add(tnp::sum(lax::mul(r.carry[2], r.carry[1])),
                          lax::add(tnp::sum(lax::sin(r.ys[0])), tnp::sum(r.ys[1])));
    return std::vector<Array>{lax::add(loss, lax::convert_element_type(r.carry[0], d))};
  };
  std::vector<Array> args{random_array({2}, d), random_array({2}, d), random_array({3, 2}, d)};
  flat::ValueAndGrad vg = flat::value_and_grad(f, args, false);
  const double eps = 1e-6;
  for (size_t i = 0; i < args.size(); ++i) {
    Vec base = to_doubles(args[i]), fd;
    for (size_t k = 0; k < base.size(); ++k) {
      auto at = [&](double delta) {
        Vec b = base;
        b[k] += delta;
        std::vector<Array> a = args;
        a[i] = tnp::array(b, args[i].shape(), d);
        return f(a)[0].item_double();
      };
      fd.push_back((at(eps) - at(-eps)) / (2 * eps));
    }
    EXPECT_CLOSE(vg.grads[i], fd, 1e-6) << "argument " << i;
  }
  // vmap(grad) over the scanned operand.
  Array xb = random_array({4, 3, 2}, d);
  flat::Fun g = [&](std::span<const Array> v) {
    return flat::value_and_grad(f, std::vector<Array>{args[0], args[1], v[0]}, false).grads;
  };
  auto zeros = [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); };
  std::vector<std::optional<int64_t>> ax{0};
  std::vector<Array> got = flat::vmap(g, std::vector<Array>{xb}, ax, zeros);
  for (size_t k = 0; k < 3; ++k) {
    Vec want;
    for (int64_t b = 0; b < 4; ++b) {
      Vec w = to_doubles(g(std::vector<Array>{lax::index_in_dim(xb, b, 0, false)})[k]);
      want.insert(want.end(), w.begin(), w.end());
    }
    EXPECT_CLOSE(got[k], want, 1e-10) << "output " << k;
  }
}

// ---- batching ----

// g(w, h0, xs): h' = tanh(w * h + x), ys = 2 h'; w is a const of the scan.
std::vector<Array> small_rnn(std::span<const Array> v) {
  Array w = v[0];
  flat::Fun body = [w](std::span<const Array> a) {
    Array h = lax::tanh(lax::add(lax::mul(w, a[0]), a[1]));
    return std::vector<Array>{h, lax::mul(h, tnp::asarray(2.0f))};
  };
  flat::ScanResult r = flat::scan(body, {&v[1], 1}, {&v[2], 1});
  return {r.carry[0], r.ys[0]};
}

TEST(ScanBatch, EveryCombinationOfBatchedConstsInitXs) {
  const int64_t B = 3, T = 4, H = 2;
  for (int mask = 0; mask < 8; ++mask) {
    bool bw = mask & 1, bh = mask & 2, bx = mask & 4;
    Array w = random_array(bw ? Shape{B, H} : Shape{H}, f32);
    Array h0 = random_array(bh ? Shape{H, B} : Shape{H}, f32);  // batched at axis 1
    // xs batched at axis 1 (odd masks) or 0 (the scan axis, moved by the rule)
    const int64_t xa = (mask & 1) ? 1 : 0;
    Array xs = random_array(bx ? (xa == 1 ? Shape{T, B, H} : Shape{B, T, H}) : Shape{T, H}, f32);
    std::vector<std::optional<int64_t>> in_axes{bw ? std::optional<int64_t>(0) : std::nullopt,
                                                bh ? std::optional<int64_t>(1) : std::nullopt,
                                                bx ? std::optional<int64_t>(xa) : std::nullopt};
    std::vector<Array> args{w, h0, xs};
    auto zeros = [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); };
    std::vector<Array> got = flat::vmap(small_rnn, args, in_axes, zeros, B);
    ASSERT_EQ(got[0].shape(), (Shape{B, H}));
    ASSERT_EQ(got[1].shape(), (Shape{B, T, H}));
    Vec c_want, y_want;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<Array> one{bw ? lax::index_in_dim(w, b, 0, false) : w,
                             bh ? lax::index_in_dim(h0, b, 1, false) : h0,
                             bx ? lax::index_in_dim(xs, b, xa, false) : xs};
      std::vector<Array> r = small_rnn(one);
      Vec c = to_doubles(r[0]), y = to_doubles(r[1]);
      c_want.insert(c_want.end(), c.begin(), c.end());
      y_want.insert(y_want.end(), y.begin(), y.end());
    }
    EXPECT_CLOSE(got[0], c_want, 1e-6) << "mask " << mask;
    EXPECT_CLOSE(got[1], y_want, 1e-6) << "mask " << mask;
  }
}

TEST(ScanBatch, VmapOfGradAndGradOfVmap) {
  const int64_t B = 3, T = 4, H = 2;
  Array ws = random_array({B, H}, f32), h0 = random_array({H}, f32), xs = random_array({T, H}, f32);
  // loss(w) = sum of ys
  flat::Fun loss = [&](std::span<const Array> v) {
    return std::vector<Array>{tnp::sum(small_rnn(std::vector<Array>{v[0], h0, xs})[1])};
  };
  flat::Fun grad_fn = [&](std::span<const Array> v) {
    return flat::value_and_grad(loss, v, false).grads;
  };
  auto zeros = [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); };
  std::vector<std::optional<int64_t>> ax{0};
  Array vg = flat::vmap(grad_fn, std::vector<Array>{ws}, ax, zeros)[0];
  Vec want;
  for (int64_t b = 0; b < B; ++b) {
    Vec g = to_doubles(grad_fn(std::vector<Array>{lax::index_in_dim(ws, b, 0, false)})[0]);
    want.insert(want.end(), g.begin(), g.end());
  }
  EXPECT_CLOSE(vg, want, 1e-5);
  // grad of sum over the batch of vmapped losses == the per-example gradients.
  flat::Fun total = [&](std::span<const Array> v) {
    return std::vector<Array>{tnp::sum(flat::vmap(loss, v, ax, zeros)[0])};
  };
  Array gv = flat::value_and_grad(total, std::vector<Array>{ws}, false).grads[0];
  EXPECT_CLOSE(gv, want, 1e-5);
}

// ---- nesting, fori_loop, map ----

TEST(Scan, NestedScansForwardAndGrad) {
  X64 x64;
  const DType d = DType::kFloat64;
  Array xs = random_array({3, 4}, d, -0.5, 0.5);
  // outer over rows: c = c * 0.9 + inner(row) where inner scans the row with s = sin(s + a x)
  auto f = [&](const Array& a) {
    flat::Fun outer = [a](std::span<const Array> cx) {
      flat::Fun inner = [a](std::span<const Array> sx) {
        Array s = lax::sin(lax::add(sx[0], lax::mul(a, sx[1])));
        return std::vector<Array>{s};
      };
      Array s0 = lax::mul(cx[0], tnp::asarray(0.5, DType::kFloat64));
      Array s = flat::scan(inner, {&s0, 1}, {&cx[1], 1}).carry[0];
      return std::vector<Array>{lax::add(lax::mul(cx[0], tnp::asarray(0.9, DType::kFloat64)), s),
                                s};
    };
    Array c0 = tnp::asarray(0.3, d);
    flat::ScanResult r = flat::scan(outer, {&c0, 1}, {&xs, 1});
    return lax::add(r.carry[0], tnp::sum(r.ys[0]));
  };
  auto ref = [&](double a) {
    Vec x = to_doubles(xs);
    double c = 0.3, total = 0;
    for (int i = 0; i < 3; ++i) {
      double s = c * 0.5;
      for (int j = 0; j < 4; ++j) s = std::sin(s + a * x[i * 4 + j]);
      c = c * 0.9 + s;
      total += s;
    }
    return c + total;
  };
  double a = 0.7, eps = 1e-6;
  EXPECT_NEAR(f(tnp::asarray(a, d)).item_double(), ref(a), 1e-12);
  Array g =
      flat::value_and_grad([&](std::span<const Array> v) { return std::vector<Array>{f(v[0])}; },
                           std::vector<Array>{tnp::asarray(a, d)}, false)
          .grads[0];
  EXPECT_NEAR(g.item_double(), (ref(a + eps) - ref(a - eps)) / (2 * eps), 1e-7);
}

TEST(Scan, ForiLoopStaticIsAScanAndDifferentiates) {
  Array x0 = random_array({3}, f32, 0.5, 1.0), k = random_array({}, f32, 0.5, 1.0);
  // acc = acc * k + i for i in [2, 6)
  auto run = [](const Array& x, const Array& kk) {
    return lax::fori_loop(
        2, 6,
        [kk](const Array& i, const Array& acc) {
          return lax::add(lax::mul(acc, kk), lax::convert_element_type(i, DType::kFloat32));
        },
        x);
  };
  Vec want = to_doubles(x0);
  double kv = k.item_double();
  for (int i = 2; i < 6; ++i)
    for (double& e : want) e = e * kv + i;
  EXPECT_CLOSE(run(x0, k), want, 1e-5);
  std::string text = to_string(flat::make_jaxpr(
      [&](std::span<const Array> v) { return std::vector<Array>{run(v[0], v[1])}; },
      std::vector<Array>{x0, k}));
  EXPECT_NE(text.find("scan["), std::string::npos) << text;
  EXPECT_NE(text.find("length=4"), std::string::npos) << text;
  // d/dk sum(acc): closed form sum over elements of d/dk (x k^4 + 2k^3 + 3k^2 + 4k + 5)
  Array g =
      flat::value_and_grad(
          [&](std::span<const Array> v) { return std::vector<Array>{tnp::sum(run(x0, v[0]))}; },
          std::vector<Array>{k}, false)
          .grads[0];
  double dk = 0;
  for (double x : to_doubles(x0)) dk += 4 * x * kv * kv * kv + 6 * kv * kv + 6 * kv + 4;
  EXPECT_NEAR(g.item_double(), dk, 1e-3 * std::abs(dk));
}

TEST(Scan, ForiLoopDynamicBoundIsAWhile) {
  Array x0 = random_array({}, f32);
  auto run = [&](const Array& upper) {
    return lax::fori_loop(
        tnp::asarray(0), upper,
        [](const Array& i, const Array& acc) {
          return lax::add(acc, lax::convert_element_type(i, DType::kFloat32));
        },
        x0);
  };
  std::string text = to_string(
      flat::make_jaxpr([&](std::span<const Array> v) { return std::vector<Array>{run(v[0])}; },
                       std::vector<Array>{tnp::asarray(3)}));
  EXPECT_NE(text.find("while["), std::string::npos) << text;
  EXPECT_EQ(text.find("scan["), std::string::npos) << text;
  // vmap over the bound: per-example trip counts.
  Array uppers = tnp::array(std::vector<int32_t>{0, 3, 5}, {3});
  auto zeros = [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); };
  std::vector<std::optional<int64_t>> ax{0};
  Array got = flat::vmap([&](std::span<const Array> v) { return std::vector<Array>{run(v[0])}; },
                         std::vector<Array>{uppers}, ax, zeros)[0];
  double x = x0.item_double();
  EXPECT_CLOSE(got, (Vec{x, x + 3, x + 10}), 1e-5);
}

TEST(Scan, MapWithAndWithoutBatchSize) {
  const int64_t n = 7;
  Array xs = random_array({n, 3}, f32), zs = random_array({n}, f32);
  auto f = [](const std::pair<Array, Array>& x) {
    return std::make_pair(lax::mul(lax::sin(x.first), x.second), tnp::sum(x.first));
  };
  Vec xv = to_doubles(xs), zv = to_doubles(zs), w0, w1;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t k = 0; k < 3; ++k) {
      w0.push_back(std::sin(xv[i * 3 + k]) * zv[i]);
      s += xv[i * 3 + k];
    }
    w1.push_back(s);
  }
  for (std::optional<int64_t> bs : {std::optional<int64_t>(), std::optional<int64_t>(2),
                                    std::optional<int64_t>(7), std::optional<int64_t>(10)}) {
    auto ys = lax::map(f, std::make_pair(xs, zs), bs);
    EXPECT_EQ(ys.first.shape(), (Shape{n, 3}));
    EXPECT_CLOSE(ys.first, w0, 1e-5) << (bs ? *bs : -1);
    EXPECT_CLOSE(ys.second, w1, 1e-5) << (bs ? *bs : -1);
  }
}

// ---- jaxpr text, DCE, errors ----

flat::Fun body_unused() {
  return [](std::span<const Array> v) { return std::vector<Array>(v.begin(), v.end()); };
}
flat::ScanOptions bad_unroll() {
  flat::ScanOptions o;
  o.unroll = -1;
  return o;
}

TEST(ScanIR, MakeJaxprTextOfOneScan) {
  flat::Fun f = [](std::span<const Array> v) {
    flat::Fun body = [](std::span<const Array> cx) {
      Array c = lax::add(cx[0], cx[1]);
      return std::vector<Array>{c, lax::mul(c, cx[1])};
    };
    flat::ScanResult r = flat::scan(body, {&v[0], 1}, {&v[1], 1});
    return std::vector<Array>{r.carry[0], r.ys[0]};
  };
  std::string text =
      to_string(flat::make_jaxpr(f, std::vector<Array>{tnp::zeros({}), tnp::zeros({3})}));
  EXPECT_EQ(text,
            "{ lambda ; a:f32[] b:f32[3]. let\n"
            "    c:f32[] d:f32[3] = scan[\n"
            "      jaxpr={ lambda ; e:f32[] f:f32[]. let\n"
            "          g:f32[] = add e f\n"
            "          h:f32[] = mul g f\n"
            "        in (g, h) }\n"
            "      length=3\n"
            "      num_carry=1\n"
            "      num_consts=0\n"
            "      reverse=False\n"
            "      unroll=1\n"
            "    ] a b\n"
            "  in (c, d) }");
  // unroll=0 is a full unroll (JAX's unroll=True): the length is recorded.
  flat::Fun g = [](std::span<const Array> v) {
    flat::Fun body = [](std::span<const Array> cx) {
      return std::vector<Array>{lax::add(cx[0], cx[1])};
    };
    flat::ScanOptions o;
    o.unroll = 0;
    o.reverse = true;
    return flat::scan(body, {&v[0], 1}, {&v[1], 1}, o).carry;
  };
  std::string t2 =
      to_string(flat::make_jaxpr(g, std::vector<Array>{tnp::zeros({}), tnp::zeros({3})}));
  EXPECT_NE(t2.find("reverse=True"), std::string::npos) << t2;
  EXPECT_NE(t2.find("unroll=3"), std::string::npos) << t2;
  EXPECT_ERROR(ValueError,
               flat::scan(body_unused(), {}, std::vector<Array>{tnp::zeros({3})}, bad_unroll()),
               "`unroll` must be");
}

TEST(ScanIR, DceDropsUnusedCarryAndYs) {
  // carries (a, b): a' = a + x, b' = b * a (b needs a); ys (a', b'). Using only b' keeps both
  // carries (b reads a); using only a' drops carry b and both ys.
  flat::Fun f = [](std::span<const Array> v) {
    flat::Fun body = [](std::span<const Array> c) {
      Array a = lax::add(c[0], c[2]);
      Array b = lax::mul(c[1], c[0]);
      return std::vector<Array>{a, b, a, b};
    };
    std::vector<Array> init{v[0], v[1]};
    flat::ScanResult r = flat::scan(body, init, {&v[2], 1});
    return std::vector<Array>{r.carry[0], r.carry[1], r.ys[0], r.ys[1]};
  };
  std::vector<Array> args{random_array({}, f32), random_array({}, f32), random_array({5}, f32)};
  ClosedJaxpr cj = flat::make_jaxpr(f, args);
  auto [only_a, used_a] = ir::dce(*cj.jaxpr, {true, false, false, false});
  std::string ta = to_string(*only_a);
  EXPECT_NE(ta.find("num_carry=1"), std::string::npos) << ta;
  EXPECT_EQ(ta.find("mul"), std::string::npos) << ta;
  EXPECT_EQ(used_a, (std::vector<bool>{true, false, true}));
  std::cout << "pruned (carry a only):\n" << ta << "\n";
  auto [only_by, used_b] = ir::dce(*cj.jaxpr, {false, false, false, true});
  std::string tb = to_string(*only_by);
  EXPECT_NE(tb.find("num_carry=2"), std::string::npos) << tb;
  EXPECT_EQ(used_b, (std::vector<bool>{true, true, true}));
  std::cout << "pruned (ys b only):\n" << tb << "\n";
  verify(*only_a);
  verify(*only_by);
  // The pruned jaxprs compute the same values.
  std::vector<Array> full = eval_jaxpr(*cj.jaxpr, cj.consts, args);
  EXPECT_CLOSE(eval_jaxpr(*only_a, cj.consts, args)[0], to_doubles(full[0]), 0);
  EXPECT_CLOSE(eval_jaxpr(*only_by, cj.consts, args)[0], to_doubles(full[3]), 0);
}

TEST(ScanIR, DceKeepsCarriesAnEffectfulBodyNeeds) {
  // carry a feeds the ys; carry b only feeds a debug callback: DCE keeps b (and the callback
  // runs once per step), and an unused scan with effects is kept.
  int calls = 0;
  std::vector<double> seen;
  flat::Fun f = [&](std::span<const Array> v) {
    flat::Fun body = [&](std::span<const Array> c) {
      Array b = lax::add(c[1], tnp::asarray(1.0f));
      flat::debug_callback(
          [&](std::span<const Array> a) {
            ++calls;
            seen.push_back(a[0].item_double());
            return std::vector<Array>{};
          },
          {&b, 1});
      Array a = lax::mul(c[0], c[2]);
      return std::vector<Array>{a, b, a};
    };
    std::vector<Array> init{v[0], v[1]};
    flat::ScanResult r = flat::scan(body, init, {&v[2], 1});
    return std::vector<Array>{r.carry[0], r.carry[1], r.ys[0]};
  };
  std::vector<Array> args{random_array({}, f32), tnp::asarray(0.0f), random_array({4}, f32)};
  ClosedJaxpr cj = flat::make_jaxpr(f, args);
  ASSERT_FALSE(cj.jaxpr->effects.empty());
  auto [pruned, used] = ir::dce(*cj.jaxpr, {false, false, true});
  std::string t = to_string(*pruned);
  EXPECT_NE(t.find("num_carry=2"), std::string::npos) << t;
  EXPECT_EQ(used, (std::vector<bool>{true, true, true}));
  auto [none, used_none] = ir::dce(*cj.jaxpr, {false, false, false});
  std::string tn = to_string(*none);
  EXPECT_NE(tn.find("scan["), std::string::npos) << tn;
  EXPECT_EQ(tn.find("mul"), std::string::npos) << tn;  // carry a is dropped
  EXPECT_EQ(used_none, (std::vector<bool>{false, true, false}));
  verify(*pruned);
  verify(*none);
  calls = 0;
  seen.clear();
  eval_jaxpr(*none, cj.consts, args);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(seen, (std::vector<double>{1, 2, 3, 4}));
}

TEST(ScanErrors, CarryTypeMismatchAndLengths) {
  Array xs = random_array({3, 2}, f32);
  EXPECT_ERROR(TypeError,
               lax::scan([](const Array& c, const Array& x) { return std::make_pair(x, c); },
                         tnp::zeros({}), xs),
               "carry input and carry output must have equal types");
  EXPECT_ERROR(TypeError,
               lax::scan([](const Array& c, const Array& x) { return std::make_pair(x, c); },
                         tnp::zeros({}), xs),
               "has type f32[] but the corresponding output carry component has type f32[2]");
  EXPECT_ERROR(TypeError,
               lax::scan(
                   [](const Array& c, const Array& x) {
                     return std::make_pair(lax::convert_element_type(c, DType::kInt32), x);
                   },
                   tnp::zeros({}), xs),
               "so the dtypes do not match");
  EXPECT_ERROR(
      ValueError,
      lax::scan([](const Array& c,
                   const std::pair<Array, Array>& x) { return std::make_pair(c, x.first); },
                tnp::zeros({}), std::make_pair(xs, tnp::zeros({4}))),
      "scan got values with different leading axis sizes: 3, 4.");
  lax::ScanOptions o;
  o.length = 5;
  EXPECT_ERROR(ValueError,
               lax::scan([](const Array& c, const Array& x) { return std::make_pair(c, x); },
                         tnp::zeros({}), xs, o),
               "scan got `length` argument of 5 which disagrees with leading axis sizes [3].");
  EXPECT_ERROR(ValueError,
               lax::scan([](const Array& c, std::nullopt_t) { return std::make_pair(c, c); },
                         tnp::zeros({}), std::nullopt),
               "scan got no values to scan over and `length` not provided.");
  EXPECT_ERROR(TypeError,
               lax::scan([](const Array& c,
                            const Array& x) { return std::make_pair(std::make_pair(c, c), x); },
                         tnp::zeros({}), xs),
               "must have the same pytree structure");
}

}  // namespace
}  // namespace tessera
