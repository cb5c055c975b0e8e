// lax::cond / lax::switch_ and the cond primitive: forward values for every branch (clamped
// indices, bool/int/float predicates, pytrees, closures), jvp / grad / linearize / grad of grad
// against float64 finite differences, vmap with batched and unbatched predicates against loops
// (a batched predicate becomes select_n), transpose, DCE of unused outputs, the staged text and
// JAX's errors. References are plain C++ double computations.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>

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
Array boolean(bool b) { return tnp::array(std::vector<bool>{b}, {}); }

// Elementwise map of a double function.
std::vector<double> map_d(const Array& x, const std::function<double(double)>& f) {
  std::vector<double> v = to_doubles(x);
  for (double& e : v) e = f(e);
  return v;
}
// Central finite difference in float64 of a scalar function.
double fd(const std::function<double(double)>& f, double x, double h = 1e-6) {
  return (f(x + h) - f(x - h)) / (2 * h);
}

// The two branches used throughout, with their float64 references.
Array tbranch(const Array& x) { return tnp::sin(x) * 2.0; }
Array fbranch(const Array& x) { return x * x * x - 1.0; }
double tref(double x) { return std::sin(x) * 2.0; }
double fref(double x) { return x * x * x - 1.0; }

TEST(Cond, ForwardBothBranchesAndPredicateKinds) {
  Array x = random_array({6}, DType::kFloat32);
  for (bool p : {true, false}) {
    Array y = lax::cond(boolean(p), tbranch, fbranch, x);
    EXPECT_CLOSE(y, map_d(x, p ? tref : fref), 1e-6);
    // A C++ bool predicate.
    EXPECT_CLOSE(lax::cond(p, tbranch, fbranch, x), map_d(x, p ? tref : fref), 1e-6);
  }
  // Numbers are compared with zero: int 0 / 5 / -3, float 0.0 / 0.25.
  EXPECT_CLOSE(lax::cond(i32(0), tbranch, fbranch, x), map_d(x, fref), 1e-6);
  EXPECT_CLOSE(lax::cond(i32(5), tbranch, fbranch, x), map_d(x, tref), 1e-6);
  EXPECT_CLOSE(lax::cond(i32(-3), tbranch, fbranch, x), map_d(x, tref), 1e-6);
  EXPECT_CLOSE(lax::cond(tnp::scalar(0.0, DType::kFloat32), tbranch, fbranch, x), map_d(x, fref),
               1e-6);
  EXPECT_CLOSE(lax::cond(0.25, tbranch, fbranch, x), map_d(x, tref), 1e-6);
  // A traced predicate: the branch is chosen by the data.
  auto g = [](const Array& v) { return lax::cond(tnp::sum(v) > 0.0, tbranch, fbranch, v); };
  Array pos = tnp::abs(x) + 0.1, neg = -tnp::abs(x) - 0.1;
  EXPECT_CLOSE(g(pos), map_d(pos, tref), 1e-6);
  EXPECT_CLOSE(g(neg), map_d(neg, fref), 1e-6);
}

TEST(Cond, PytreesClosuresAndNoOperands) {
  Array a = random_array({3}, DType::kFloat32), b = random_array({2, 2}, DType::kFloat32);
  Array c = random_array({3}, DType::kFloat32);  // closed over by one branch only
  std::map<std::string, Array> d{{"u", b}, {"v", a}};
  auto t = [&](const Array& x, const std::map<std::string, Array>& m) {
    return std::make_pair(x + c, m.at("u") * 2.0);
  };
  auto f = [&](const Array& x, const std::map<std::string, Array>& m) {
    return std::make_pair(x * m.at("v"), m.at("u") - 1.0);
  };
  for (bool p : {true, false}) {
    auto [y0, y1] = lax::cond(p, t, f, a, d);
    std::vector<double> av = to_doubles(a), bv = to_doubles(b), cv = to_doubles(c), w0, w1;
    for (size_t i = 0; i < av.size(); ++i) w0.push_back(p ? av[i] + cv[i] : av[i] * av[i]);
    for (double e : bv) w1.push_back(p ? e * 2.0 : e - 1.0);
    EXPECT_CLOSE(y0, w0, 1e-6);
    EXPECT_CLOSE(y1, w1, 1e-6);
  }
  // No operands: the branches are closures.
  Array z = lax::cond(
      false, [&] { return a * 3.0; }, [&] { return c; });
  EXPECT_CLOSE(z, to_doubles(c), 0);
}

TEST(Switch, ClampsTheIndex) {
  Array x = random_array({5}, DType::kFloat32);
  std::vector<std::function<Array(const Array&)>> br{[](const Array& v) { return v + 1.0; },
                                                     [](const Array& v) { return v * v; },
                                                     [](const Array& v) { return tnp::cos(v); }};
  std::vector<std::function<double(double)>> ref{[](double v) { return v + 1.0; },
                                                 [](double v) { return v * v; },
                                                 [](double v) { return std::cos(v); }};
  for (int i : {-7, -1, 0, 1, 2, 3, 100}) {
    int want = std::clamp(i, 0, 2);
    EXPECT_CLOSE(lax::switch_(i32(i), br, x), map_d(x, ref[want]), 1e-6) << i;
    EXPECT_CLOSE(lax::switch_(i, br, x), map_d(x, ref[want]), 1e-6) << i;
  }
  // A tuple of distinct lambdas and a traced index.
  auto tup = std::make_tuple([](const Array& v) { return v - 2.0; },
                             [](const Array& v) { return v * 0.5; });
  auto h = [&](const Array& k, const Array& v) { return lax::switch_(k, tup, v); };
  EXPECT_CLOSE(h(i32(0), x), map_d(x, [](double v) { return v - 2.0; }), 1e-6);
  EXPECT_CLOSE(h(i32(9), x), map_d(x, [](double v) { return v * 0.5; }), 1e-6);
  // One branch is just called.
  std::vector<std::function<Array(const Array&)>> one{br[2]};
  EXPECT_CLOSE(lax::switch_(i32(5), one, x), map_d(x, ref[2]), 1e-6);
  // A std::array of callables.
  std::array<std::function<Array(const Array&)>, 2> arr{br[1], br[0]};
  EXPECT_CLOSE(lax::switch_(i32(1), arr, x), map_d(x, ref[0]), 1e-6);
  // Unsigned and int8 indices are converted.
  EXPECT_CLOSE(lax::switch_(tnp::scalar(1, DType::kUInt8), br, x), map_d(x, ref[1]), 1e-6);
}

TEST(Cond, JvpAndGradMatchFiniteDifferences) {
  Array x = random_array({5}, DType::kFloat32, -1.5, 1.5);
  Array t = random_array({5}, DType::kFloat32);
  std::vector<double> xv = to_doubles(x), tv = to_doubles(t);
  for (bool p : {true, false}) {
    auto ref = p ? tref : fref;
    auto f = [p](const Array& v) { return lax::cond(p, tbranch, fbranch, v); };
    auto [y, yt] = jvp(f, x, t);
    std::vector<double> want;
    for (size_t i = 0; i < xv.size(); ++i) want.push_back(fd(ref, xv[i]) * tv[i]);
    EXPECT_CLOSE(y, map_d(x, ref), 1e-6);
    EXPECT_CLOSE(yt, want, 1e-4);
    // grad of the sum; the predicate is traced (depends on the input).
    auto loss = [p](const Array& v) {
      Array pr = p ? (tnp::sum(v * v) >= 0.0) : (tnp::sum(v * v) < 0.0);
      return tnp::sum(lax::cond(pr, tbranch, fbranch, v));
    };
    EXPECT_CLOSE(grad(loss)(x), map_d(x, [&](double v) { return fd(ref, v); }), 1e-4);
    // linearize's jvp and vjp.
    auto [y2, f_jvp] = linearize(f, x);
    EXPECT_CLOSE(y2, map_d(x, ref), 1e-6);
    EXPECT_CLOSE(f_jvp(t), want, 1e-4);
  }
}

TEST(Cond, GradOfGradAndClosedOverTracers) {
  // f(x) = cond(x > 0, x * sin(x) * y, x^3 * y): second derivative in x, and the derivative in a
  // value the branches close over (hoisted to an operand under grad).
  for (double xv : {0.7, -0.4, 1.3, -1.1}) {
    double yv = 1.7;
    auto f = [](const Array& x, const Array& y) {
      return lax::cond(
          x > 0.0, [&](const Array& v) { return v * tnp::sin(v) * y; },
          [&](const Array& v) { return v * v * v * y; }, x);
    };
    auto ref = [&](double v) { return v > 0 ? v * std::sin(v) * yv : v * v * v * yv; };
    Array x = tnp::scalar(xv, DType::kFloat32), y = tnp::scalar(yv, DType::kFloat32);
    Array g = grad(f)(x, y);
    EXPECT_NEAR(g.item_double(), fd(ref, xv), 1e-4);
    Array gg = grad([&](const Array& v) { return grad(f)(v, y); })(x);
    double d2 = (ref(xv + 1e-4) - 2 * ref(xv) + ref(xv - 1e-4)) / 1e-8;
    EXPECT_NEAR(gg.item_double(), d2, 2e-3);
    Array gy = grad(f, argnums<1>)(x, y);
    EXPECT_NEAR(gy.item_double(), ref(xv) / yv, 1e-5);
  }
}

TEST(Switch, GradOfEachBranchAndDifferentResiduals) {
  // Branches with different residual types and counts: a matmul, an elementwise product of
  // two transcendental values, and a linear map (no residual).
  Array w = random_array({3, 3}, DType::kFloat32);
  Array x = random_array({3}, DType::kFloat32, -1, 1);
  std::vector<double> wv = to_doubles(w), xv = to_doubles(x);
  auto loss = [&](const Array& k, const Array& v) {
    auto tup = std::make_tuple([&](const Array& u) { return tnp::sum(tnp::tanh(lax::dot(w, u))); },
                               [](const Array& u) { return tnp::sum(tnp::sin(u) * tnp::exp(u)); },
                               [](const Array& u) { return tnp::sum(u * 3.0); });
    return lax::switch_(k, tup, v);
  };
  std::vector<std::function<double(const std::vector<double>&)>> ref{
      [&](const std::vector<double>& u) {
        double s = 0;
        for (int i = 0; i < 3; ++i) {
          double r = 0;
          for (int j = 0; j < 3; ++j) r += wv[i * 3 + j] * u[j];
          s += std::tanh(r);
        }
        return s;
      },
      [](const std::vector<double>& u) {
        double s = 0;
        for (double e : u) s += std::sin(e) * std::exp(e);
        return s;
      },
      [](const std::vector<double>& u) { return 3.0 * (u[0] + u[1] + u[2]); }};
  for (int k = 0; k < 3; ++k) {
    Array g = grad(loss, argnums<1>)(i32(k), x);
    std::vector<double> want;
    for (int j = 0; j < 3; ++j) {
      std::vector<double> up = xv, um = xv;
      up[j] += 1e-6;
      um[j] -= 1e-6;
      want.push_back((ref[k](up) - ref[k](um)) / 2e-6);
    }
    EXPECT_CLOSE(g, want, 1e-4);
  }
}

TEST(Cond, NestedCondsAndIntegerOperandsUnderGradAndVmap) {
  // cond(x > 0, cond(x > 1, ...), ...) with an int operand that selects a scale and an int
  // output: gradients flow through the float path only.
  auto f = [](const Array& x, const Array& n) {
    auto inner = [](const Array& v, const Array& m) {
      return lax::cond(
          v > 1.0,
          [](const Array& u, const Array& k) {
            return std::make_pair(tnp::sin(u) * lax::convert_element_type(k, DType::kFloat32), k);
          },
          [](const Array& u, const Array& k) { return std::make_pair(u * u, k + i32(1)); }, v, m);
    };
    auto outer = [](const Array& v, const Array& m) {
      return std::make_pair(tnp::exp(v) * 0.5, m * i32(2));
    };
    return lax::cond(x > 0.0, inner, outer, x, n);
  };
  auto ref = [](double x, int n) {
    if (x > 1) return std::make_pair(std::sin(x) * n, n);
    if (x > 0) return std::make_pair(x * x, n + 1);
    return std::make_pair(std::exp(x) * 0.5, 2 * n);
  };
  for (double xv : {1.4, 0.6, -0.8}) {
    Array x = tnp::scalar(xv, DType::kFloat32), n = i32(3);
    auto [y, k] = f(x, n);
    EXPECT_NEAR(y.item_double(), ref(xv, 3).first, 1e-6);
    EXPECT_EQ(k.item<int>(), ref(xv, 3).second);
    Array g = grad([&](const Array& v) { return f(v, n).first; })(x);
    EXPECT_NEAR(g.item_double(), fd([&](double v) { return ref(v, 3).first; }, xv), 1e-4);
  }
  // vmap with a batched predicate over the nested conds: ints go through select_n too.
  Array xs = tnp::array({1.4, 0.6, -0.8, 2.0}, DType::kFloat32);
  Array ns = tnp::array(std::vector<int32_t>{3, 4, 5, 6}, {4});
  auto [ys, ks] = vmap(f)(xs, ns);
  Array gs = vmap(grad([&](const Array& v, const Array& m) { return f(v, m).first; }))(xs, ns);
  std::vector<double> xv = to_doubles(xs), wy, wk, wg;
  for (int i = 0; i < 4; ++i) {
    auto r = ref(xv[i], 3 + i);
    wy.push_back(r.first);
    wk.push_back(r.second);
    wg.push_back(fd([&](double v) { return ref(v, 3 + i).first; }, xv[i]));
  }
  EXPECT_CLOSE(ys, wy, 1e-5);
  EXPECT_CLOSE(ks, wk, 0);
  EXPECT_CLOSE(gs, wg, 1e-4);
}

TEST(Cond, HessianThroughCond) {
  // jacfwd(jacrev(f)): vmap of the transposed cond, then JVP of it.
  Array x = random_array({3}, DType::kFloat32, -1, 1);
  for (bool p : {true, false}) {
    auto f = [p](const Array& v) {
      return lax::cond(
          p, [](const Array& u) { return tnp::sum(tnp::sin(u) * u); },
          [](const Array& u) { return tnp::sum(u * u * u); }, v);
    };
    Array h = hessian(f)(x);
    std::vector<double> xv = to_doubles(x), want(9, 0.0);
    for (int i = 0; i < 3; ++i)
      want[i * 4] = p ? 2 * std::cos(xv[i]) - xv[i] * std::sin(xv[i]) : 6 * xv[i];
    EXPECT_EQ(h.shape(), (Shape{3, 3}));
    EXPECT_CLOSE(h, want, 1e-5);
  }
}

TEST(Cond, LinearTranspose) {
  // cond is linear in x when both branches are: its transpose is the cond of the transposes.
  Array x = random_array({4}, DType::kFloat32), ct = random_array({4}, DType::kFloat32);
  for (bool p : {true, false}) {
    auto f = [p](const Array& v) {
      return lax::cond(
          p, [](const Array& u) { return u * 2.0; }, [](const Array& u) { return -u + u * 0.5; },
          v);
    };
    auto f_t = linear_transpose(f, x);
    Array r = std::get<0>(f_t(ct));
    EXPECT_CLOSE(r, map_d(ct, [p](double c) { return p ? 2.0 * c : -0.5 * c; }), 1e-6);
  }
}

TEST(Cond, VmapUnbatchedPredicateKeepsCond) {
  Array xs = random_array({4, 3}, DType::kFloat32);
  for (bool p : {true, false}) {
    auto f = [p](const Array& v) { return lax::cond(p, tbranch, fbranch, v); };
    EXPECT_CLOSE(vmap(f)(xs), map_d(xs, p ? tref : fref), 1e-6);
  }
  // Batched operand, unbatched traced predicate; one output stays unbatched.
  Array c = random_array({}, DType::kFloat32);
  auto g = [](const Array& pr, const Array& v) {
    return lax::cond(
        pr > 0.0,
        [](const Array& u) { return std::make_pair(u * 2.0, tnp::scalar(1.0, DType::kFloat32)); },
        [](const Array& u) { return std::make_pair(u - 1.0, tnp::scalar(2.0, DType::kFloat32)); },
        v);
  };
  auto [y, s] = vmap(g, {std::nullopt, 0}, {0, std::nullopt})(c, xs);
  bool p = c.item_double() > 0;
  EXPECT_CLOSE(y, map_d(xs, [p](double v) { return p ? v * 2.0 : v - 1.0; }), 1e-6);
  EXPECT_EQ(s.item_double(), p ? 1.0 : 2.0);
  std::string text = to_string(make_jaxpr(vmap(g, {std::nullopt, 0}, {0, std::nullopt}))(c, xs));
  EXPECT_NE(text.find("cond["), std::string::npos) << text;
  EXPECT_EQ(text.find("select_n"), std::string::npos) << text;
}

TEST(Cond, VmapBatchedPredicateBecomesSelect) {
  Array xs = random_array({6, 2}, DType::kFloat32);
  Array ks = tnp::array(std::vector<int32_t>{-1, 0, 1, 2, 5, 1}, {6});
  std::vector<std::function<Array(const Array&)>> br{[](const Array& v) { return v + 1.0; },
                                                     [](const Array& v) { return tnp::sin(v); },
                                                     [](const Array& v) { return v * v; }};
  std::vector<std::function<double(double)>> ref{[](double v) { return v + 1.0; },
                                                 [](double v) { return std::sin(v); },
                                                 [](double v) { return v * v; }};
  auto f = [&](const Array& k, const Array& v) { return lax::switch_(k, br, v); };
  Array y = vmap(f)(ks, xs);
  std::vector<double> xv = to_doubles(xs), want;
  std::vector<int> kv{-1, 0, 1, 2, 5, 1};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 2; ++j) want.push_back(ref[std::clamp(kv[i], 0, 2)](xv[i * 2 + j]));
  EXPECT_CLOSE(y, want, 1e-6);
  std::string text = to_string(make_jaxpr(vmap(f))(ks, xs));
  EXPECT_NE(text.find("select_n"), std::string::npos) << text;
  EXPECT_EQ(text.find("cond["), std::string::npos) << text;
  // Batched bool predicate with an unbatched operand.
  Array ps = tnp::array(std::vector<bool>{true, false, false, true}, {4});
  Array x1 = random_array({3}, DType::kFloat32);
  Array y2 = vmap([&](const Array& pr) { return lax::cond(pr, tbranch, fbranch, x1); })(ps);
  std::vector<double> w2;
  for (bool pr : {true, false, false, true})
    for (double v : to_doubles(x1)) w2.push_back(pr ? tref(v) : fref(v));
  EXPECT_CLOSE(y2, w2, 1e-6);
}

TEST(Cond, GradOfVmapWithBatchedPredicate) {
  // Per-example gradients through select_n: each member differentiates only its own branch
  // (the other branch sees its operand through stop_gradient), as a loop would.
  Array xs = random_array({5}, DType::kFloat32, -1.5, 1.5);
  auto f = [](const Array& v) { return lax::cond(v > 0.0, tbranch, fbranch, v); };
  Array g = grad([&](const Array& m) { return tnp::sum(vmap(f)(m)); })(xs);
  Array gv = vmap(grad(f))(xs);
  std::vector<double> want = map_d(xs, [](double v) { return v > 0 ? fd(tref, v) : fd(fref, v); });
  EXPECT_CLOSE(g, want, 1e-4);
  EXPECT_CLOSE(gv, want, 1e-4);
}

// JAX's text (pp_jaxprs puts the closing parenthesis of the branches on its own line).
TEST(Cond, MakeJaxprText) {
  Array x = tnp::zeros({3});
  Array c = tnp::ones({3});
  auto f = [&](const Array& p, const Array& v) {
    return lax::cond(
        p, [&](const Array& u) { return u * c; }, [](const Array& u) { return -u; }, v);
  };
  std::string text = to_string(make_jaxpr(f)(boolean(true), x));
  EXPECT_EQ(text,
            "{ lambda a:f32[3]; b:bool[] c:f32[3]. let\n"
            "    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
            "    e:f32[3] = cond[\n"
            "      branches=(\n"
            "        { lambda ; f:f32[3] g:f32[3]. let h:f32[3] = neg g in (h,) }\n"
            "        { lambda ; i:f32[3] j:f32[3]. let k:f32[3] = mul j i in (k,) }\n"
            "      )\n"
            "    ] d a c\n"
            "  in (e,) }")
      << text;
}

TEST(Cond, DceDropsUnusedOutputsAndInputs) {
  Array x = random_array({3}, DType::kFloat32), y = random_array({3}, DType::kFloat32);
  auto f = [](const Array& p, const Array& a, const Array& b) {
    auto [u, v] = lax::cond(
        p, [](const Array& s, const Array& t) { return std::make_pair(tnp::sin(s), t * 2.0); },
        [](const Array& s, const Array& t) { return std::make_pair(s * s, t + 1.0); }, a, b);
    return std::make_pair(u, v);
  };
  ClosedJaxpr cj = make_jaxpr(f)(boolean(false), x, y);
  auto [pruned, used] = ir::dce(*cj.jaxpr, {true, false});
  std::string text = to_string(*pruned);
  // b (the third input) is no longer read; the cond has one output and one operand.
  EXPECT_EQ(used, (std::vector<bool>{true, true, false})) << text;
  EXPECT_EQ(text.find("2.0"), std::string::npos) << text;  // t * 2.0 pruned
  EXPECT_EQ(text.find("add"), std::string::npos) << text;  // t + 1.0 pruned
  EXPECT_NE(text.find("sin"), std::string::npos) << text;
  EXPECT_NE(text.find("mul f f"), std::string::npos) << text;
  EXPECT_NE(text.find("] d b\n"), std::string::npos) << text;  // one operand left
  verify(*pruned);
  // It computes the same first output.
  std::vector<Array> r = eval_jaxpr(*pruned, cj.consts, std::vector<Array>{boolean(true), x, y});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_CLOSE(r[0], map_d(x, [](double v) { return std::sin(v); }), 1e-6);
  // Nothing used: the equation goes.
  auto [none, used0] = ir::dce(*cj.jaxpr, {false, false});
  EXPECT_TRUE(none->eqns.empty()) << to_string(*none);
}

// An identity primitive with an effect (a stand-in for a callback), for the effects rules.
Primitive& effectful_identity() {
  static Primitive* p = [] {
    auto* q = new Primitive("test_effectful_identity");
    q->abstract_eval = [](std::span<const Aval> in, const Params&) {
      return std::vector<Aval>{in[0]};
    };
    q->impl = [](const ExecContext&, std::span<const Array> args, const Params&,
                 std::span<const Aval>) { return std::vector<Array>{args[0]}; };
    q->batch = [q](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                   const Params&) {
      return std::make_pair(std::vector<Array>{args[0]}, std::vector<int64_t>{dims[0]});
    };
    set_primitive_effects(*q, {Effect{"test_io", false}});
    return q;
  }();
  return *p;
}

TEST(Cond, EffectsAreJoinedKeptByDceAndRefusedUnderBatchedPredicate) {
  Array x = random_array({3}, DType::kFloat32);
  auto f = [](const Array& p, const Array& v) {
    return lax::cond(
        p, [](const Array& u) { return bind1(effectful_identity(), {u * 2.0}); },
        [](const Array& u) { return u; }, v);
  };
  ClosedJaxpr cj = make_jaxpr(f)(boolean(true), x);
  ASSERT_EQ(cj.jaxpr->effects.size(), 1u) << to_string(cj);
  EXPECT_EQ(cj.jaxpr->effects[0].name, "test_io");
  const JaxprEqn& e = cj.jaxpr->eqns.back();
  EXPECT_EQ(e.primitive->name(), "cond");
  ASSERT_EQ(e.effects.size(), 1u);
  // DCE keeps the effectful cond with no used output.
  auto [pruned, used] = ir::dce(*cj.jaxpr, {false});
  ASSERT_EQ(pruned->eqns.size(), 2u) << to_string(*pruned);
  EXPECT_EQ(pruned->eqns.back().primitive->name(), "cond");
  verify(*pruned);
  // vmap: an unbatched predicate keeps the cond; a batched one is refused.
  Array xs = random_array({2, 3}, DType::kFloat32);
  Array y = vmap([&](const Array& v) { return f(boolean(true), v); })(xs);
  EXPECT_CLOSE(y, map_d(xs, [](double v) { return 2.0 * v; }), 1e-6);
  Array ps = tnp::array(std::vector<bool>{true, false}, {2});
  EXPECT_ERROR(ValueError, vmap(f)(ps, xs), "IO effect not supported in vmap-of-cond");
}

TEST(Cond, StagedTransformsVerify) {
  // The jaxprs of grad / vmap / jvp of cond and switch pass the verifier (abstract eval of
  // every equation, including the joined residual branches).
  Array x = random_array({3}, DType::kFloat32);
  auto loss = [](const Array& v) {
    return tnp::sum(lax::cond(tnp::sum(v) > 0.0, tbranch, fbranch, v));
  };
  ClosedJaxpr g = make_jaxpr(grad(loss))(x);
  verify(*g.jaxpr);
  std::string text = to_string(g);
  size_t first = text.find("cond[");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find("cond[", first + 1), std::string::npos) << text;  // known + transposed
  verify(*make_jaxpr(vmap(grad(loss)))(random_array({2, 3}, DType::kFloat32)).jaxpr);
  verify(*make_jaxpr([&](const Array& v) { return jvp(loss, v, v); })(x).jaxpr);
}

TEST(Cond, Errors) {
  Array x = random_array({3}, DType::kFloat32);
  auto as_int = [](const Array& v) { return lax::convert_element_type(v, DType::kInt32); };
  EXPECT_ERROR(TypeError, lax::cond(true, tbranch, as_int, x),
               "true_fun and false_fun output must have identical types, got\n"
               "DIFFERENT ShapedArray(float32[3]) vs. ShapedArray(int32[3])");
  EXPECT_ERROR(TypeError,
               lax::cond(
                   true, tbranch, [](const Array& v) { return std::make_pair(v, v); }, x),
               "true_fun and false_fun output must have same type structure, got PyTreeDef(*) "
               "and PyTreeDef((*, *))");
  EXPECT_ERROR(TypeError, lax::cond(tnp::array({1.0, 0.0}), tbranch, fbranch, x),
               "Pred must be a scalar, got f32[2] of shape (2,)");
  std::vector<std::function<Array(const Array&)>> br{tbranch, fbranch, as_int};
  EXPECT_ERROR(TypeError, lax::switch_(0, br, x),
               "branch 0 and 2 outputs must have identical types, got\n"
               "DIFFERENT ShapedArray(float32[3]) vs. ShapedArray(int32[3])");
  EXPECT_ERROR(TypeError, lax::switch_(tnp::scalar(1.0, DType::kFloat32), br, x),
               "Index type must be an integer");
  EXPECT_ERROR(TypeError, lax::switch_(tnp::array({1.0, 0.0}, DType::kInt32), br, x),
               "Branch index must be scalar");
  std::vector<std::function<Array(const Array&)>> empty;
  EXPECT_ERROR(ValueError, lax::switch_(0, empty, x), "Empty branch sequence");
  // The flat API with mismatched counts.
  flat::Fun one = [](std::span<const Array> v) { return std::vector<Array>{v[0]}; };
  flat::Fun two = [](std::span<const Array> v) { return std::vector<Array>{v[0], v[0]}; };
  std::vector<Array> ops{x};
  EXPECT_ERROR(TypeError, flat::cond(boolean(true), one, two, ops),
               "must have same type structure, got PyTreeDef([*]) and PyTreeDef([*, *])");
}

}  // namespace
}  // namespace tessera
