// Extended dtypes through the index-map primitives, with JAX's rule for key arrays: a
// key<fry> element is one key (2 x uint32); shapes, axes and dimension numbers name the key
// array's logical dimensions, and the physical trailing dimension of size 2 moves with its
// element and is never an axis. So each index map on a key array equals the same map on the
// physical uint32[..., 2] array with the trailing dimension left in place (checked bytewise on
// random keys). float0 arrays (zero bytes per element) pass through with their shapes.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using Ints = std::vector<int64_t>;

// A random uint32 array of `shape` + {2} and the key array over the same bytes.
std::pair<Array, Array> random_keys(const Shape& shape) {
  Shape phys = shape;
  phys.push_back(2);
  std::vector<uint32_t> v(static_cast<size_t>(shape_size(phys)));
  for (auto& e : v) e = static_cast<uint32_t>(testing::rng()());
  Array p = array_from_host(Aval{phys, DType::kUInt32, false}, v.data());
  Array k = array_from_host(Aval{shape, DType::kKeyThreefry, false}, v.data());
  return {k, p};
}

std::vector<uint8_t> bytes(const Array& a) {
  const auto* p = static_cast<const uint8_t*>(a.raw_data());
  return std::vector<uint8_t>(p, p + a.nbytes());
}

struct Case {
  std::string name;
  std::function<Array(const Array&)> on_keys;  // logical dims
  std::function<Array(const Array&)> on_phys;  // the same with the trailing dim kept
  Shape out_shape;                             // of the key result
};

TEST(ExtendedDTypes, KeyArraysThroughIndexMaps) {
  auto [k, p] = random_keys({3, 4});
  auto [k1, p1] = random_keys({1, 4});
  Array i1 = tnp::scalar(1, DType::kInt32);
  Array which = tnp::array(std::vector<bool>{true, false, true, false}, {4});
  const std::vector<Case> cases = {
      {"broadcast_in_dim",
       [](const Array& x) {
         return lax::broadcast_in_dim(x, {2, 3, 4}, {1, 2});
       },
       [](const Array& x) {
         return lax::broadcast_in_dim(x, {2, 3, 4, 2}, {1, 2, 3});
       },
       {2, 3, 4}},
      {"reshape",
       [](const Array& x) {
         return lax::reshape(x, {4, 3});
       },
       [](const Array& x) {
         return lax::reshape(x, {4, 3, 2});
       },
       {4, 3}},
      {"transpose",
       [](const Array& x) {
         return lax::transpose(x, {1, 0});
       },
       [](const Array& x) {
         return lax::transpose(x, {1, 0, 2});
       },
       {4, 3}},
      {"slice",
       [](const Array& x) {
         return lax::slice(x, {1, 1}, {3, 4}, Ints{1, 2});
       },
       [](const Array& x) {
         return lax::slice(x, {1, 1, 0}, {3, 4, 2}, Ints{1, 2, 1});
       },
       {2, 2}},
      {"rev",
       [](const Array& x) {
         return lax::rev(x, {0, 1});
       },
       [](const Array& x) {
         return lax::rev(x, {0, 1});
       },
       {3, 4}},
      {"concatenate",
       [&](const Array& x) {
         return lax::concatenate({x, x}, 1);
       },
       [&](const Array& x) {
         return lax::concatenate({x, x}, 1);
       },
       {3, 8}},
      {"dynamic_slice",
       [&](const Array& x) {
         return lax::dynamic_slice(x, {i1, i1}, {2, 2});
       },
       [&](const Array& x) {
         return lax::dynamic_slice(x, {i1, i1, tnp::scalar(0, DType::kInt32)}, {2, 2, 2});
       },
       {2, 2}},
      {"dynamic_update_slice",
       [&](const Array& x) {
         return lax::dynamic_update_slice(x, k1, {i1, i1});
       },
       [&](const Array& x) {
         return lax::dynamic_update_slice(x, p1, {i1, i1, tnp::scalar(0, DType::kInt32)});
       },
       {3, 4}},
      {"squeeze",
       [](const Array& x) {
         return lax::squeeze(lax::reshape(x, {1, 12}), {0});
       },
       [](const Array& x) {
         return lax::squeeze(lax::reshape(x, {1, 12, 2}), {0});
       },
       {12}},
      {"expand_dims",
       [](const Array& x) { return lax::expand_dims(x, {0}); },
       [](const Array& x) { return lax::expand_dims(x, {0}); },
       {1, 3, 4}},
      {"select_n",
       [&](const Array& x) {
         return lax::select_n(lax::broadcast_in_dim(which, {3, 4}, {1}), {x, lax::rev(x, {1})});
       },
       [&](const Array& x) {
         return lax::select_n(lax::broadcast_in_dim(which, {3, 4, 2}, {1}), {x, lax::rev(x, {1})});
       },
       {3, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Array got = c.on_keys(k);
    Array want = c.on_phys(p);
    EXPECT_EQ(got.dtype(), DType::kKeyThreefry);
    EXPECT_EQ(got.shape(), c.out_shape);
    EXPECT_EQ(bytes(got), bytes(want));
    // Staged, the key type shows in the jaxpr and the op is the same.
    const std::string text = to_string(*make_jaxpr(c.on_keys)(k).jaxpr);
    EXPECT_NE(text.find("key<fry>"), std::string::npos) << text;
  }
}

TEST(ExtendedDTypes, Float0ThroughIndexMaps) {
  Array z = empty_array(Aval{{3, 4}, DType::kFloat0, false}, "test");
  EXPECT_EQ(z.nbytes(), 0u);
  const std::vector<std::pair<std::function<Array(const Array&)>, Shape>> cases = {
      {[](const Array& x) {
         return lax::broadcast_in_dim(x, {2, 3, 4}, {1, 2});
       },
       {2, 3, 4}},
      {[](const Array& x) { return lax::reshape(x, {12}); }, {12}},
      {[](const Array& x) {
         return lax::transpose(x, {1, 0});
       },
       {4, 3}},
      {[](const Array& x) {
         return lax::slice(x, {1, 0}, {3, 2});
       },
       {2, 2}},
      {[](const Array& x) { return lax::rev(x, {1}); }, {3, 4}},
      {[](const Array& x) {
         return lax::concatenate({x, x}, 0);
       },
       {6, 4}},
  };
  for (const auto& [f, shape] : cases) {
    Array r = f(z);
    EXPECT_EQ(r.dtype(), DType::kFloat0);
    EXPECT_EQ(r.shape(), shape);
    EXPECT_EQ(r.nbytes(), 0u);
  }
}

// Arithmetic on keys is refused with a TypeError naming the op (JAX: keys have no arithmetic).
TEST(ExtendedDTypes, KeysHaveNoArithmetic) {
  auto [k, p] = random_keys({3});
  EXPECT_THROW((void)lax::add(k, k), TypeError);
  EXPECT_THROW((void)lax::reduce_sum(k, {0}), TypeError);
  EXPECT_THROW((void)lax::convert_element_type(k, DType::kUInt32), TypeError);
}

}  // namespace
}  // namespace tessera
