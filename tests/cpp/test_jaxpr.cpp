// The jaxpr IR: vars, literals, JAX-format printing (pinned text), interning, the verifier and
// eval_jaxpr on hand-built jaxprs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "prims/prims.h"
#include "tessera/jaxpr.h"
#include "tessera/lax.h"
#include "tessera/param_types.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

Aval av(Shape s, DType d = DType::kFloat32) { return Aval{std::move(s), d, false}; }

template <class T>
Literal lit(T v) {
  return Literal(array_from_host(av({}, dtype_v<T>), &v));
}

JaxprEqn eqn(const Primitive& p, std::vector<Atom> ins, std::vector<Var> outs, Params params = {}) {
  JaxprEqn e;
  e.primitive = &p;
  e.invars = std::move(ins);
  e.outvars = std::move(outs);
  e.params = std::move(params);
  return e;
}

// A test-only primitive that calls a sub-jaxpr (as pjit does): params {jaxpr, name}.
Primitive call_p("call", /*multiple_results=*/true);

class JaxprTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_all();
    static bool once = [] {
      call_p.abstract_eval = [](std::span<const Aval>, const Params& p) {
        std::vector<Aval> out;
        for (const Atom& a : p.get<std::shared_ptr<const Jaxpr>>("jaxpr")->outvars)
          out.push_back(atom_aval(a));
        return out;
      };
      call_p.impl = [](const ExecContext&, std::span<const Array> args, const Params& p,
                       std::span<const Aval>) {
        return eval_jaxpr(*p.get<std::shared_ptr<const Jaxpr>>("jaxpr"), {}, args);
      };
      register_primitive(call_p);
      return true;
    }();
    (void)once;
  }
};

// f(x) = sum(sin(x) * 2) over axis 0, as make_jaxpr would stage it.
Jaxpr sum_sin_times_two(int64_t n) {
  Jaxpr j;
  Var a(av({n})), b(av({n})), c(av({n})), d(av({}));
  j.invars = {a};
  j.eqns.push_back(eqn(prims::sin, {a}, {b}));
  j.eqns.push_back(eqn(prims::mul, {b, lit(2.0f)}, {c}));
  j.eqns.push_back(eqn(prims::reduce_sum, {c}, {d}, Params{{"axes", std::vector<int64_t>{0}}}));
  j.outvars = {d};
  return j;
}

TEST_F(JaxprTest, VarsAreComparedById) {
  Var a(av({3})), b(av({3}));
  Var a2 = a;
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a2.aval(), av({3}));
  EXPECT_FALSE(Var().valid());
  EXPECT_TRUE(Var::dropped(av({})).is_dropped());
}

TEST_F(JaxprTest, VarNamesFollowJax) {
  EXPECT_EQ(var_name_for_index(0), "a");
  EXPECT_EQ(var_name_for_index(25), "z");
  EXPECT_EQ(var_name_for_index(26), "ba");
  EXPECT_EQ(var_name_for_index(27), "bb");
  EXPECT_EQ(var_name_for_index(675), "zz");
  EXPECT_EQ(var_name_for_index(676), "baa");
}

TEST_F(JaxprTest, LiteralValuesPrintAsPython) {
  EXPECT_EQ(lit(2.0f).value_str(), "2.0");
  EXPECT_EQ(lit(0.1f).value_str(), "0.1");
  EXPECT_EQ(lit(1e-5f).value_str(), "1e-05");
  EXPECT_EQ(lit(-3.25).value_str(), "-3.25");
  EXPECT_EQ(lit(1e16).value_str(), "1e+16");
  EXPECT_EQ(lit(123456.0).value_str(), "123456.0");
  EXPECT_EQ(lit(int32_t{1}).value_str(), "1");
  EXPECT_EQ(lit(int64_t{-7}).value_str(), "-7");
  EXPECT_EQ(lit(true).value_str(), "True");
  EXPECT_EQ(lit(false).value_str(), "False");
  EXPECT_EQ(lit(std::numeric_limits<float>::quiet_NaN()).value_str(), "nan");
  EXPECT_EQ(lit(-std::numeric_limits<float>::infinity()).value_str(), "-inf");
}

TEST_F(JaxprTest, PrintsShortJaxprOnOneLine) {
  Jaxpr j;
  Var a(av({})), b(av({}));
  j.invars = {a};
  j.eqns.push_back(eqn(prims::sin, {a}, {b}));
  j.outvars = {b};
  EXPECT_EQ(to_string(j), "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }");
  // No equations: JAX prints two spaces between `let` and `in`.
  Jaxpr id;
  id.invars = {a};
  id.outvars = {a};
  EXPECT_EQ(to_string(id), "{ lambda ; a:f32[]. let  in (a,) }");
}

TEST_F(JaxprTest, PrintsLongJaxprOneEquationPerLine) {
  Jaxpr j = sum_sin_times_two(3);
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = sin a\n"
            "    c:f32[3] = mul b 2.0:f32[]\n"
            "    d:f32[] = reduce_sum[axes=(0,)] c\n"
            "  in (d,) }");
  std::ostringstream os;
  os << j;
  EXPECT_EQ(os.str(), to_string(j));
  verify(j);
}

TEST_F(JaxprTest, PrintsConstvarsBeforeSemicolonAndSeveralOutputs) {
  Jaxpr j;
  Var a(av({3})), b(av({3})), c(av({}, DType::kInt32)), d(av({3})), e(av({3})),
      f(av({}, DType::kInt32));
  j.constvars = {a};
  j.invars = {b, c};
  j.eqns.push_back(eqn(prims::sin, {b}, {d}));
  j.eqns.push_back(eqn(prims::mul, {d, a}, {e}));
  j.eqns.push_back(eqn(prims::add, {c, lit(int32_t{1})}, {f}));
  j.outvars = {e, f, lit(true)};
  EXPECT_EQ(to_string(j),
            "{ lambda a:f32[3]; b:f32[3] c:i32[]. let\n"
            "    d:f32[3] = sin b\n"
            "    e:f32[3] = mul d a\n"
            "    f:i32[] = add c 1:i32[]\n"
            "  in (e, f, True:bool[]) }");
  ClosedJaxpr cj{intern(j), {random_array({3}, DType::kFloat32)}};
  EXPECT_EQ(to_string(cj), to_string(j));
}

TEST_F(JaxprTest, PrintsParamsSortedWithJaxValueFormats) {
  Jaxpr j;
  Var a(av({3}, DType::kInt32)), b(av({3})), c(av({2, 3})), d(av({})), e(av({}));
  j.invars = {a};
  j.eqns.push_back(eqn(prims::convert_element_type, {a}, {b},
                       Params{{"new_dtype", DType::kFloat32}, {"weak_type", false}}));
  j.eqns.push_back(
      eqn(prims::broadcast_in_dim, {b}, {c},
          Params{{"shape", Shape{2, 3}}, {"broadcast_dimensions", std::vector<int64_t>{1}}}));
  j.eqns.push_back(eqn(prims::reduce_sum, {c}, {d}, Params{{"axes", std::vector<int64_t>{0, 1}}}));
  j.eqns.push_back(eqn(prims::integer_pow, {d}, {e}, Params{{"y", int64_t{3}}}));
  j.outvars = {e};
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:i32[3]. let\n"
            "    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3)] b\n"
            "    d:f32[] = reduce_sum[axes=(0, 1)] c\n"
            "    e:f32[] = integer_pow[y=3] d\n"
            "  in (e,) }");
  verify(j);
}

TEST_F(JaxprTest, WrapsLongParamsOnePerLine) {
  Jaxpr j;
  Var a(av({3, 4})), b(av({4, 5})), c(av({3, 5}));
  j.invars = {a, b};
  j.eqns.push_back(
      eqn(prims::dot_general, {a, b}, {c},
          Params{{"dimension_numbers", DotDimensionNumbers{{1}, {0}, {}, {}}.to_param()},
                 {"preferred_element_type", DType::kFloat32}}));
  j.outvars = {c};
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:f32[3,4] b:f32[4,5]. let\n"
            "    c:f32[3,5] = dot_general[\n"
            "      dimension_numbers=(([1], [0]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] a b\n"
            "  in (c,) }");
  verify(j);
}

TEST_F(JaxprTest, PrintsDroppedOutputsAsUnderscore) {
  // Printing only: a two-output equation whose first output is never read.
  Jaxpr sub;
  Var x(av({})), y(av({}));
  sub.invars = {x};
  sub.eqns.push_back(eqn(prims::sin, {x}, {y}));
  sub.outvars = {y, y};
  Jaxpr j;
  Var a(av({})), c(av({}));
  j.invars = {a};
  j.eqns.push_back(eqn(call_p, {a}, {Var::dropped(av({})), c},
                       Params{{"jaxpr", intern(sub)}, {"name", std::string("g")}}));
  j.outvars = {c};
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:f32[]. let\n"
            "    _:f32[] b:f32[] = call[\n"
            "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d, d) }\n"
            "      name=g\n"
            "    ] a\n"
            "  in (b,) }");
  verify(j);
}

TEST_F(JaxprTest, PrintsSubJaxprsNestedAndIndented) {
  // Short sub-jaxpr: inline. Names continue across the nesting, as in JAX.
  Jaxpr sub;
  Var x(av({})), y(av({}));
  sub.invars = {x};
  sub.eqns.push_back(eqn(prims::sin, {x}, {y}));
  sub.outvars = {y};
  Jaxpr j;
  Var a(av({})), b(av({}));
  j.invars = {a};
  j.eqns.push_back(
      eqn(call_p, {a}, {b}, Params{{"name", std::string("f")}, {"jaxpr", intern(sub)}}));
  j.outvars = {b};
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = call[\n"
            "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n"
            "      name=f\n"
            "    ] a\n"
            "  in (b,) }");
  verify(j);

  // Long sub-jaxpr: broken and indented under its param.
  Jaxpr j2;
  Var p(av({3})), q(av({}));
  j2.invars = {p};
  j2.eqns.push_back(
      eqn(call_p, {p}, {q},
          Params{{"jaxpr", intern(sum_sin_times_two(3))}, {"name", std::string("f")}}));
  j2.outvars = {q};
  EXPECT_EQ(to_string(j2),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[] = call[\n"
            "      jaxpr={ lambda ; c:f32[3]. let\n"
            "          d:f32[3] = sin c\n"
            "          e:f32[3] = mul d 2.0:f32[]\n"
            "          f:f32[] = reduce_sum[axes=(0,)] e\n"
            "        in (f,) }\n"
            "      name=f\n"
            "    ] a\n"
            "  in (b,) }");
  verify(j2);
}

TEST_F(JaxprTest, NamesContinuePastZ) {
  const char* names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",  "n",
                         "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "ba", "bb"};
  Jaxpr j;
  Var prev(av({2}));
  j.invars = {prev};
  std::string want = "{ lambda ; a:f32[2]. let\n";
  for (int i = 1; i < 28; ++i) {
    Var next(av({2}));
    j.eqns.push_back(eqn(prims::sin, {prev}, {next}));
    want += std::string("    ") + names[i] + ":f32[2] = sin " + names[i - 1] + "\n";
    prev = next;
  }
  j.outvars = {prev};
  want += "  in (bb,) }";
  EXPECT_EQ(to_string(j), want);
}

TEST_F(JaxprTest, InternSharesStructurallyEqualJaxprs) {
  // Two traces of the same function (fresh vars each time) intern to one pointer.
  auto p1 = intern(sum_sin_times_two(4));
  auto p2 = intern(sum_sin_times_two(4));
  auto p3 = intern(sum_sin_times_two(5));
  EXPECT_EQ(p1.get(), p2.get());
  EXPECT_NE(p1.get(), p3.get());
  EXPECT_EQ(p1->hash(), structural_hash(sum_sin_times_two(4)));
  EXPECT_TRUE(structurally_equal(*p1, sum_sin_times_two(4)));
  EXPECT_FALSE(structurally_equal(*p1, *p3));
  // Differences in a literal, a param or the wiring make jaxprs different.
  Jaxpr other_lit = sum_sin_times_two(4);
  std::get<Literal>(other_lit.eqns[1].invars[1]) = lit(3.0f);
  EXPECT_NE(intern(other_lit).get(), p1.get());
  Jaxpr swapped = sum_sin_times_two(4);
  std::swap(swapped.eqns[1].invars[0], swapped.eqns[1].invars[1]);
  EXPECT_FALSE(structurally_equal(swapped, *p1));
  // Params holding interned sub-jaxprs compare by identity.
  Params a{{"jaxpr", p1}}, b{{"jaxpr", p2}}, c{{"jaxpr", p3}};
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_FALSE(a == c);
}

void expect_verify_error(const Jaxpr& j, const std::string& what, const std::string& eqn_text) {
  try {
    verify(j);
    ADD_FAILURE() << "verify accepted:\n" << j;
  } catch (const InternalError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("internal error in ir/verifier: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_NE(msg.find(eqn_text), std::string::npos) << msg;
  }
}

TEST_F(JaxprTest, VerifierRejectsUseBeforeDefinitionAndRedefinition) {
  Var a(av({3})), b(av({3})), c(av({3}));
  Jaxpr j;
  j.invars = {a};
  j.eqns.push_back(eqn(prims::sin, {c}, {b}));  // c is never defined
  j.eqns.push_back(eqn(prims::sin, {a}, {c}));
  j.outvars = {c};
  expect_verify_error(j, "used before it is defined", "b:f32[3] = sin c");

  Jaxpr k;
  k.invars = {a};
  k.eqns.push_back(eqn(prims::sin, {a}, {a}));
  k.outvars = {a};
  expect_verify_error(k, "defined more than once", "a:f32[3] = sin a");

  Jaxpr m;
  m.invars = {a};
  m.outvars = {b};
  expect_verify_error(m, "used before it is defined", "in (b,)");
}

TEST_F(JaxprTest, VerifierChecksTypesArityAndLiterals) {
  Var a(av({3})), b(av({3}, DType::kInt32)), c(av({3})), d(av({4}));
  Jaxpr wrong_dtype;
  wrong_dtype.invars = {a};
  wrong_dtype.eqns.push_back(eqn(prims::sin, {a}, {b}));
  wrong_dtype.outvars = {b};
  expect_verify_error(wrong_dtype, "typed i32[3] but 'sin' produces f32[3]", "b:i32[3] = sin a");

  Jaxpr wrong_shape;
  wrong_shape.invars = {a};
  wrong_shape.eqns.push_back(eqn(prims::sin, {a}, {d}));
  wrong_shape.outvars = {d};
  expect_verify_error(wrong_shape, "produces f32[3]", "b:f32[4] = sin a");

  Jaxpr two_outs;
  two_outs.invars = {a};
  two_outs.eqns.push_back(eqn(prims::sin, {a}, {c, Var(av({3}))}));
  two_outs.outvars = {c};
  expect_verify_error(two_outs, "produces 1 outputs", "= sin a");

  Jaxpr bad_operands;
  bad_operands.invars = {a, b};
  bad_operands.eqns.push_back(eqn(prims::add, {a, b}, {c}));
  bad_operands.outvars = {c};
  expect_verify_error(bad_operands, "abstract evaluation of 'add' on (f32[3], i32[3]) failed",
                      "c:f32[3] = add a b");

  Jaxpr vector_literal;
  vector_literal.invars = {a};
  vector_literal.eqns.push_back(
      eqn(prims::mul, {a, Literal(random_array({3}, DType::kFloat32))}, {c}));
  vector_literal.outvars = {c};
  expect_verify_error(vector_literal, "literal of type f32[3] is not a scalar", "= mul a");
}

TEST_F(JaxprTest, VerifierRecursesIntoSubJaxprs) {
  Var x(av({})), y(av({})), z(av({}));
  Jaxpr bad_sub;
  bad_sub.invars = {x};
  bad_sub.eqns.push_back(eqn(prims::sin, {z}, {y}));  // z undefined inside
  bad_sub.outvars = {y};
  Jaxpr j;
  Var a(av({})), b(av({}));
  j.invars = {a};
  j.eqns.push_back(
      eqn(call_p, {a}, {b}, Params{{"jaxpr", intern(bad_sub)}, {"name", std::string("f")}}));
  j.outvars = {b};
  expect_verify_error(j, "used before it is defined", "= sin");

  Jaxpr effect_undeclared = sum_sin_times_two(3);
  effect_undeclared.eqns[0].effects = {Effect{"io", true}};
  expect_verify_error(effect_undeclared, "effect 'io' is not among the jaxpr's effects",
                      "b:f32[3] = sin a");
  effect_undeclared.effects = {Effect{"io", true}};
  verify(effect_undeclared);
}

TEST_F(JaxprTest, EvalJaxprMatchesLax) {
  for (int64_t n : {1, 7, 1000}) {
    Jaxpr j = sum_sin_times_two(n);
    verify(j);
    Array x = random_array({n}, DType::kFloat32);
    std::vector<Array> args{x};
    std::vector<Array> got = eval_jaxpr(j, {}, args);
    ASSERT_EQ(got.size(), 1u);
    Array two = lit(2.0f).value();
    Array want = lax::reduce_sum(lax::mul(lax::sin(x), two), {0});
    EXPECT_EQ(got[0].aval(), want.aval());
    EXPECT_EQ(to_doubles(got[0]), to_doubles(want)) << "n=" << n;
    // Independent double-precision reference.
    double ref = 0;
    for (double v : to_doubles(x)) ref += std::sin(v) * 2.0;
    EXPECT_NEAR(to_doubles(got[0])[0], ref, 1e-5 * (1 + std::abs(ref)) * std::sqrt(double(n)));
  }
}

TEST_F(JaxprTest, EvalJaxprBindsConstvarsAndSubJaxprs) {
  // f(c; x) = call[sum_sin_times_two](x * c), c a constvar.
  Var c(av({5})), x(av({5})), y(av({5})), z(av({}));
  Jaxpr j;
  j.constvars = {c};
  j.invars = {x};
  j.eqns.push_back(eqn(prims::mul, {x, c}, {y}));
  j.eqns.push_back(
      eqn(call_p, {y}, {z},
          Params{{"jaxpr", intern(sum_sin_times_two(5))}, {"name", std::string("f")}}));
  j.outvars = {z, x};
  verify(j);
  Array cv = random_array({5}, DType::kFloat32), xv = random_array({5}, DType::kFloat32);
  ClosedJaxpr cj{intern(j), {cv}};
  std::vector<Array> args{xv};
  std::vector<Array> got = eval_jaxpr(cj, args);
  ASSERT_EQ(got.size(), 2u);
  Array want = lax::reduce_sum(lax::mul(lax::sin(lax::mul(xv, cv)), lit(2.0f).value()), {0});
  EXPECT_EQ(to_doubles(got[0]), to_doubles(want));
  EXPECT_TRUE(got[1].is(xv));  // outputs that are inputs pass through

  try {
    eval_jaxpr(j, {}, args);
    ADD_FAILURE() << "expected an arity error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[eval_jaxpr] the jaxpr takes 1 constants"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera
