// Collectives over a vmap's named axis (tessera/lax_parallel.h) against direct float64
// computations over the stacked members, written here, on fresh random inputs: psum, pmean,
// pmax, pmin, all_gather (stacked and tiled), axis_index, psum_scatter, ppermute; nested named
// vmaps and several axes at once; jit inside and outside the vmap; gradients against the closed
// forms; unbound names raise NameError.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/lax.h"
#include "tessera/lax_parallel.h"
#include "tessera/numpy.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

constexpr int64_t kN = 5, kD = 3;

// Per column sums/max/min over the kN rows of x [kN, kD].
std::vector<double> col(const std::vector<double>& x, int which) {
  std::vector<double> r(kD);
  for (int64_t j = 0; j < kD; ++j) {
    double acc = which == 0 ? 0.0 : x[j];
    for (int64_t i = 0; i < kN; ++i) {
      const double v = x[i * kD + j];
      acc = which == 0 ? acc + v : which == 1 ? std::max(acc, v) : std::min(acc, v);
    }
    r[j] = acc;
  }
  return r;
}

// r repeated for each of the kN members.
std::vector<double> each(const std::vector<double>& r) {
  std::vector<double> out;
  for (int64_t i = 0; i < kN; ++i) out.insert(out.end(), r.begin(), r.end());
  return out;
}

VmapOptions named(const char* name) {
  VmapOptions o;
  o.axis_name = std::string(name);  // (assigning the char* trips GCC 12's -Wrestrict)
  return o;
}

TEST(Collectives, ReductionsOverTheNamedAxis) {
  Array x = random_array({kN, kD}, DType::kFloat32);
  const auto xv = to_doubles(x);
  auto run = [&](auto f) { return to_doubles(vmap(f, 0, 0, named("i"))(x)); };
  EXPECT_EQ(testing::compare(run([](const Array& v) { return lax::psum(v, "i"); }),
                             each(col(xv, 0)), 1e-5, 1e-5),
            "");
  std::vector<double> mean = col(xv, 0);
  for (double& m : mean) m /= kN;
  EXPECT_EQ(testing::compare(run([](const Array& v) { return lax::pmean(v, "i"); }), each(mean),
                             1e-5, 1e-5),
            "");
  EXPECT_EQ(run([](const Array& v) { return lax::pmax(v, "i"); }), each(col(xv, 1)));
  EXPECT_EQ(run([](const Array& v) { return lax::pmin(v, "i"); }), each(col(xv, 2)));
  // A value every member holds: the sum is n times it.
  Array c = random_array({kD}, DType::kFloat32);
  auto g = [&](const Array&) { return lax::psum(c, "i"); };
  std::vector<double> cn = to_doubles(c);
  for (double& v : cn) v *= kN;
  EXPECT_EQ(testing::compare(to_doubles(vmap(g, 0, 0, named("i"))(x)), each(cn), 1e-6, 1e-6), "");
  // jit inside and outside the vmap give the same.
  auto h = [](const Array& v) { return lax::sub(v, lax::pmean(v, "i")); };
  Array want = vmap(h, 0, 0, named("i"))(x);
  EXPECT_EQ(to_doubles(vmap(jit(h), 0, 0, named("i"))(x)), to_doubles(want));
  EXPECT_EQ(to_doubles(jit(vmap(h, 0, 0, named("i")))(x)), to_doubles(want));
}

TEST(Collectives, GatherIndexScatterPermute) {
  Array x = random_array({kN, kD}, DType::kFloat32);
  const auto xv = to_doubles(x);
  Array gathered =
      vmap([](const Array& v) { return lax::all_gather(v, "i"); }, 0, 0, named("i"))(x);
  ASSERT_EQ(gathered.shape(), (Shape{kN, kN, kD}));
  EXPECT_EQ(to_doubles(gathered), each(xv));
  Array tiled =
      vmap([](const Array& v) { return lax::all_gather(v, "i", 0, true); }, 0, 0, named("i"))(x);
  EXPECT_EQ(tiled.shape(), (Shape{kN, kN * kD}));
  Array idx = vmap([](const Array&) { return lax::axis_index("i"); }, 0, 0, named("i"))(x);
  EXPECT_EQ(to_doubles(idx), (std::vector<double>{0, 1, 2, 3, 4}));
  // psum_scatter: member i gets the i-th entry of the summed [kN] vectors.
  Array y = random_array({kN, kN}, DType::kFloat32);
  Array sc = vmap([](const Array& v) { return lax::psum_scatter(v, "i"); }, 0, 0, named("i"))(y);
  const auto yv = to_doubles(y);
  for (int64_t i = 0; i < kN; ++i) {
    double s = 0;
    for (int64_t m = 0; m < kN; ++m) s += yv[m * kN + i];
    EXPECT_NEAR(to_doubles(sc)[i], s, 1e-5);
  }
  // ppermute: a ring shift; member 0 sends nowhere in the second case (member 1 gets zeros).
  std::vector<std::pair<int64_t, int64_t>> ring;
  for (int64_t i = 0; i < kN; ++i) ring.push_back({i, (i + 1) % kN});
  Array shifted =
      vmap([&](const Array& v) { return lax::ppermute(v, "i", ring); }, 0, 0, named("i"))(x);
  const auto sv = to_doubles(shifted);
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < kD; ++j) EXPECT_EQ(sv[i * kD + j], xv[((i + kN - 1) % kN) * kD + j]);
  Array partial = vmap(
      [](const Array& v) {
        return lax::ppermute(v, "i", {{1, 0}, {2, 3}});
      },
      0, 0, named("i"))(x);
  const auto pv = to_doubles(partial);
  for (int64_t j = 0; j < kD; ++j) {
    EXPECT_EQ(pv[0 * kD + j], xv[1 * kD + j]);
    EXPECT_EQ(pv[1 * kD + j], 0.0);
    EXPECT_EQ(pv[3 * kD + j], xv[2 * kD + j]);
  }
  EXPECT_ERROR(ValueError,
               vmap(
                   [](const Array& v) {
                     return lax::ppermute(v, "i", {{0, 1}, {2, 1}});
                   },
                   0, 0, named("i"))(x),
               "unique");
}

TEST(Collectives, NestedAxesAndGradients) {
  Array x = random_array({kN, 2, kD}, DType::kFloat32);
  const auto xv = to_doubles(x);
  auto inner = [](const Array& v) { return lax::psum(v, std::vector<std::string>{"i", "j"}); };
  Array both = vmap(vmap(inner, 0, 0, named("j")), 0, 0, named("i"))(x);
  std::vector<double> tot(kD, 0.0);
  for (size_t k = 0; k < xv.size(); ++k) tot[k % kD] += xv[k];
  for (size_t k = 0; k < xv.size(); ++k) EXPECT_NEAR(to_doubles(both)[k], tot[k % kD], 1e-4);
  // d/dx of sum over members of v * psum(v) = 2 * psum(v) (per column).
  Array y = random_array({kN, kD}, DType::kFloat32);
  auto loss = [](const Array& a) {
    auto member = [](const Array& v) { return numpy::sum(lax::mul(v, lax::psum(v, "i"))); };
    return numpy::sum(vmap(member, 0, 0, named("i"))(a));
  };
  const auto s = col(to_doubles(y), 0);
  std::vector<double> want;
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < kD; ++j) want.push_back(2 * s[j]);
  EXPECT_EQ(testing::compare(to_doubles(grad(loss)(y)), want, 1e-5, 1e-5), "");
  // pmax passes the gradient to the member holding the maximum.
  auto lmax = [](const Array& a) {
    return numpy::sum(vmap([](const Array& v) { return lax::pmax(v, "i"); }, 0, 0, named("i"))(a));
  };
  const auto gy = to_doubles(grad(lmax)(y));
  const auto yv = to_doubles(y);
  const auto mx = col(yv, 1);
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < kD; ++j)
      EXPECT_EQ(gy[i * kD + j], yv[i * kD + j] == mx[j] ? static_cast<double>(kN) : 0.0);
}

TEST(Collectives, UnboundNamesRaise) {
  Array x = random_array({kN, kD}, DType::kFloat32);
  EXPECT_ERROR(NameError, lax::psum(x, "i"), "unbound axis name: i");
  EXPECT_ERROR(NameError, lax::axis_index("k"), "unbound axis name: k");
  EXPECT_ERROR(NameError,
               vmap([](const Array& v) { return lax::psum(v, "k"); }, 0, 0, named("i"))(x),
               "unbound axis name: k");
  EXPECT_ERROR(
      TypeError,
      vmap([](const Array& v) { return lax::psum(lax::gt(v, v), "i"); }, 0, 0, named("i"))(x),
      "does not accept dtype bool");
}

}  // namespace
}  // namespace tessera
