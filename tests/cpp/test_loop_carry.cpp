// The loop-carry decisions (src/api/loop_carry.cpp, control_flow_flat.h): JAX's weak-type
// promotion of initial carries over the dtype lattice, weak outputs of strong carries made
// strong, the mismatch list, and how scan and while_loop use them — the promoted body staged
// once more, the carry's final type, the core's message listing every mismatch, and the
// caller's error callback (what the Python package words with key paths) replacing it.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/control_flow_flat.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;

Aval av(Shape s, DType d, bool weak) {
  Aval a;
  a.shape = std::move(s);
  a.dtype = d;
  a.weak_type = weak;
  return a;
}

constexpr DType f32 = DType::kFloat32, i32 = DType::kInt32, bf16 = DType::kBFloat16,
                i16 = DType::kInt16;

TEST(LoopCarry, PromotedCarryDtypeFollowsJaxsRule) {
  // Strong initial carries never change.
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, f32, false), av({}, i32, false)), std::nullopt);
  // A weak carry whose output keeps its type weakly stays.
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, f32, true), av({}, f32, true)), std::nullopt);
  // Otherwise result_type(init, output), used as a strong type.
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, i32, true), av({}, f32, false)), f32);
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, i32, true), av({}, f32, true)), f32);
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, f32, true), av({}, bf16, false)), bf16);
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, i32, true), av({}, i16, false)), i16);
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, f32, true), av({}, f32, false)), f32);
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, f32, true), av({}, i32, true)), f32);
  // A shape change promotes too (the type check then reports the shapes), as JAX.
  EXPECT_EQ(flat::promoted_carry_dtype(av({}, i32, true), av({3}, f32, false)), f32);
}

TEST(LoopCarry, WeakOutputsOfStrongCarriesAndMismatches) {
  EXPECT_TRUE(flat::carry_output_made_strong(av({2}, f32, false), av({2}, f32, true)));
  EXPECT_FALSE(flat::carry_output_made_strong(av({2}, f32, true), av({2}, f32, true)));
  EXPECT_FALSE(flat::carry_output_made_strong(av({2}, f32, false), av({2}, f32, false)));
  EXPECT_FALSE(flat::carry_output_made_strong(av({2}, f32, false), av({2}, i32, true)));
  EXPECT_FALSE(flat::carry_output_made_strong(av({2}, f32, false), av({3}, f32, true)));
  std::vector<Aval> in{av({2}, f32, false), av({}, i32, true), av({3}, f32, false),
                       av({}, f32, false)};
  std::vector<Aval> out{av({2}, f32, true), av({}, f32, false), av({1, 3}, i32, false),
                        av({}, f32, false)};
  std::vector<flat::CarryMismatch> m = flat::carry_mismatches(in, out);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].index, 1u);
  EXPECT_TRUE(m[0].dtype);
  EXPECT_FALSE(m[0].shape);
  EXPECT_EQ(m[1].index, 2u);
  EXPECT_TRUE(m[1].dtype);
  EXPECT_TRUE(m[1].shape);
}

TEST(LoopCarry, ScanPromotesAWeakCarryAndStagesTheBodyAgain) {
  int calls = 0;
  Array xs = testing::random_array({5}, f32);
  flat::Fun body = [&](std::span<const Array> v) {
    ++calls;
    return std::vector<Array>{tnp::add(v[0], v[1]), v[1]};
  };
  std::vector<Array> init{tnp::weak_scalar_int(0)};
  flat::ScanResult r = flat::scan(body, init, std::vector<Array>{xs});
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r.carry[0].dtype(), f32);
  EXPECT_FALSE(r.carry[0].weak_type());
  double want = 0;
  for (double v : testing::to_doubles(xs)) want += static_cast<float>(v);
  EXPECT_NEAR(r.carry[0].item_double(), want, 1e-5);
}

TEST(LoopCarry, StrongCarriesStayStrongWhenTheBodyReturnsAWeakValue) {
  Array xs = testing::random_array({3}, f32);
  flat::Fun body = [](std::span<const Array> v) {
    return std::vector<Array>{tnp::weak_scalar(2.5), v[1]};
  };
  std::vector<Array> init{tnp::scalar(1.0, f32)};
  flat::ScanResult r = flat::scan(body, init, std::vector<Array>{xs});
  EXPECT_FALSE(r.carry[0].weak_type());
  EXPECT_EQ(r.carry[0].item_double(), 2.5);
  std::vector<Array> w = flat::while_loop(
      [](std::span<const Array> v) { return std::vector<Array>{tnp::less(v[0], 2.0)}; },
      [](std::span<const Array>) { return std::vector<Array>{tnp::weak_scalar(3.0)}; }, init);
  EXPECT_FALSE(w[0].weak_type());
  EXPECT_EQ(w[0].item_double(), 3.0);
}

TEST(LoopCarry, WhileLoopPromotionIsStrong) {
  // while_loop(c, lambda x: x + 1.5, 0): the weak int carry takes float32, strongly (JAX
  // converts with result_type and weak_type=False).
  std::vector<Array> init{tnp::weak_scalar_int(0)};
  std::vector<Array> r = flat::while_loop(
      [](std::span<const Array> v) { return std::vector<Array>{tnp::less(v[0], 3.0)}; },
      [](std::span<const Array> v) { return std::vector<Array>{tnp::add(v[0], 1.5)}; }, init);
  EXPECT_EQ(r[0].dtype(), f32);
  EXPECT_FALSE(r[0].weak_type());
  EXPECT_EQ(r[0].item_double(), 3.0);
}

TEST(LoopCarry, CoreMessageListsEveryMismatch) {
  Array xs = testing::random_array({4, 3}, f32);
  flat::Fun body = [](std::span<const Array> v) {
    return std::vector<Array>{lax::convert_element_type(v[0], i32),
                              lax::convert_element_type(tnp::expand_dims(v[1], 0), i32), v[2]};
  };
  std::vector<Array> init{tnp::zeros({3}), tnp::zeros({3})};
  EXPECT_ERROR(TypeError, flat::scan(body, init, std::vector<Array>{xs}),
               "but they differ:\n\n  * the input carry component carry[0] has type f32[3] but "
               "the corresponding output carry component has type i32[3], so the dtypes do not "
               "match;\n  * the input carry component carry[1] has type f32[3] but the "
               "corresponding output carry component has type i32[1,3], so the dtypes do not "
               "match and also the shapes do not match.\n\nRevise the function");
}

TEST(LoopCarry, CallersCallbackWordsTheError) {
  Array xs = testing::random_array({4, 3}, f32);
  std::vector<Array> init{tnp::zeros({3}), tnp::zeros({})};
  std::vector<flat::CarryMismatch> seen;
  flat::ScanOptions o;
  o.on_carry_type_error = [&](std::span<const Aval> in, std::span<const Aval> out,
                              std::span<const flat::CarryMismatch> m) {
    seen.assign(m.begin(), m.end());
    throw std::runtime_error("custom: " + in[m[0].index].str() + " -> " + out[m[0].index].str());
  };
  flat::Fun body = [](std::span<const Array> v) {
    return std::vector<Array>{v[0], tnp::reshape(tnp::sum(v[2]), {1}), v[2]};
  };
  EXPECT_ERROR(std::runtime_error, flat::scan(body, init, std::vector<Array>{xs}, o),
               "custom: f32[] -> f32[1]");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].index, 1u);
  EXPECT_FALSE(seen[0].dtype);
  EXPECT_TRUE(seen[0].shape);
  seen.clear();
  EXPECT_ERROR(
      std::runtime_error,
      flat::while_loop(
          [](std::span<const Array> v) { return std::vector<Array>{tnp::less(v[1], 1.0)}; },
          [](std::span<const Array> v) {
            return std::vector<Array>{v[0], lax::convert_element_type(v[1], i32)};
          },
          init, o.on_carry_type_error),
      "custom: f32[] -> i32[]");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].dtype);
}

}  // namespace
}  // namespace tessera
