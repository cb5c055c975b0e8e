// Dead-code elimination: pinned before/after text, the used-inputs mask, effects kept, dropped
// outputs of kept multi-output equations, and the pruned jaxpr computing the same values.
#include <gtest/gtest.h>

#include <string>

#include "ir/passes/dce.h"
#include "prims/prims.h"
#include "tessera/jaxpr.h"
#include "tessera/lax.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

Aval av(Shape s, DType d = DType::kFloat32) { return Aval{std::move(s), d, false}; }

Literal lit(float v) { return Literal(array_from_host(av({}), &v)); }

JaxprEqn eqn(const Primitive& p, std::vector<Atom> ins, std::vector<Var> outs, Params params = {}) {
  JaxprEqn e;
  e.primitive = &p;
  e.invars = std::move(ins);
  e.outvars = std::move(outs);
  e.params = std::move(params);
  e.effects = primitive_effects(p);
  return e;
}

// Test-only primitives: `debug_log` (no outputs, an effect: counts its calls) and `sincos`
// (two outputs).
Primitive debug_log_p("debug_log", /*multiple_results=*/true);
Primitive sincos_p("sincos", /*multiple_results=*/true);
int g_debug_log_calls = 0;
const Effect kDebug{"debug", /*ordered=*/false};

class DceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_all();
    static bool once = [] {
      debug_log_p.abstract_eval = [](std::span<const Aval>, const Params&) {
        return std::vector<Aval>{};
      };
      debug_log_p.impl = [](const ExecContext&, std::span<const Array>, const Params&,
                            std::span<const Aval>) {
        ++g_debug_log_calls;
        return std::vector<Array>{};
      };
      set_primitive_effects(debug_log_p, {kDebug});
      register_primitive(debug_log_p);
      sincos_p.abstract_eval = [](std::span<const Aval> in, const Params&) {
        return std::vector<Aval>{in[0], in[0]};
      };
      sincos_p.impl = [](const ExecContext&, std::span<const Array> args, const Params&,
                         std::span<const Aval>) {
        return std::vector<Array>{lax::sin(args[0]), lax::cos(args[0])};
      };
      register_primitive(sincos_p);
      return true;
    }();
    (void)once;
  }
};

std::string bools(const std::vector<bool>& v) {
  std::string s;
  for (bool b : v) s += b ? '1' : '0';
  return s;
}

// The pruned jaxpr computes the used outputs of the original, on random inputs.
void expect_same_values(const Jaxpr& before, const Jaxpr& after, const std::vector<bool>& used) {
  std::vector<Array> args;
  for (const Var& v : before.invars) args.push_back(random_array(v.aval().shape, v.aval().dtype));
  std::vector<Array> full = eval_jaxpr(before, {}, args);
  std::vector<Array> pruned = eval_jaxpr(after, {}, args);
  size_t k = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    if (!used[i]) continue;
    ASSERT_LT(k, pruned.size());
    EXPECT_EQ(to_doubles(pruned[k]), to_doubles(full[i])) << "output " << i;
    ++k;
  }
  EXPECT_EQ(k, pruned.size());
}

// f(a, b) = (sin(a) * 2, cos(b) + a)
Jaxpr two_branches() {
  Var a(av({3})), b(av({3})), c(av({3})), d(av({3})), e(av({3})), f(av({3}));
  Jaxpr j;
  j.invars = {a, b};
  j.eqns.push_back(eqn(prims::sin, {a}, {c}));
  j.eqns.push_back(eqn(prims::cos, {b}, {d}));
  j.eqns.push_back(eqn(prims::mul, {c, lit(2.0f)}, {e}));
  j.eqns.push_back(eqn(prims::add, {d, a}, {f}));
  j.outvars = {e, f};
  return j;
}

TEST_F(DceTest, RemovesEquationsOfUnusedOutputs) {
  const Jaxpr j = two_branches();
  verify(j);
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[3] = sin a\n"
            "    d:f32[3] = cos b\n"
            "    e:f32[3] = mul c 2.0:f32[]\n"
            "    f:f32[3] = add d a\n"
            "  in (e, f) }");

  auto [first, used_first] = ir::dce(j, {true, false});
  verify(*first);
  EXPECT_EQ(to_string(*first),
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[3] = sin a\n"
            "    d:f32[3] = mul c 2.0:f32[]\n"
            "  in (d,) }");
  EXPECT_EQ(bools(used_first), "10");
  expect_same_values(j, *first, {true, false});

  auto [second, used_second] = ir::dce(j, {false, true});
  verify(*second);
  // Exactly 80 columns: still one line (JAX's width-80 layout), equations joined by "; ".
  EXPECT_EQ(to_string(*second),
            "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = cos b; d:f32[3] = add c a in (d,) }");
  EXPECT_EQ(bools(used_second), "11");
  expect_same_values(j, *second, {false, true});

  auto [both, used_both] = ir::dce(j, {true, true});
  EXPECT_EQ(to_string(*both), to_string(j));
  EXPECT_EQ(bools(used_both), "11");

  auto [none, used_none] = ir::dce(j, {false, false});
  verify(*none);
  EXPECT_EQ(to_string(*none), "{ lambda ; a:f32[3] b:f32[3]. let  in () }");
  EXPECT_EQ(bools(used_none), "00");
}

TEST_F(DceTest, KeepsEffectfulEquationsAndTheirInputs) {
  // f(a, b) = cos(b), with debug_log(sin(a)) in between: the log survives and keeps sin(a).
  Var a(av({3})), b(av({3})), c(av({3})), d(av({3}));
  Jaxpr j;
  j.invars = {a, b};
  j.effects = {kDebug};
  j.eqns.push_back(eqn(prims::sin, {a}, {c}));
  j.eqns.push_back(eqn(debug_log_p, {c}, {}));
  j.eqns.push_back(eqn(prims::cos, {b}, {d}));
  j.outvars = {d};
  verify(j);

  auto [kept, used] = ir::dce(j, {true});
  verify(*kept);
  EXPECT_EQ(to_string(*kept), to_string(j));
  EXPECT_EQ(to_string(*kept),
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[3] = sin a\n"
            "    debug_log c\n"
            "    d:f32[3] = cos b\n"
            "  in (d,) }");
  EXPECT_EQ(bools(used), "11");

  auto [only_effect, used2] = ir::dce(j, {false});
  verify(*only_effect);
  EXPECT_EQ(to_string(*only_effect),
            "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = sin a; debug_log c in () }");
  EXPECT_EQ(bools(used2), "10");
  ASSERT_EQ(only_effect->effects.size(), 1u);
  EXPECT_EQ(only_effect->effects[0], kDebug);

  // Running the pruned jaxpr still performs the effect.
  g_debug_log_calls = 0;
  std::vector<Array> args{random_array({3}, DType::kFloat32), random_array({3}, DType::kFloat32)};
  EXPECT_TRUE(eval_jaxpr(*only_effect, {}, args).empty());
  EXPECT_EQ(g_debug_log_calls, 1);

  // Without the effect the same program loses its first two equations.
  Jaxpr pure = j;
  pure.effects.clear();
  pure.eqns.erase(pure.eqns.begin() + 1);
  auto [pruned, used3] = ir::dce(pure, {true});
  EXPECT_EQ(to_string(*pruned), "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = cos b in (c,) }");
  EXPECT_EQ(bools(used3), "01");
}

TEST_F(DceTest, UnusedOutputsOfKeptEquationsBecomeDropVars) {
  // f(a) = (s, c) with s, c = sincos(a); then s*c and c+1 are outputs.
  Var a(av({4})), s(av({4})), c(av({4})), p(av({4})), q(av({4}));
  Jaxpr j;
  j.invars = {a};
  j.eqns.push_back(eqn(sincos_p, {a}, {s, c}));
  j.eqns.push_back(eqn(prims::mul, {s, lit(3.0f)}, {p}));
  j.eqns.push_back(eqn(prims::add, {c, lit(1.0f)}, {q}));
  j.outvars = {p, q};
  verify(j);

  auto [cos_only, used] = ir::dce(j, {false, true});
  verify(*cos_only);
  EXPECT_EQ(to_string(*cos_only),
            "{ lambda ; a:f32[4]. let\n"
            "    _:f32[4] b:f32[4] = sincos a\n"
            "    c:f32[4] = add b 1.0:f32[]\n"
            "  in (c,) }");
  EXPECT_EQ(bools(used), "1");
  expect_same_values(j, *cos_only, {false, true});

  auto [sin_only, used2] = ir::dce(j, {true, false});
  verify(*sin_only);
  EXPECT_EQ(to_string(*sin_only),
            "{ lambda ; a:f32[4]. let\n"
            "    b:f32[4] _:f32[4] = sincos a\n"
            "    c:f32[4] = mul b 3.0:f32[]\n"
            "  in (c,) }");
  expect_same_values(j, *sin_only, {true, false});
}

TEST_F(DceTest, OutputsThatAreInputsOrLiteralsAndConstvars) {
  // f(k; a, b) = (b, 2.0, a * k): constvars are kept; only invars are reported.
  Var k(av({2})), a(av({2})), b(av({2})), m(av({2})), unused(av({2}));
  Jaxpr j;
  j.constvars = {k};
  j.invars = {a, b};
  j.eqns.push_back(eqn(prims::mul, {a, k}, {m}));
  j.eqns.push_back(eqn(prims::neg, {k}, {unused}));
  j.outvars = {b, lit(2.0f), m};
  verify(j);

  auto [r, used] = ir::dce(j, {true, true, false});
  verify(*r);
  EXPECT_EQ(to_string(*r), "{ lambda a:f32[2]; b:f32[2] c:f32[2]. let  in (c, 2.0:f32[]) }");
  EXPECT_EQ(bools(used), "01");

  auto [r2, used2] = ir::dce(j, {false, false, true});
  verify(*r2);
  EXPECT_EQ(to_string(*r2),
            "{ lambda a:f32[2]; b:f32[2] c:f32[2]. let d:f32[2] = mul b a in (d,) }");
  EXPECT_EQ(bools(used2), "10");
}

TEST_F(DceTest, LongChainKeepsOnlyTheLiveSlice) {
  // A chain x -> sin -> ... with a dead side branch at every step; only the chain survives.
  Var x(av({5}));
  Jaxpr j;
  j.invars = {x};
  Var cur = x;
  for (int i = 0; i < 10; ++i) {
    Var next(av({5})), side(av({5}));
    j.eqns.push_back(eqn(prims::sin, {cur}, {next}));
    j.eqns.push_back(eqn(prims::exp, {cur}, {side}));
    cur = next;
  }
  j.outvars = {cur};
  verify(j);
  auto [r, used] = ir::dce(j, {true});
  verify(*r);
  ASSERT_EQ(r->eqns.size(), 10u);
  for (const JaxprEqn& e : r->eqns) EXPECT_EQ(e.primitive, &prims::sin);
  EXPECT_EQ(bools(used), "1");
  expect_same_values(j, *r, {true});
}

}  // namespace
}  // namespace tessera
