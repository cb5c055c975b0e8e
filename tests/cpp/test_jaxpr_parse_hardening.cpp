// The jaxpr parser against hostile text: nesting beyond kMaxParseNesting is a ValueError (no
// stack overflow), deeply nested loops elaborate in linear work (counted), sizes and integers
// from text are checked (no overflow, no InternalError), JAX's printed dot_general/pad forms
// read into Tessera's params, and every error names line:column. Regression inputs found by
// the fuzz target (tests/fuzz/fuzz_jaxpr.cpp) are replayed here too.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "ir/parser_ast.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/param_types.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

constexpr DType F32 = DType::kFloat32;

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// The error parse_jaxpr raises for `text`: must be a ValueError or TypeError whose message
// starts with "[parse_jaxpr] line:col: ".
std::string parse_error(const std::string& text) {
  try {
    parse_jaxpr(text);
  } catch (const InternalError& e) {
    ADD_FAILURE() << "InternalError: " << e.what();
    return e.what();
  } catch (const ValueError& e) {
    return e.what();
  } catch (const TypeError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "untyped error: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "parsed without an error: " << text.substr(0, 200);
  return "";
}

// Whether `msg` starts "[parse_jaxpr] L:C: " with numbers L and C.
bool has_position(const std::string& msg) {
  const std::string p = "[parse_jaxpr] ";
  if (msg.rfind(p, 0) != 0) return false;
  size_t i = p.size();
  auto digits = [&] {
    const size_t b = i;
    while (i < msg.size() && std::isdigit(static_cast<unsigned char>(msg[i]))) ++i;
    return i > b;
  };
  if (!digits() || i >= msg.size() || msg[i++] != ':') return false;
  return digits() && msg.compare(i, 2, ": ") == 0;
}

#define EXPECT_PARSE_ERROR(text, substr)                     \
  do {                                                       \
    const std::string msg_ = parse_error(text);              \
    EXPECT_TRUE(has_position(msg_)) << msg_;                 \
    EXPECT_NE(msg_.find(substr), std::string::npos) << msg_; \
  } while (0)

// ---- 1. nesting ----

TEST(JaxprParseHardening, DeepTuplesAreAValueError) {
  const std::string text = "{ lambda ; a:f32[]. let b:f32[] = sin[x=" + repeat("(", 100000);
  EXPECT_PARSE_ERROR(text, "deeper than 100 levels");
  // The position is that of the tuple beyond the limit: the 100th '(' (the jaxpr is level 1).
  EXPECT_PARSE_ERROR(text, "1:140: ");
  // Within the limit the tuple reads (then fails to type-check as integer_pow's exponent).
  const std::string ok = "{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=" + repeat("(", 99) +
                         "1" + repeat(")", 99) + "] a in (b,) }";
  const std::string msg = parse_error(ok);
  EXPECT_EQ(msg.find("deeper"), std::string::npos) << msg;
  EXPECT_TRUE(has_position(msg)) << msg;
}

TEST(JaxprParseHardening, DeepLambdasAreAValueError) {
  const std::string text = repeat("{ lambda ; a:f32[]. let b:f32[] = sin[x=", 100000);
  EXPECT_PARSE_ERROR(text, "deeper than 100 levels");
  EXPECT_PARSE_ERROR(text, "nests jaxprs and param tuples");
  // Brackets inside a word value and types do not recurse: long runs are plain errors.
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[]. let b:f32[] = sin[x=" + repeat("[", 100000), "expected");
}

// ---- 2. work grows linearly with the nesting of loops whose carries' weak types disagree ----

// A while nest `depth` deep: each body runs the next while on its carry and makes the result
// weak, so the strong reading of each carry breaks the loop's carry types and every reading is
// tried at every level.
std::string nested_whiles(int depth) {
  const std::string cond = "{ lambda ; c:f32[]. let d:bool[] = lt c 1.0:f32[] in (d,) }";
  auto weak = [](const std::string& in, const std::string& out) {
    return out + ":f32[] = convert_element_type[new_dtype=float32 weak_type=True] " + in;
  };
  std::string body = "{ lambda ; a:f32[]. let " + weak("a", "b") + " in (b,) }";
  for (int k = 0; k < depth; ++k)
    body = "{ lambda ; a:f32[]. let b:f32[] = while[body_jaxpr=" + body +
           " body_nconsts=0 cond_jaxpr=" + cond + " cond_nconsts=0] a; " + weak("b", "e") +
           " in (e,) }";
  return "{ lambda ; . let b:f32[] = while[body_jaxpr=" + body +
         " body_nconsts=0 cond_jaxpr=" + cond + " cond_nconsts=0] 1.0:f32[] in (b,) }";
}

struct Cost {
  int64_t elaborations;
  double seconds;
  bool ok;
  std::string error;
};

Cost parse_cost(const std::string& text) {
  const int64_t before = jaxpr_parse::jaxpr_elaboration_count();
  const auto t0 = std::chrono::steady_clock::now();
  Cost c{0, 0, true, ""};
  try {
    parse_jaxpr(text);
  } catch (const Error& e) {
    c.ok = false;
    c.error = e.what();
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.elaborations = jaxpr_parse::jaxpr_elaboration_count() - before;
  return c;
}

TEST(JaxprParseHardening, NestedWhileElaborationIsLinear) {
  const std::string t1 = nested_whiles(1), t12 = nested_whiles(12), t24 = nested_whiles(24);
  const Cost c1 = parse_cost(t1), c12 = parse_cost(t12), c24 = parse_cost(t24);
  EXPECT_TRUE(c12.ok) << c12.error;
  EXPECT_TRUE(c24.ok) << c24.error;
  std::printf("elaborations: depth 1 %lld, 12 %lld, 24 %lld; seconds %.4f %.4f %.4f\n",
              static_cast<long long>(c1.elaborations), static_cast<long long>(c12.elaborations),
              static_cast<long long>(c24.elaborations), c1.seconds, c12.seconds, c24.seconds);
  // Each level holds two sub-jaxprs, each elaborated for at most three weak-type readings of
  // its inputs: at most 6 per level, whatever the depth (2^depth without memoization).
  EXPECT_LE(c12.elaborations, 6 * 13 + 1);
  EXPECT_LE(c24.elaborations, 6 * 25 + 1);
  EXPECT_LE(c24.elaborations, 3 * c12.elaborations);
  // Wall time: loose, relative to the shallow text and scaled by the size ratio.
  const double size_ratio = static_cast<double>(t24.size()) / static_cast<double>(t1.size());
  EXPECT_LT(c24.seconds, 50 * size_ratio * std::max(c1.seconds, 1e-4));
}

// The parse of the nested loops is a well-typed jaxpr that prints back the same.
TEST(JaxprParseHardening, NestedWhilesRoundTrip) {
  const Jaxpr j = parse_jaxpr(nested_whiles(6));
  const std::string text = to_string(j);
  EXPECT_EQ(to_string(parse_jaxpr(text)), text);
}

// ---- 3. sizes and integers from text ----

TEST(JaxprParseHardening, TypesArePositionedValueErrors) {
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[99999999999999999999]. let in (a,) }",
                     "1:18: the dimension size does not fit in int64");
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[4611686018427387904,4]. let in (a,) }",
                     "1:14: invalid type 'f32[4611686018427387904,4]'");
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[4611686018427387904,4]. let in (a,) }", "too large");
  EXPECT_PARSE_ERROR("{ lambda ; a:u8[4611686018427387905]. let in (a,) }", "2^62 bytes");
  EXPECT_EQ(
      parse_jaxpr("{ lambda ; a:u8[4611686018427387904]. let in (a,) }").invars[0].aval().size(),
      int64_t{1} << 62);
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[3,-1]. let in (a,) }", "1:20: negative dimensions");
  const std::string rank65 = "{ lambda ; a:f32[" + repeat("1,", 64) + "1]. let in (a,) }";
  EXPECT_PARSE_ERROR(rank65, "at most 64 dimensions");
  EXPECT_PARSE_ERROR(rank65, "1:146: ");
  // Rank 64 is fine.
  const std::string rank64 = "{ lambda ; a:f32[" + repeat("1,", 63) + "1]. let in (a,) }";
  EXPECT_EQ(parse_jaxpr(rank64).invars[0].aval().ndim(), 64);
  // A zero dimension does not excuse the others (as NumPy: strides stay bounded); modest ones
  // with a zero are a valid empty shape.
  EXPECT_THROW(parse_jaxpr("{ lambda ; a:f32[0,4611686018427387904]. let in (a,) }"), ValueError);
  EXPECT_EQ(parse_jaxpr("{ lambda ; a:f32[0,1099511627776]. let in (a,) }").invars[0].aval().size(),
            0);
  // The result type of an equation (e.g. a broadcast to a huge shape) is checked too.
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[]. let b:f32[4611686018427387904,4] = broadcast_in_dim["
      "broadcast_dimensions=() shape=(4611686018427387904, 4)] a in (b,) }",
      "1:27: invalid type 'f32[4611686018427387904,4]'");
}

TEST(JaxprParseHardening, IntegersThatOverflowInt64) {
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:i32[2]. let b:i32[2] = add a 99999999999999999999:i32[] in (b,) }",
      "1:43: '99999999999999999999' is not in range of its dtype");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:i64[2]. let b:i64[2] = add a -9223372036854775809:i64[] in (b,) }",
      "is not in range of its dtype");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:u64[2]. let b:u64[2] = add a 18446744073709551616:u64[] in (b,) }",
      "is not a uint64 value");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[2]. let b:f32[2] = integer_pow[y=99999999999999999999] a in (b,) }",
      "1:51: the integer 99999999999999999999 of the param 'y' does not fit in int64");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[2]. let b:f32[] = reduce_sum[axes=(0, 99999999999999999999)] a in (b,) }",
      "1:56: the integer 99999999999999999999 does not fit in int64");
  // Counts that fit in int64 but not in the operands: abstract_eval rejects them, no overflow.
  const std::string cond = "{ lambda ; c:f32[]. let d:bool[] = lt c 1.0:f32[] in (d,) }";
  const std::string body = "{ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }";
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[]. let b:f32[] = while[body_jaxpr=" + body +
                         " body_nconsts=9223372036854775807 cond_jaxpr=" + cond +
                         " cond_nconsts=9223372036854775807] a in (b,) }",
                     "does not type-check");
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[]. let b:f32[] = while[body_jaxpr=" + body +
                         " body_nconsts=-1 cond_jaxpr=" + cond + " cond_nconsts=0] a in (b,) }",
                     "does not type-check");
}

// ---- 4. JAX's printed forms ----

TEST(JaxprParseHardening, JaxDotGeneralForm) {
  auto staged = [](lax::DotDimensionNumbers dn, std::optional<DType> pref, Shape l, Shape r) {
    return make_jaxpr([dn, pref](const Array& x, const Array& y) {
      return lax::dot_general(x, y, dn, pref);
    })(ShapeDtypeStruct{l, F32}, ShapeDtypeStruct{r, F32});
  };
  // What JAX prints for jnp.dot / lax.dot_general (list dimension numbers, precision and
  // sharding at their defaults).
  const Jaxpr a = parse_jaxpr(
      "{ lambda ; a:f32[2,3] b:f32[3,4]. let\n"
      "    c:f32[2,4] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      out_sharding=None\n"
      "      precision=None\n"
      "      preferred_element_type=float32\n"
      "    ] a b\n"
      "  in (c,) }");
  ClosedJaxpr want_a = staged({{1}, {0}, {}, {}}, F32, {2, 3}, {3, 4});
  EXPECT_TRUE(structurally_equal(a, *want_a.jaxpr)) << to_string(a);
  EXPECT_EQ(DotDimensionNumbers::from_param(
                a.eqns[0].params.get_record("dimension_numbers", kDotDimensionNumbersDef))
                .lhs_contracting,
            std::vector<int64_t>{1});
  // Batch dims, tuples instead of lists (older JAX), no preferred type.
  const Jaxpr b = parse_jaxpr(
      "{ lambda ; a:f32[5,2,3] b:f32[5,3,4]. let c:f32[5,2,4] = dot_general["
      "dimension_numbers=(((2,), (1,)), ((0,), (0,))) precision=None "
      "preferred_element_type=None] a b in (c,) }");
  ClosedJaxpr want_b = staged({{2}, {1}, {0}, {0}}, std::nullopt, {5, 2, 3}, {5, 3, 4});
  EXPECT_TRUE(structurally_equal(b, *want_b.jaxpr)) << to_string(b);
  // The parsed jaxpr evaluates like the staged one.
  const Array x = testing::random_array({2, 3}, F32), y = testing::random_array({3, 4}, F32);
  EXPECT_EQ(testing::compare(testing::to_doubles(eval_jaxpr(a, {}, std::vector<Array>{x, y})[0]),
                             testing::to_doubles(lax::dot_general(x, y, {{1}, {0}, {}, {}}, F32)),
                             1e-6, 1e-6),
            "");
  // Malformed dimension numbers name their position.
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general["
      "dimension_numbers=(([1], [0]),)] a b in (c,) }",
      "1:82: dot_general's dimension_numbers must be");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general["
      "dimension_numbers=(([x], [0]), ([], []))] a b in (c,) }",
      "dimension_numbers must be");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general["
      "dimension_numbers=(([99999999999999999999], [0]), ([], []))] a b in (c,) }",
      "does not fit in int64");
  EXPECT_PARSE_ERROR(
      "{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general["
      "dimension_numbers=(([5], [0]), ([], []))] a b in (c,) }",
      "does not type-check");
}

TEST(JaxprParseHardening, JaxNestedPaddingConfig) {
  const Jaxpr j = parse_jaxpr(
      "{ lambda ; a:f32[2]. let b:f32[6] = pad[padding_config=((1, 3, 0),)] a 0.0:f32[] "
      "in (b,) }");
  EXPECT_EQ(j.eqns[0].params.get_ints("padding_config"), (std::vector<int64_t>{1, 3, 0}));
  const Jaxpr k = parse_jaxpr(
      "{ lambda ; a:f32[2,3]. let b:f32[4,4] = pad[padding_config=((1, 1, 0), (0, 1, 0))] a "
      "0.0:f32[] in (b,) }");
  EXPECT_EQ(k.eqns[0].params.get_ints("padding_config"), (std::vector<int64_t>{1, 1, 0, 0, 1, 0}));
}

// ---- every error is positioned and typed ----

TEST(JaxprParseHardening, BadTextsArePositionedErrors) {
  const std::vector<std::string> bad = {
      "{ lambda ; a:f32[3]. let b:f32[3] = sin a a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = add a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = sin[foo=1 foo=2] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[] = reduce_sum[axes=abc] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[] = reduce_sum a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=1.5] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = while a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = cond[branches=()] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = scan[jaxpr=None] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = dot_general a a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[6] = pad[padding_config=((1,),)] a 0.0:f32[] in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = convert_element_type[new_dtype=int99] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = mul a 1e999999:f32[] in (b,) }x",
      "{ lambda ; a:f32[3]. let b:f32[3] = reshape[new_sizes=(4611686018427387904, 2)] a in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = iota[dimension=0 dtype=int32 shape=(-3,)] in (b,) }",
  };
  for (const std::string& t : bad) {
    SCOPED_TRACE(t);
    const std::string msg = parse_error(t);
    EXPECT_TRUE(has_position(msg)) << msg;
  }
}

// Params a primitive does not take are reported at their position (with the signature the
// primitive declares; undeclared signatures skip the check).
TEST(JaxprParseHardening, UnknownParamIsPositioned) {
  for (const char* p : {"sin", "reduce_max"})
    if (!find_primitive(p)->signature.declared()) GTEST_SKIP() << p << " declares no signature";
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[3]. let b:f32[3] = sin[foo=1] a in (b,) }",
                     "1:41: 'sin' has no param 'foo'");
  // Fuzz finding (corpus regress_reduce_no_operand.txt): a reduction without its operand
  // crashed in the rule; the declared signature makes it a positioned TypeError-based error.
  EXPECT_PARSE_ERROR("{ lambda ; a:f32[3]. let b:f32[] = reduce_max[axes=(0,)] in (b,) }",
                     "1:26: the equation does not type-check");
  // JAX's defaults that Tessera does not model are dropped: `accuracy=None` on sin.
  EXPECT_EQ(parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin[accuracy=None] a in (b,) }")
                .eqns[0]
                .params.size(),
            0u);
}

}  // namespace
}  // namespace tessera
