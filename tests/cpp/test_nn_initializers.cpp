// tessera::nn::initializers (jax.nn.initializers).
//
// References, independent of src/api/nn_initializers.cpp: the values JAX's docstrings print
// (key 42, original counter layout); each initializer's algorithm spelled out here over the
// tessera::random draw it scales (JAX's step order, the scale factor computed on the host in the
// dtype's own arithmetic: float32 and float64 results are bit-exact, 16-bit ones within one
// ulp); the fans as products over the axes a weights shape does not name (not
// JAX's divisions); sample variances against the theoretical scale / fan with fixed keys and
// bounds at p < 1e-6 (Hoeffding for the bounded distributions, the chi-square tail for the
// normal), so they never flake; jit against eager (bitwise), vmap over keys against the loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tessera/config.h"
#include "tessera/jit.h"
#include "tessera/lax.h"
#include "tessera/nn_initializers.h"
#include "tessera/random.h"
#include "tessera/transforms.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace init = tessera::nn::initializers;
namespace rnd = tessera::random;
using testing::to_doubles;

struct X64 {
  explicit X64(bool on) : saved(x64_enabled()) { set_x64_enabled(on); }
  ~X64() { set_x64_enabled(saved); }
  bool saved;
};

// A fresh typed key from the test's seeded generator (the seed is printed).
Array fresh_key() { return rnd::key(static_cast<int64_t>(testing::rng()() >> 33)); }

// Rounds a double to the dtype's precision (the host's arithmetic "in the dtype").
double in_dtype(double v, DType d) {
  switch (d) {
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kBFloat16:
      return bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v)));
    case DType::kFloat16:
      return half_bits_to_float(float_to_half_bits(static_cast<float>(v)));
    default:
      return v;
  }
}

// got == want exactly for float32/float64, within `ulps` units of the dtype's epsilon otherwise.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, DType d,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const bool exact = d == DType::kFloat32 || d == DType::kFloat64;
  const double rtol = exact ? 0.0 : finfo(d).eps;
  EXPECT_EQ(testing::compare(got, want, rtol, 0.0), "") << what << " " << dtype_name(d);
}

// ---- the values JAX prints ----

// jax/_src/nn/initializers.py's docstrings: initializer(PRNGKey(42), (2, 3), float32), drawn
// under JAX's original counter layout (jax_threefry_partitionable=False). Printed to float32's
// shortest repr; uniform draws are bit-exact, normal ones within erf_inv's few ulps.
TEST(NnInitializers, ValuesJaxPrints) {
  config::ScopedFlag layout("jax_threefry_partitionable", false);
  struct Printed {
    const char* name;
    init::Initializer f;
    std::vector<double> want;
  };
  const std::vector<Printed> printed = {
      {"uniform(10)",
       init::uniform(10.0),
       {7.298188, 8.691938, 8.7230015, 2.0818567, 1.8662417, 5.5022564}},
      {"normal(5)",
       init::normal(5.0),
       {3.0613258, 5.6129413, 5.6866574, -4.063663, -4.4520254, 0.63115686}},
      {"truncated_normal(5)",
       init::truncated_normal(5.0),
       {2.9047365, 5.2338114, 5.29852, -3.836303, -4.192359, 0.6022964}},
      {"glorot_uniform",
       init::glorot_uniform(),
       {0.50350785, 0.8088631, 0.81566876, -0.6393332, -0.6865721, 0.11003882}},
      {"glorot_normal",
       init::glorot_normal(),
       {0.41770416, 0.75262755, 0.7619329, -0.5516644, -0.6028657, 0.08661086}},
      {"lecun_uniform",
       init::lecun_uniform(),
       {0.56293887, 0.90433645, 0.9119454, -0.71479625, -0.7676109, 0.12302713}},
      {"lecun_normal",
       init::lecun_normal(),
       {0.46700746, 0.8414632, 0.8518669, -0.61677957, -0.67402434, 0.09683388}},
      {"he_uniform",
       init::he_uniform(),
       {0.79611576, 1.2789248, 1.2896855, -1.0108745, -1.0855657, 0.17398663}},
      {"he_normal",
       init::he_normal(),
       {0.6604483, 1.1900088, 1.2047218, -0.87225807, -0.95321447, 0.1369438}},
  };
  for (const Printed& p : printed) {
    Array got = p.f(rnd::PRNGKey(42), {2, 3}, DType::kFloat32);
    ASSERT_EQ(got.dtype(), DType::kFloat32) << p.name;
    const bool uniform = std::string(p.name).find("uniform") != std::string::npos;
    EXPECT_EQ(testing::compare(to_doubles(got), p.want, uniform ? 1.5e-7 : 2e-6, 1e-7), "")
        << p.name;
  }
}

// ---- fans: products over the axes, the receptive field being the axes not named ----

struct FanCase {
  Shape shape;
  init::Axes in, out, batch;
};

std::pair<double, double> ref_fans(const FanCase& c) {
  const auto rank = static_cast<int64_t>(c.shape.size());
  auto norm = [&](int64_t a) { return a < 0 ? a + rank : a; };
  std::set<int64_t> named;
  double in = 1, out = 1;
  for (int64_t a : c.in.axes) in *= static_cast<double>(c.shape[norm(a)]), named.insert(norm(a));
  for (int64_t a : c.out.axes) out *= static_cast<double>(c.shape[norm(a)]), named.insert(norm(a));
  for (int64_t a : c.batch.axes) named.insert(norm(a));
  double receptive = 1;
  for (int64_t i = 0; i < rank; ++i)
    if (!named.count(i)) receptive *= static_cast<double>(c.shape[i]);
  return {in * receptive, out * receptive};
}

TEST(NnInitializers, ComputeFans) {
  const std::vector<FanCase> cases = {
      {{784, 256}, -2, -1, {}},
      {{3, 5}, 0, 1, {}},
      {{5, 3}, 1, 0, {}},
      {{3, 3, 64, 128}, -2, -1, {}},     // HWIO convolution kernel: receptive 9
      {{128, 64, 3, 3}, 1, 0, {}},       // OIHW
      {{2, 3, 4, 5}, {0, 1}, 3, 2},      // several input axes and a batch axis
      {{4, 6, 8}, -2, -1, 0},            // batch axis as an int
      {{7, 2, 9, 3}, {-1, 1}, {0}, {}},  // negative axes in a list
      {{6, 10}, {}, {}, {}},             // no in/out axes: sizes 1, all receptive
  };
  for (const FanCase& c : cases) {
    const auto [fi, fo] = init::compute_fans(c.shape, c.in, c.out, c.batch);
    const auto [ri, ro] = ref_fans(c);
    EXPECT_DOUBLE_EQ(fi, ri) << shape_str(c.shape);
    EXPECT_DOUBLE_EQ(fo, ro) << shape_str(c.shape);
  }
  // Fresh shapes: a random rank 2..5, distinct random in/out axes, maybe a batch axis.
  for (int t = 0; t < 50; ++t) {
    const int rank = 2 + static_cast<int>(testing::rng()() % 4);
    Shape s;
    for (int i = 0; i < rank; ++i) s.push_back(1 + static_cast<int64_t>(testing::rng()() % 9));
    std::vector<int64_t> perm(rank);
    for (int i = 0; i < rank; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), testing::rng());
    FanCase c{s, perm[0] - (testing::rng()() % 2 ? rank : 0), perm[1], {}};
    if (rank > 2 && testing::rng()() % 2) c.batch = init::Axes{perm[2]};
    const auto [fi, fo] = init::compute_fans(c.shape, c.in, c.out, c.batch);
    const auto [ri, ro] = ref_fans(c);
    EXPECT_NEAR(fi, ri, 1e-12 * ri) << shape_str(s);
    EXPECT_NEAR(fo, ro, 1e-12 * ro) << shape_str(s);
  }
}

// ---- constant initializers ----

TEST(NnInitializers, ZerosOnesConstant) {
  const Array key = fresh_key();
  for (bool x64 : {false, true}) {
    X64 mode(x64);
    const DType dflt = x64 ? DType::kFloat64 : DType::kFloat32;
    Array z = init::zeros(key, {2, 3});
    EXPECT_EQ(z.dtype(), dflt);
    EXPECT_EQ(z.shape(), (Shape{2, 3}));
    EXPECT_EQ(to_doubles(z), std::vector<double>(6, 0.0));
    Array o = init::ones(key, {3, 2}, DType::kFloat64);  // canonicalized without x64
    EXPECT_EQ(o.dtype(), dflt);
    EXPECT_EQ(to_doubles(o), std::vector<double>(6, 1.0));
    // The key is ignored: any key, even none.
    EXPECT_EQ(to_doubles(init::ones(Array(), {4}, DType::kInt32)), std::vector<double>(4, 1.0));
    EXPECT_EQ(init::zeros(Array(), {}, DType::kBFloat16).dtype(), DType::kBFloat16);

    const double v = -7.25 + static_cast<double>(testing::rng()() % 100) / 8.0;
    init::Initializer c = init::constant(v);
    Array a = c(key, {2, 3});
    EXPECT_EQ(a.dtype(), dflt);
    EXPECT_EQ(to_doubles(a), std::vector<double>(6, v));
    EXPECT_EQ(c(key, {5}, DType::kInt32).dtype(), DType::kInt32);
    EXPECT_EQ(to_doubles(c(key, {5}, DType::kInt32)),
              std::vector<double>(5, static_cast<double>(static_cast<int32_t>(v))));
    // The factory's dtype is the default; a call's dtype overrides it.
    init::Initializer cb = init::constant(v, DType::kBFloat16);
    EXPECT_EQ(cb(key, {2}).dtype(), DType::kBFloat16);
    EXPECT_EQ(cb(key, {2}, DType::kFloat16).dtype(), DType::kFloat16);
    // An array value broadcasts to the shape (jnp.full).
    Array row = numpy::array({1.5, -2.0, 3.0});
    EXPECT_EQ(to_doubles(init::constant(row)(key, {2, 3})),
              (std::vector<double>{1.5, -2.0, 3.0, 1.5, -2.0, 3.0}));
    EXPECT_THROW(init::constant(row)(key, {2, 4}), ValueError);
  }
}

// ---- uniform / normal / truncated_normal ----

TEST(NnInitializers, DistributionFactories) {
  for (DType d : testing::kFloatDTypes) {
    X64 mode(d == DType::kFloat64);
    const Array key = fresh_key();
    const Shape shape{7, 5};
    const double scale = 0.5 + static_cast<double>(testing::rng()() % 1000) / 100.0;
    const double ds = in_dtype(scale, d);
    auto scaled = [&](const Array& draw) {
      std::vector<double> w = to_doubles(draw);
      for (double& e : w) e = in_dtype(e * ds, d);
      return w;
    };
    Array u = init::uniform(scale, d)(key, shape);
    EXPECT_EQ(u.dtype(), d);
    EXPECT_EQ(u.shape(), shape);
    expect_close(to_doubles(u), scaled(rnd::uniform(key, shape, d)), d, "uniform");
    for (double e : to_doubles(u)) {
      EXPECT_GE(e, 0.0);
      EXPECT_LE(e, ds);
    }
    expect_close(to_doubles(init::normal(scale, d)(key, shape)), scaled(rnd::normal(key, shape, d)),
                 d, "normal");
    const double lo = -1.5, hi = 2.5;
    Array t = init::truncated_normal(scale, d, lo, hi)(key, shape);
    expect_close(to_doubles(t), scaled(rnd::truncated_normal(key, lo, hi, shape, d)), d,
                 "truncated_normal");
    for (double e : to_doubles(t)) {
      EXPECT_GE(e, in_dtype(lo * ds, d) * (1 + finfo(d).eps));
      EXPECT_LE(e, in_dtype(hi * ds, d) * (1 + finfo(d).eps));
    }
  }
  // Defaults: scale / stddev 1e-2, the default float; float64 under x64.
  const Array key = fresh_key();
  Array u = init::uniform()(key, {4});
  EXPECT_EQ(u.dtype(), DType::kFloat32);
  expect_close(
      to_doubles(u),
      [&] {
        std::vector<double> w = to_doubles(rnd::uniform(key, {4}, DType::kFloat32));
        for (double& e : w) e = in_dtype(e * in_dtype(1e-2, DType::kFloat32), DType::kFloat32);
        return w;
      }(),
      DType::kFloat32, "uniform default");
  {
    X64 on(true);
    EXPECT_EQ(init::normal()(key, {4}).dtype(), DType::kFloat64);
    EXPECT_EQ(init::truncated_normal()(key, {4}).dtype(), DType::kFloat64);
  }
}

// ---- variance scaling: JAX's arithmetic spelled out on the host ----

struct Variant {
  const char* name;
  std::function<init::Initializer(const init::Axes&, const init::Axes&, const init::Axes&,
                                  std::optional<DType>)>
      make;
  double scale;
  const char* mode;
  const char* distribution;
};

std::vector<Variant> named_variants() {
  auto vs = [](double s, const char* m, const char* dist) {
    return [=](const init::Axes& i, const init::Axes& o, const init::Axes& b,
               std::optional<DType> d) { return init::variance_scaling(s, m, dist, i, o, b, d); };
  };
  return {
      {"glorot_uniform", init::glorot_uniform, 1.0, "fan_avg", "uniform"},
      {"xavier_uniform", init::xavier_uniform, 1.0, "fan_avg", "uniform"},
      {"glorot_normal", init::glorot_normal, 1.0, "fan_avg", "truncated_normal"},
      {"xavier_normal", init::xavier_normal, 1.0, "fan_avg", "truncated_normal"},
      {"lecun_uniform", init::lecun_uniform, 1.0, "fan_in", "uniform"},
      {"lecun_normal", init::lecun_normal, 1.0, "fan_in", "truncated_normal"},
      {"he_uniform", init::he_uniform, 2.0, "fan_in", "uniform"},
      {"kaiming_uniform", init::kaiming_uniform, 2.0, "fan_in", "uniform"},
      {"he_normal", init::he_normal, 2.0, "fan_in", "truncated_normal"},
      {"kaiming_normal", init::kaiming_normal, 2.0, "fan_in", "truncated_normal"},
      {"vs 0.3 fan_out normal", vs(0.3, "fan_out", "normal"), 0.3, "fan_out", "normal"},
      {"vs 1.7 fan_geo_avg uniform", vs(1.7, "fan_geo_avg", "uniform"), 1.7, "fan_geo_avg",
       "uniform"},
      {"vs 0.9 fan_geo_avg truncated", vs(0.9, "fan_geo_avg", "truncated_normal"), 0.9,
       "fan_geo_avg", "truncated_normal"},
      {"vs 2.5 fan_avg normal", vs(2.5, "fan_avg", "normal"), 2.5, "fan_avg", "normal"},
  };
}

// The expected values: the draw JAX makes, times the factor JAX computes in the dtype.
std::vector<double> ref_variance_scaling(const Array& key, const FanCase& c, DType d, double scale,
                                         const std::string& mode, const std::string& dist) {
  const auto [fi, fo] = ref_fans(c);
  const double n = mode == "fan_in"    ? fi
                   : mode == "fan_out" ? fo
                   : mode == "fan_avg" ? (fi + fo) / 2
                                       : std::sqrt(fi * fo);
  const double var = in_dtype(scale / n, d);
  std::vector<double> draw;
  double factor;
  if (dist == "uniform") {
    draw = to_doubles(rnd::uniform(key, c.shape, d, -1.0, 1.0));
    factor = in_dtype(std::sqrt(in_dtype(3 * var, d)), d);
  } else if (dist == "normal") {
    draw = to_doubles(rnd::normal(key, c.shape, d));
    factor = in_dtype(std::sqrt(var), d);
  } else {
    draw = to_doubles(rnd::truncated_normal(key, -2.0, 2.0, c.shape, d));
    factor = in_dtype(in_dtype(std::sqrt(var), d) / in_dtype(.87962566103423978, d), d);
  }
  for (double& e : draw) e = in_dtype(e * factor, d);
  return draw;
}

TEST(NnInitializers, VarianceScalingValues) {
  const std::vector<FanCase> shapes = {
      {{6, 4}, -2, -1, {}},
      {{3, 3, 5, 7}, -2, -1, {}},
      {{2, 3, 4, 5}, {0, 1}, 3, 2},
      {{5, 2, 3}, 0, {1, 2}, {}},
  };
  for (const Variant& v : named_variants())
    for (DType d : testing::kFloatDTypes)
      for (const FanCase& c : shapes) {
        X64 mode(d == DType::kFloat64);
        const Array key = fresh_key();
        init::Initializer f = v.make(c.in, c.out, c.batch, d);
        Array got = f(key, c.shape);
        ASSERT_EQ(got.dtype(), d) << v.name;
        ASSERT_EQ(got.shape(), c.shape) << v.name;
        expect_close(to_doubles(got),
                     ref_variance_scaling(key, c, d, v.scale, v.mode, v.distribution), d,
                     std::string(v.name) + " " + shape_str(c.shape));
      }
}

TEST(NnInitializers, DTypes) {
  const Array key = fresh_key();
  {
    X64 off(false);
    EXPECT_EQ(init::glorot_uniform()(key, {3, 4}).dtype(), DType::kFloat32);
    // An explicit float64 is canonicalized to float32 (dtypes.canonicalize_dtype).
    EXPECT_EQ(init::he_normal(-2, -1, {}, DType::kFloat64)(key, {3, 4}).dtype(), DType::kFloat32);
    EXPECT_EQ(init::lecun_normal()(key, {3, 4}, DType::kBFloat16).dtype(), DType::kBFloat16);
    EXPECT_EQ(init::lecun_uniform(-2, -1, {}, DType::kFloat16)(key, {3, 4}).dtype(),
              DType::kFloat16);
  }
  {
    X64 on(true);
    // The default dtype is decided at call time: an initializer built before x64 was turned
    // on gives float64 after.
    EXPECT_EQ(init::glorot_normal()(key, {3, 4}).dtype(), DType::kFloat64);
    EXPECT_EQ(init::variance_scaling(1.0, "fan_in", "normal")(key, {3, 4}).dtype(),
              DType::kFloat64);
  }
  // A custom initializer from a callable: it receives the canonical dtype.
  init::Initializer mine = {
      [](const Array&, const Shape& s, DType d) { return numpy::full(s, 2.0, d); },
      DType::kBFloat16};
  EXPECT_EQ(mine(key, {2}).dtype(), DType::kBFloat16);
  EXPECT_EQ(mine(key, {2}, DType::kFloat64).dtype(), DType::kFloat32);
}

// ---- statistics: sample variances against scale / fan, fixed keys, p < 1e-6 ----

TEST(NnInitializers, VarianceMatchesTheory) {
  // ln(2 / 1e-6): Hoeffding's bound on a mean of n values in [0, B] deviates from its
  // expectation by more than B sqrt(ln(2/delta) / 2n) with probability < delta.
  const double log_term = std::log(2.0 / 1e-6);
  struct Case {
    FanCase c;
    double scale;
    const char* mode;
    const char* dist;
    uint32_t seed;
  };
  const std::vector<Case> cases = {
      {{{256, 192}, -2, -1, {}}, 1.0, "fan_avg", "uniform", 11},
      {{{256, 192}, -2, -1, {}}, 1.0, "fan_avg", "truncated_normal", 12},
      {{{256, 192}, -2, -1, {}}, 2.0, "fan_in", "normal", 13},
      {{{3, 3, 64, 48}, -2, -1, {}}, 2.0, "fan_in", "truncated_normal", 14},
      {{{3, 3, 64, 48}, -2, -1, {}}, 1.0, "fan_out", "uniform", 15},
      {{{4, 40, 30, 9}, 1, 2, 0}, 0.5, "fan_geo_avg", "normal", 16},
  };
  for (const Case& k : cases) {
    const auto [fi, fo] = ref_fans(k.c);
    const std::string mode = k.mode, dist = k.dist;
    const double n = mode == "fan_in"    ? fi
                     : mode == "fan_out" ? fo
                     : mode == "fan_avg" ? (fi + fo) / 2
                                         : std::sqrt(fi * fo);
    const double var = k.scale / n;
    Array w = init::variance_scaling(k.scale, k.mode, k.dist, k.c.in, k.c.out, k.c.batch)(
        rnd::key(static_cast<int64_t>(k.seed)), k.c.shape);
    const std::vector<double> x = to_doubles(w);
    double m2 = 0, mean = 0, maxabs = 0;
    for (double e : x) m2 += e * e, mean += e, maxabs = std::max(maxabs, std::abs(e));
    const auto count = static_cast<double>(x.size());
    m2 /= count;
    mean /= count;
    double tol;
    if (dist == "normal") {
      // n m2 / var is chi-square with n degrees of freedom: sd sqrt(2 / n) relative; 5.5 sd
      // bounds both tails below 1e-6 (with room for the central limit's approximation).
      tol = 5.5 * std::sqrt(2.0 / count) * var;
    } else {
      // Bounded: |x| <= sqrt(3 var) (uniform) or 2 var^.5 / .8796 (truncated normal).
      const double bound2 =
          dist == "uniform" ? 3 * var : 4 * var / (.87962566103423978 * .87962566103423978);
      EXPECT_LE(maxabs * maxabs, bound2 * (1 + 1e-6)) << dist;
      tol = bound2 * std::sqrt(log_term / (2 * count));
    }
    EXPECT_NEAR(m2, var, tol) << dist << " " << mode << " " << shape_str(k.c.shape);
    EXPECT_NEAR(mean, 0.0, 5.5 * std::sqrt(var / count)) << dist;
  }
}

// ---- transformations ----

TEST(NnInitializers, JitEqualsEagerAndVmapOverKeys) {
  const Array key = fresh_key();
  for (const Variant& v : named_variants()) {
    init::Initializer f = v.make(-2, -1, {}, std::nullopt);
    Array eager = f(key, {9, 6});
    Array jitted = jit([&](const Array& k) { return f(k, {9, 6}); })(key);
    EXPECT_EQ(to_doubles(jitted), to_doubles(eager)) << v.name;
  }
  for (const init::Initializer& f :
       {init::uniform(3.0), init::normal(0.5), init::truncated_normal(2.0)}) {
    Array jitted = jit([&](const Array& k) { return f(k, {4, 5}); })(key);
    EXPECT_EQ(to_doubles(jitted), to_doubles(f(key, {4, 5})));
  }
  // vmap over a batch of keys equals initializing with each key.
  Array keys = rnd::split(key, 3);
  init::Initializer g = init::glorot_normal();
  Array batched = vmap([&](const Array& k) { return g(k, {4, 3}); })(keys);
  ASSERT_EQ(batched.shape(), (Shape{3, 4, 3}));
  std::vector<double> loop;
  for (int64_t i = 0; i < 3; ++i) {
    const std::vector<double> one = to_doubles(g(lax::index_in_dim(keys, i, 0, false), {4, 3}));
    loop.insert(loop.end(), one.begin(), one.end());
  }
  EXPECT_EQ(to_doubles(batched), loop);
}

// ---- errors ----

TEST(NnInitializers, Errors) {
  const Array key = fresh_key();
  // A bad mode or distribution is reported when the initializer is called, as in JAX.
  init::Initializer bad_mode = init::variance_scaling(1.0, "fan_sum", "uniform");
  EXPECT_ERROR(ValueError, bad_mode(key, {3, 4}),
               "invalid mode for variance scaling initializer: fan_sum");
  init::Initializer bad_dist = init::variance_scaling(1.0, "fan_in", "cauchy");
  EXPECT_ERROR(ValueError, bad_dist(key, {3, 4}),
               "invalid distribution for variance scaling initializer: cauchy");
  // Rank < 2.
  EXPECT_ERROR(ValueError, init::glorot_uniform()(key, {5}),
               "Can't compute input and output sizes of a 1-dimensional weights tensor. Must be "
               "at least 2D.");
  EXPECT_ERROR(ValueError, init::he_normal()(key, {}),
               "Can't compute input and output sizes of a 0-dimensional weights tensor.");
  EXPECT_ERROR(ValueError, init::compute_fans({7}), "Must be at least 2D.");
  // Axes outside the shape (Python's IndexError).
  EXPECT_ERROR(IndexError, init::lecun_uniform(2)(key, {3, 4}), "tuple index out of range");
  EXPECT_ERROR(IndexError, init::lecun_uniform(-2, -3)(key, {3, 4}), "out_axis -3");
  EXPECT_ERROR(IndexError, init::glorot_normal(0, 1, {5})(key, {3, 4}), "batch_axis 5");
  // Zero-size dimensions: JAX's fan division by zero.
  EXPECT_ERROR(ValueError, init::glorot_uniform()(key, {0, 4}), "division by zero");
  EXPECT_ERROR(ValueError, init::he_normal()(key, {3, 0, 4}), "division by zero");
  // Non-float dtypes: the ValueError of the jax.random function that draws.
  EXPECT_ERROR(ValueError, init::glorot_uniform()(key, {3, 4}, DType::kInt32),
               "dtype argument to `uniform` must be a float dtype, got int32");
  EXPECT_ERROR(ValueError, init::he_normal()(key, {3, 4}, DType::kInt32),
               "dtype argument to `uniform` must be a float dtype, got int32");
  EXPECT_ERROR(ValueError,
               init::variance_scaling(1.0, "fan_in", "normal")(key, {3, 4}, DType::kInt32),
               "dtype argument to `normal` must be a float or complex dtype, got int32");
  EXPECT_ERROR(ValueError, init::uniform()(key, {3}, DType::kInt8),
               "dtype argument to `uniform` must be a float dtype, got int8");
  EXPECT_ERROR(ValueError, init::truncated_normal()(key, {3}, DType::kUInt32),
               "dtype argument to `truncated_normal` must be a float dtype");
  // Keys: JAX's TypeError for a key array or a non-key.
  EXPECT_ERROR(TypeError, init::normal()(rnd::split(key, 2), {3}), "accepts a single key");
  EXPECT_THROW(init::glorot_uniform()(numpy::ones({2}), {3, 4}), TypeError);
  // An empty initializer.
  EXPECT_ERROR(ValueError, init::Initializer()(key, {2}), "empty nn::initializers::Initializer");
}

}  // namespace
}  // namespace tessera
