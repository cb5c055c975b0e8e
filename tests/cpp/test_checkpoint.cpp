// checkpoint / remat (tessera/checkpoint.h): gradients through checkpoint equal gradients
// without it and float64 finite differences for every policy; the policies decide which
// residuals linearize keeps (counted on the linear jaxpr and listed by saved_residuals);
// checkpoint composes with grad(grad), vmap(grad), jvp, linearize and closures; make_jaxpr shows
// the checkpoint equation with its body.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ir/passes/dce.h"
#include "tessera/checkpoint.h"
#include "tessera/control_flow.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
namespace cp = tessera::checkpoint_policies;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

#define EXPECT_CLOSE(got, want, tol) EXPECT_EQ(compare(to_doubles(got), want, tol, tol), "")

// 64-bit mode for a scope (float64 arrays stay float64).
struct X64 {
  X64() : saved(x64_enabled()) { set_x64_enabled(true); }
  ~X64() { set_x64_enabled(saved); }
  bool saved;
};

// Two layers with named activations: loss = sum(sin(tanh(x @ w) @ w)^2).
Array model(const Array& x, const Array& w) {
  Array h1 = checkpoint_name(tnp::tanh(tnp::matmul(x, w)), "h1");
  Array h2 = checkpoint_name(tnp::sin(tnp::matmul(h1, w)), "h2");
  return tnp::sum(h2 * h2);
}

std::vector<std::pair<std::string, CheckpointPolicy>> all_policies() {
  return {{"default", nullptr},
          {"everything_saveable", cp::everything_saveable()},
          {"nothing_saveable", cp::nothing_saveable()},
          {"dots_saveable", cp::dots_saveable()},
          {"dots_with_no_batch_dims_saveable", cp::dots_with_no_batch_dims_saveable()},
          {"save_only_these_names", cp::save_only_these_names({"h1"})},
          {"save_any_names_but_these", cp::save_any_names_but_these({"h1"})},
          {"save_anything_except_these_names", cp::save_anything_except_these_names({"h2"})},
          {"save_from_both_policies",
           cp::save_from_both_policies(cp::dots_saveable(), cp::save_only_these_names({"h2"}))}};
}

// Central finite differences of model in float64, entry by entry of x and w.
std::pair<std::vector<double>, std::vector<double>> fd_grads(const Array& x, const Array& w) {
  auto eval = [](const std::vector<double>& xv, const Shape& xs, const std::vector<double>& wv,
                 const Shape& ws) {
    return model(tnp::array(xv, xs, DType::kFloat64), tnp::array(wv, ws, DType::kFloat64))
        .item_double();
  };
  std::vector<double> xv = to_doubles(x), wv = to_doubles(w), gx, gw;
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    auto p = xv, m = xv;
    p[i] += h;
    m[i] -= h;
    gx.push_back((eval(p, x.shape(), wv, w.shape()) - eval(m, x.shape(), wv, w.shape())) / (2 * h));
  }
  for (size_t i = 0; i < wv.size(); ++i) {
    auto p = wv, m = wv;
    p[i] += h;
    m[i] -= h;
    gw.push_back((eval(xv, x.shape(), p, w.shape()) - eval(xv, x.shape(), m, w.shape())) / (2 * h));
  }
  return {gx, gw};
}

TEST(Checkpoint, GradEqualsPlainGradForEveryPolicy) {
  Array x = random_array({4, 5}, DType::kFloat32, -1, 1);
  Array w = random_array({5, 5}, DType::kFloat32, -1, 1);
  auto [px, pw] = grad(model, argnums<0, 1>)(x, w);
  for (auto& [label, policy] : all_policies()) {
    SCOPED_TRACE(label);
    auto [gx, gw] = grad(checkpoint(model, policy), argnums<0, 1>)(x, w);
    EXPECT_CLOSE(gx, to_doubles(px), 1e-5);
    EXPECT_CLOSE(gw, to_doubles(pw), 1e-5);
    Array v = checkpoint(model, policy)(x, w);
    EXPECT_CLOSE(v, to_doubles(model(x, w)), 1e-6);
  }
}

TEST(Checkpoint, Float64GradMatchesFiniteDifferences) {
  X64 x64;
  Array x = random_array({3, 4}, DType::kFloat64, -1, 1);
  Array w = random_array({4, 4}, DType::kFloat64, -1, 1);
  auto [fx, fw] = fd_grads(x, w);
  for (auto& [label, policy] : all_policies()) {
    SCOPED_TRACE(label);
    auto [gx, gw] = grad(remat(model, policy), argnums<0, 1>)(x, w);
    EXPECT_EQ(gx.dtype(), DType::kFloat64);
    EXPECT_CLOSE(gx, fx, 1e-7);
    EXPECT_CLOSE(gw, fw, 1e-7);
  }
}

size_t num_residuals(CheckpointPolicy policy, const Array& x, const Array& w) {
  auto f = checkpoint(model, std::move(policy));
  flat::Fun ff = [&](std::span<const Array> xs) { return std::vector<Array>{f(xs[0], xs[1])}; };
  std::vector<Array> args{x, w};
  return flat::linearize(ff, args).linear_jaxpr().consts.size();
}

std::vector<std::string> wheres(const std::vector<SavedResidual>& rs) {
  std::vector<std::string> out;
  for (const SavedResidual& r : rs) out.push_back(r.where);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Checkpoint, PoliciesDecideTheResiduals) {
  Array x = random_array({4, 5}, DType::kFloat32, -1, 1);
  Array w = random_array({5, 5}, DType::kFloat32, -1, 1);
  flat::Fun plain = [](std::span<const Array> xs) {
    return std::vector<Array>{model(xs[0], xs[1])};
  };
  std::vector<Array> args{x, w};
  size_t n_plain = flat::linearize(plain, args).linear_jaxpr().consts.size();
  size_t n_nothing = num_residuals(cp::nothing_saveable(), x, w);
  size_t n_default = num_residuals(nullptr, x, w);
  size_t n_every = num_residuals(cp::everything_saveable(), x, w);
  size_t n_named = num_residuals(cp::save_only_these_names({"h1"}), x, w);
  EXPECT_EQ(n_nothing, 2u);  // the inputs only
  EXPECT_EQ(n_default, 2u);
  EXPECT_EQ(n_named, 3u);  // the inputs and h1
  EXPECT_GT(n_every, n_named);
  EXPECT_EQ(n_every, n_plain);

  using V = std::vector<std::string>;
  const V args_only{"from the argument at flattened index 0",
                    "from the argument at flattened index 1"};
  EXPECT_EQ(wheres(saved_residuals(checkpoint(model), x, w)), args_only);
  V h1 = args_only;
  h1.push_back("named 'h1'");
  EXPECT_EQ(wheres(saved_residuals(checkpoint(model, cp::save_only_these_names({"h1"})), x, w)),
            h1);
  V h2 = args_only;
  h2.push_back("named 'h2'");
  EXPECT_EQ(wheres(saved_residuals(checkpoint(model, cp::save_any_names_but_these({"h1"})), x, w)),
            h2);
  // dots_saveable: the two matmul outputs (x @ w and h1 @ w), and the inputs.
  std::vector<SavedResidual> dots = saved_residuals(checkpoint(model, cp::dots_saveable()), x, w);
  V d = args_only;
  d.push_back("output of dot_general");
  d.push_back("output of dot_general");
  EXPECT_EQ(wheres(dots), d);
  for (const SavedResidual& r : dots)
    if (r.kind == SavedResidual::Kind::kOutput) {
      EXPECT_EQ(r.aval.shape, (Shape{4, 5}));
    }
  // save_from_both_policies: the union.
  V both = d;
  both.push_back("named 'h2'");
  std::sort(both.begin(), both.end());
  EXPECT_EQ(wheres(saved_residuals(
                checkpoint(model, cp::save_from_both_policies(cp::dots_saveable(),
                                                              cp::save_only_these_names({"h2"}))),
                x, w)),
            both);
  // Anything but the output of the `name` h2: its input (sin's output, reported as named, as
  // JAX does) is saved instead, so as many residuals as everything_saveable.
  auto exc = saved_residuals(checkpoint(model, cp::save_anything_except_these_names({"h2"})), x, w);
  EXPECT_EQ(exc.size(), n_every);
  std::ostringstream os;
  print_saved_residuals(os, saved_residuals(checkpoint(model), x, w));
  EXPECT_EQ(os.str(),
            "f32[4,5] from the argument at flattened index 0\n"
            "f32[5,5] from the argument at flattened index 1\n");
}

TEST(Checkpoint, DotsWithNoBatchDims) {
  // One batched dot (einsum with a batch index) and one plain matmul.
  auto f = [](const Array& a, const Array& b) {
    Array c = tnp::einsum("bij,bjk->bik", {a, b});
    Array d = tnp::matmul(tnp::sin(tnp::reshape(c, {6, 3})), tnp::ones({3, 3}));
    return tnp::sum(tnp::sin(d));
  };
  Array a = random_array({2, 3, 4}, DType::kFloat32, -1, 1);
  Array b = random_array({2, 4, 3}, DType::kFloat32, -1, 1);
  auto rs = saved_residuals(checkpoint(f, cp::dots_with_no_batch_dims_saveable()), a, b);
  int dots = 0;
  for (const SavedResidual& r : rs)
    if (r.where == "output of dot_general") {
      ++dots;
      EXPECT_EQ(r.aval.shape, (Shape{6, 3}));
    }
  EXPECT_EQ(dots, 1);
  auto all = saved_residuals(checkpoint(f, cp::dots_saveable()), a, b);
  dots = 0;
  for (const SavedResidual& r : all) dots += r.where == "output of dot_general";
  EXPECT_EQ(dots, 2);
  auto [ga, gb] = grad(checkpoint(f, cp::dots_with_no_batch_dims_saveable()), argnums<0, 1>)(a, b);
  auto [pa, pb] = grad(f, argnums<0, 1>)(a, b);
  EXPECT_CLOSE(ga, to_doubles(pa), 1e-5);
  EXPECT_CLOSE(gb, to_doubles(pb), 1e-5);
}

double f1(double x) { return std::sin(std::sin(x)) * x; }
double df1(double x) { return std::cos(std::sin(x)) * std::cos(x) * x + std::sin(std::sin(x)); }

TEST(Checkpoint, GradOfGrad) {
  X64 x64;
  auto f = [](const Array& x) { return tnp::sin(tnp::sin(x)) * x; };
  for (auto& [label, policy] : all_policies()) {
    SCOPED_TRACE(label);
    for (int k = 0; k < 3; ++k) {
      double x0 = to_doubles(random_array({}, DType::kFloat64, -2, 2))[0];
      Array x = tnp::full({}, x0, DType::kFloat64);
      Array g1 = grad(checkpoint(f, policy))(x);
      Array g2 = grad(grad(checkpoint(f, policy)))(x);
      const double h = 1e-5;
      EXPECT_NEAR(g1.item_double(), df1(x0), 1e-10);
      EXPECT_NEAR(g2.item_double(), (df1(x0 + h) - df1(x0 - h)) / (2 * h), 1e-7);
    }
  }
}

TEST(Checkpoint, VmapOfGrad) {
  auto f = [](const Array& x) { return tnp::sum(tnp::sin(tnp::sin(x)) * x); };
  Array xs = random_array({5, 3}, DType::kFloat32, -2, 2);
  for (auto& [label, policy] : all_policies()) {
    SCOPED_TRACE(label);
    Array g = vmap(grad(checkpoint(f, policy)))(xs);
    std::vector<double> want;
    for (double v : to_doubles(xs)) want.push_back(df1(v));
    EXPECT_CLOSE(g, want, 1e-5);
    // vmap of the checkpoint itself, and grad of a vmapped checkpoint.
    Array y = vmap(checkpoint(f, policy))(xs);
    std::vector<double> wy(5, 0.0);
    std::vector<double> xv = to_doubles(xs);
    for (size_t i = 0; i < xv.size(); ++i) wy[i / 3] += f1(xv[i]);
    EXPECT_CLOSE(y, wy, 1e-5);
    Array gv = grad([&](const Array& v) { return tnp::sum(vmap(checkpoint(f, policy))(v)); })(xs);
    EXPECT_CLOSE(gv, want, 1e-5);
  }
}

TEST(Checkpoint, JvpAndLinearize) {
  auto f = [](const Array& x) { return tnp::sin(tnp::sin(x)) * x; };
  Array x = random_array({6}, DType::kFloat32, -2, 2);
  Array t = random_array({6}, DType::kFloat32, -1, 1);
  std::vector<double> want;
  std::vector<double> xv = to_doubles(x), tv = to_doubles(t);
  for (size_t i = 0; i < xv.size(); ++i) want.push_back(df1(xv[i]) * tv[i]);
  auto [y, ty] = jvp(checkpoint(f), x, t);
  EXPECT_CLOSE(ty, want, 1e-5);
  flat::Fun ff = [&](std::span<const Array> xs) {
    return std::vector<Array>{checkpoint(f, cp::dots_saveable())(xs[0])};
  };
  std::vector<Array> args{x}, ts{t};
  flat::Linearized lin = flat::linearize(ff, args);
  EXPECT_CLOSE(lin.jvp(ts)[0], want, 1e-5);
  // The linear jaxpr holds one checkpoint equation: the recomputation is not run until used.
  const Jaxpr& lj = *lin.linear_jaxpr().jaxpr;
  ASSERT_EQ(lj.eqns.size(), 1u);
  EXPECT_EQ(lj.eqns[0].primitive->name(), "checkpoint");
  EXPECT_TRUE(lj.eqns[0].params.get_bool("differentiated"));
}

TEST(Checkpoint, GradThroughClosedOverValue) {
  Array x = random_array({7}, DType::kFloat32, -2, 2);
  double w0 = 0.7;
  Array g = grad([&](const Array& w) {
    auto inner = checkpoint([w](const Array& v) { return tnp::sum(tnp::sin(v * w)); });
    return inner(x);
  })(tnp::full({}, w0, DType::kFloat32));
  double want = 0;
  for (double v : to_doubles(x)) want += std::cos(v * w0) * v;
  EXPECT_NEAR(g.item_double(), want, 1e-4);
}

TEST(Checkpoint, MakeJaxprShowsTheEquation) {
  auto f = [](const Array& x) { return tnp::sin(tnp::sin(x)); };
  Array x = tnp::zeros({3}, DType::kFloat32);
  std::string s = to_string(make_jaxpr(checkpoint(f))(x));
  EXPECT_NE(s.find("checkpoint["), std::string::npos) << s;
  EXPECT_NE(s.find("differentiated=False"), std::string::npos) << s;
  EXPECT_NE(s.find("jaxpr={ lambda ; "), std::string::npos) << s;
  EXPECT_NE(s.find("policy=None"), std::string::npos) << s;
  EXPECT_NE(s.find("prevent_cse=True"), std::string::npos) << s;
  std::string s2 = to_string(make_jaxpr(checkpoint(f, cp::dots_saveable(), false))(x));
  EXPECT_NE(s2.find("policy=dots_saveable"), std::string::npos) << s2;
  EXPECT_NE(s2.find("prevent_cse=False"), std::string::npos) << s2;
  // Under grad the backward pass holds the transposed (recomputing) checkpoint.
  std::string s3 =
      to_string(make_jaxpr(grad([&](const Array& v) { return tnp::sum(checkpoint(f)(v)); }))(x));
  EXPECT_NE(s3.find("differentiated=True"), std::string::npos) << s3;
  std::string s4 = to_string(make_jaxpr([](const Array& v) { return checkpoint_name(v, "a"); })(x));
  EXPECT_NE(s4.find("name[name=a]"), std::string::npos) << s4;
}

TEST(Checkpoint, NestedAndPytreeOutputs) {
  auto inner = checkpoint([](const Array& v) { return tnp::sin(v); }, cp::everything_saveable());
  auto outer = checkpoint([&](const Array& v, const Array& u) {
    return std::make_tuple(inner(v) * u, tnp::cos(inner(u)));
  });
  Array v = random_array({4}, DType::kFloat32, -2, 2);
  Array u = random_array({4}, DType::kFloat32, -2, 2);
  auto loss = [&](const Array& a, const Array& b) {
    auto [p, q] = outer(a, b);
    return tnp::sum(p) + tnp::sum(q);
  };
  auto [ga, gb] = grad(loss, argnums<0, 1>)(v, u);
  std::vector<double> va = to_doubles(v), ub = to_doubles(u), wa, wb;
  for (size_t i = 0; i < va.size(); ++i) {
    wa.push_back(std::cos(va[i]) * ub[i]);
    wb.push_back(std::sin(va[i]) - std::sin(std::sin(ub[i])) * std::cos(ub[i]));
  }
  EXPECT_CLOSE(ga, wa, 1e-5);
  EXPECT_CLOSE(gb, wb, 1e-5);
}

TEST(Checkpoint, IntegerInputsAndErrors) {
  auto f = [](const Array& x, const Array& n) {
    return tnp::sum(tnp::sin(x) * tnp::astype(n, DType::kFloat32));
  };
  Array x = random_array({3}, DType::kFloat32, -2, 2);
  Array n = tnp::array(std::vector<int32_t>{1, 2, 3}, {3});
  Array g = grad(checkpoint(f))(x, n);
  std::vector<double> want, xv = to_doubles(x);
  for (size_t i = 0; i < 3; ++i) want.push_back(std::cos(xv[i]) * double(i + 1));
  EXPECT_CLOSE(g, want, 1e-5);
  std::vector<Array> bad{Array()};
  EXPECT_ERROR(
      ValueError,
      flat::checkpoint(
          [](std::span<const Array> a) { return std::vector<Array>(a.begin(), a.end()); }, bad),
      "empty Array");
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// checkpoint inside a scan body: gradients through the scan equal float64 finite differences of
// a plain loop, and the scan saves fewer residuals than without checkpoint.
double scan_loss_ref(std::vector<double> c, const std::vector<double>& xs, size_t n) {
  double total = 0;
  for (size_t t = 0; t < xs.size() / n; ++t) {
    for (size_t i = 0; i < n; ++i) {
      c[i] = std::sin(std::sin(c[i]) * xs[t * n + i]);
      total += c[i];
    }
  }
  for (double v : c) total += v;
  return total;
}

TEST(Checkpoint, InsideScanBody) {
  Array c0 = random_array({3}, DType::kFloat32, -1, 1);
  Array xs = random_array({5, 3}, DType::kFloat32, -2, 2);
  auto step = [](const Array& c, const Array& x) { return tnp::sin(tnp::sin(c) * x); };
  auto make_loss = [&](std::optional<CheckpointPolicy> policy) {
    return [=](const Array& c, const Array& x) {
      flat::Fun body = [&](std::span<const Array> a) {
        Array y = policy ? checkpoint(step, *policy)(a[0], a[1]) : step(a[0], a[1]);
        return std::vector<Array>{y, y};
      };
      std::vector<Array> init{c}, seq{x};
      flat::ScanResult r = flat::scan(body, init, seq);
      return tnp::sum(r.carry[0]) + tnp::sum(r.ys[0]);
    };
  };
  std::vector<double> cv = to_doubles(c0), xv = to_doubles(xs), fc, fx;
  const double h = 1e-6;
  for (size_t i = 0; i < cv.size(); ++i) {
    auto p = cv, m = cv;
    p[i] += h;
    m[i] -= h;
    fc.push_back((scan_loss_ref(p, xv, 3) - scan_loss_ref(m, xv, 3)) / (2 * h));
  }
  for (size_t i = 0; i < xv.size(); ++i) {
    auto p = xv, m = xv;
    p[i] += h;
    m[i] -= h;
    fx.push_back((scan_loss_ref(cv, p, 3) - scan_loss_ref(cv, m, 3)) / (2 * h));
  }
  for (auto& [label, policy] : all_policies()) {
    SCOPED_TRACE(label);
    auto [gc, gx] = grad(make_loss(policy), argnums<0, 1>)(c0, xs);
    EXPECT_CLOSE(gc, fc, 2e-4);
    EXPECT_CLOSE(gx, fx, 2e-4);
  }
  auto plain = saved_residuals(make_loss(std::nullopt), c0, xs);
  auto remat_default = saved_residuals(make_loss(CheckpointPolicy()), c0, xs);
  auto remat_all = saved_residuals(make_loss(cp::everything_saveable()), c0, xs);
  EXPECT_LT(remat_default.size(), plain.size());
  EXPECT_EQ(remat_all.size(), plain.size());
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// The staged jaxprs verify, and DCE prunes an unused output of a checkpoint out of its body.
TEST(Checkpoint, VerifyAndDce) {
  auto f = [](const Array& x) {
    return std::make_tuple(tnp::sin(tnp::sin(x)), tnp::exp(tnp::cos(x)));
  };
  Array x = random_array({4}, DType::kFloat32);
  ClosedJaxpr j = make_jaxpr([&](const Array& v) { return std::get<0>(checkpoint(f)(v)); })(x);
  verify(*j.jaxpr);
  verify(*make_jaxpr(grad([&](const Array& v) {
            auto [a, b] = checkpoint(f, cp::dots_saveable())(v);
            return tnp::sum(a * b);
          }))(x)
              .jaxpr);
  auto [pruned, used] = ir::dce(*j.jaxpr, {true});
  ASSERT_EQ(pruned->eqns.size(), 1u);
  const Jaxpr& body = *pruned->eqns[0].params.get<std::shared_ptr<const Jaxpr>>("jaxpr");
  EXPECT_EQ(body.outvars.size(), 1u);
  std::string s = to_string(body);
  EXPECT_EQ(s.find("exp"), std::string::npos) << s;
  EXPECT_EQ(s.find("cos"), std::string::npos) << s;
  EXPECT_EQ(pruned->eqns[0].outvars.size(), 1u);
  verify(*pruned);
  // The pruned jaxpr still computes the output.
  std::vector<Array> args{x};
  std::vector<double> want;
  for (double v : to_doubles(x)) want.push_back(std::sin(std::sin(v)));
  EXPECT_CLOSE(eval_jaxpr(*pruned, j.consts, args)[0], want, 1e-6);
}

}  // namespace
}  // namespace tessera
