// The jaxpr transformations of src/trace/jaxpr_transforms.h, checked directly: each
// transformed jaxpr, evaluated on fresh random inputs, must agree with the transformation applied
// to the original function (jvp, vmap, linearize, vjp through the public API), and linearize's
// residual bookkeeping must say which residuals are forwarded inputs.
#include <gtest/gtest.h>

#include "tessera/tessera.h"
#include "trace/jaxpr_transforms.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
namespace cf = tessera::trace;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

#define EXPECT_CLOSE(got, want, tol) \
  EXPECT_EQ(compare(to_doubles(got), to_doubles(want), tol, tol), "")

// f(c, x, n) = (sin(c * x) + x * x, n + 1, c): float const c, float x, int n.
std::vector<Array> body(std::span<const Array> a) {
  Array y = lax::add(lax::sin(lax::mul(a[0], a[1])), lax::mul(a[1], a[1]));
  return {y, lax::add(a[2], tnp::asarray(1, DType::kInt32)), a[0]};
}

std::vector<Aval> body_avals() {
  return {Aval{{4}, DType::kFloat32}, Aval{{4}, DType::kFloat32}, Aval{{}, DType::kInt32}};
}

std::vector<Array> args() {
  return {random_array({4}, DType::kFloat32), random_array({4}, DType::kFloat32),
          tnp::asarray(3, DType::kInt32)};
}

TEST(JaxprTransforms, StageHoistsClosedOverArrays) {
  Array k = random_array({4}, DType::kFloat32);
  flat::Fun f = [&](std::span<const Array> a) { return std::vector<Array>{lax::mul(a[0], k)}; };
  std::vector<Aval> avals = {Aval{{4}, DType::kFloat32}};
  cf::Staged s = cf::stage(f, avals);
  ASSERT_EQ(s.consts.size(), 1u);
  EXPECT_TRUE(s.jaxpr->constvars.empty());
  EXPECT_EQ(s.jaxpr->invars.size(), 2u);
  Array x = random_array({4}, DType::kFloat32);
  std::vector<Array> in = {s.consts[0], x};
  EXPECT_CLOSE(cf::as_fun(s.jaxpr)(in)[0], lax::mul(x, k), 0);
}

TEST(JaxprTransforms, JvpJaxprMatchesJvp) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  std::vector<Array> a = args();
  Array tx = random_array({4}, DType::kFloat32);
  // Only x has a tangent; outputs: y nonzero, n + 1 integer (none), c zero unless instantiated.
  cf::JvpJaxpr jj = cf::jvp_jaxpr(*j, {false, true, false}, {false, false, true});
  EXPECT_EQ(jj.out_nonzero, (std::vector<bool>{true, false, true}));
  std::vector<Array> in = {a[0], a[1], a[2], tx};
  std::vector<Array> out = cf::as_fun(jj.jaxpr)(in);
  ASSERT_EQ(out.size(), 5u);
  auto [po, to] = flat::jvp(body, a, std::vector<Array>{Array(), tx, Array()});
  EXPECT_CLOSE(out[0], po[0], 0);
  EXPECT_CLOSE(out[3], to[0], 1e-6);
  EXPECT_CLOSE(out[4], tnp::zeros({4}), 0);
}

TEST(JaxprTransforms, BatchJaxprMatchesLoop) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  const int64_t B = 3;
  Array xs = random_array({B, 4}, DType::kFloat32);
  Array c = random_array({4}, DType::kFloat32);
  Array n = tnp::asarray(5, DType::kInt32);
  cf::BatchedJaxpr bj = cf::batch_jaxpr(*j, {false, true, false}, B, {false, true, false});
  EXPECT_EQ(bj.out_batched, (std::vector<bool>{true, true, false}));
  std::vector<Array> in = {c, xs, n};
  std::vector<Array> out = cf::as_fun(bj.jaxpr)(in);
  ASSERT_EQ(out[1].shape(), (Shape{B}));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<Array> one = body(std::vector<Array>{c, xs[b], n});
    EXPECT_CLOSE(out[0][b], one[0], 1e-6);
    EXPECT_EQ(to_doubles(out[1][b])[0], 6.0);
  }
}

TEST(JaxprTransforms, LinearizeJaxprSplitsKnownAndLinear) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  std::vector<Array> a = args();
  cf::LinearizedJaxpr lj = cf::linearize_jaxpr(*j, {true, true, false}, {false, false, false});
  EXPECT_EQ(lj.out_nonzero, (std::vector<bool>{true, false, true}));
  // Known part: primal outputs then residuals.
  std::vector<Array> kin = lj.known_consts;
  kin.insert(kin.end(), a.begin(), a.end());
  std::vector<Array> known = cf::as_fun(lj.known)(kin);
  ASSERT_EQ(known.size(), 3 + lj.res_avals.size());
  std::vector<Array> ref = body(a);
  EXPECT_CLOSE(known[0], ref[0], 0);
  // x (input 1) is needed by the tangent of x*x and c*x: some residual is a forwarded input.
  bool forwards_input = false;
  for (int64_t r : lj.res_input) forwards_input |= r >= 0;
  EXPECT_TRUE(forwards_input);
  // Linear part on the residuals vs jvp.
  Array tc = random_array({4}, DType::kFloat32), tx = random_array({4}, DType::kFloat32);
  std::vector<Array> lin_in = lj.lin_consts;
  lin_in.insert(lin_in.end(), known.begin() + 3, known.end());
  lin_in.push_back(tc);
  lin_in.push_back(tx);
  std::vector<Array> t = cf::as_fun(lj.lin)(lin_in);
  auto [po, to] = flat::jvp(body, a, std::vector<Array>{tc, tx, Array()});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_CLOSE(t[0], to[0], 1e-5);
  EXPECT_CLOSE(t[1], tc, 0);
}

TEST(JaxprTransforms, TransposeJaxprIsTheAdjoint) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  std::vector<Array> a = args();
  cf::LinearizedJaxpr lj = cf::linearize_jaxpr(*j, {true, true, false}, {false, false, false});
  std::vector<Array> kin = lj.known_consts;
  kin.insert(kin.end(), a.begin(), a.end());
  std::vector<Array> known = cf::as_fun(lj.known)(kin);
  std::vector<Array> res(known.begin() + 3, known.end());
  size_t nl = lj.lin_consts.size() + res.size();
  std::vector<bool> linear(nl + 2, false);
  linear[nl] = linear[nl + 1] = true;
  cf::JaxprPtr tj = cf::transpose_jaxpr(*lj.lin, linear).const_free("test");
  Array uy = random_array({4}, DType::kFloat32), uc = random_array({4}, DType::kFloat32);
  std::vector<Array> tin = lj.lin_consts;
  tin.insert(tin.end(), res.begin(), res.end());
  tin.push_back(uy);
  tin.push_back(uc);
  std::vector<Array> cts = cf::as_fun(tj)(tin);
  ASSERT_EQ(cts.size(), 2u);
  // Against vjp of the function in (c, x).
  auto f2 = [&](std::span<const Array> cx) {
    std::vector<Array> o = body(std::vector<Array>{cx[0], cx[1], a[2]});
    return std::vector<Array>{o[0], o[2]};
  };
  flat::Linearized l = flat::linearize(f2, std::vector<Array>{a[0], a[1]});
  std::vector<Array> want = l.vjp(std::vector<Array>{uy, uc});
  EXPECT_CLOSE(cts[0], want[0], 1e-5);
  EXPECT_CLOSE(cts[1], want[1], 1e-5);
}

// ---- partial_eval_jaxpr_nounits ----

// g(c, x) = (sin(c) * x, cos(c), x + 1).
std::vector<Array> pe_body(std::span<const Array> a) {
  return {lax::mul(lax::sin(a[0]), a[1]), lax::cos(a[0]), lax::add(a[1], tnp::asarray(1.0f))};
}

TEST(JaxprTransforms, PartialEvalSplitsKnownAndUnknown) {
  std::vector<Aval> avals = {Aval{{4}, DType::kFloat32}, Aval{{4}, DType::kFloat32}};
  cf::JaxprPtr j = cf::stage(pe_body, avals).const_free("test");
  Array c = random_array({4}, DType::kFloat32), x = random_array({4}, DType::kFloat32);
  std::vector<Array> ref = pe_body(std::vector<Array>{c, x});
  cf::PartialEval pe = cf::partial_eval_jaxpr_nounits(*j, {false, true}, {false, false, false});
  EXPECT_EQ(pe.out_unknown, (std::vector<bool>{true, false, true}));
  ASSERT_EQ(pe.num_res, 1u);  // sin(c)
  EXPECT_EQ(pe.known->invars.size(), 1u);
  std::vector<Array> k = cf::as_fun(pe.known)(std::vector<Array>{c});
  ASSERT_EQ(k.size(), 2u);  // cos(c), then the residual sin(c)
  EXPECT_CLOSE(k[0], ref[1], 0);
  EXPECT_CLOSE(k[1], lax::sin(c), 0);
  std::vector<Array> u = cf::as_fun(pe.unknown)(std::vector<Array>{k[1], x});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_CLOSE(u[0], ref[0], 0);
  EXPECT_CLOSE(u[1], ref[2], 0);
  // Known equations never read unknown values: the known part has no sin(c) * x.
  for (const JaxprEqn& e : pe.known->eqns) EXPECT_NE(e.primitive->name(), "mul");

  // An instantiated known output becomes a residual passed through.
  cf::PartialEval pi = cf::partial_eval_jaxpr_nounits(*j, {false, true}, {false, true, false});
  EXPECT_EQ(pi.out_unknown, (std::vector<bool>{true, true, true}));
  EXPECT_EQ(pi.num_res, 2u);
  std::vector<Array> ki = cf::as_fun(pi.known)(std::vector<Array>{c});
  std::vector<Array> ui_in = ki;
  ui_in.push_back(x);
  std::vector<Array> ui = cf::as_fun(pi.unknown)(ui_in);
  ASSERT_EQ(ui.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_CLOSE(ui[i], ref[i], 0);

  // Everything known: no residuals, nothing unknown.
  cf::PartialEval pk = cf::partial_eval_jaxpr_nounits(*j, {false, false}, {false, false, false});
  EXPECT_EQ(pk.out_unknown, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(pk.num_res, 0u);
  EXPECT_TRUE(pk.unknown->eqns.empty());
}

TEST(JaxprTransforms, PartialEvalKeepsEffectsUnknown) {
  // A debug callback on known values stays on the unknown side (it runs where the program
  // runs, in order).
  flat::Fun f = [](std::span<const Array> a) {
    flat::debug_callback([](std::span<const Array>) { return std::vector<Array>{}; },
                         std::vector<Array>{lax::sin(a[0])});
    return std::vector<Array>{lax::add(lax::cos(a[0]), a[1])};
  };
  std::vector<Aval> avals = {Aval{{3}, DType::kFloat32}, Aval{{3}, DType::kFloat32}};
  cf::JaxprPtr j = cf::stage(f, avals).const_free("test");
  cf::PartialEval pe = cf::partial_eval_jaxpr_nounits(*j, {false, true}, {false});
  for (const JaxprEqn& e : pe.known->eqns) EXPECT_TRUE(e.effects.empty()) << e.primitive->name();
  bool printed_unknown = false;
  for (const JaxprEqn& e : pe.unknown->eqns) printed_unknown |= !e.effects.empty();
  EXPECT_TRUE(printed_unknown);
}

// ---- linearize_jaxpr_custom: the saveable split ----

// h(x) = sin(sin(x)) * x.
std::vector<Array> remat_body(std::span<const Array> a) {
  return {lax::mul(lax::sin(lax::sin(a[0])), a[0])};
}

// Evaluates the split at x with tangent t: (primal out, tangent out).
std::pair<Array, Array> run_split(const cf::CustomLinearized& s, const Array& x, const Array& t) {
  std::vector<Array> kin = s.known_consts;
  kin.push_back(x);
  std::vector<Array> kout = cf::as_fun(s.known)(kin);
  std::vector<Array> sin = s.staged_consts;
  for (int64_t i : s.staged_inputs) sin.push_back(kin[i]);
  sin.insert(sin.end(), kout.begin() + 1, kout.end());
  sin.push_back(t);
  std::vector<Array> tout = cf::as_fun(s.staged)(sin);
  return {kout[0], tout.at(0)};
}

size_t count_eqns(const Jaxpr& j, const std::string& name) {
  size_t n = 0;
  for (const JaxprEqn& e : j.eqns) n += e.primitive->name() == name;
  return n;
}

TEST(JaxprTransforms, CustomSplitFollowsThePolicy) {
  std::vector<Aval> avals = {Aval{{5}, DType::kFloat32}};
  cf::JaxprPtr j = cf::stage(remat_body, avals).const_free("test");
  Array x = random_array({5}, DType::kFloat32), t = random_array({5}, DType::kFloat32);
  auto [po, to] = flat::jvp(remat_body, std::vector<Array>{x}, std::vector<Array>{t});
  cf::Saveable all = [](const JaxprEqn&) { return true; };
  cf::Saveable none = [](const JaxprEqn&) { return false; };
  cf::Saveable sins = [](const JaxprEqn& e) { return e.primitive->name() == "sin"; };

  cf::CustomLinearized sa = cf::linearize_jaxpr_custom(*j, {true}, {false}, all);
  cf::CustomLinearized sn = cf::linearize_jaxpr_custom(*j, {true}, {false}, none);
  cf::CustomLinearized ss = cf::linearize_jaxpr_custom(*j, {true}, {false}, sins);
  for (const cf::CustomLinearized* s : {&sa, &sn, &ss}) {
    EXPECT_EQ(s->out_nonzero, (std::vector<bool>{true}));
    auto [p, tt] = run_split(*s, x, t);
    EXPECT_CLOSE(p, po[0], 0);
    EXPECT_CLOSE(tt, to[0], 1e-5);
  }
  // Saving everything recomputes nothing; saving nothing keeps no residual and recomputes the
  // sines and cosines from x, the only input.
  EXPECT_EQ(count_eqns(*sa.staged, "sin") + count_eqns(*sa.staged, "cos"), 0u);
  EXPECT_GE(sa.num_res, 2u);
  EXPECT_EQ(sn.num_res, 0u);
  EXPECT_EQ(sn.staged_inputs.size(), 1u);
  EXPECT_GE(count_eqns(*sn.staged, "sin"), 1u);
  EXPECT_GE(count_eqns(*sn.staged, "cos"), 1u);
  // Saving sines only: the cosines are recomputed from saved sines' inputs.
  EXPECT_EQ(count_eqns(*ss.staged, "sin"), 0u);
  EXPECT_GE(count_eqns(*ss.staged, "cos"), 1u);
}

// ---- function-level transformations ----

TEST(JaxprTransforms, BatchFunMatchesLoop) {
  const int64_t B = 4;
  Array a = random_array({3, B}, DType::kFloat32);  // batched at 1
  Array b = random_array({3}, DType::kFloat32);     // unbatched
  flat::Fun f = [](std::span<const Array> v) {
    return std::vector<Array>{lax::mul(lax::exp(v[0]), v[1]), lax::sin(v[1])};
  };
  std::vector<Array> out =
      cf::batch_fun(f, std::vector<Array>{a, b}, std::vector<int64_t>{1, -1}, B);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].shape(), (Shape{B, 3}));
  ASSERT_EQ(out[1].shape(), (Shape{B, 3}));  // unbatched output broadcast to axis 0
  for (int64_t i = 0; i < B; ++i) {
    Array ai = lax::transpose(a, {1, 0})[i];
    std::vector<Array> one = f(std::vector<Array>{ai, b});
    EXPECT_CLOSE(out[0][i], one[0], 0);
    EXPECT_CLOSE(out[1][i], one[1], 0);
  }
}

TEST(JaxprTransforms, JvpFunKeepsSymbolicZeros) {
  Array x = random_array({3}, DType::kFloat32), t = random_array({3}, DType::kFloat32);
  Array n = tnp::asarray(2, DType::kInt32);
  flat::Fun f = [](std::span<const Array> v) {
    return std::vector<Array>{lax::sin(v[0]), lax::add(v[1], v[1]), lax::cos(v[2])};
  };
  Array y = random_array({3}, DType::kFloat32);
  auto [po, to] =
      cf::jvp_fun(f, std::vector<Array>{x, n, y}, std::vector<Array>{t, Array(), Array()});
  ASSERT_EQ(to.size(), 3u);
  EXPECT_CLOSE(to[0], lax::mul(lax::cos(x), t), 1e-6);
  EXPECT_FALSE(to[1].defined());  // integer output
  EXPECT_FALSE(to[2].defined());  // depends on no tangent: a symbolic zero
  EXPECT_CLOSE(po[2], lax::cos(y), 0);
}

// ---- scan: loop-invariant residuals are hoisted out of the loop ----

TEST(JaxprTransforms, ScanHoistsResidualsOfConstants) {
  const int64_t T = 6, D = 5;
  Array w = random_array({D}, DType::kFloat32);
  Array xs = random_array({T, D}, DType::kFloat32);
  Array c0 = random_array({D}, DType::kFloat32);
  // c' = c * sin(w) + x: the tangent needs cos(w) and sin(w) (loop-invariant) and c (per step).
  flat::Fun f = [](std::span<const Array> a) {
    flat::Fun body = [w = a[0]](std::span<const Array> v) {
      Array c = lax::add(lax::mul(v[0], lax::sin(w)), v[1]);
      return std::vector<Array>{c, c};
    };
    flat::ScanResult r = flat::scan(body, std::vector<Array>{a[2]}, std::vector<Array>{a[1]});
    return std::vector<Array>{tnp::sum(r.ys[0])};
  };
  std::vector<Array> primals = {w, xs, c0};
  flat::Linearized l = flat::linearize(f, primals);
  size_t stacked = 0, invariant = 0;
  for (const Array& r : l.linear_jaxpr().consts) {
    if (r.shape() == Shape{T, D}) ++stacked;
    if (r.shape() == Shape{D}) ++invariant;
  }
  // Before hoisting, sin(w) and cos(w) were stacked per step as [T, D] residuals too.
  EXPECT_EQ(stacked, 1u) << "only the carry is stacked";
  EXPECT_GE(invariant, 2u) << "sin(w) and cos(w) are computed once";
  // The numbers: the linearization against forward mode and the vjp against both (the adjoint
  // identity <u, J v> = <J^T u, v>).
  std::vector<Array> v = {random_array({D}, DType::kFloat32), random_array({T, D}, DType::kFloat32),
                          random_array({D}, DType::kFloat32)};
  auto [po, to] = flat::jvp(f, primals, v);
  EXPECT_CLOSE(l.jvp(v)[0], to[0], 1e-4);
  Array u = random_array({}, DType::kFloat32);
  std::vector<Array> g = l.vjp(std::vector<Array>{u});
  double lhs = to_doubles(lax::mul(u, to[0]))[0], rhs = 0;
  for (size_t i = 0; i < 3; ++i) rhs += to_doubles(tnp::sum(tnp::multiply(g[i], v[i])))[0];
  EXPECT_NEAR(lhs, rhs, 1e-3 * (1 + std::abs(lhs)));
}

}  // namespace
}  // namespace tessera
