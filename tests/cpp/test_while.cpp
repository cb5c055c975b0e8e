// lax::while_loop and the while primitive: forward loops (Newton's square root, Collatz trip
// counts with a cond nested in the body), jvp and linearize against float64 finite differences,
// grad raising JAX's error, vmap with unbatched and batched predicates (members with different
// trip counts) against per-member loops, DCE of unused carries, the staged text, weak-type
// promotion of the initial carry, and JAX's errors. References are plain C++ loops in double.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "ir/passes/dce.h"
#include "tessera/lax_cond.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

#define EXPECT_CLOSE(got, want, tol) EXPECT_EQ(compare(to_doubles(got), want, tol, tol), "")

Array i32(double v) { return tnp::scalar(v, DType::kInt32); }
Array f32s(double v) { return tnp::scalar(v, DType::kFloat32); }

// Newton's iteration for sqrt(a) until |x^2 - a| <= tol * a; the carry is (x, steps).
std::tuple<Array, Array> newton_sqrt(const Array& a) {
  auto c = [a](const std::tuple<Array, Array>& s) {
    const Array& x = std::get<0>(s);
    return tnp::abs(x * x - a) > a * 1e-6;
  };
  auto b = [a](const std::tuple<Array, Array>& s) {
    const auto& [x, k] = s;
    return std::make_tuple((x + a / x) * 0.5, k + i32(1));
  };
  return lax::while_loop(c, b, std::make_tuple(a, i32(0)));
}
std::pair<double, int> newton_ref(double a) {
  float x = static_cast<float>(a);
  int k = 0;
  while (std::fabs(x * x - static_cast<float>(a)) > static_cast<float>(a) * 1e-6f) {
    x = (x + static_cast<float>(a) / x) * 0.5f;
    ++k;
  }
  return {x, k};
}

// Collatz: steps to reach 1; the body's update is a cond on parity.
Array collatz_steps(const Array& n0) {
  auto c = [](const std::tuple<Array, Array>& s) { return std::get<0>(s) != i32(1); };
  auto b = [](const std::tuple<Array, Array>& s) {
    const auto& [n, k] = s;
    Array even = lax::rem(n, i32(2)) == i32(0);
    Array next = lax::cond(
        even, [](const Array& m) { return lax::div(m, i32(2)); },
        [](const Array& m) { return m * i32(3) + i32(1); }, n);
    return std::make_tuple(next, k + i32(1));
  };
  return std::get<1>(lax::while_loop(c, b, std::make_tuple(n0, i32(0))));
}
int collatz_ref(int n) {
  int k = 0;
  while (n != 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++k;
  }
  return k;
}

TEST(While, NewtonSqrtAndCollatz) {
  for (double a : to_doubles(random_array({4}, DType::kFloat32, 0.5, 50.0))) {
    auto [x, k] = newton_sqrt(f32s(a));
    auto [rx, rk] = newton_ref(static_cast<float>(a));
    EXPECT_NEAR(x.item_double(), std::sqrt(a), 1e-5 * std::sqrt(a));
    EXPECT_NEAR(x.item_double(), rx, 1e-6 * rx);
    EXPECT_EQ(k.item<int>(), rk);
    EXPECT_EQ(k.dtype(), DType::kInt32);
  }
  for (int n : {1, 2, 6, 7, 27, 97}) EXPECT_EQ(collatz_steps(i32(n)).item<int>(), collatz_ref(n));
  // A loop that never runs returns its init.
  Array x = random_array({3}, DType::kFloat32);
  Array y = lax::while_loop([](const Array&) { return tnp::array(std::vector<bool>{false}, {}); },
                            [](const Array& v) { return v * 2.0; }, x);
  EXPECT_CLOSE(y, to_doubles(x), 0);
}

// x_{k+1} = sin(x_k) * c + x_k * 0.5 for a fixed count of steps (the counter is a carry).
double iterate_ref(double x, double c, int steps) {
  for (int i = 0; i < steps; ++i) x = std::sin(x) * c + x * 0.5;
  return x;
}
Array iterate(const Array& x, const Array& c, int steps) {
  auto cf = [steps](const std::tuple<Array, Array>& s) { return std::get<0>(s) < i32(steps); };
  auto bf = [c](const std::tuple<Array, Array>& s) {
    const auto& [i, v] = s;
    return std::make_tuple(i + i32(1), tnp::sin(v) * c + v * 0.5);
  };
  return std::get<1>(lax::while_loop(cf, bf, std::make_tuple(i32(0), x)));
}

TEST(While, JvpMatchesFiniteDifferences) {
  Array x = random_array({4}, DType::kFloat32, -1, 1);
  Array c = random_array({}, DType::kFloat32, 0.5, 1.5);
  Array tx = random_array({4}, DType::kFloat32), tc = random_array({}, DType::kFloat32);
  std::vector<double> xv = to_doubles(x), txv = to_doubles(tx);
  double cv = c.item_double(), tcv = tc.item_double();
  auto f = [](const Array& a, const Array& b) { return iterate(a, b, 6); };
  auto [y, yt] = jvp(f, std::make_tuple(x, c), std::make_tuple(tx, tc));
  std::vector<double> want_y, want_t;
  for (size_t i = 0; i < xv.size(); ++i) {
    want_y.push_back(iterate_ref(xv[i], cv, 6));
    double h = 1e-6;
    double dx = (iterate_ref(xv[i] + h, cv, 6) - iterate_ref(xv[i] - h, cv, 6)) / (2 * h);
    double dc = (iterate_ref(xv[i], cv + h, 6) - iterate_ref(xv[i], cv - h, 6)) / (2 * h);
    want_t.push_back(dx * txv[i] + dc * tcv);
  }
  EXPECT_CLOSE(y, want_y, 1e-5);
  EXPECT_CLOSE(yt, want_t, 1e-4);
  // Tangent on the closed-over constant only (the carry's tangent starts at zero and becomes
  // nonzero in the body: the fixed point).
  auto [y2, yt2] = jvp([&](const Array& b) { return iterate(x, b, 6); }, c, tc);
  std::vector<double> want_c;
  for (double v : xv)
    want_c.push_back((iterate_ref(v, cv + 1e-6, 6) - iterate_ref(v, cv - 1e-6, 6)) / 2e-6 * tcv);
  EXPECT_CLOSE(yt2, want_c, 1e-4);
  // Newton's sqrt: d sqrt(a) / da = 1 / (2 sqrt(a)) (the converged iterate's derivative).
  Array a = f32s(7.3);
  auto [s, st] = jvp([](const Array& v) { return std::get<0>(newton_sqrt(v)); }, a, f32s(1.0));
  EXPECT_NEAR(st.item_double(), 0.5 / std::sqrt(7.3), 1e-4);
}

TEST(While, JacfwdMatchesFiniteDifferences) {
  // jacfwd = vmap of jvp: the JVP loop batched over the basis tangents.
  Array x = random_array({3}, DType::kFloat32, -1, 1);
  Array j = jacfwd([](const Array& v) { return iterate(v, f32s(0.8), 4); })(x);
  std::vector<double> xv = to_doubles(x), want(9, 0.0);
  for (int i = 0; i < 3; ++i)
    want[i * 4] = (iterate_ref(xv[i] + 1e-6, 0.8, 4) - iterate_ref(xv[i] - 1e-6, 0.8, 4)) / 2e-6;
  EXPECT_CLOSE(j, want, 1e-4);
}

TEST(While, LinearizeJvpWorksAndGradRaises) {
  Array x = random_array({3}, DType::kFloat32, -1, 1), t = random_array({3}, DType::kFloat32);
  Array c = f32s(1.1);
  auto f = [&](const Array& v) { return iterate(v, c, 5); };
  auto [y, f_jvp] = linearize(f, x);
  auto [y2, yt] = jvp(f, x, t);
  EXPECT_CLOSE(y, to_doubles(y2), 0);
  EXPECT_CLOSE(f_jvp(t), to_doubles(yt), 1e-6);
  std::vector<double> want;
  std::vector<double> xv = to_doubles(x), tv = to_doubles(t);
  for (size_t i = 0; i < xv.size(); ++i)
    want.push_back((iterate_ref(xv[i] + 1e-6, 1.1, 5) - iterate_ref(xv[i] - 1e-6, 1.1, 5)) / 2e-6 *
                   tv[i]);
  EXPECT_CLOSE(f_jvp(t), want, 1e-4);
  // The staged linear jaxpr holds the JVP loop.
  auto lin =
      flat::linearize([&](std::span<const Array> xs) { return std::vector<Array>{f(xs[0])}; },
                      std::vector<Array>{x});
  std::string text = to_string(lin.linear_jaxpr());
  EXPECT_NE(text.find("while["), std::string::npos) << text;
  // Reverse mode: JAX's ValueError.
  const char* msg =
      "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
      "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop.";
  EXPECT_ERROR(ValueError, grad([&](const Array& v) { return tnp::sum(f(v)); })(x), msg);
  // grad with respect to something the loop does not depend on works.
  Array g = grad([&](const Array& v) { return tnp::sum(v * 2.0) + tnp::sum(f(x)); })(x);
  EXPECT_CLOSE(g, std::vector<double>(3, 2.0), 0);
}

TEST(While, VmapUnbatchedPredicate) {
  Array xs = random_array({5, 2}, DType::kFloat32, -1, 1);
  Array c = f32s(0.9);
  auto f = [&](const Array& v) { return iterate(v, c, 4); };
  Array y = vmap(f)(xs);
  EXPECT_CLOSE(
      y,
      [&] {
        std::vector<double> w;
        for (double v : to_doubles(xs)) w.push_back(iterate_ref(v, 0.9, 4));
        return w;
      }(),
      1e-5);
  std::string text = to_string(make_jaxpr(vmap(f))(xs));
  EXPECT_NE(text.find("while["), std::string::npos) << text;
  EXPECT_EQ(text.find("select_n"), std::string::npos) << text;
  // Batched loop constant, unbatched carry that becomes batched (fixed point).
  Array cs = random_array({5}, DType::kFloat32, 0.5, 1.5);
  Array x0 = f32s(0.3);
  Array y2 = vmap([&](const Array& cc) { return iterate(x0, cc, 3); })(cs);
  std::vector<double> w2;
  for (double cc : to_doubles(cs)) w2.push_back(iterate_ref(0.3, cc, 3));
  EXPECT_CLOSE(y2, w2, 1e-5);
}

TEST(While, VmapBatchedPredicateDifferentTripCounts) {
  // Collatz over a batch: each member stops at its own step count.
  std::vector<int32_t> ns{1, 6, 27, 7, 2, 97};
  Array n = tnp::array(ns, {6});
  Array steps = vmap(collatz_steps)(n);
  std::vector<double> want;
  for (int v : ns) want.push_back(collatz_ref(v));
  EXPECT_CLOSE(steps, want, 0);
  std::string text = to_string(make_jaxpr(vmap(collatz_steps))(n));
  EXPECT_NE(text.find("select_n"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce_or"), std::string::npos) << text;
  // Newton over a batch with a batched predicate: values and trip counts per member.
  Array as = random_array({5}, DType::kFloat32, 0.5, 500.0);
  auto [xs, ks] = vmap(newton_sqrt)(as);
  std::vector<double> wx, wk;
  for (double a : to_doubles(as)) {
    auto [rx, rk] = newton_ref(a);
    wx.push_back(rx);
    wk.push_back(rk);
  }
  EXPECT_CLOSE(xs, wx, 1e-6);
  EXPECT_CLOSE(ks, wk, 0);
  // jvp under vmap with a batched predicate.
  Array ts = random_array({5}, DType::kFloat32);
  auto [ys, yts] = vmap([](const Array& a, const Array& t) {
    return jvp([](const Array& v) { return std::get<0>(newton_sqrt(v)); }, a, t);
  })(as, ts);
  std::vector<double> wt;
  std::vector<double> av = to_doubles(as), tv = to_doubles(ts);
  for (size_t i = 0; i < av.size(); ++i) wt.push_back(tv[i] * 0.5 / std::sqrt(av[i]));
  EXPECT_CLOSE(yts, wt, 1e-4);
}

TEST(While, MakeJaxprText) {
  auto f = [](const Array& x) {
    return lax::while_loop([](const Array& v) { return v < 10.0; },
                           [](const Array& v) { return v * 2.0; }, x);
  };
  std::string text = to_string(make_jaxpr(f)(f32s(1.0)));
  EXPECT_EQ(text,
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = while[\n"
            "      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }\n"
            "      body_nconsts=0\n"
            "      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }\n"
            "      cond_nconsts=0\n"
            "    ] a\n"
            "  in (b,) }")
      << text;
}

TEST(While, DcePrunesUnusedCarries) {
  // Carries (i, x, y, z): the output uses x only; x reads y; z is independent and i drives the
  // cond. z goes, y stays (x needs it).
  auto f = [](const Array& x, const Array& y, const Array& z) {
    auto c = [](const std::tuple<Array, Array, Array, Array>& s) {
      return std::get<0>(s) < i32(3);
    };
    auto b = [](const std::tuple<Array, Array, Array, Array>& s) {
      const auto& [i, u, v, w] = s;
      return std::make_tuple(i + i32(1), u + v, v * 2.0, tnp::exp(w));
    };
    auto r = lax::while_loop(c, b, std::make_tuple(i32(0), x, y, z));
    return std::make_tuple(std::get<1>(r), std::get<3>(r));
  };
  Array x = random_array({2}, DType::kFloat32), y = random_array({2}, DType::kFloat32),
        z = random_array({2}, DType::kFloat32);
  ClosedJaxpr cj = make_jaxpr(f)(x, y, z);
  auto [pruned, used] = ir::dce(*cj.jaxpr, {true, false});
  std::string text = to_string(*pruned);
  EXPECT_EQ(used, (std::vector<bool>{true, true, false})) << text;
  EXPECT_EQ(text.find("exp"), std::string::npos) << text;
  verify(*pruned);
  std::vector<Array> r = eval_jaxpr(*pruned, cj.consts, std::vector<Array>{x, y, z});
  ASSERT_EQ(r.size(), 1u);
  std::vector<double> xv = to_doubles(x), yv = to_doubles(y), want;
  for (size_t k = 0; k < xv.size(); ++k) {
    double u = xv[k], v = yv[k];
    for (int i = 0; i < 3; ++i) {
      u = u + v;
      v = v * 2.0;
    }
    want.push_back(u);
  }
  EXPECT_CLOSE(r[0], want, 1e-6);
  // No output used: the loop goes.
  auto [none, used0] = ir::dce(*cj.jaxpr, {false, false});
  EXPECT_TRUE(none->eqns.empty()) << to_string(*none);
}

TEST(While, WeakInitIsPromotedToTheBodyType) {
  // init 0 (a weakly typed int) with a float32 body: the loop runs on float32, as JAX.
  Array r = lax::while_loop([](const Array& v) { return v < 3.0; },
                            [](const Array& v) { return v + f32s(1.5); }, 0);
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(r.item_double(), 3.0);
}

TEST(While, Errors) {
  Array x = random_array({3}, DType::kFloat32);
  EXPECT_ERROR(TypeError,
               lax::while_loop([](const Array& v) { return v < 5.0; },
                               [](const Array& v) { return v + 1.0; }, x),
               "cond_fun must return a boolean scalar, but got output type(s) "
               "[ShapedArray(bool[3])].");
  EXPECT_ERROR(TypeError,
               lax::while_loop([](const Array& v) { return tnp::sum(v) < 5.0; },
                               [](const Array& v) { return tnp::sum(v); }, x),
               "body_fun output and input must have identical types, got\n"
               "DIFFERENT ShapedArray(float32[]) vs. ShapedArray(float32[3])");
  EXPECT_ERROR(TypeError,
               lax::while_loop([](const Array& v) { return tnp::sum(v) < 5.0; },
                               [](const Array& v) { return std::make_pair(v, v); }, x),
               "body_fun output and input must have same type structure, got PyTreeDef((*, *)) "
               "and PyTreeDef(*)");
  EXPECT_ERROR(TypeError,
               lax::while_loop([](const Array& v) { return std::make_pair(v < 5.0, v < 5.0); },
                               [](const Array& v) { return v; }, f32s(1.0)),
               "cond_fun must return a boolean scalar, but got pytree");
}

}  // namespace
}  // namespace tessera
