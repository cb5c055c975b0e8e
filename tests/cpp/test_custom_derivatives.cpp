// custom_jvp / custom_vjp (tessera/custom_derivatives.h and the flat core): the user's rules are
// used by jvp/grad/vjp, compose with vmap and grad(grad), stage as custom_jvp_call /
// custom_vjp_call, and JAX's documented errors are raised. References are float64 formulas or
// per-example loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tessera/control_flow.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

#define EXPECT_CLOSE(got, want, tol) EXPECT_EQ(compare(to_doubles(got), want, tol, tol), "")

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }
std::vector<double> map_d(const Array& x, double (*f)(double)) {
  std::vector<double> v = to_doubles(x);
  for (double& e : v) e = f(e);
  return v;
}
// Row i of a 2-D float32 array, as a new array (for per-example reference loops).
Array row(const Array& m, int64_t i) {
  std::vector<double> v = to_doubles(m);
  int64_t n = m.shape()[1];
  return tnp::array(std::vector<double>(v.begin() + i * n, v.begin() + (i + 1) * n), {n},
                    DType::kFloat32);
}

Array sigmoid(const Array& x) { return tnp::divide(1.0, tnp::exp(-x) + 1.0); }
Array naive_log1pexp(const Array& x) { return lax::log1p(lax::exp(x)); }

// JAX's custom_jvp example: the stable derivative of log(1 + e^x).
const auto log1pexp = custom_jvp(naive_log1pexp).defjvp([](auto primals, auto tangents) {
  auto [x] = primals;
  auto [t] = tangents;
  return std::make_pair(naive_log1pexp(x), t * sigmoid(x));
});

TEST(CustomJvp, StableGradientWhereNaiveIsNan) {
  Array x = tnp::full({}, 100.0, DType::kFloat32);
  EXPECT_EQ(grad(log1pexp)(x).item_double(), 1.0);
  EXPECT_TRUE(std::isnan(grad(naive_log1pexp)(x).item_double()));
}

TEST(CustomJvp, GradMatchesFiniteDifferences) {
  Array x = random_array({16}, DType::kFloat32, -4, 4);
  Array g = grad([](const Array& v) { return tnp::sum(log1pexp(v)); })(x);
  std::vector<double> fd;
  for (double v : to_doubles(x)) {
    double h = 1e-5;
    fd.push_back((std::log1p(std::exp(v + h)) - std::log1p(std::exp(v - h))) / (2 * h));
  }
  EXPECT_CLOSE(g, fd, 1e-5);
  // Forward value: the primal function.
  EXPECT_CLOSE(log1pexp(x), map_d(x, [](double v) { return std::log1p(std::exp(v)); }), 1e-5);
}

TEST(CustomJvp, JvpUsesTheRule) {
  Array x = random_array({7}, DType::kFloat32, -4, 4);
  Array t = random_array({7}, DType::kFloat32);
  auto [y, yt] = jvp(log1pexp, std::make_tuple(x), std::make_tuple(t));
  std::vector<double> xv = to_doubles(x), tv = to_doubles(t), want;
  for (size_t i = 0; i < xv.size(); ++i) want.push_back(tv[i] * sig(xv[i]));
  EXPECT_CLOSE(yt, want, 1e-6);
  // At 100 the tangent is t exactly (the naive rule gives NaN).
  Array big = tnp::full({3}, 100.0, DType::kFloat32);
  Array t3 = random_array({3}, DType::kFloat32);
  EXPECT_CLOSE(jvp(log1pexp, std::make_tuple(big), std::make_tuple(t3)).second, to_doubles(t3), 0);
}

TEST(CustomJvp, SecondDerivative) {
  Array x = random_array({9}, DType::kFloat32, -4, 4);
  auto g1 = grad([](const Array& v) { return tnp::sum(log1pexp(v)); });
  Array g2 = grad([&](const Array& v) { return tnp::sum(g1(v)); })(x);
  EXPECT_CLOSE(g2, map_d(x, [](double v) { return sig(v) * (1 - sig(v)); }), 1e-5);
}

TEST(CustomJvp, Vmap) {
  Array xs = random_array({4, 5}, DType::kFloat32, -4, 4);
  auto scalar_loss = [](const Array& v) { return tnp::sum(log1pexp(v)); };
  Array ys = vmap(log1pexp)(xs);
  Array gs = vmap(grad(scalar_loss))(xs);
  Array gsum = grad([&](const Array& m) { return tnp::sum(vmap(log1pexp)(m)); })(xs);
  std::vector<double> want_y, want_g;
  for (int64_t i = 0; i < 4; ++i) {
    Array r = row(xs, i);
    for (double v : to_doubles(log1pexp(r))) want_y.push_back(v);
    for (double v : to_doubles(grad(scalar_loss)(r))) want_g.push_back(v);
  }
  EXPECT_EQ(ys.shape(), (Shape{4, 5}));
  EXPECT_CLOSE(ys, want_y, 1e-6);
  EXPECT_CLOSE(gs, want_g, 1e-6);
  EXPECT_CLOSE(gsum, want_g, 1e-6);
  // The batched rule is the user's, vmapped: stable at 100 under vmap too.
  Array big = tnp::full({3, 2}, 100.0, DType::kFloat32);
  EXPECT_CLOSE(vmap(grad([](const Array& v) { return tnp::sum(log1pexp(v)); }))(big),
               std::vector<double>(6, 1.0), 0);
}

TEST(CustomJvp, MakeJaxpr) {
  Array x = random_array({3}, DType::kFloat32);
  std::string text = to_string(make_jaxpr(log1pexp)(x));
  EXPECT_NE(text.find("custom_jvp_call["), std::string::npos) << text;
  EXPECT_NE(text.find("call_jaxpr={ lambda ; "), std::string::npos) << text;
  for (const char* s :
       {"jvp=<custom_jvp rule>", "num_consts=0", "symbolic_zeros=False", "exp", "log1p"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
  // Under grad the rule is inlined: sigmoid's exp(-x) appears and no custom_jvp_call remains.
  std::string gtext =
      to_string(make_jaxpr(grad([](const Array& v) { return tnp::sum(log1pexp(v)); }))(x));
  EXPECT_EQ(gtext.find("custom_jvp_call"), std::string::npos) << gtext;
  EXPECT_NE(gtext.find("neg"), std::string::npos) << gtext;
}

TEST(CustomJvp, SymbolicZeros) {
  auto mul = [](const Array& a, const Array& b) { return a * b; };
  for (bool symbolic : {false, true}) {
    bool saw_undefined = false;
    auto f = custom_jvp(mul).defjvp(
        [&](auto ps, auto ts) {
          auto [a, b] = ps;
          auto [ta, tb] = ts;
          saw_undefined = !ta.defined() || !tb.defined();
          Array t = ta.defined() ? ta * b : Array();
          if (tb.defined()) t = t.defined() ? t + a * tb : a * tb;
          return std::make_pair(a * b, t);
        },
        symbolic);
    Array a = random_array({4}, DType::kFloat32), b = random_array({4}, DType::kFloat32);
    Array g = grad([&](const Array& u, const Array& v) { return tnp::sum(f(u, v)); })(a, b);
    EXPECT_CLOSE(g, to_doubles(b), 1e-6);
    EXPECT_EQ(saw_undefined, symbolic);
  }
}

TEST(CustomJvp, ClosureConstants) {
  Array c = random_array({5}, DType::kFloat32);
  auto f =
      custom_jvp([c](const Array& x) { return tnp::sin(x) * c; }).defjvp([c](auto ps, auto ts) {
        auto [x] = ps;
        auto [t] = ts;
        return std::make_pair(tnp::sin(x) * c, t * tnp::cos(x) * c);
      });
  Array x = random_array({5}, DType::kFloat32);
  std::vector<double> xv = to_doubles(x), cv = to_doubles(c), want_y, want_g;
  for (size_t i = 0; i < xv.size(); ++i) {
    want_y.push_back(std::sin(xv[i]) * cv[i]);
    want_g.push_back(std::cos(xv[i]) * cv[i]);
  }
  EXPECT_CLOSE(f(x), want_y, 1e-6);
  EXPECT_CLOSE(grad([&](const Array& v) { return tnp::sum(f(v)); })(x), want_g, 1e-6);
  Array xs = random_array({3, 5}, DType::kFloat32);
  Array gs = vmap(grad([&](const Array& v) { return tnp::sum(f(v)); }))(xs);
  std::vector<double> xsv = to_doubles(xs), want_gs;
  for (size_t i = 0; i < xsv.size(); ++i) want_gs.push_back(std::cos(xsv[i]) * cv[i % 5]);
  EXPECT_CLOSE(gs, want_gs, 1e-6);
  std::string text = to_string(make_jaxpr(f)(x));
  EXPECT_NE(text.find("num_consts=1"), std::string::npos) << text;
}

TEST(CustomJvp, Errors) {
  Array x = random_array({3}, DType::kFloat32);
  auto bad = custom_jvp([](const Array& v) { return v * 2.0; }).defjvp([](auto ps, auto ts) {
    auto [v] = ps;
    auto [t] = ts;
    return std::make_pair(v * 2.0, tnp::sum(t));
  });
  EXPECT_ERROR(TypeError, jvp(bad, std::make_tuple(x), std::make_tuple(x)),
               "Custom JVP rule must produce primal and tangent outputs with equal container "
               "(pytree) structures and equal shapes/dtypes");
  // Closing over a value being differentiated: it must be an argument.
  auto g = [](const Array& y) {
    auto h = custom_jvp([y](const Array& v) { return v * y; }).defjvp([y](auto ps, auto ts) {
      auto [v] = ps;
      auto [t] = ts;
      return std::make_pair(v * y, t * y);
    });
    return tnp::sum(h(y));
  };
  EXPECT_ERROR(TypeError, grad(g)(x), "closes over a traced value");
}

// ---------------------------------------------------------------- custom_vjp

Array clamp_unit(const Array& ct) { return tnp::minimum(tnp::maximum(ct, -1.0), 1.0); }

const auto clip_gradient =
    custom_vjp([](const Array& x) { return x; })
        .defvjp([](const Array& x) { return std::make_pair(x, std::make_tuple()); },
                [](auto, const Array& ct) { return std::make_tuple(clamp_unit(ct)); });

// sin with the derivative from a saved residual cos(x).
const auto custom_sin =
    custom_vjp([](const Array& x) { return tnp::sin(x); })
        .defvjp([](const Array& x) { return std::make_pair(tnp::sin(x), tnp::cos(x)); },
                [](const Array& cos_x, const Array& ct) { return std::make_tuple(ct * cos_x); });

TEST(CustomVjp, GradUsesBwd) {
  Array x = random_array({6}, DType::kFloat32);
  auto f = [](const Array& v) { return tnp::sum(clip_gradient(v) * 5.0); };
  EXPECT_CLOSE(clip_gradient(x), to_doubles(x), 0);
  EXPECT_CLOSE(grad(f)(x), std::vector<double>(6, 1.0), 0);  // true derivative 5, clipped
  auto [y, f_vjp] = vjp([](const Array& v) { return clip_gradient(v); }, x);
  Array u = random_array({6}, DType::kFloat32, -3, 3);
  auto [c] = f_vjp(u);
  std::vector<double> want = to_doubles(u);
  for (double& w : want) w = std::clamp(w, -1.0, 1.0);
  EXPECT_CLOSE(c, want, 0);
}

TEST(CustomVjp, GradOfGrad) {
  Array x = random_array({8}, DType::kFloat32, -3, 3);
  auto g1 = grad([](const Array& v) { return tnp::sum(custom_sin(v)); });
  EXPECT_CLOSE(g1(x), map_d(x, [](double v) { return std::cos(v); }), 1e-6);
  Array g2 = grad([&](const Array& v) { return tnp::sum(g1(v)); })(x);
  EXPECT_CLOSE(g2, map_d(x, [](double v) { return -std::sin(v); }), 1e-6);
}

TEST(CustomVjp, SeveralResidualsAndArguments) {
  // f(x, y) = x*y + sin(x); the residuals are (x, y, cos x).
  auto f = custom_vjp([](const Array& x, const Array& y) { return x * y + tnp::sin(x); })
               .defvjp(
                   [](const Array& x, const Array& y) {
                     return std::make_pair(x * y + tnp::sin(x), std::make_tuple(x, y, tnp::cos(x)));
                   },
                   [](const auto& res, const Array& ct) {
                     const auto& [x, y, cx] = res;
                     return std::make_tuple(ct * (y + cx), ct * x);
                   });
  Array x = random_array({5}, DType::kFloat32), y = random_array({5}, DType::kFloat32);
  auto [gx, gy] =
      grad([&](const Array& a, const Array& b) { return tnp::sum(f(a, b)); }, argnums<0, 1>)(x, y);
  std::vector<double> xv = to_doubles(x), yv = to_doubles(y), wx, wy;
  for (size_t i = 0; i < xv.size(); ++i) {
    wx.push_back(yv[i] + std::cos(xv[i]));
    wy.push_back(xv[i]);
  }
  EXPECT_CLOSE(gx, wx, 1e-6);
  EXPECT_CLOSE(gy, wy, 1e-6);
  // Under vmap over x only: y's cotangent is summed over the batch.
  Array xs = random_array({3, 5}, DType::kFloat32);
  Array gyb = grad([&](const Array& b) { return tnp::sum(vmap(f, {0, std::nullopt})(xs, b)); })(y);
  Array gxb = vmap(grad([&](const Array& a, const Array& b) { return tnp::sum(f(a, b)); }),
                   {0, std::nullopt})(xs, y);
  std::vector<double> want_gy(5, 0.0), want_gx;
  std::vector<double> xsv = to_doubles(xs);
  for (size_t i = 0; i < xsv.size(); ++i) {
    want_gy[i % 5] += xsv[i];
    want_gx.push_back(yv[i % 5] + std::cos(xsv[i]));
  }
  EXPECT_CLOSE(gyb, want_gy, 1e-5);
  EXPECT_CLOSE(gxb, want_gx, 1e-6);
}

TEST(CustomVjp, Vmap) {
  Array xs = random_array({4, 3}, DType::kFloat32, -3, 3);
  Array ys = vmap(custom_sin)(xs);
  EXPECT_CLOSE(ys, map_d(xs, [](double v) { return std::sin(v); }), 1e-6);
  // grad(vmap(f)) and vmap(grad(f)) against a per-example loop.
  Array g = grad([](const Array& m) { return tnp::sum(vmap(custom_sin)(m) * 3.0); })(xs);
  Array gc = grad([](const Array& m) { return tnp::sum(vmap(clip_gradient)(m) * 3.0); })(xs);
  Array vg = vmap(grad([](const Array& v) { return tnp::sum(clip_gradient(v) * 3.0); }))(xs);
  std::vector<double> want_g, want_c;
  for (int64_t i = 0; i < 4; ++i) {
    Array r = row(xs, i);
    for (double v :
         to_doubles(grad([](const Array& v) { return tnp::sum(custom_sin(v) * 3.0); })(r)))
      want_g.push_back(v);
    for (double v :
         to_doubles(grad([](const Array& v) { return tnp::sum(clip_gradient(v) * 3.0); })(r)))
      want_c.push_back(v);
  }
  EXPECT_CLOSE(g, want_g, 1e-6);
  EXPECT_CLOSE(gc, want_c, 0);
  EXPECT_CLOSE(vg, want_c, 0);
  EXPECT_CLOSE(gc, std::vector<double>(12, 1.0), 0);
  // Batched along axis 1.
  Array xt = random_array({3, 4}, DType::kFloat32, -3, 3);
  Array gt = grad([](const Array& m) { return tnp::sum(vmap(custom_sin, 1)(m)); })(xt);
  EXPECT_CLOSE(gt, map_d(xt, [](double v) { return std::cos(v); }), 1e-6);
}

TEST(CustomVjp, JvpRaises) {
  Array x = random_array({3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, jvp(custom_sin, std::make_tuple(x), std::make_tuple(x)),
               "can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
}

TEST(CustomVjp, BwdStructureErrors) {
  Array x = random_array({3}, DType::kFloat32);
  auto two = custom_vjp([](const Array& v) { return v; })
                 .defvjp([](const Array& v) { return std::make_pair(v, std::make_tuple()); },
                         [](auto, const Array& ct) { return std::make_tuple(ct, ct); });
  EXPECT_ERROR(TypeError, grad([&](const Array& v) { return tnp::sum(two(v)); })(x),
               "must produce a tuple of length equal to the number of arguments to the primal "
               "function, but got bwd output structure PyTreeDef((*, *)) for primal input "
               "structure PyTreeDef((*,))");
  // The flat core checks the count and the avals too.
  flat::Fun id = [](std::span<const Array> a) { return std::vector<Array>(a.begin(), a.end()); };
  flat::FwdFun fwd = [](std::span<const Array> a) {
    return std::make_pair(std::vector<Array>(a.begin(), a.end()), std::vector<Array>{});
  };
  flat::BwdFun none = [](std::span<const Array>, std::span<const Array>) {
    return std::vector<Array>{};
  };
  flat::BwdFun wrong_shape = [](std::span<const Array>, std::span<const Array>) {
    return std::vector<Array>{tnp::ones({4})};
  };
  auto loss = [&](const flat::BwdFun& b) {
    return [&, b](const Array& v) {
      std::vector<Array> a{v};
      return tnp::sum(flat::custom_vjp_call(id, fwd, b, a)[0]);
    };
  };
  EXPECT_ERROR(TypeError, grad(loss(none))(x),
               "bwd output structure PyTreeDef(()) for primal input structure PyTreeDef((*,))");
  EXPECT_ERROR(TypeError, grad(loss(wrong_shape))(x),
               "at output[0] the bwd rule produced an output of shape/dtype f32[4] "
               "corresponding to an input of shape/dtype f32[3]");
}

TEST(CustomVjp, ClosureConstantsAndJaxpr) {
  Array c = random_array({4}, DType::kFloat32);
  auto f = custom_vjp([c](const Array& x) { return x * c; })
               .defvjp([c](const Array& x) { return std::make_pair(x * c, std::make_tuple()); },
                       [c](auto, const Array& ct) { return std::make_tuple(ct * c * 2.0); });
  Array x = random_array({4}, DType::kFloat32);
  std::vector<double> xv = to_doubles(x), cv = to_doubles(c), wy, wg;
  for (size_t i = 0; i < 4; ++i) {
    wy.push_back(xv[i] * cv[i]);
    wg.push_back(2 * cv[i]);  // bwd deliberately doubles the true gradient
  }
  EXPECT_CLOSE(f(x), wy, 1e-6);
  EXPECT_CLOSE(grad([&](const Array& v) { return tnp::sum(f(v)); })(x), wg, 1e-6);
  Array xs = random_array({2, 4}, DType::kFloat32);
  EXPECT_CLOSE(
      vmap(grad([&](const Array& v) { return tnp::sum(f(v)); }))(xs),
      [&] {
        std::vector<double> w = wg;
        w.insert(w.end(), wg.begin(), wg.end());
        return w;
      }(),
      1e-6);
  std::string text = to_string(make_jaxpr(f)(x));
  for (const char* s : {"custom_vjp_call[", "bwd=<custom_vjp bwd>", "fwd=<custom_vjp fwd>",
                        "num_consts=1", "call_jaxpr={ lambda ; "})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// custom_vjp inside a scan body: linearize splits the body, custom_lin lands in the linear
// scan with its residual (cos x) as an operand, and the transposed scan calls bwd per step.
TEST(CustomVjp, InsideScan) {
  Array xs = random_array({7, 3}, DType::kFloat32, -2, 2);
  Array h0 = random_array({3}, DType::kFloat32, -1, 1);
  // h_{t+1} = h_t * 0.5 + custom_sin(h_t + x_t); loss = sum(h_T).
  auto loss = [&](const Array& h, const Array& x) {
    auto [hT, ys] = lax::scan(
        [](const Array& c, const Array& xt) {
          Array n = c * 0.5 + custom_sin(c + xt);
          return std::make_pair(n, n);
        },
        h, x);
    return tnp::sum(hT) + tnp::sum(ys) * 0.25;
  };
  auto [gh, gx] = grad(loss, argnums<0, 1>)(h0, xs);
  // float64 reference: forward, then backward by hand.
  std::vector<double> x = to_doubles(xs), h = to_doubles(h0);
  const int T = 7, n = 3;
  std::vector<std::vector<double>> hs = {h};
  for (int t = 0; t < T; ++t) {
    std::vector<double> nh(n);
    for (int i = 0; i < n; ++i) nh[i] = hs[t][i] * 0.5 + std::sin(hs[t][i] + x[t * n + i]);
    hs.push_back(nh);
  }
  std::vector<double> ct(n, 1.0 + 0.25), gxr(T * n);  // d/dh_T of sum(h_T) + 0.25 sum(h_T)
  for (int t = T - 1; t >= 0; --t) {
    std::vector<double> prev(n);
    for (int i = 0; i < n; ++i) {
      double c = std::cos(hs[t][i] + x[t * n + i]);
      gxr[t * n + i] = ct[i] * c;
      prev[i] = ct[i] * (0.5 + c) + (t > 0 ? 0.25 : 0.0);
    }
    ct = prev;
  }
  EXPECT_CLOSE(gx, gxr, 1e-4);
  EXPECT_CLOSE(gh, ct, 1e-4);
  // The linear jaxpr holds one linear scan whose body calls the bwd through custom_lin.
  flat::Fun lf = [&](std::span<const Array> a) { return std::vector<Array>{loss(a[0], xs)}; };
  flat::Linearized lin = flat::linearize(lf, std::vector<Array>{h0});
  std::string text = to_string(lin.linear_jaxpr());
  EXPECT_NE(text.find("custom_lin"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// custom_vjp inside a cond branch under grad: the branch is linearized (no JVP of custom_vjp
// is needed) and the selected branch's bwd gives the gradient.
TEST(CustomVjp, InsideCond) {
  Array x = random_array({5}, DType::kFloat32, -2, 2);
  for (bool pred : {true, false}) {
    auto f = [&](const Array& v) {
      Array y = lax::cond(
          tnp::asarray(pred), [](const Array& a) { return custom_sin(a) * 3.0; },
          [](const Array& a) { return a * a; }, v);
      return tnp::sum(y);
    };
    std::vector<double> want = to_doubles(x);
    for (double& w : want) w = pred ? 3.0 * std::cos(w) : 2.0 * w;
    EXPECT_CLOSE(grad(f)(x), want, 1e-5);
  }
}

}  // namespace
}  // namespace tessera
