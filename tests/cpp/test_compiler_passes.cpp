// The compiler's program passes (compiler/pipeline.h), each pinned as jaxpr text before and
// after, and the optimized programs computing what the originals compute (the eager executor on
// fresh random inputs): CSE (duplicates merged, chains collapsing in one pass, params and
// literals compared by value, effects never merged), algebraic simplification (each family's
// rules, bitwise exact, signed zeros respected), the pipeline's order and TESSERA_DUMP_IR.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/executable.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/simplify.h"
#include "compiler/pipeline.h"
#include "ir/passes/dce.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::random_array;
using testing::to_doubles;

std::shared_ptr<const Jaxpr> P(const std::string& text) { return intern(parse_jaxpr(text)); }

std::string cse_text(const std::string& before) { return to_string(*compiler::cse(*P(before))); }

// The program and its optimized form give bitwise the same results on random inputs.
void expect_same_values(const std::string& text) {
  std::shared_ptr<const Jaxpr> j = P(text);
  std::vector<Array> args;
  for (const Var& v : j->invars) args.push_back(random_array(v.aval().shape, v.aval().dtype));
  std::vector<Array> want = eval_jaxpr(*j, {}, args);
  std::vector<Array> got = compiler::compile(*j)->execute(ExecContext{default_device()}, args);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(to_doubles(got[i]), to_doubles(want[i]));
}

TEST(Cse, MergesDuplicatesAndChains) {
  const std::string before =
      "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = sin a; d:f32[3] = cos b; "
      "e:f32[3] = cos c; f:f32[3] = add d e in (f,) }";
  EXPECT_EQ(cse_text(before),
            to_string(*P("{ lambda ; a:f32[3]. let b:f32[3] = sin a; d:f32[3] = cos b; "
                         "f:f32[3] = add d d in (f,) }")));
  expect_same_values(before);
}

TEST(Cse, ComparesParamsAndLiteralsByValue) {
  const std::string before =
      "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=2] a; c:f32[3] = integer_pow[y=3] a; "
      "d:f32[3] = integer_pow[y=2] a; e:f32[3] = mul a 2.0:f32[]; g:f32[3] = mul a 2.0:f32[]; "
      "h:f32[3] = mul a 3.0:f32[]; i:f32[3] = add b c; j:f32[3] = add d e; k:f32[3] = add g h "
      "in (i, j, k) }";
  EXPECT_EQ(cse_text(before),
            to_string(*P("{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=2] a; "
                         "c:f32[3] = integer_pow[y=3] a; e:f32[3] = mul a 2.0:f32[]; "
                         "h:f32[3] = mul a 3.0:f32[]; i:f32[3] = add b c; j:f32[3] = add b e; "
                         "k:f32[3] = add e h in (i, j, k) }")));
  expect_same_values(before);
  // Operands in another order are another expression (CSE does not assume commutativity).
  const std::string swapped =
      "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = sub a b; d:f32[3] = sub b a in (c, d) }";
  EXPECT_EQ(cse_text(swapped), to_string(*P(swapped)));
}

TEST(Cse, NeverMergesEffects) {
  // Two identical prints under jit both print.
  std::vector<std::string> lines;
  debug::PrintSink prev = debug::set_print_sink([&](const std::string& s) { lines.push_back(s); });
  auto f = jit([](const Array& x) {
    debug::print("x={}", x);
    debug::print("x={}", x);
    return tnp::sin(x) + tnp::sin(x);
  });
  Array x = random_array({2}, DType::kFloat32);
  Array y = f(x);
  debug::set_print_sink(prev);
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_EQ(to_doubles(y), to_doubles(tnp::sin(x) + tnp::sin(x)));
  const std::string plan = flat::compiled_text(make_jaxpr([](const Array& v) {
    debug::print("v={}", v);
    debug::print("v={}", v);
    return tnp::sin(v) + tnp::sin(v);
  })(x));
  size_t prints = 0, sins = 0;
  for (size_t p = plan.find("= eager debug_callback"); p != std::string::npos;
       p = plan.find("= eager debug_callback", p + 1))
    ++prints;
  // One sin, eager or in a fused kernel's body ("%1:f32 = sin %0").
  for (size_t p = plan.find(" sin %"); p != std::string::npos; p = plan.find(" sin %", p + 1))
    ++sins;
  EXPECT_EQ(prints, 2u) << plan;
  EXPECT_EQ(sins, 1u) << plan;
}

// simplify, then dce (which removes the producers a rewrite left unread).
std::string simplify_text(const std::string& before) {
  std::shared_ptr<const Jaxpr> s = compiler::simplify(*P(before));
  return to_string(*ir::dce(*s, std::vector<bool>(s->outvars.size(), true)).first);
}

void expect_simplifies(const std::string& before, const std::string& after) {
  EXPECT_EQ(simplify_text(before), to_string(*P(after))) << before;
  expect_same_values(before);
}

TEST(Simplify, ArithmeticIdentitiesAreExact) {
  expect_simplifies(
      "{ lambda ; a:f32[4]. let b:f32[4] = mul a 1.0:f32[]; c:f32[4] = mul 1.0:f32[] b; "
      "d:f32[4] = sub c 0.0:f32[]; e:f32[4] = add d -0.0:f32[]; f:f32[4] = neg e; "
      "g:f32[4] = neg f in (g,) }",
      "{ lambda ; a:f32[4]. let  in (a,) }");
  // x + 0.0 is not x for floats (-0.0 + 0.0 = +0.0), nor x - (-0.0); mul by 2 stays.
  const std::string kept =
      "{ lambda ; a:f32[4]. let b:f32[4] = add a 0.0:f32[]; c:f32[4] = sub b -0.0:f32[]; "
      "d:f32[4] = mul c 2.0:f32[] in (d,) }";
  EXPECT_EQ(simplify_text(kept), to_string(*P(kept)));
  // Integers: x + 0 is x.
  expect_simplifies("{ lambda ; a:i32[3]. let b:i32[3] = add 0:i32[] a in (b,) }",
                    "{ lambda ; a:i32[3]. let  in (a,) }");
  // -0.0 + 0.0 stays +0.0 after optimization (the executable computes what eager does).
  Array z = tnp::array(std::vector<float>{-0.0f, 1.0f}, {2});
  auto f = jit([](const Array& x) { return x + 0.0; });
  EXPECT_FALSE(std::signbit(f(z).to_vector<float>()[0]));
}

TEST(Simplify, ShapeChainsCollapse) {
  expect_simplifies(
      "{ lambda ; a:f32[2,3,4]. let b:f32[3,4,2] = transpose[permutation=(1, 2, 0)] a; "
      "c:f32[4,2,3] = transpose[permutation=(1, 2, 0)] b; "
      "d:f32[2,3,4] = transpose[permutation=(1, 2, 0)] c in (d,) }",
      "{ lambda ; a:f32[2,3,4]. let  in (a,) }");
  expect_simplifies(
      "{ lambda ; a:f32[2,3,4]. let b:f32[3,2,4] = transpose[permutation=(1, 0, 2)] a; "
      "c:f32[3,4,2] = transpose[permutation=(0, 2, 1)] b in (c,) }",
      "{ lambda ; a:f32[2,3,4]. let c:f32[3,4,2] = transpose[permutation=(1, 2, 0)] a "
      "in (c,) }");
  expect_simplifies(
      "{ lambda ; a:f32[6]. let b:f32[2,3] = reshape[new_sizes=(2, 3)] a; "
      "c:f32[3,2] = reshape[new_sizes=(3, 2)] b; d:f32[6] = reshape[new_sizes=(6,)] c; "
      "e:f32[1,6] = reshape[new_sizes=(1, 6)] d in (e,) }",
      "{ lambda ; a:f32[6]. let e:f32[1,6] = reshape[new_sizes=(1, 6)] a in (e,) }");
  expect_simplifies(
      "{ lambda ; a:f32[3]. let b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,) "
      "shape=(1, 3)] a; c:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2) "
      "shape=(4, 2, 3)] b; d:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(0, 1, 2) "
      "shape=(4, 2, 3)] c in (d,) }",
      "{ lambda ; a:f32[3]. let d:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(2,) "
      "shape=(4, 2, 3)] a in (d,) }");
}

TEST(Simplify, DotGeneralReadsThroughTransposes) {
  auto count = [](const std::string& t, const std::string& w) {
    size_t n = 0;
    for (size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1)) ++n;
    return n;
  };
  // a.T @ b.T, a batched x @ y.T, and transposes that only permute contracting dims: the dots
  // read the transposes' operands (the BLAS call views them transposed).
  const std::vector<std::string> folded = {
      to_string(*make_jaxpr([](const Array& a, const Array& b) {
                   return tnp::matmul(tnp::transpose(a), tnp::transpose(b));
                 })(random_array({5, 3}, DType::kFloat32), random_array({4, 5}, DType::kFloat32))
                     .jaxpr),
      to_string(
          *make_jaxpr([](const Array& x, const Array& y) {
             return tnp::matmul(x, lax::transpose(y, {0, 2, 1}));
           })(random_array({2, 3, 6}, DType::kFloat32), random_array({2, 7, 6}, DType::kFloat32))
               .jaxpr),
      to_string(*make_jaxpr([](const Array& x, const Array& y) {
                   return lax::dot_general(lax::transpose(x, {0, 2, 1}), y,
                                           lax::DotDimensionNumbers{{1, 2}, {0, 1}, {}, {}});
                 })(random_array({4, 2, 3}, DType::kInt32), random_array({3, 2, 5}, DType::kInt32))
                     .jaxpr)};
  for (const std::string& text : folded) {
    const std::string after = simplify_text(text);
    EXPECT_EQ(count(after, "transpose"), 0u) << text << "\n" << after;
    EXPECT_EQ(count(after, "dot_general"), 1u) << after;
    expect_same_values(text);
  }
  // A transpose that reorders the free dims stays (the output's order would change).
  const std::string kept =
      to_string(*make_jaxpr([](const Array& x, const Array& y) {
                   return lax::dot_general(lax::transpose(x, {1, 0, 2}), y,
                                           lax::DotDimensionNumbers{{2}, {0}, {}, {}});
                 })(random_array({3, 4, 5}, DType::kFloat32), random_array({5, 2}, DType::kFloat32))
                     .jaxpr);
  EXPECT_EQ(count(simplify_text(kept), "transpose"), 1u) << simplify_text(kept);
  expect_same_values(kept);
}

TEST(Simplify, ConvertChainsAndConstantSelect) {
  // f16 -> f32 is exact, so f16 -> f32 -> f64 is one convert; f32 -> f16 -> f32 is not.
  expect_simplifies(
      "{ lambda ; a:f16[3]. let b:f32[3] = convert_element_type[new_dtype=float32 "
      "weak_type=False] a; c:f64[3] = convert_element_type[new_dtype=float64 weak_type=False] b "
      "in (c,) }",
      "{ lambda ; a:f16[3]. let c:f64[3] = convert_element_type[new_dtype=float64 "
      "weak_type=False] a in (c,) }");
  const std::string lossy =
      "{ lambda ; a:f32[3]. let b:f16[3] = convert_element_type[new_dtype=float16 "
      "weak_type=False] a; c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b "
      "in (c,) }";
  EXPECT_EQ(simplify_text(lossy), to_string(*P(lossy)));
  // int8 -> int32 -> f32 and back to int8's own type.
  expect_simplifies(
      "{ lambda ; a:i8[3]. let b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] "
      "a; c:i8[3] = convert_element_type[new_dtype=int8 weak_type=False] b in (c,) }",
      "{ lambda ; a:i8[3]. let  in (a,) }");
  expect_simplifies(
      "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = select_n True:bool[] a b; "
      "d:f32[3] = select_n 0:i32[] a b in (c, d) }",
      "{ lambda ; a:f32[3] b:f32[3]. let  in (b, a) }");
}

// The convert-chain rule is sound for every dtype triple: x.astype(mid).astype(to) under jit
// (simplified when x's dtype -> mid is lossless) equals eager evaluation bitwise, on random
// values in a narrow and a wide range.
TEST(Simplify, ConvertChainsEqualEagerForEveryDtypeTriple) {
  const bool prev = x64_enabled();
  set_x64_enabled(true);
  int simplified = 0;
  for (DType from : testing::kAllDTypes) {
    const Array narrow = random_array({16}, from);
    const Array wide = random_array({16}, from, -1e6, 1e6);
    for (DType mid : testing::kAllDTypes) {
      for (DType to : testing::kAllDTypes) {
        auto chain = [mid, to](const Array& x) { return tnp::astype(tnp::astype(x, mid), to); };
        auto jf = jit(chain);
        for (const Array& x : {narrow, wide}) {
          const Array got = jf(x), want = chain(x);
          ASSERT_EQ(got.dtype(), want.dtype());
          ASSERT_EQ(std::memcmp(got.raw_data("test"), want.raw_data("test"), got.nbytes()), 0)
              << dtype_name(from) << " -> " << dtype_name(mid) << " -> " << dtype_name(to);
        }
        const std::string plan = flat::compiled_text(make_jaxpr(chain)(narrow));
        if (plan.find("convert_element_type") != std::string::npos &&
            plan.find("%2:") == std::string::npos)
          ++simplified;  // one convert left in the plan
      }
    }
  }
  set_x64_enabled(prev);
  EXPECT_GT(simplified, 100);  // the rule fires on the lossless intermediates
}

TEST(Pipeline, PassOrderAndDumpIr) {
  EXPECT_EQ(compiler::pass_names(),
            (std::vector<std::string>{"inline_calls", "expand", "fold_constants", "simplify", "cse",
                                      "dce"}));
  ASSERT_EQ(setenv("TESSERA_DUMP_IR", "cse,dce", 1), 0);
  EXPECT_EQ(compiler::dump_ir_passes(), (std::vector<std::string>{"cse", "dce"}));
  ASSERT_EQ(setenv("TESSERA_DUMP_IR", "all", 1), 0);
  EXPECT_EQ(compiler::dump_ir_passes(), compiler::pass_names());
  ::testing::internal::CaptureStderr();
  (void)compiler::optimize(
      *P("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = sin a; "
         "d:f32[] = add b c in (d,) }"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(
      err.find(
          "// after cse:\n{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = add b b in (c,) }"),
      std::string::npos)
      << err;
  EXPECT_NE(err.find("// after inline_calls:"), std::string::npos) << err;
  ASSERT_EQ(setenv("TESSERA_DUMP_IR", "cse,fusion", 1), 0);
  EXPECT_ERROR(ValueError, compiler::dump_ir_passes(),
               "[TESSERA_DUMP_IR] unknown pass 'fusion' in 'cse,fusion'; accepted: all, "
               "inline_calls");
  ASSERT_EQ(unsetenv("TESSERA_DUMP_IR"), 0);
  EXPECT_TRUE(compiler::dump_ir_passes().empty());
}

}  // namespace
}  // namespace tessera
