// jit (tessera/jit.h, prims/jit.cpp, compiler/executable.cpp): results equal eager evaluation
// bitwise on fresh random inputs; the trace cache's rules (same signature: no retrace and no
// recompile; new shape, dtype or weak type: one new trace; re-wrapping; x64); make_jaxpr shows a
// `jit[name=... jaxpr={...}]` equation; composition with grad, jvp, vmap, scan, cond, checkpoint,
// custom_vjp and nested jit, against the same programs without jit; the program passes (nested
// jit inlined, constants folded, dead code removed); disable_jit; closure constants passed as
// operands.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/executable.h"
#include "tessera/config.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::random_array;
using testing::to_doubles;

constexpr DType f32 = DType::kFloat32;

void expect_bitwise(const Array& a, const Array& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(to_doubles(a), to_doubles(b));
}

Array mlp(const Array& w, const Array& x, const Array& b) {
  return tnp::sum(tnp::tanh(tnp::matmul(x, w) + b) * 0.5);
}

TEST(Jit, EqualsEagerBitwise) {
  auto f = [](const Array& x, const Array& y, const Array& z) {
    return tnp::exp(x * y + z) - tnp::sin(z) / (tnp::abs(x) + 1.0);
  };
  auto jf = jit(f);
  for (Shape s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{0, 2}}) {
    Array x = random_array(s, f32), y = random_array(s, f32), z = random_array(s, f32);
    expect_bitwise(jf(x, y, z), f(x, y, z));
  }
  for (DType d : {DType::kInt32, DType::kFloat64, DType::kBFloat16}) {
    if (d == DType::kFloat64) continue;  // needs x64; covered below
    Array x = random_array({4}, d, -3, 3), y = random_array({4}, d, -3, 3);
    auto g = [](const Array& a, const Array& b) { return a * b + a; };
    expect_bitwise(jit(g)(x, y), g(x, y));
  }
  Array w = random_array({4, 3}, f32), x = random_array({5, 4}, f32), b = random_array({3}, f32);
  expect_bitwise(jit(mlp)(w, x, b), mlp(w, x, b));
}

TEST(Jit, TraceCacheRules) {
  int traced = 0;
  auto jf = jit([&](const Array& x, const Array& y) {
    ++traced;
    return x * y + 1.0;
  });
  Array x = random_array({3}, f32), y = random_array({3}, f32);
  const int64_t compiles = flat::jit_compile_count();
  jf(x, y);
  jf(x, y);
  jf(random_array({3}, f32), random_array({3}, f32));  // same signature, new values
  EXPECT_EQ(traced, 1);
  EXPECT_EQ(jf.trace_count(), 1);
  EXPECT_LE(flat::jit_compile_count() - compiles, 1);
  const int64_t after_first = flat::jit_compile_count();
  jf(x, y);
  EXPECT_EQ(flat::jit_compile_count(), after_first);   // a cached call never recompiles
  jf(random_array({4}, f32), random_array({4}, f32));  // new shape: one new trace
  EXPECT_EQ(traced, 2);
  jf(x, 2.0);  // a C++ scalar is a weakly typed f32[] argument: another signature
  EXPECT_EQ(traced, 3);
  jf(x, tnp::scalar(2.0, f32));  // strong f32[]: yet another
  EXPECT_EQ(traced, 4);
  jf(x, 3.0);  // the weak one again: cached
  EXPECT_EQ(traced, 4);
  auto again = jf;  // copies share the cache (as wrapping the same function object in JAX)
  again(x, y);
  EXPECT_EQ(traced, 4);
  // jax_enable_x64 is part of the signature.
  config::update("jax_enable_x64", true);
  jf(x, y);
  config::update("jax_enable_x64", false);
  EXPECT_EQ(traced, 5);
}

TEST(Jit, MakeJaxprShowsTheJitEquation) {
  auto jf = jit([](const Array& x) { return tnp::sin(x) * 2.0; }, {.name = "f"});
  ClosedJaxpr j = make_jaxpr([&](const Array& x) { return jf(x); })(tnp::zeros({3}));
  const std::string t = to_string(j);
  EXPECT_NE(t.find("jit[\n      name=f\n      jaxpr={ lambda ; c:f32[3]. let"), std::string::npos)
      << t;
  EXPECT_EQ(t.find("donated_invars"), std::string::npos) << t;  // defaults are not printed
  // jit(f).trace(x).jaxpr is f's own jaxpr.
  auto body = [](const Array& x) { return tnp::sin(x) * 2.0; };
  EXPECT_EQ(to_string(*jf.trace(tnp::zeros({3})).jaxpr),
            to_string(*make_jaxpr(body)(tnp::zeros({3})).jaxpr));
}

TEST(Jit, ComposesWithTransformations) {
  Array w = random_array({4, 3}, f32), x = random_array({5, 4}, f32), b = random_array({3}, f32);
  auto jmlp = jit(mlp);
  // grad(jit(f)) and jit(grad(f)) equal grad(f) bitwise.
  Array g = grad(mlp)(w, x, b);
  expect_bitwise(grad(jmlp)(w, x, b), g);
  expect_bitwise(jit(grad(mlp))(w, x, b), g);
  // jvp through jit.
  Array t = random_array({4, 3}, f32);
  auto [p1, t1] = jvp([&](const Array& ww) { return jmlp(ww, x, b); }, w, t);
  auto [p2, t2] = jvp([&](const Array& ww) { return mlp(ww, x, b); }, w, t);
  expect_bitwise(p1, p2);
  expect_bitwise(t1, t2);
  // vmap(jit(f)) over a batch of inputs.
  Array xs = random_array({6, 5, 4}, f32);
  auto per = [&](const Array& xi) { return mlp(w, xi, b); };
  expect_bitwise(vmap(jit(per))(xs), vmap(per)(xs));
  // Nested jit, and jit inside a scan body.
  auto inner = jit([](const Array& v) { return tnp::cos(v) * v; });
  auto outer = jit([&](const Array& v) { return inner(v) + inner(v * 2.0); });
  Array v = random_array({8}, f32);
  expect_bitwise(outer(v), tnp::cos(v) * v + tnp::cos(v * 2.0) * (v * 2.0));
  auto body = [&](const Array& c, const Array& xi) {
    Array n = inner(c + xi);
    return std::make_pair(n, n * 2.0);
  };
  auto eager_body = [](const Array& c, const Array& xi) {
    Array n = tnp::cos(c + xi) * (c + xi);
    return std::make_pair(n, n * 2.0);
  };
  Array seq = random_array({5, 8}, f32);
  auto [c1, y1] = lax::scan(body, v, seq);
  auto [c2, y2] = lax::scan(eager_body, v, seq);
  expect_bitwise(c1, c2);
  expect_bitwise(y1, y2);
  // grad through a jit inside a scan, and second order through jit.
  auto loss = [&](const Array& c0) { return tnp::sum(lax::scan(body, c0, seq).first); };
  auto eager_loss = [&](const Array& c0) { return tnp::sum(lax::scan(eager_body, c0, seq).first); };
  expect_bitwise(grad(loss)(v), grad(eager_loss)(v));
  auto cube = [](const Array& s) { return s * s * s; };
  Array s = tnp::scalar(1.7, f32);
  expect_bitwise(grad(grad(jit(cube)))(s), grad(grad(cube))(s));
}

TEST(Jit, CheckpointAndCustomVjpInsideJit) {
  Array x = random_array({6}, f32);
  auto layer = [](const Array& v) { return tnp::sin(tnp::sin(v)); };
  auto remat = checkpoint(layer);
  auto f = [&](const Array& v) { return tnp::sum(remat(v) * v); };
  auto f0 = [&](const Array& v) { return tnp::sum(layer(v) * v); };
  expect_bitwise(jit(grad(f))(x), grad(f0)(x));
  expect_bitwise(grad(jit(f))(x), grad(f0)(x));
  auto clip =
      custom_vjp([](const Array& v) { return v * 3.0; })
          .defvjp([](const Array& v) { return std::make_pair(v * 3.0, std::make_tuple()); },
                  [](auto, const Array& ct) { return std::make_tuple(tnp::clip(ct, -1.0, 1.0)); });
  auto h = [&](const Array& v) { return tnp::sum(clip(v) * 5.0); };
  Array want = tnp::full({6}, 1.0, f32);  // the bwd rule clips the cotangent 5 to 1
  expect_bitwise(jit(grad(h))(x), want);
  expect_bitwise(grad(jit(h))(x), want);
}

TEST(Jit, ClosedOverArraysAreOperandsAndCapturesAreReadAtTraceTime) {
  Array c = random_array({3}, f32);
  auto jf = jit([&](const Array& x) { return x * c; });
  Array x = random_array({3}, f32);
  expect_bitwise(jf(x), x * c);
  ClosedJaxpr t = jf.trace(x);
  EXPECT_EQ(t.consts.size(), 1u);  // a constant of the program, not baked into its code
  EXPECT_EQ(t.jaxpr->constvars.size(), 1u);
  Array old = c;
  c = random_array({3}, f32);  // a [&] capture read at trace time: cached calls keep the old one
  expect_bitwise(jf(x), x * old);
}

TEST(Jit, DisableJitRunsEagerly) {
  int traced = 0;
  auto jf = jit([&](const Array& x) {
    ++traced;
    EXPECT_TRUE(x.is_concrete());  // eager: a concrete array, not a tracer
    return x + 1.0;
  });
  config::update("jax_disable_jit", true);
  Array x = random_array({3}, f32);
  Array r = jf(x);
  config::update("jax_disable_jit", false);
  EXPECT_EQ(jf.trace_count(), 0);
  EXPECT_EQ(traced, 1);
  expect_bitwise(r, x + 1.0);
}

TEST(Jit, ProgramPassesInlineFoldAndPrune) {
  auto inner = jit([](const Array& v) { return tnp::exp(v); }, {.name = "inner"});
  auto f = [&](const Array& x) {
    Array unused = tnp::log(x);  // dead: pruned
    (void)unused;
    return inner(x) + 1.0;
  };
  ClosedJaxpr j = make_jaxpr(f)(tnp::zeros({4}));
  const std::string text = flat::compiled_text(j);
  EXPECT_EQ(text.find("jit"), std::string::npos) << text;  // inlined
  EXPECT_EQ(text.find("log"), std::string::npos) << text;  // pruned
  // exp and the add are one fused kernel reading the argument (compiler/fusion.h).
  EXPECT_NE(text.find("= fused fusion.0 %0"), std::string::npos) << text;
  EXPECT_NE(text.find("= exp %0"), std::string::npos) << text;
  EXPECT_NE(text.find("= add"), std::string::npos) << text;
  // Constant folding: an equation of literals becomes a literal.
  Jaxpr p =
      parse_jaxpr("{ lambda ; a:f32[]. let b:f32[] = exp 1.0:f32[]; c:f32[] = mul a b in (c,) }");
  const std::string folded = flat::compiled_text(ClosedJaxpr{intern(p), {}});
  EXPECT_EQ(folded.find("exp"), std::string::npos) << folded;
  EXPECT_NE(folded.find("mul %0 2.718"), std::string::npos) << folded;
  // The same program compiles to the same text (deterministic).
  EXPECT_EQ(flat::compiled_text(j), text);
  // Executing the compiled program equals eager evaluation.
  Array x = random_array({4}, f32);
  expect_bitwise(jit(f)(x), tnp::exp(x) + 1.0);
}

// Control flow under jit runs its bodies as nested executables compiled with the program: the
// plan shows them, and results equal eager evaluation bitwise (scan with a cond and a
// while_loop in its body, on fresh random inputs).
TEST(Jit, ControlFlowRunsNestedExecutables) {
  auto step = [](const Array& c, const Array& x) {
    Array n = lax::cond(
        lax::gt(tnp::sum(x), tnp::zeros({})), [](const Array& v) { return tnp::sin(v); },
        [](const Array& v) { return tnp::cos(v) * 2.0; }, c + x);
    // Halve until the norm is below 4 (data-dependent trip count).
    Array h = lax::while_loop([](const Array& v) { return tnp::sum(v * v) > 16.0; },
                              [](const Array& v) { return v * 0.5; }, n * 3.0);
    return std::make_pair(h, tnp::sum(h));
  };
  auto f = [&](const Array& c0, const Array& xs) { return lax::scan(step, c0, xs); };
  Array c0 = random_array({6}, f32), xs = random_array({9, 6}, f32);
  auto [c_eager, y_eager] = f(c0, xs);
  auto jf = jit(f, {.name = "loop"});
  auto [c_jit, y_jit] = jf(c0, xs);
  expect_bitwise(c_jit, c_eager);
  expect_bitwise(y_jit, y_eager);
  const std::string text = flat::compiled_text(make_jaxpr(f)(c0, xs));
  EXPECT_EQ(text.find("eager scan"), std::string::npos) << text;
  EXPECT_EQ(text.find("eager cond"), std::string::npos) << text;
  EXPECT_EQ(text.find("eager while"), std::string::npos) << text;
  for (const char* part : {"= scan[", "body: executable", "branch 0: executable",
                           "branch 1: executable", "= while[", "cond: executable"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  // Nested plans are indented under their thunk, and the text is deterministic.
  EXPECT_NE(text.find("\n        "), std::string::npos) << text;
  EXPECT_EQ(flat::compiled_text(make_jaxpr(f)(c0, xs)), text);
  // Gradients through the lowered scan and cond (the while loop's value is not differentiated
  // here: reverse-mode of while_loop is refused, as in JAX).
  auto g = [&](const Array& c) {
    auto body = [](const Array& cc, const Array& x) {
      Array n = lax::cond(
          lax::gt(tnp::sum(x), tnp::zeros({})), [](const Array& v) { return tnp::sin(v); },
          [](const Array& v) { return tnp::cos(v) * 2.0; }, cc * x);
      return std::make_pair(n, tnp::sum(n));
    };
    return tnp::sum(lax::scan(body, c, xs).second);
  };
  expect_bitwise(jit(grad(g))(c0), grad(g)(c0));
}

TEST(Jit, CostAnalysisCountsByKind) {
  // A contraction: 2 * out * contracted size; elementwise: one per output element; a loop body
  // times its length.
  auto f = [](const Array& x, const Array& y) { return tnp::exp(tnp::matmul(x, y)); };
  ClosedJaxpr j = make_jaxpr(f)(tnp::zeros({4, 5}), tnp::zeros({5, 3}));
  compiler::CostAnalysis c = compiler::cost_analysis(*j.jaxpr);
  EXPECT_EQ(c.flops, 2.0 * 4 * 5 * 3 + 4 * 3);
  EXPECT_EQ(c.bytes_accessed, 4.0 * (4 * 5 + 5 * 3 + 4 * 3 + 2 * 4 * 3));
  auto loop = [](const Array& c0, const Array& xs) {
    return lax::scan([](const Array& c, const Array& x) { return std::make_pair(c * x, c); }, c0,
                     xs)
        .first;
  };
  ClosedJaxpr js = make_jaxpr(loop)(tnp::zeros({3}), tnp::zeros({5, 3}));
  EXPECT_EQ(compiler::cost_analysis(*js.jaxpr).flops, 5.0 * 3);
  // A fused kernel reads its inputs and writes its outputs once; it is also counted alone.
  auto fused = [](const Array& x) { return tnp::sum(tnp::exp(x * 2.0f), 1); };
  ClosedJaxpr jf = make_jaxpr(fused)(tnp::zeros({4, 6}));
  compiler::CostAnalysis cf = compiler::cost_analysis(*jf.jaxpr);
  ASSERT_EQ(cf.kernels.size(), 1u);
  EXPECT_EQ(cf.kernels[0].name, "fusion.0");
  EXPECT_EQ(cf.kernels[0].flops, 3.0 * 24);  // mul, exp, the sum's 24 inputs
  EXPECT_EQ(cf.kernels[0].bytes_accessed, 4.0 * (24 + 4));
  EXPECT_EQ(cf.bytes_accessed, 4.0 * (24 + 4));
  const std::map<std::string, double> m =
      jit(fused).lower(tnp::zeros({4, 6})).compile().cost_analysis();
  EXPECT_EQ(m.at("fusion.0 bytes accessed"), 4.0 * (24 + 4));
}

TEST(Jit, KeepUnusedAndInline) {
  auto f = [](const Array& x, const Array& y) {
    (void)y;
    return x * 2.0;
  };
  auto dce_of = [](const Jitted<decltype(f)>& jf) {
    ClosedJaxpr j = make_jaxpr([&](const Array& x) { return jf(x, x + 1.0); })(tnp::zeros({2}));
    return to_string(j);
  };
  // make_jaxpr keeps the equation as staged; the inline option splices the body instead.
  EXPECT_NE(dce_of(jit(f)).find("jit["), std::string::npos);
  EXPECT_EQ(dce_of(jit(f, {.inline_call = true})).find("jit["), std::string::npos);
  EXPECT_NE(dce_of(jit(f, {.keep_unused = true})).find("keep_unused=True"), std::string::npos);
  Array x = random_array({2}, f32);
  expect_bitwise(jit(f, {.keep_unused = true})(x, x), x * 2.0);
}

TEST(Jit, ArgumentErrors) {
  auto jf = jit([](const Array& x) { return x; });
  EXPECT_ERROR(ValueError, jf(Array()), "empty Array handle");
}

// JAX's AOT stages from C++: lower on arrays or abstract placeholders, the Lowered text, compile,
// the Compiled plan and cost, calls equal to the jitted call (no retrace), and JAX's TypeError
// for other avals.
TEST(Jit, AheadOfTimeStages) {
  auto f = jit([](const Array& x, const Array& y) { return tnp::tanh(tnp::matmul(x, y)) + 1.0; },
               {.name = "layer"});
  auto lowered = f.lower(flat::abstract_placeholder(Aval{{4, 5}, f32, false}),
                         flat::abstract_placeholder(Aval{{5, 3}, f32, false}));
  EXPECT_NE(lowered.as_text().find("dot_general"), std::string::npos) << lowered.as_text();
  auto compiled = lowered.compile();
  EXPECT_NE(compiled.as_text().find("executable ("), std::string::npos) << compiled.as_text();
  std::map<std::string, double> cost = compiled.cost_analysis();
  EXPECT_EQ(cost.at("flops"), 2.0 * 4 * 5 * 3 + 2.0 * 4 * 3);  // dot, then tanh and add
  EXPECT_GT(cost.at("bytes accessed"), 0);
  Array x = random_array({4, 5}, f32), y = random_array({5, 3}, f32);
  expect_bitwise(compiled(x, y), tnp::tanh(tnp::matmul(x, y)) + 1.0);
  EXPECT_EQ(f.trace_count(), 1);  // lower() traced; the call reused the entry
  EXPECT_ERROR(TypeError, compiled(random_array({4, 6}, f32), random_array({6, 3}, f32)),
               "argument 0: compiled for ShapedArray(float32[4,5]), called with "
               "ShapedArray(float32[4,6])");
  // (Another number of arguments does not compile: C++ checks arity statically.)
}

// donate_argnums: the donated argument is deleted after the call (JAX's "Array has been
// deleted"), the equation's donated_invars say so, other arguments stay usable, and an output
// that is the donated array itself keeps its value.
TEST(Jit, DonationDeletesTheArgument) {
  Array x = random_array({5}, f32), y = random_array({5}, f32);
  const std::vector<double> xv = to_doubles(x), yv = to_doubles(y);
  auto f = jit([](const Array& a, const Array& b) { return a * b + 1.0; },
               {.name = "upd", .donate_argnums = {0}});
  Array want = tnp::multiply(tnp::array(xv, {5}, f32), tnp::array(yv, {5}, f32)) + 1.0;
  Array z = f(x, y);
  expect_bitwise(z, want);
  EXPECT_TRUE(x.is_deleted());
  EXPECT_FALSE(y.is_deleted());
  EXPECT_ERROR(ValueError, (void)tnp::sin(x), "Array has been deleted with shape=float32[5]");
  // The staged equation records the donation (one flag per operand).
  Array x2 = random_array({5}, f32);
  const std::string text =
      to_string(*make_jaxpr([&](const Array& a) { return f(a, y); })(x2).jaxpr);
  EXPECT_NE(text.find("donated_invars=(1, 0)"), std::string::npos) << text;
  EXPECT_FALSE(x2.is_deleted());  // tracers are not deleted
  // Negative indices count from the end; an identity output keeps the donated buffer's value.
  auto ident = jit([](const Array& a, const Array& b) { return std::make_pair(b, a + 0.0); },
                   {.name = "ident", .donate_argnums = {-1}});
  Array u = random_array({3}, f32), v = random_array({3}, f32);
  const std::vector<double> vv = to_doubles(v);
  auto [o1, o2] = ident(u, v);
  EXPECT_TRUE(v.is_deleted());
  EXPECT_FALSE(u.is_deleted());
  EXPECT_EQ(to_doubles(o1), vv);
}

// C++ control flow on a traced value: JAX's error types and texts, naming the function
// (JitOptions::name) and the arguments the value depends on by their key paths.
TEST(Jit, ConcretizationErrorsNameTheArguments) {
  Array x = random_array({}, f32), y = random_array({}, f32);
  auto branchy = jit(
      [](const Array& a, const Array& b, const Array& c) {
        return static_cast<bool>(lax::gt(tnp::add(b, c), tnp::zeros({}))) ? a : b;
      },
      JitOptions{.name = "branchy"});
  std::string m;
  try {
    branchy(x, y, x);
  } catch (const TracerBoolConversionError& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("Attempted boolean conversion of traced array with shape bool[]."),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("The error occurred while tracing the function branchy for jit. This "
                   "concrete value was not available in C++ because it depends on the values "
                   "of the arguments args[1] and args[2]."),
            std::string::npos)
      << m;
  // Pytree arguments are named by their paths; item() is a ConcretizationError naming item.
  auto tree = jit([](const std::vector<Array>& v) { return v[0] * v[1].item<float>(); });
  EXPECT_ERROR(ConcretizationError, tree(std::vector<Array>{x, y}),
               "depends on the value of the argument args[0][1].");
  // make_jaxpr's defaults: "fn" and args[i].
  auto one = [](const Array& a, const Array& b) { return static_cast<bool>(a) ? a : b; };
  EXPECT_ERROR(TracerBoolConversionError, make_jaxpr(one)(x, y),
               "tracing the function fn for make_jaxpr. This concrete value was not available "
               "in C++ because it depends on the value of the argument args[0].");
  // grad inside jit: the primal knows its argument.
  auto g = jit(grad([](const Array& a) { return static_cast<bool>(a) ? a * a : a; }));
  EXPECT_ERROR(TracerBoolConversionError, g(x), "the argument args[0].");
}

}  // namespace
}  // namespace tessera
