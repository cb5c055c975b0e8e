// Composed transformations (grad of grad, jacfwd of jacrev, vmap of grad, grad of vmap, jvp of
// vjp, nested vmap, value_and_grad over registered structs, an MLP's batch and per-example
// gradients) against PyTorch autograd/functorch (tests/oracle/torch_oracle.py, one python
// process for all cases), plus closed forms. Every case runs in float32 (compared with torch
// in float32) and in float64 with x64 on (compared with torch in float64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"
#include "util/torch_oracle.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::all_close;
using testing::random_array;
using testing::to_doubles;
using testing::TorchOracle;
using testing::X64Scope;

// ---------------------------------------------------------------- the functions under test
// Each is restated in torch in torch_oracle.py under the same name.

// sin(x) * exp(x) / (1 + x^2)
Array f_scalar(const Array& x) { return tnp::sin(x) * tnp::exp(x) / (1 + x * x); }

// R^n -> R: sum(tanh(W x))^2 + sum(sin(x) * x)
Array f_tanh_sq(const Array& W, const Array& x) {
  Array s = tnp::sum(tnp::tanh(tnp::matmul(W, x)));
  return s * s + tnp::sum(tnp::sin(x) * x);
}

// R^n -> R^m: tanh(W x) * sum(x * x) + exp(W x * 0.5)
Array g_vec(const Array& W, const Array& x) {
  Array z = tnp::matmul(W, x);
  return tnp::tanh(z) * tnp::sum(x * x) + tnp::exp(z * 0.5);
}

// Per-example loss: sum(tanh(w x)^2) + log(1 + sum(x * x))
Array loss_example(const Array& x, const Array& w) {
  Array t = tnp::tanh(tnp::matmul(w, x));
  return tnp::sum(t * t) + tnp::log(1 + tnp::sum(x * x));
}

// R^n -> R: log(sum(exp(r))) * tanh(sum(r * r))
Array row_fn(const Array& r) {
  return tnp::log(tnp::sum(tnp::exp(r))) * tnp::tanh(tnp::sum(r * r));
}

// (k,), (k,) -> (k,): exp(u) * v - sum(u * v)
Array uv_fn(const Array& u, const Array& v) { return tnp::exp(u) * v - tnp::sum(u * v); }

// (n,), (m, n) -> (outer(tanh(w x), x), w * sum(x))
std::pair<Array, Array> pair_fn(const Array& x, const Array& w) {
  return {tnp::reshape(tnp::tanh(tnp::matmul(w, x)), {-1, 1}) * x, w * tnp::sum(x)};
}

// log(sum(exp(A x))) + sum(tanh(x)^2)
Array f_hvp(const Array& A, const Array& x) {
  Array t = tnp::tanh(x);
  return tnp::log(tnp::sum(tnp::exp(tnp::matmul(A, x)))) + tnp::sum(t * t);
}

struct Linear {
  Array w, b;
};
TESSERA_REGISTER_PYTREE(Linear, w, b);

// {mean((tanh(w x + b) - y)^2), {pred, max(err)}}
std::pair<Array, std::pair<Array, Array>> struct_loss(const Linear& p, const Array& x,
                                                      const Array& y) {
  Array pred = tnp::tanh(tnp::matmul(p.w, x) + p.b);
  Array err = pred - y;
  return {tnp::mean(err * err), {pred, tnp::max(err)}};
}

struct Mlp {
  Array w1, b1, w2, b2, w3, b3;
};
TESSERA_REGISTER_PYTREE(Mlp, w1, b1, w2, b2, w3, b3);

// x: (..., 32) -> logits (..., 10); tanh, then relu, then linear.
Array mlp_logits(const Mlp& p, const Array& x) {
  Array h1 = tnp::tanh(tnp::matmul(x, p.w1) + p.b1);
  Array h2 = tnp::maximum(tnp::matmul(h1, p.w2) + p.b2, 0.0);
  return tnp::matmul(h2, p.w3) + p.b3;
}
// Over the last axis, with the max subtracted for stability.
Array log_softmax(const Array& z) {
  Array s = z - tnp::max(z, -1, true);
  return s - tnp::log(tnp::sum(tnp::exp(s), -1, true));
}
// Softmax cross-entropy with one-hot labels: mean over the batch (x: (B, 32), y: (B, 10)),
// or one example's loss (x: (32,), y: (10,)).
Array mlp_loss(const Mlp& p, const Array& x, const Array& y) {
  return -tnp::mean(tnp::sum(y * log_softmax(mlp_logits(p, x)), -1));
}

// ---------------------------------------------------------------- precisions and inputs

struct Prec {
  const char* tag;
  DType dtype;
  double rtol, atol;  // atol is scaled by max(1, max |reference|)
};
const Prec kPrecs[] = {{"f32", DType::kFloat32, 1e-4, 1e-5},
                       {"f64", DType::kFloat64, 1e-10, 1e-12}};

std::string key(const char* name, const Prec& p) { return std::string(name) + "/" + p.tag; }

Array uniform(const Shape& s, DType d, double lo = -1.0, double hi = 1.0) {
  return random_array(s, d, lo, hi);
}

Array one_hot_rows(int64_t batch, int64_t classes, DType d) {
  std::uniform_int_distribution<int64_t> pick(0, classes - 1);
  std::vector<double> v(static_cast<size_t>(batch * classes), 0.0);
  for (int64_t i = 0; i < batch; ++i) v[i * classes + pick(testing::rng())] = 1.0;
  return testing::host_array(v, {batch, classes}, d);
}

constexpr int64_t kBatch = 16, kIn = 32, kHidden = 64, kClasses = 10;

void register_cases(TorchOracle& t) {
  for (const Prec& p : kPrecs) {
    X64Scope x64(p.dtype == DType::kFloat64);
    const DType d = p.dtype;
    t.add(key("scalar_dd", p), "scalar_dd", {uniform({8}, d, -2.0, 2.0)});
    t.add(key("hessian", p), "hessian",
          {uniform({5, 4}, d), uniform({4}, d), uniform({3, 4}, d), uniform({3, 4}, d)});
    t.add(key("jac_vec", p), "jac_vec", {uniform({5, 4}, d), uniform({4}, d)});
    t.add(key("per_example", p), "per_example", {uniform({6, 4}, d), uniform({3, 4}, d)});
    t.add(key("grad_of_vmap", p), "grad_of_vmap", {uniform({5, 4}, d)});
    t.add(key("vmap_vmap", p), "vmap_vmap", {uniform({3, 4, 5}, d), uniform({4, 5, 3}, d)});
    t.add(key("vmap_out_axes", p), "vmap_out_axes", {uniform({6, 4}, d), uniform({3, 4}, d)});
    t.add(key("nested_dot", p), "nested_dot",
          {uniform({4, 3}, d), uniform({5, 3}, d), uniform({2, 3, 4}, d), uniform({2, 3, 4}, d)});
    t.add(key("hvp", p), "hvp", {uniform({4, 5}, d), uniform({5}, d), uniform({5}, d)});
    t.add(key("struct_aux", p), "struct_aux",
          {uniform({3, 4}, d), uniform({3}, d), uniform({4}, d), uniform({3}, d)});
    const double s1 = 1 / std::sqrt(double(kIn)), s2 = 1 / std::sqrt(double(kHidden));
    std::vector<Array> mlp = {uniform({kIn, kHidden}, d, -s1, s1),
                              uniform({kHidden}, d, -0.1, 0.1),
                              uniform({kHidden, kHidden}, d, -s2, s2),
                              uniform({kHidden}, d, -0.1, 0.1),
                              uniform({kHidden, kClasses}, d, -s2, s2),
                              uniform({kClasses}, d, -0.1, 0.1),
                              uniform({kBatch, kIn}, d),
                              one_hot_rows(kBatch, kClasses, d)};
    t.add(key("mlp", p), "mlp", mlp);
    t.add(key("mlp_per_example", p), "mlp_per_example", mlp);
  }
}

TorchOracle& oracle() {
  static TorchOracle o("composition", register_cases);
  return o;
}

// The case's inputs and torch's outputs; x64 must be set by the caller for f64 cases.
// at(): a missing output is reported as an exception in the test, not a crash.
struct Case {
  const std::vector<Array>& ins;
  const std::vector<Array>& refs;
  const Array& in(size_t k) const { return ins.at(k); }
  const Array& ref(size_t k) const { return refs.at(k); }
};
Case get_case(const char* name, const Prec& p) {
  return {oracle().inputs(key(name, p)), oracle().refs(key(name, p))};
}

::testing::AssertionResult near_ref(const std::string& what, const Array& got, const Array& want,
                                    const Prec& p) {
  double scale = 1.0;
  for (double v : to_doubles(want)) scale = std::max(scale, std::fabs(v));
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << what << ": dtype " << dtype_name(got.dtype())
                                         << ", reference " << dtype_name(want.dtype());
  return all_close(std::string(p.tag) + " " + what, got, want, p.rtol, p.atol * scale);
}

double scalar_of(const Array& a) { return a.item<double>(); }

// ------------------------------------------------------------- checks (run by the TESTs below)

void grad_of_grad_scalar(const Prec& p) {
  Case c = get_case("scalar_dd", p);
  auto xs = to_doubles(c.in(0));
  auto want_d1 = to_doubles(c.ref(1)), want_d2 = to_doubles(c.ref(2));
  auto d1 = grad(f_scalar);
  auto d2 = grad(grad(f_scalar));
  const double tol = p.dtype == DType::kFloat32 ? 1e-4 : 1e-11;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    Array xa = tnp::scalar(x, p.dtype);
    const double g1 = scalar_of(d1(xa)), g2 = scalar_of(d2(xa));
    // Closed form: f = u / v with u = sin(x) e^x, v = 1 + x^2.
    const double u = std::sin(x) * std::exp(x), u1 = std::exp(x) * (std::sin(x) + std::cos(x));
    const double u2 = 2 * std::exp(x) * std::cos(x), v = 1 + x * x, v1 = 2 * x, v2 = 2;
    const double cf1 = (u1 * v - u * v1) / (v * v);
    const double cf2 =
        u2 / v - 2 * u1 * v1 / (v * v) - u * v2 / (v * v) + 2 * u * v1 * v1 / (v * v * v);
    EXPECT_NEAR(g1, want_d1[i], tol * std::max(1.0, std::fabs(want_d1[i]))) << p.tag << " x=" << x;
    EXPECT_NEAR(g2, want_d2[i], tol * std::max(1.0, std::fabs(want_d2[i]))) << p.tag << " x=" << x;
    EXPECT_NEAR(g1, cf1, tol * std::max(1.0, std::fabs(cf1))) << p.tag << " x=" << x;
    EXPECT_NEAR(g2, cf2, tol * std::max(1.0, std::fabs(cf2))) << p.tag << " x=" << x;
  }
  // The same second derivatives for all points at once: vmap(grad(grad(f))).
  EXPECT_TRUE(near_ref("vmap(grad(grad(f)))", vmap(grad(grad(f_scalar)))(c.in(0)), c.ref(2), p));
  EXPECT_TRUE(near_ref("vmap(f)", vmap(f_scalar)(c.in(0)), c.ref(0), p));
}

void hessian_of_scalar_function(const Prec& p) {
  Case c = get_case("hessian", p);
  const Array W = c.in(0), x = c.in(1);
  auto f = [W](const Array& v) { return f_tanh_sq(W, v); };
  const Array& H = c.ref(0);
  EXPECT_TRUE(near_ref("hessian(f)", hessian(f)(x), H, p));
  EXPECT_TRUE(near_ref("jacfwd(jacrev(f))", jacfwd(jacrev(f))(x), c.ref(1), p));
  EXPECT_TRUE(near_ref("jacrev(jacfwd(f))", jacrev(jacfwd(f))(x), H, p));
  EXPECT_TRUE(near_ref("jacrev(jacrev(f))", jacrev(jacrev(f))(x), H, p));
  EXPECT_TRUE(near_ref("jacfwd(jacfwd(f))", jacfwd(jacfwd(f))(x), H, p));
  EXPECT_TRUE(near_ref("jacfwd(grad(f))", jacfwd(grad(f))(x), H, p));
  EXPECT_TRUE(near_ref("grad(f)", grad(f)(x), c.ref(2), p));
  EXPECT_TRUE(near_ref("jacrev(f)", jacrev(f)(x), c.ref(2), p));
  // Batched: one Hessian, and one Hessian-vector product, per row.
  EXPECT_TRUE(near_ref("vmap(hessian(f))", vmap(hessian(f))(c.in(2)), c.ref(3), p));
  auto hvp = [f](const Array& z, const Array& t) { return jvp(grad(f), z, t).second; };
  EXPECT_TRUE(near_ref("vmap(jvp(grad(f)))", vmap(hvp)(c.in(2), c.in(3)), c.ref(4), p));
}

void jacobians_of_vector_function(const Prec& p) {
  Case c = get_case("jac_vec", p);
  const Array W = c.in(0), x = c.in(1);
  auto g = [W](const Array& v) { return g_vec(W, v); };
  EXPECT_TRUE(near_ref("jacfwd(g)", jacfwd(g)(x), c.ref(0), p));
  EXPECT_TRUE(near_ref("jacrev(g)", jacrev(g)(x), c.ref(1), p));
  EXPECT_TRUE(near_ref("jacfwd(jacrev(g))", jacfwd(jacrev(g))(x), c.ref(2), p));
  EXPECT_TRUE(near_ref("jacrev(jacfwd(g))", jacrev(jacfwd(g))(x), c.ref(2), p));
  EXPECT_TRUE(near_ref("hessian(g)", hessian(g)(x), c.ref(2), p));
}

void vmap_of_grad_per_example(const Prec& p) {
  Case c = get_case("per_example", p);
  const Array X = c.in(0), W = c.in(1);
  EXPECT_TRUE(near_ref("vmap(grad(loss), {0, None})",
                       vmap(grad(loss_example), {0, std::nullopt})(X, W), c.ref(0), p));
  EXPECT_TRUE(near_ref("vmap(grad(loss, argnums<1>), {0, None})",
                       vmap(grad(loss_example, argnums<1>), {0, std::nullopt})(X, W), c.ref(1), p));
  // Both at once: argnums<0, 1> gives a tuple, batched leaf by leaf.
  auto both = vmap(grad(loss_example, argnums<0, 1>), {0, std::nullopt})(X, W);
  EXPECT_TRUE(near_ref("vmap(grad(loss, argnums<0,1>)) x", std::get<0>(both), c.ref(0), p));
  EXPECT_TRUE(near_ref("vmap(grad(loss, argnums<0,1>)) w", std::get<1>(both), c.ref(1), p));
  // grad by the unbatched argument of a summed vmap: the batch axis is summed in transpose.
  auto total = [X](const Array& w) {
    return tnp::sum(vmap(loss_example, {0, std::nullopt})(X, w));
  };
  EXPECT_TRUE(near_ref("grad(sum(vmap(loss, {0, None}))) w", grad(total)(W), c.ref(2), p));
}

void grad_of_vmap(const Prec& p) {
  Case c = get_case("grad_of_vmap", p);
  auto total = [](const Array& X) { return tnp::sum(vmap(row_fn)(X)); };
  EXPECT_TRUE(near_ref("grad(sum(vmap(f)))", grad(total)(c.in(0)), c.ref(0), p));
  EXPECT_TRUE(near_ref("vmap(f)", vmap(row_fn)(c.in(0)), c.ref(1), p));
  // The same gradient rows as vmap(grad(f)): each row's loss depends on that row only.
  EXPECT_TRUE(near_ref("vmap(grad(f))", vmap(grad(row_fn))(c.in(0)), c.ref(0), p));
  // The block-diagonal jacobian of the batched function.
  EXPECT_TRUE(near_ref("jacrev(vmap(f))", jacrev(vmap(row_fn))(c.in(0)), c.ref(2), p));
  EXPECT_TRUE(near_ref("jacfwd(vmap(f))", jacfwd(vmap(row_fn))(c.in(0)), c.ref(2), p));
}

void vmap_of_vmap_with_axes(const Prec& p) {
  Case c = get_case("vmap_vmap", p);
  // inner maps U's axis 0 and V's axis 1, result axis 1; outer maps axes 1 and 0.
  auto inner = vmap(uv_fn, {0, 1}, 1);
  auto outer = vmap(inner, {1, 0}, 0);
  EXPECT_TRUE(near_ref("vmap(vmap(f, {0,1}, 1), {1,0}, 0)", outer(c.in(0), c.in(1)), c.ref(0), p));
}

void vmap_out_axes(const Prec& p) {
  Case c = get_case("vmap_out_axes", p);
  auto [a, b] = vmap(pair_fn, {0, std::nullopt}, {1, -1})(c.in(0), c.in(1));
  EXPECT_TRUE(near_ref("vmap out_axes 1", a, c.ref(0), p));
  EXPECT_TRUE(near_ref("vmap out_axes -1", b, c.ref(1), p));
}

void nested_vmap_of_dot(const Prec& p) {
  Case c = get_case("nested_dot", p);
  auto dot = [](const Array& u, const Array& v) { return lax::dot(u, v); };
  auto pairwise = vmap(vmap(dot, {std::nullopt, 0}), {0, std::nullopt});
  EXPECT_TRUE(near_ref("pairwise vmap(vmap(dot))", pairwise(c.in(0), c.in(1)), c.ref(0), p));
  auto tdot = [](const Array& u, const Array& v) { return tnp::dot(u, v); };
  EXPECT_TRUE(near_ref("batched vmap(vmap(dot))", vmap(vmap(tdot))(c.in(2), c.in(3)), c.ref(1), p));
}

void hessian_vector_products(const Prec& p) {
  Case c = get_case("hvp", p);
  const Array A = c.in(0), x = c.in(1), v = c.in(2);
  auto f = [A](const Array& z) { return f_hvp(A, z); };
  const Array& hv = c.ref(0);
  // forward-over-reverse: jvp(grad(f))
  auto [g, t] = jvp(grad(f), x, v);
  EXPECT_TRUE(near_ref("jvp(grad(f)) primal", g, c.ref(1), p));
  EXPECT_TRUE(near_ref("jvp(grad(f)) tangent", t, hv, p));
  // jvp of a gradient built from vjp
  auto grad_by_vjp = [f](const Array& z) {
    auto [y, pull] = vjp(f, z);
    return std::get<0>(pull(tnp::ones_like(y)));
  };
  EXPECT_TRUE(near_ref("jvp(vjp(f))", jvp(grad_by_vjp, x, v).second, hv, p));
  // reverse-over-forward and reverse-over-reverse
  auto dir_deriv = [f, v](const Array& z) { return jvp(f, z, v).second; };
  EXPECT_TRUE(near_ref("grad(jvp(f))", grad(dir_deriv)(x), hv, p));
  auto gv = [f, v](const Array& z) { return tnp::sum(grad(f)(z) * v); };
  EXPECT_TRUE(near_ref("grad(<grad(f), v>)", grad(gv)(x), hv, p));
  // linearize of grad, applied to v
  EXPECT_TRUE(near_ref("linearize(grad(f))(v)", linearize(grad(f), x).second(v), hv, p));
}

void value_and_grad_struct_has_aux_argnums(const Prec& p) {
  Case c = get_case("struct_aux", p);
  const Linear params{c.in(0), c.in(1)};
  const Array x = c.in(2), y = c.in(3);
  auto r = value_and_grad(struct_loss, argnums<0, 1>, has_aux)(params, x, y);
  const auto& [value, aux] = r.first;
  const auto& [g_params, g_x] = r.second;
  EXPECT_TRUE(near_ref("value", value, c.ref(0), p));
  EXPECT_TRUE(near_ref("aux pred", aux.first, c.ref(1), p));
  EXPECT_TRUE(near_ref("aux max(err)", aux.second, c.ref(2), p));
  EXPECT_TRUE(near_ref("grad w", g_params.w, c.ref(3), p));
  EXPECT_TRUE(near_ref("grad b", g_params.b, c.ref(4), p));
  EXPECT_TRUE(near_ref("grad x", g_x, c.ref(5), p));
  // grad with the same options gives {grads, aux}.
  auto [g2, aux2] = grad(struct_loss, has_aux, argnums<0, 1>)(params, x, y);
  EXPECT_TRUE(near_ref("grad(has_aux) w", std::get<0>(g2).w, c.ref(3), p));
  EXPECT_TRUE(near_ref("grad(has_aux) x", std::get<1>(g2), c.ref(5), p));
  EXPECT_TRUE(near_ref("grad(has_aux) aux", aux2.first, c.ref(1), p));
}

std::vector<Array> mlp_leaves(const Mlp& m) { return {m.w1, m.b1, m.w2, m.b2, m.w3, m.b3}; }
const char* const kMlpNames[] = {"w1", "b1", "w2", "b2", "w3", "b3"};

void mlp_cross_entropy_gradients(const Prec& p) {
  Case c = get_case("mlp", p);
  const Mlp params{c.in(0), c.in(1), c.in(2), c.in(3), c.in(4), c.in(5)};
  auto [loss, grads] = value_and_grad(mlp_loss)(params, c.in(6), c.in(7));
  EXPECT_TRUE(near_ref("mlp loss", loss, c.ref(0), p));
  auto gs = mlp_leaves(grads);
  for (size_t k = 0; k < gs.size(); ++k)
    EXPECT_TRUE(near_ref(std::string("mlp grad ") + kMlpNames[k], gs[k], c.ref(k + 1), p));
}

void mlp_per_example_gradients(const Prec& p) {
  Case c = get_case("mlp_per_example", p);
  const Mlp params{c.in(0), c.in(1), c.in(2), c.in(3), c.in(4), c.in(5)};
  Mlp per = vmap(grad(mlp_loss), {std::nullopt, 0, 0})(params, c.in(6), c.in(7));
  auto gs = mlp_leaves(per);
  for (size_t k = 0; k < gs.size(); ++k)
    EXPECT_TRUE(near_ref(std::string("per-example grad ") + kMlpNames[k], gs[k], c.ref(k), p));
}

// ---------------------------------------------------------------- the oracle tests
// Few TESTs, each running several checks: under ctest every TEST is its own process, and
// every process pays one python start with `import torch` (seconds). Each check's messages
// name it and the precision.

using Check = void (*)(const Prec&);
void run_checks(std::initializer_list<std::pair<const char*, Check>> checks) {
  for (const Prec& p : kPrecs) {
    X64Scope x64(p.dtype == DType::kFloat64);
    for (const auto& [name, check] : checks) {
      SCOPED_TRACE(std::string(name) + " " + p.tag);
      try {
        check(p);
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " (" << p.tag << ") threw: " << e.what();
      }
    }
  }
}

TEST(Composition, HigherOrderDerivatives) {
  TESSERA_REQUIRE_TORCH();
  run_checks({{"grad(grad(f)) of a scalar function", grad_of_grad_scalar},
              {"hessian of R^n -> R", hessian_of_scalar_function},
              {"jacobians of R^n -> R^m", jacobians_of_vector_function},
              {"Hessian-vector products", hessian_vector_products}});
}

TEST(Composition, VmapWithGrad) {
  TESSERA_REQUIRE_TORCH();
  run_checks({{"vmap(grad) per-example", vmap_of_grad_per_example},
              {"grad(vmap)", grad_of_vmap},
              {"vmap(vmap) with axes", vmap_of_vmap_with_axes},
              {"vmap out_axes", vmap_out_axes},
              {"nested vmap of dot", nested_vmap_of_dot}});
}

TEST(Composition, StructsAndMlp) {
  TESSERA_REQUIRE_TORCH();
  run_checks(
      {{"value_and_grad(has_aux, argnums<0,1>) on a struct", value_and_grad_struct_has_aux_argnums},
       {"MLP cross-entropy gradients", mlp_cross_entropy_gradients},
       {"MLP per-example gradients", mlp_per_example_gradients}});
}

// ---------------------------------------------------------------- closed forms

TEST(Composition, PerturbationConfusion) {
  for (const Prec& p : kPrecs) {
    X64Scope x64(p.dtype == DType::kFloat64);
    const double xv = std::uniform_real_distribution<double>(0.5, 2.0)(testing::rng());
    const double yv = std::uniform_real_distribution<double>(-2.0, 2.0)(testing::rng());
    const Array x = tnp::scalar(xv, p.dtype), y0 = tnp::scalar(yv, p.dtype);
    const Array one = tnp::scalar(1.0, p.dtype);
    SCOPED_TRACE(std::string(p.tag) + " x=" + std::to_string(xv) + " y=" + std::to_string(yv));
    const double tol = p.dtype == DType::kFloat32 ? 1e-5 : 1e-13;
    // d/dx [x * d/dy (x + y)] = 1
    auto f1 = [&](const Array& a) { return a * grad([&](const Array& b) { return a + b; })(y0); };
    EXPECT_NEAR(scalar_of(grad(f1)(x)), 1.0, tol);
    // the same with jvp at both levels
    auto f2 = [&](const Array& a) {
      return a * jvp([&](const Array& b) { return a + b; }, y0, one).second;
    };
    EXPECT_NEAR(scalar_of(jvp(f2, x, one).second), 1.0, tol);
    // d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x, nested jvp inside grad and jvp inside jvp
    auto f3 = [&](const Array& a) {
      return a * jvp([&](const Array& b) { return a * b; }, y0, one).second;
    };
    EXPECT_NEAR(scalar_of(grad(f3)(x)), 2 * xv, tol * 2 * xv);
    EXPECT_NEAR(scalar_of(jvp(f3, x, one).second), 2 * xv, tol * 2 * xv);
    // d/dx [x * d/dy (x * y^2)] = d/dx 2 x^2 y = 4 x y
    auto f4 = [&](const Array& a) {
      return a * grad([&](const Array& b) { return a * b * b; })(y0);
    };
    EXPECT_NEAR(scalar_of(jvp(f4, x, one).second), 4 * xv * yv, tol * std::max(1.0, 4 * xv));
    EXPECT_NEAR(scalar_of(grad(f4)(x)), 4 * xv * yv, tol * std::max(1.0, 4 * xv));
  }
}

// Inner transformations closing over an outer transformation's tracers, and outer
// transformations of the functions that linearize/vjp return; closed forms.
TEST(Composition, ClosuresOverOuterTracers) {
  for (const Prec& p : kPrecs) {
    X64Scope x64(p.dtype == DType::kFloat64);
    SCOPED_TRACE(p.tag);
    const double tol = p.dtype == DType::kFloat32 ? 1e-5 : 1e-13;
    const Array xs = uniform({5}, p.dtype, -2.0, 2.0), X = uniform({3, 4}, p.dtype);
    const Array y0 = uniform({}, p.dtype), s = uniform({}, p.dtype), V = uniform({4, 5}, p.dtype);
    const auto xv = to_doubles(xs), Xv = to_doubles(X), Vv = to_doubles(V);
    const double yv = scalar_of(y0), sv = scalar_of(s);
    // vmap(x -> d/dy (x y^2) at y0) = 2 x y0: grad closes over vmap's batched tracer.
    auto inner_grad = [&](const Array& x) {
      return grad([&](const Array& y) { return x * y * y; })(y0);
    };
    auto g1 = to_doubles(vmap(inner_grad)(xs));
    for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(g1[i], 2 * xv[i] * yv, tol * 8);
    // d/ds sum(vmap(r -> sin(r s))(X)) = sum(X cos(X s)): vmap closes over grad's tracer.
    auto outer = [&](const Array& t) {
      return tnp::sum(vmap([&](const Array& r) { return tnp::sin(r * t); })(X));
    };
    double want = 0;
    for (double v : Xv) want += v * std::cos(v * sv);
    EXPECT_NEAR(scalar_of(grad(outer)(s)), want, tol * 12);
    // vmap over the linear maps of linearize and vjp: rows of V pushed forward / pulled back
    // through f(r) = sin(r) r, whose derivative is diagonal with cos(r) r + sin(r).
    auto f = [](const Array& r) { return tnp::sin(r) * r; };
    auto f_jvp = linearize(f, xs).second;
    auto f_vjp = vjp(f, xs).second;
    auto fwd = to_doubles(vmap(f_jvp)(V));
    auto rev = to_doubles(vmap([&](const Array& ct) { return std::get<0>(f_vjp(ct)); })(V));
    for (size_t k = 0; k < Vv.size(); ++k) {
      const double x = xv[k % 5], d = std::cos(x) * x + std::sin(x);
      EXPECT_NEAR(fwd[k], d * Vv[k], tol * 4) << "linearize, element " << k;
      EXPECT_NEAR(rev[k], d * Vv[k], tol * 4) << "vjp, element " << k;
    }
  }
}

}  // namespace
}  // namespace tessera
