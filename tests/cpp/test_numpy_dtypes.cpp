// tnp's short dtype names (tnp::float16, ...) are jnp's: each is the DType JAX's name says,
// and they work wherever a DType does (creation, astype), with the values NumPy gives.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;

TEST(NumpyDTypes, ShortNamesAreJaxsDtypes) {
  const std::pair<DType, const char*> names[] = {
      {tnp::bool_, "bool"},      {tnp::int8, "int8"},         {tnp::int16, "int16"},
      {tnp::int32, "int32"},     {tnp::int64, "int64"},       {tnp::uint8, "uint8"},
      {tnp::uint16, "uint16"},   {tnp::uint32, "uint32"},     {tnp::uint64, "uint64"},
      {tnp::float16, "float16"}, {tnp::bfloat16, "bfloat16"}, {tnp::float32, "float32"},
      {tnp::float64, "float64"}, {tnp::float0, "float0"}};
  for (const auto& [d, name] : names) {
    EXPECT_EQ(dtype_name(d), name);
    EXPECT_EQ(dtype_from_name(name), d);
  }
}

TEST(NumpyDTypes, ShortNamesWorkWhereADTypeDoes) {
  Array z = tnp::zeros({2, 3}, tnp::float16);
  EXPECT_EQ(z.dtype(), DType::kFloat16);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  Array x = testing::random_array({64}, DType::kFloat32, -100.0, 100.0);
  std::vector<double> xs = testing::to_doubles(x);
  // NumPy's float -> int8 conversion truncates toward zero (values within range here).
  std::vector<double> got = testing::to_doubles(tnp::astype(x, tnp::int8));
  ASSERT_EQ(got.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], std::trunc(xs[i])) << xs[i];
  Array b = tnp::astype(x, tnp::bool_);
  EXPECT_EQ(b.dtype(), DType::kBool);
  std::vector<double> bs = testing::to_doubles(b);
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(bs[i], xs[i] != 0.0 ? 1.0 : 0.0);
}

}  // namespace
}  // namespace tessera
