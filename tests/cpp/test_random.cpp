// tessera::random and the threefry2x32 primitive.
//
// References, all independent of src/: a scalar Threefry-2x32 written here from the Random123
// specification (Salmon et al. 2011: 20 rounds, rotation table R_32x2, key injection every four
// rounds) and checked against Random123's known-answer vectors; JAX's counter layouts spelled
// out as plain loops over that scalar function for both settings of jax_threefry_partitionable;
// values JAX prints (cited where pinned); exact CDFs written here for Kolmogorov-Smirnov tests
// with fixed keys and bounds at p < 1e-6 (they never flake: the keys are fixed); vmap against the
// per-key loop, jit against eager (bitwise), grad against the closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <set>
#include <vector>

#include "tessera/config.h"
#include "tessera/jit.h"
#include "tessera/lax.h"
#include "tessera/random.h"
#include "tessera/scalar_ir.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace rnd = tessera::random;
using testing::to_doubles;

// ---------------------------------------------------------------- the naive reference

struct Pair {
  uint32_t a, b;
  bool operator==(const Pair&) const = default;
};

// Threefry-2x32-20 as Random123 states it: rounds r = 0..19 rotate by R[r % 8]; before round 0
// and after every fourth round s (s = 1..5) the key schedule word s % 3, (s + 1) % 3 is injected,
// plus s on the second word.
Pair ref_threefry(Pair key, Pair x) {
  static const unsigned R[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key.a, key.b, 0x1BD11BDAu ^ key.a ^ key.b};
  uint32_t x0 = x.a + ks[0], x1 = x.b + ks[1];
  for (int r = 0; r < 20; ++r) {
    x0 += x1;
    x1 = (x1 << R[r % 8]) | (x1 >> (32 - R[r % 8]));
    x1 ^= x0;
    if (r % 4 == 3) {
      const uint32_t s = static_cast<uint32_t>(r / 4 + 1);
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

// jax.prng.threefry_2x32: counts halved (zero-padded when odd), outputs concatenated.
std::vector<uint32_t> ref_2x32(Pair key, const std::vector<uint32_t>& count) {
  const size_t n = count.size(), h = (n + 1) / 2;
  std::vector<uint32_t> c = count;
  c.resize(2 * h, 0);
  std::vector<uint32_t> out(2 * h);
  for (size_t i = 0; i < h; ++i) {
    Pair y = ref_threefry(key, {c[i], c[h + i]});
    out[i] = y.a;
    out[h + i] = y.b;
  }
  out.resize(n);
  return out;
}

std::vector<uint32_t> iota32(size_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

std::vector<Pair> ref_split(Pair key, size_t n, bool partitionable) {
  std::vector<Pair> out(n);
  if (partitionable) {
    for (size_t i = 0; i < n; ++i) out[i] = ref_threefry(key, {0, static_cast<uint32_t>(i)});
  } else {
    std::vector<uint32_t> w = ref_2x32(key, iota32(2 * n));
    for (size_t i = 0; i < n; ++i) out[i] = {w[2 * i], w[2 * i + 1]};
  }
  return out;
}

Pair ref_fold_in(Pair key, uint32_t d) {
  std::vector<uint32_t> w = ref_2x32(key, {0, d});
  return {w[0], w[1]};
}

std::vector<uint64_t> ref_bits(Pair key, int width, size_t size, bool partitionable) {
  std::vector<uint64_t> out(size);
  if (partitionable) {
    for (size_t i = 0; i < size; ++i) {
      Pair y = ref_threefry(key, {0, static_cast<uint32_t>(i)});
      if (width == 64) {
        out[i] = (uint64_t{y.a} << 32) | y.b;
      } else {
        const uint64_t mask = width == 32 ? 0xFFFFFFFFull : (uint64_t{1} << width) - 1;
        out[i] = (y.a ^ y.b) & mask;
      }
    }
    return out;
  }
  const size_t words = (static_cast<size_t>(width) * size + 31) / 32;
  std::vector<uint32_t> w = ref_2x32(key, iota32(words));
  for (size_t i = 0; i < size; ++i) {
    if (width == 64) {
      out[i] = (uint64_t{w[i]} << 32) | w[size + i];
    } else if (width == 32) {
      out[i] = w[i];
    } else {
      const size_t per = 32 / static_cast<size_t>(width);
      out[i] = (w[i / per] >> (width * (i % per))) & ((1u << width) - 1);
    }
  }
  return out;
}

// ---------------------------------------------------------------- helpers

std::vector<uint64_t> words_of(const Array& a) {
  std::vector<uint64_t> out(static_cast<size_t>(a.size()));
  const auto* p = static_cast<const unsigned char*>(a.raw_data());
  const size_t w = itemsize(a.dtype());
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, p + i * w, w);
    out[i] = v;
  }
  return out;
}

Pair pair_of(const Array& key) {
  std::vector<uint64_t> w = words_of(rnd::key_data(key));
  return {static_cast<uint32_t>(w.at(0)), static_cast<uint32_t>(w.at(1))};
}

Array raw_key(Pair p) {
  const uint32_t v[2] = {p.a, p.b};
  return array_from_host(Aval{{2}, DType::kUInt32, false}, v);
}

Array u32_array(const std::vector<uint32_t>& v, const Shape& s) {
  return array_from_host(Aval{s, DType::kUInt32, false}, v.data());
}

Pair random_pair() {
  auto& g = testing::rng();
  return {static_cast<uint32_t>(g()), static_cast<uint32_t>(g())};
}

struct Partitionable {
  explicit Partitionable(bool on) : flag("jax_threefry_partitionable", on) {}
  config::ScopedFlag flag;
};

struct X64 {
  explicit X64(bool on) : saved(x64_enabled()) { set_x64_enabled(on); }
  ~X64() { set_x64_enabled(saved); }
  bool saved;
};

const Primitive& threefry_p() { return *find_primitive("threefry2x32"); }

// ---------------------------------------------------------------- the primitive

// Random123's kat_vectors for threefry2x32_20 (Salmon et al. 2011).
struct Kat {
  Pair key, ctr, out;
};
const Kat kKats[] = {
    {{0, 0}, {0, 0}, {0x6b200159, 0x99ba4efe}},
    {{0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x1cb996fc, 0xbb002be7}},
    {{0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}, {0xc4923a9c, 0x483df7a0}},
};

TEST(Threefry, KnownAnswerVectors) {
  for (const Kat& k : kKats) {
    EXPECT_EQ(ref_threefry(k.key, k.ctr), k.out);  // the reference itself
    std::vector<Array> in = {u32_array({k.key.a}, {}), u32_array({k.key.b}, {}),
                             u32_array({k.ctr.a}, {}), u32_array({k.ctr.b}, {})};
    std::vector<Array> y = tessera::bind(threefry_p(), in);
    EXPECT_EQ(
        (Pair{static_cast<uint32_t>(words_of(y[0])[0]), static_cast<uint32_t>(words_of(y[1])[0])}),
        k.out);
    // Under jit (fused from the scalar definition, or its thunk).
    auto f = jit([](const Array& a, const Array& b, const Array& c, const Array& d) {
      std::vector<Array> r = tessera::bind(threefry_p(), {a, b, c, d});
      return std::make_tuple(r[0], r[1]);
    });
    auto [j0, j1] = f(in[0], in[1], in[2], in[3]);
    EXPECT_EQ(words_of(j0)[0], k.out.a);
    EXPECT_EQ(words_of(j1)[0], k.out.b);
    // The scalar definition on the reference evaluator.
    const Aval s{{}, DType::kUInt32, false};
    const std::vector<Aval> avals(4, s);
    const scalar::Program prog = scalar_program(threefry_p(), avals, Params());
    std::vector<scalar::ScalarValue> sv;
    for (uint32_t v : {k.key.a, k.key.b, k.ctr.a, k.ctr.b})
      sv.push_back(scalar::ScalarValue::of_int(v, DType::kUInt32));
    std::vector<scalar::ScalarValue> r = scalar::evaluate(prog, sv);
    EXPECT_EQ(static_cast<uint32_t>(r[0].as_int()), k.out.a);
    EXPECT_EQ(static_cast<uint32_t>(r[1].as_int()), k.out.b);
  }
}

TEST(Threefry, BroadcastsAndMatchesTheReferenceForAnyThreadCount) {
  struct Case {
    Shape k0, k1, x0, x1;
  };
  for (const Case& c :
       {Case{{}, {}, {7}, {7}}, Case{{3, 1}, {3, 1}, {1, 5}, {3, 5}}, Case{{}, {4}, {4}, {}},
        Case{{0, 3}, {}, {1, 3}, {}}, Case{{}, {}, {300001}, {300001}}}) {
    std::vector<Array> in;
    for (const Shape* s : {&c.k0, &c.k1, &c.x0, &c.x1}) {
      std::vector<uint32_t> v(static_cast<size_t>(shape_size(*s)));
      for (auto& e : v) e = static_cast<uint32_t>(testing::rng()());
      in.push_back(u32_array(v, *s));
    }
    std::vector<Array> y1, y2;
    {
      testing::Threads t(1);
      y1 = tessera::bind(threefry_p(), in);
    }
    {
      testing::Threads t(2);
      y2 = tessera::bind(threefry_p(), in);
    }
    const Shape out = y1[0].shape();
    EXPECT_EQ(words_of(y1[0]), words_of(y2[0]));
    EXPECT_EQ(words_of(y1[1]), words_of(y2[1]));
    // Reference: index each operand by broadcasting.
    std::vector<std::vector<uint64_t>> w;
    for (const Array& a : in) w.push_back(words_of(a));
    const std::vector<uint64_t> o0 = words_of(y1[0]), o1 = words_of(y1[1]);
    const int64_t n = shape_size(out);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; ++i) {
      uint32_t v[4];
      for (int k = 0; k < 4; ++k) {
        const Shape& s = in[k].shape();
        int64_t off = 0, rem = i, stride = 1;
        for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
          const int64_t idx = rem % out[d];
          rem /= out[d];
          if (!s.empty() && s[d] != 1) off += idx * stride;
          if (!s.empty()) stride *= s[d];
        }
        v[k] = static_cast<uint32_t>(w[k][off]);
      }
      const Pair want = ref_threefry({v[0], v[1]}, {v[2], v[3]});
      if (o0[i] != want.a || o1[i] != want.b) {
        ++bad;
        ADD_FAILURE() << "element " << i << " of " << shape_str(out);
      }
    }
  }
}

TEST(Threefry, ShapeAndDtypeErrors) {
  Array u = u32_array({1, 2, 3}, {3});
  Array f = numpy::ones({3});
  EXPECT_ERROR(TypeError, tessera::bind(threefry_p(), {u, u, f, u}),
               "Arguments to threefry2x32 must have uint32 type");
  EXPECT_ERROR(TypeError, tessera::bind(threefry_p(), {u, u, u32_array({1, 2}, {2}), u}),
               "threefry2x32");
  EXPECT_ERROR(TypeError, tessera::bind(threefry_p(), {u, u, u}), "threefry2x32");
}

TEST(Threefry, VmapJvpAndStaging) {
  // vmap over the key words equals the per-key loop; the tangent of a uint32 output is zero.
  std::vector<uint32_t> ks(8);
  for (auto& e : ks) e = static_cast<uint32_t>(testing::rng()());
  Array k0 = u32_array({ks[0], ks[1], ks[2], ks[3]}, {4});
  Array k1 = u32_array({ks[4], ks[5], ks[6], ks[7]}, {4});
  Array x = lax::iota(DType::kUInt32, 5);
  auto f = [&](const Array& a, const Array& b) {
    std::vector<Array> r = tessera::bind(threefry_p(), {a, b, x, x});
    return lax::bitwise_xor(r[0], r[1]);
  };
  Array got = vmap(f)(k0, k1);
  ASSERT_EQ(got.shape(), (Shape{4, 5}));
  const std::vector<uint64_t> g = words_of(got);
  for (int i = 0; i < 4; ++i)
    for (uint32_t j = 0; j < 5; ++j) {
      Pair y = ref_threefry({ks[i], ks[4 + i]}, {j, j});
      EXPECT_EQ(g[i * 5 + j], y.a ^ y.b);
    }
  // Integer outputs: a float0 tangent (the operand converted from floats).
  const flat::Fun tf = [&](std::span<const Array> a) {
    Array w = lax::convert_element_type(a[0], DType::kUInt32);
    return tessera::bind(threefry_p(), {w, w, w, w});
  };
  Array xf = numpy::array({1.0, 2.0, 3.0}, {3}, DType::kFloat32);
  auto [po, to] = flat::jvp(tf, std::vector<Array>{xf}, std::vector<Array>{xf});
  EXPECT_EQ(to[0].aval(), (Aval{{3}, DType::kFloat0, false}));
  EXPECT_EQ(to[1].aval(), (Aval{{3}, DType::kFloat0, false}));
  const std::string text = to_string(
      *make_jaxpr([&](const Array& a) { return f(a, a); })(lax::index_in_dim(k0, 0, 0, false))
           .jaxpr);
  EXPECT_NE(text.find("threefry2x32"), std::string::npos) << text;
}

// ---------------------------------------------------------------- keys

TEST(Keys, SeedsAsJax) {
  // Pinned by JAX's tests/random_test.py (test_prng_seeds_and_keys).
  struct Seed {
    int64_t seed;
    DType dtype;
    Pair x32, x64;
  };
  const Seed seeds[] = {
      {0, DType::kInt32, {0, 0}, {0, 0}},
      {1, DType::kInt32, {0, 1}, {0, 1}},
      {2, DType::kUInt32, {0, 2}, {0, 2}},
      {3, DType::kInt64, {0, 3}, {0, 3}},
      {-2, DType::kInt32, {0, 4294967294u}, {0, 4294967294u}},
      {-3, DType::kInt64, {0, 4294967293u}, {4294967295u, 4294967293u}},
      {int64_t{2147483647} + 101, DType::kUInt32, {0, 2147483748u}, {0, 2147483748u}},
      {int64_t{-2147483648} - 101, DType::kInt64, {0, 2147483547u}, {4294967295u, 2147483547u}},
  };
  for (bool x64 : {false, true}) {
    X64 mode(x64);
    for (const Seed& s : seeds) {
      const DType d = canonicalize_dtype(s.dtype);
      unsigned char buf[8] = {};
      if (itemsize(d) == 8) {
        std::memcpy(buf, &s.seed, 8);
      } else {
        const uint32_t w = static_cast<uint32_t>(static_cast<uint64_t>(s.seed));
        std::memcpy(buf, &w, 4);
      }
      Array seed = array_from_host(Aval{{}, d, false}, buf);
      const Pair want = x64 ? s.x64 : s.x32;
      EXPECT_EQ(pair_of(rnd::PRNGKey(seed)), want) << s.seed << " " << dtype_name(d);
      EXPECT_EQ(pair_of(rnd::key(seed)), want);
      EXPECT_EQ(pair_of(jit([](const Array& a) { return rnd::PRNGKey(a); })(seed)), want);
    }
    // C++ int64 seeds act as Python ints: int64 under x64, int32 (wrapped) otherwise.
    EXPECT_EQ(pair_of(rnd::PRNGKey(-1)),
              x64 ? (Pair{4294967295u, 4294967295u}) : (Pair{0, 4294967295u}));
    EXPECT_EQ(pair_of(rnd::PRNGKey(int64_t{2147483647} + 100)), (Pair{0, 2147483747u}));
    EXPECT_EQ(pair_of(rnd::PRNGKey(int64_t{-2147483648} - 100)),
              x64 ? (Pair{4294967295u, 2147483548u}) : (Pair{0, 2147483548u}));
    EXPECT_EQ(pair_of(rnd::PRNGKey((int64_t{5} << 32) + 7)), x64 ? (Pair{5, 7}) : (Pair{0, 7}));
  }
  // Typed keys print as JAX prints them.
  EXPECT_EQ(rnd::key(0).repr(), "Array((), dtype=key<fry>) overlaying:\n[0 0]");
  EXPECT_EQ(rnd::PRNGKey(0).dtype(), DType::kUInt32);
  EXPECT_EQ(rnd::key(0).dtype(), DType::kKeyThreefry);
  EXPECT_EQ(rnd::key(0).shape(), Shape{});
}

TEST(Keys, SeedErrors) {
  EXPECT_ERROR(TypeError, rnd::PRNGKey(numpy::arange(int64_t{4})),
               "PRNGKey accepts a scalar seed, but was given an array of shape (4,)");
  EXPECT_ERROR(TypeError, rnd::key(numpy::arange(int64_t{4})), "key accepts a scalar seed");
  EXPECT_ERROR(TypeError, rnd::PRNGKey(numpy::scalar(3.5, DType::kFloat32)),
               "PRNG key seed must be an integer");
  EXPECT_ERROR(TypeError, rnd::key(rnd::key(1)),
               "key accepts a scalar seed, but was given a PRNG key");
}

// Values JAX prints. With jax_threefry_partitionable=False (JAX before 0.5.0), from a published
// jax 0.4.38 CPU session (a public course page on jax.random: "split is those same bits,
// retyped", "fold_in hashes the index instead"), and JAX's own docs of that era printing
// split(PRNGKey(0)) as [4146024105 967050713], [2718843009 1272950319]. With the default
// (True): split(key(0), 8) as printed in public JAX code, whose rows are also fold_in's values
// (both hash the counter (0, i)) and whose first row is Random123's first KAT.
TEST(Keys, PinnedJaxValues) {
  const Array k = rnd::key(0);
  {
    Partitionable p(false);
    EXPECT_EQ(words_of(rnd::bits(k, {4})),
              (std::vector<uint64_t>{4146024105u, 967050713u, 2718843009u, 1272950319u}));
    EXPECT_EQ(words_of(rnd::bits(k, {3})),
              (std::vector<uint64_t>{4146024105u, 1351547692u, 2718843009u}));
    EXPECT_EQ(words_of(rnd::key_data(rnd::split(k, 4))),
              (std::vector<uint64_t>{2285895361u, 1501764800u, 1518642379u, 4090693311u, 433833334u,
                                     4221794875u, 839183663u, 3740430601u}));
    EXPECT_EQ(words_of(rnd::split(rnd::PRNGKey(0))),
              (std::vector<uint64_t>{4146024105u, 967050713u, 2718843009u, 1272950319u}));
    EXPECT_EQ(pair_of(rnd::fold_in(k, 3)), (Pair{2467461003u, 3840466878u}));
    // normal's values (printed to 8 digits) go through erf_inv: compared to 2e-7 relative.
    EXPECT_EQ(testing::compare(to_doubles(rnd::normal(k, {4})),
                               {1.8160863, -0.75488514, 0.33988908, -0.53483534}, 2e-7, 1e-8),
              "");
    EXPECT_EQ(testing::compare(to_doubles(rnd::normal(k, {3})),
                               {1.8160863, -0.48262316, 0.33988908}, 2e-7, 1e-8),
              "");
    EXPECT_EQ(testing::compare(to_doubles(rnd::normal(k, {3, 3})),
                               {-0.3721109, 0.26423115, -0.18252768, -0.7368197, 0.44973662,
                                -0.1521442, -0.67135346, -0.5908641, 0.73168886},
                               2e-7, 1e-8),
              "");
  }
  {
    Partitionable p(true);
    EXPECT_EQ(words_of(rnd::key_data(rnd::split(k, 8))),
              (std::vector<uint64_t>{1797259609u, 2579123966u, 928981903u, 3453687069u, 4146024105u,
                                     2718843009u, 2467461003u, 3840466878u, 2285895361u, 433833334u,
                                     1524306142u, 1887795613u, 3792494674u, 2909014575u,
                                     2716826189u, 292468403u}));
    EXPECT_EQ(pair_of(rnd::fold_in(k, 3)), (Pair{2467461003u, 3840466878u}));
  }
}

TEST(Keys, SplitFoldInAndBitsMatchTheNaiveLayouts) {
  for (bool part : {true, false}) {
    Partitionable p(part);
    for (int trial = 0; trial < 4; ++trial) {
      const Pair kp = random_pair();
      const Array raw = raw_key(kp);
      const Array typed = rnd::wrap_key_data(raw);
      for (size_t n : {0u, 1u, 2u, 3u, 7u}) {
        std::vector<uint64_t> want;
        for (Pair q : ref_split(kp, n, part)) {
          want.push_back(q.a);
          want.push_back(q.b);
        }
        Array s = rnd::split(raw, static_cast<int64_t>(n));
        EXPECT_EQ(s.shape(), (Shape{static_cast<int64_t>(n), 2}));
        EXPECT_EQ(words_of(s), want) << "split " << n << " partitionable " << part;
        Array t = rnd::split(typed, static_cast<int64_t>(n));
        EXPECT_EQ(t.dtype(), DType::kKeyThreefry);
        EXPECT_EQ(words_of(rnd::key_data(t)), want);
      }
      // split to a shape: the flat layout of prod(shape) keys.
      {
        std::vector<uint64_t> want;
        for (Pair q : ref_split(kp, 6, part)) {
          want.push_back(q.a);
          want.push_back(q.b);
        }
        Array s = rnd::split(typed, Shape{2, 3});
        EXPECT_EQ(s.shape(), (Shape{2, 3}));
        EXPECT_EQ(words_of(rnd::key_data(s)), want);
      }
      for (int64_t d : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{123456789}}) {
        EXPECT_EQ(pair_of(rnd::fold_in(raw, d)), ref_fold_in(kp, static_cast<uint32_t>(d)));
        EXPECT_EQ(rnd::fold_in(typed, d).dtype(), DType::kKeyThreefry);
      }
      for (DType d : {DType::kUInt8, DType::kUInt16, DType::kUInt32}) {
        for (const Shape& s : {Shape{}, Shape{1}, Shape{5}, Shape{3, 4}, Shape{7}, Shape{0}}) {
          const std::vector<uint64_t> want =
              ref_bits(kp, iinfo(d).bits, static_cast<size_t>(shape_size(s)), part);
          Array b = rnd::bits(typed, s, d);
          EXPECT_EQ(b.dtype(), d);
          EXPECT_EQ(b.shape(), s);
          EXPECT_EQ(words_of(b), want) << dtype_name(d) << shape_str(s) << " part " << part;
        }
      }
      {
        X64 on(true);
        for (const Shape& s : {Shape{}, Shape{5}, Shape{2, 3}}) {
          Array b = rnd::bits(raw, s, DType::kUInt64);
          EXPECT_EQ(b.dtype(), DType::kUInt64);
          EXPECT_EQ(words_of(b), ref_bits(kp, 64, static_cast<size_t>(shape_size(s)), part));
        }
      }
      EXPECT_EQ(rnd::bits(raw, {2}, DType::kUInt64).dtype(), DType::kUInt32);  // canonicalized
    }
  }
}

TEST(Keys, DataWrapCloneAndErrors) {
  const Pair kp = random_pair();
  Array raw = raw_key(kp);
  Array typed = rnd::wrap_key_data(raw);
  EXPECT_EQ(pair_of(typed), kp);
  EXPECT_EQ(pair_of(rnd::clone(typed)), kp);
  EXPECT_EQ(rnd::key_impl(typed), "threefry2x32");
  Array many = rnd::wrap_key_data(u32_array({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(many.shape(), Shape{3});
  EXPECT_EQ(words_of(rnd::key_data(many)), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  // Key arrays go through index maps as keys (slicing keeps the key type).
  EXPECT_EQ(pair_of(lax::index_in_dim(many, 1, 0, false)), (Pair{3, 4}));
  EXPECT_ERROR(TypeError, rnd::wrap_key_data(u32_array({1, 2, 3}, {3})),
               "expected key_data.shape to end with (2,)");
  EXPECT_ERROR(TypeError, rnd::wrap_key_data(numpy::ones({2})), "expected key_data.dtype = uint32");
  EXPECT_ERROR(TypeError, rnd::split(many),
               "split accepts a single key, but was given a key "
               "array of shape (3,) != (). Use jax.vmap");
  EXPECT_ERROR(TypeError, rnd::normal(u32_array({1, 2, 3, 4}, {2, 2})),
               "normal accepts a single key");
  EXPECT_ERROR(TypeError, rnd::uniform(numpy::ones({2})), "expected key_data.dtype = uint32");
  EXPECT_ERROR(TypeError, rnd::fold_in(typed, numpy::arange(int64_t{3})),
               "fold_in accepts a scalar");
  EXPECT_ERROR(ValueError, rnd::bits(typed, {2}, DType::kInt32),
               "dtype argument to `bits` must be an unsigned int dtype");
  EXPECT_ERROR(ValueError, rnd::uniform(typed, {2}, DType::kInt32),
               "dtype argument to `uniform` must be a float dtype, got int32");
  EXPECT_ERROR(ValueError, rnd::uniform(typed, {3}, std::nullopt, numpy::zeros({4})),
               "uniform parameter shapes must be broadcast-compatible with shape argument");
  EXPECT_ERROR(TypeError, rnd::randint(typed, {3}, 0, 5, DType::kFloat32),
               "randint only accepts integer dtypes");
  EXPECT_ERROR(TypeError, rnd::bernoulli(typed, numpy::array({1.0}, DType::kInt32)),
               "bernoulli probability `p` must have a floating dtype");
  EXPECT_ERROR(ValueError, rnd::choice(typed, 3, {5}, false),
               "Cannot take a larger sample than population when 'replace=False'");
  EXPECT_ERROR(ValueError, rnd::choice(typed, 0, {2}), "a must be greater than 0");
  EXPECT_ERROR(ValueError, rnd::choice(typed, 3, {2}, true, numpy::ones({4})),
               "p must be None or match the shape of a");
  EXPECT_ERROR(TypeError, rnd::permutation(typed, numpy::scalar(2.0, DType::kFloat32)),
               "x must be an integer or at least 1-dimensional");
  EXPECT_ERROR(TypeError, lax::add(typed, typed), "key<fry>");
}

// ---------------------------------------------------------------- distributions

// The Kolmogorov-Smirnov statistic of samples against a CDF, and the bound it stays under with
// probability 1 - 1e-6 (the asymptotic Kolmogorov tail 2 exp(-2 n d^2)).
double ks_statistic(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}
double ks_bound(size_t n) { return std::sqrt(-std::log(0.5e-6) / (2.0 * static_cast<double>(n))); }

double mean(const std::vector<double>& x) {
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}
double variance(const std::vector<double>& x) {
  const double m = mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return s / static_cast<double>(x.size() - 1);
}

constexpr size_t kN = 20000;
const double kPi = 3.14159265358979323846;
double norm_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct KsCase {
  const char* name;
  std::function<Array(const Array&)> draw;
  std::function<double(double)> cdf;
  double mean = NAN, var = NAN;  // NAN: not checked (cauchy)
};

TEST(Distributions, KolmogorovSmirnovAndMoments) {
  const Shape s{static_cast<int64_t>(kN)};
  const std::vector<KsCase> cases = {
      {"uniform", [&](const Array& k) { return rnd::uniform(k, s); },
       [](double x) { return std::clamp(x, 0.0, 1.0); }, 0.5, 1.0 / 12},
      {"uniform_ab", [&](const Array& k) { return rnd::uniform(k, s, std::nullopt, -3.0, 5.0); },
       [](double x) { return std::clamp((x + 3) / 8, 0.0, 1.0); }, 1.0, 64.0 / 12},
      {"normal", [&](const Array& k) { return rnd::normal(k, s); }, norm_cdf, 0.0, 1.0},
      {"normal_f64",
       [&](const Array& k) {
         X64 on(true);
         return numpy::astype(rnd::normal(k, s, DType::kFloat64), DType::kFloat32);
       },
       norm_cdf, 0.0, 1.0},
      {"truncated_normal", [&](const Array& k) { return rnd::truncated_normal(k, -1.0, 2.0, s); },
       [](double x) {
         const double a = norm_cdf(-1), b = norm_cdf(2);
         return std::clamp((norm_cdf(x) - a) / (b - a), 0.0, 1.0);
       },
       NAN, NAN},
      {"exponential", [&](const Array& k) { return rnd::exponential(k, s); },
       [](double x) { return x < 0 ? 0.0 : 1 - std::exp(-x); }, 1.0, 1.0},
      {"gumbel", [&](const Array& k) { return rnd::gumbel(k, s); },
       [](double x) { return std::exp(-std::exp(-x)); }, 0.5772156649, kPi * kPi / 6},
      {"laplace", [&](const Array& k) { return rnd::laplace(k, s); },
       [](double x) { return x < 0 ? 0.5 * std::exp(x) : 1 - 0.5 * std::exp(-x); }, 0.0, 2.0},
      {"logistic", [&](const Array& k) { return rnd::logistic(k, s); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, 0.0, kPi * kPi / 3},
      {"cauchy", [&](const Array& k) { return rnd::cauchy(k, s); },
       [](double x) { return 0.5 + std::atan(x) / kPi; }, NAN, NAN},
      {"rayleigh", [&](const Array& k) { return rnd::rayleigh(k, 2.0, s); },
       [](double x) { return x < 0 ? 0.0 : 1 - std::exp(-x * x / 8); }, 2.0 * std::sqrt(kPi / 2),
       (4 - kPi) / 2 * 4},
      {"weibull_min", [&](const Array& k) { return rnd::weibull_min(k, 1.5, 2.0, s); },
       [](double x) { return x < 0 ? 0.0 : 1 - std::exp(-std::pow(x / 1.5, 2.0)); },
       1.5 * std::tgamma(1.5), 2.25 * (std::tgamma(2.0) - std::pow(std::tgamma(1.5), 2))},
  };
  for (bool part : {true, false}) {
    Partitionable p(part);
    for (const KsCase& c : cases) {
      Array k = rnd::fold_in(rnd::key(20240607), static_cast<int64_t>(c.name[0]));
      const std::vector<double> x = to_doubles(c.draw(k));
      ASSERT_EQ(x.size(), kN);
      const double d = ks_statistic(x, c.cdf);
      EXPECT_LT(d, ks_bound(kN)) << c.name << " partitionable " << part;
      if (!std::isnan(c.mean)) {
        // Means within 6 standard errors; variances within 6 standard errors of the sample
        // variance (fourth moments bounded by 9 sigma^4 for these families).
        EXPECT_NEAR(mean(x), c.mean, 6 * std::sqrt(c.var / kN)) << c.name;
        EXPECT_NEAR(variance(x), c.var, 6 * c.var * std::sqrt(8.0 / kN)) << c.name;
      }
    }
  }
}

// uniform's values are exactly JAX's function of the bits: (bits >> 9 | 1.0f) - 1, scaled.
TEST(Distributions, UniformAndNormalAreFunctionsOfTheBits) {
  for (bool part : {true, false}) {
    Partitionable p(part);
    const Pair kp = random_pair();
    const std::vector<uint64_t> b = ref_bits(kp, 32, 1000, part);
    const std::vector<double> u =
        to_doubles(rnd::uniform(raw_key(kp), {1000}, std::nullopt, -2.0, 3.0));
    for (size_t i = 0; i < b.size(); ++i) {
      const uint32_t fb = static_cast<uint32_t>(b[i] >> 9) | 0x3F800000u;
      float f;
      std::memcpy(&f, &fb, 4);
      const float want = std::max(-2.0f, (f - 1.0f) * 5.0f + -2.0f);
      ASSERT_EQ(static_cast<float>(u[i]), want) << i;
    }
    // bfloat16 draws 8 bits per value: 7 mantissa bits.
    const std::vector<uint64_t> b8 = ref_bits(kp, 8, 64, part);
    const std::vector<double> ub = to_doubles(rnd::uniform(raw_key(kp), {64}, DType::kBFloat16));
    for (size_t i = 0; i < b8.size(); ++i) EXPECT_EQ(ub[i], static_cast<double>(b8[i] >> 1) / 128);
    // float64 (x64): 52 mantissa bits of the 64-bit draw.
    {
      X64 on(true);
      const std::vector<uint64_t> b64 = ref_bits(kp, 64, 50, part);
      const std::vector<double> ud = to_doubles(rnd::uniform(raw_key(kp), {50}, DType::kFloat64));
      for (size_t i = 0; i < b64.size(); ++i)
        EXPECT_EQ(ud[i], std::ldexp(static_cast<double>(b64[i] >> 12), -52));
    }
  }
}

// XLA's float32 ErfInv (Giles 2010, "Approximating the erfinv function", single-precision
// branch) written out, to measure how far lax.erf_inv (Tessera's) lands from the values JAX's
// normal gets. Reported, and bounded so that a regression shows.
float giles_erfinv(float x) {
  float w = -std::log1p(-x * x);
  float p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    for (float c : {3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
                    -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0f;
    p = -0.000200214257f;
    for (float c : {0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
                    -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f})
      p = c + p * w;
  }
  return p * x;
}

int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return std::abs(static_cast<int64_t>(ia) - ib);
}

TEST(Distributions, ErfInvAgainstXlasPolynomial) {
  // Every value normal feeds erf_inv from 2^16 draws, plus the extremes of its domain.
  Array u = rnd::uniform(rnd::key(7), {65536}, std::nullopt, -0.99999994f, 1.0);
  std::vector<double> xs = to_doubles(u);
  for (float e : {-0.99999994f, 0.99999994f, 0.5f, -1e-30f, 0.0f, 0.9999f}) xs.push_back(e);
  Array xa = numpy::array(xs, {static_cast<int64_t>(xs.size())}, DType::kFloat32);
  const std::vector<double> got = to_doubles(lax::erf_inv(xa));
  int64_t worst = 0;
  double worst_x = 0;
  std::vector<int64_t> hist(4);  // 0, 1, 2-4, more ulps
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t d =
        ulp_distance(static_cast<float>(got[i]), giles_erfinv(static_cast<float>(xs[i])));
    hist[d == 0 ? 0 : d == 1 ? 1 : d <= 4 ? 2 : 3]++;
    if (d > worst) worst = d, worst_x = xs[i];
  }
  std::cout << "[random] lax.erf_inv vs XLA's float32 polynomial over " << xs.size()
            << " inputs: " << hist[0] << " equal, " << hist[1] << " at 1 ulp, " << hist[2]
            << " at 2-4, " << hist[3] << " beyond; max " << worst << " ulp at x = " << worst_x
            << "\n";
  EXPECT_LE(worst, 128);
}

// randint: JAX's two-draw algorithm spelled out on the reference bits.
TEST(Distributions, RandintMatchesTheTwoDrawAlgorithm) {
  for (bool part : {true, false}) {
    Partitionable p(part);
    const Pair kp = random_pair();
    const std::vector<Pair> ks = ref_split(kp, 2, part);
    struct Case {
      int64_t lo, hi;
      DType d;
    };
    for (const Case& c :
         {Case{0, 10, DType::kInt32}, Case{-5, 1000003, DType::kInt32}, Case{3, 3, DType::kInt32},
          Case{7, 2, DType::kInt32}, Case{0, 256, DType::kUInt8}, Case{-100, 100, DType::kInt8},
          Case{0, 65536, DType::kUInt16}, Case{-2147483648LL, 2147483647LL, DType::kInt32}}) {
      const int nbits = iinfo(c.d).bits;
      const size_t n = 300;
      const std::vector<uint64_t> hi = ref_bits(ks[0], nbits, n, part);
      const std::vector<uint64_t> lo = ref_bits(ks[1], nbits, n, part);
      const IInfo info = iinfo(c.d);
      const int64_t clo = std::clamp<int64_t>(c.lo, info.min, static_cast<int64_t>(info.max));
      const int64_t chi = std::clamp<int64_t>(c.hi, info.min, static_cast<int64_t>(info.max));
      const uint64_t mod = nbits == 64 ? 0 : (uint64_t{1} << nbits);
      auto wrapn = [&](uint64_t v) { return mod ? v % mod : v; };
      uint64_t span = wrapn(static_cast<uint64_t>(chi - clo));
      if (chi <= clo) span = 1;
      if (c.hi > static_cast<int64_t>(info.max) && chi > clo) span = wrapn(span + 1);
      Array got = rnd::randint(raw_key(kp), {static_cast<int64_t>(n)}, c.lo, c.hi, c.d);
      const std::vector<double> g = to_doubles(got);
      for (size_t i = 0; i < n; ++i) {
        int64_t want = clo;
        if (span != 0) {
          const uint64_t half = wrapn(uint64_t{1} << (nbits / 2)) % span;
          const uint64_t mult = wrapn(half * half) % span;
          const uint64_t off = wrapn(wrapn((hi[i] % span) * mult) + lo[i] % span) % span;
          want = clo + static_cast<int64_t>(off);
        } else {
          want = clo + static_cast<int64_t>(wrapn(wrapn(hi[i] * 0) + lo[i]));  // rem by 0 == x
        }
        // Wrap to the dtype as the conversion does.
        const uint64_t uw = wrapn(static_cast<uint64_t>(want));
        const int64_t w = (!is_unsigned_integer(c.d) && nbits < 64 && (uw >> (nbits - 1)))
                              ? static_cast<int64_t>(uw) - static_cast<int64_t>(mod)
                              : static_cast<int64_t>(uw);
        ASSERT_EQ(static_cast<int64_t>(g[i]), w)
            << i << " [" << c.lo << ", " << c.hi << ") " << dtype_name(c.d);
      }
    }
  }
  // Frequencies of a small range: each value near n / 10.
  const std::vector<double> g =
      to_doubles(rnd::randint(rnd::key(3), {static_cast<int64_t>(kN)}, 0, 10));
  std::vector<int> counts(10);
  for (double v : g) counts.at(static_cast<size_t>(v))++;
  for (int c : counts) EXPECT_NEAR(c, kN / 10.0, 6 * std::sqrt(kN * 0.09));
}

TEST(Distributions, BernoulliRademacherCategorical) {
  const Array k = rnd::key(11);
  const std::vector<double> b = to_doubles(rnd::bernoulli(k, 0.3, Shape{static_cast<int64_t>(kN)}));
  EXPECT_NEAR(mean(b), 0.3, 6 * std::sqrt(0.21 / kN));
  EXPECT_EQ(rnd::bernoulli(k, numpy::full({2, 3}, 0.5)).shape(), (Shape{2, 3}));
  EXPECT_EQ(rnd::bernoulli(k).dtype(), DType::kBool);
  // bernoulli is uniform < p, bit for bit.
  EXPECT_EQ(to_doubles(rnd::bernoulli(k, 0.3, Shape{50})),
            to_doubles(numpy::less(rnd::uniform(k, {50}), 0.3)));
  const std::vector<double> r = to_doubles(rnd::rademacher(k, {static_cast<int64_t>(kN)}));
  for (double v : r) ASSERT_TRUE(v == 1 || v == -1);
  EXPECT_NEAR(mean(r), 0.0, 6 / std::sqrt(kN));
  EXPECT_EQ(rnd::rademacher(k, {3}).dtype(), DType::kInt32);
  // categorical: frequencies of softmax(logits) along the axis, chosen rows independent.
  const std::vector<double> logits = {0.0, std::log(2.0), std::log(3.0), std::log(4.0)};
  Array l = numpy::array(logits, {4}, DType::kFloat32);
  const std::vector<double> c =
      to_doubles(rnd::categorical(k, l, -1, Shape{static_cast<int64_t>(kN)}));
  std::vector<int> counts(4);
  for (double v : c) counts.at(static_cast<size_t>(v))++;
  for (int i = 0; i < 4; ++i) {
    const double pi = (i + 1) / 10.0;
    EXPECT_NEAR(counts[i], kN * pi, 6 * std::sqrt(kN * pi * (1 - pi))) << i;
  }
  // Batched logits along axis 0: the result drops that axis; argmax of gumbel + logits.
  Array l2 = numpy::array({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {2, 3}, DType::kFloat32);
  Array c2 = rnd::categorical(k, l2, 0);
  EXPECT_EQ(c2.shape(), Shape{3});
  Array want = numpy::argmax(numpy::add(rnd::gumbel(k, {2, 3}), l2), int64_t{0});
  EXPECT_EQ(to_doubles(c2), to_doubles(want));
}

// permutation: JAX's rounds of sorting by fresh 32-bit keys, against the reference bits.
TEST(Distributions, PermutationAndChoice) {
  for (bool part : {true, false}) {
    Partitionable p(part);
    const Pair kp = random_pair();
    for (int64_t n : {1, 2, 10, 2000}) {
      const std::vector<double> got = to_doubles(rnd::permutation(raw_key(kp), n));
      // One round for n <= 1625 (ceil(3 ln n / ln(2^32 - 1))): key, subkey = split(key).
      std::vector<int64_t> want(static_cast<size_t>(n));
      std::iota(want.begin(), want.end(), 0);
      if (n > 1) {
        const Pair sub = ref_split(kp, 2, part)[1];
        const std::vector<uint64_t> sk = ref_bits(sub, 32, static_cast<size_t>(n), part);
        std::vector<int64_t> rounds2 = want;
        std::stable_sort(want.begin(), want.end(),
                         [&](int64_t a, int64_t b) { return sk[a] < sk[b]; });
        if (n > 1625) {  // a second round from the first key
          const Pair k2 = ref_split(kp, 2, part)[0];
          const Pair sub2 = ref_split(k2, 2, part)[1];
          const std::vector<uint64_t> sk2 = ref_bits(sub2, 32, static_cast<size_t>(n), part);
          std::vector<size_t> order(static_cast<size_t>(n));
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(),
                           [&](size_t a, size_t b) { return sk2[a] < sk2[b]; });
          std::vector<int64_t> next(static_cast<size_t>(n));
          for (size_t i = 0; i < order.size(); ++i) next[i] = want[order[i]];
          want = next;
        }
      }
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], static_cast<double>(want[i]));
    }
  }
  const Array k = rnd::key(5);
  // Rows of a matrix keep together (one permutation along axis 0); independent shuffles each
  // column on its own.
  Array m = numpy::reshape(numpy::arange(int64_t{12}), {4, 3});
  const std::vector<double> pm = to_doubles(rnd::permutation(k, m));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(pm[r * 3 + 1], pm[r * 3] + 1);
    EXPECT_EQ(pm[r * 3 + 2], pm[r * 3] + 2);
  }
  Array ind = rnd::permutation(k, m, 1, true);
  EXPECT_EQ(ind.shape(), (Shape{4, 3}));
  for (int r = 0; r < 4; ++r) {
    std::set<double> row(pm.begin(), pm.begin());
    const std::vector<double> v = to_doubles(ind);
    std::set<double> got(v.begin() + r * 3, v.begin() + r * 3 + 3);
    EXPECT_EQ(got, (std::set<double>{r * 3.0, r * 3.0 + 1, r * 3.0 + 2}));
  }
  // choice without replacement: distinct values; its first draws are the permutation's prefix.
  const std::vector<double> c = to_doubles(rnd::choice(k, 10, {6}, false));
  EXPECT_EQ(std::set<double>(c.begin(), c.end()).size(), 6u);
  const std::vector<double> perm = to_doubles(rnd::permutation(k, 10));
  EXPECT_EQ(c, std::vector<double>(perm.begin(), perm.begin() + 6));
  // With replacement: randint(key, shape, 0, n).
  EXPECT_EQ(to_doubles(rnd::choice(k, 7, {2, 5})), to_doubles(rnd::randint(k, {2, 5}, 0, 7)));
  // From an array along an axis.
  Array a = numpy::reshape(numpy::arange(int64_t{15}), {3, 5});
  Array ca = rnd::choice(k, a, {4}, true, std::nullopt, 1);
  EXPECT_EQ(ca.shape(), (Shape{3, 4}));
  // Weighted: frequencies follow p (with replacement); p's zero entries never come without.
  Array pw = numpy::array({0.1, 0.0, 0.6, 0.3}, {4}, DType::kFloat32);
  const std::vector<double> cw =
      to_doubles(rnd::choice(k, 4, {static_cast<int64_t>(kN)}, true, pw));
  std::vector<int> counts(4);
  for (double v : cw) counts.at(static_cast<size_t>(v))++;
  for (int i = 0; i < 4; ++i) {
    const double pi = std::vector<double>{0.1, 0.0, 0.6, 0.3}[i];
    EXPECT_NEAR(counts[i], kN * pi, 6 * std::sqrt(kN * pi * (1 - pi)) + 0.5) << i;
  }
  for (int t = 0; t < 20; ++t) {
    const std::vector<double> nw = to_doubles(rnd::choice(rnd::fold_in(k, t), 4, {3}, false, pw));
    EXPECT_EQ(std::set<double>(nw.begin(), nw.end()), (std::set<double>{0, 2, 3}));
  }
  EXPECT_EQ(rnd::choice(k, 4, {0}).shape(), Shape{0});
}

// ---------------------------------------------------------------- transformations

TEST(Transforms, VmapOverKeysEqualsTheLoop) {
  for (bool part : {true, false}) {
    Partitionable p(part);
    Array keys = rnd::split(rnd::key(42), 5);
    Array raw = rnd::key_data(keys);
    auto per_key = [](const Array& k) { return rnd::normal(k, {3}); };
    Array got = vmap(per_key)(keys);
    Array got_raw = vmap(per_key)(raw);
    std::vector<Array> loop;
    for (int i = 0; i < 5; ++i) loop.push_back(per_key(lax::index_in_dim(keys, i, 0, false)));
    const std::vector<double> want = to_doubles(numpy::stack(loop));
    EXPECT_EQ(to_doubles(got), want);
    EXPECT_EQ(to_doubles(got_raw), want);
    // vmap(split): batched typed keys in, batched keys out.
    Array sp = vmap([](const Array& k) { return rnd::split(k, 3); })(keys);
    EXPECT_EQ(sp.shape(), (Shape{5, 3}));
    EXPECT_EQ(sp.dtype(), DType::kKeyThreefry);
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(words_of(rnd::key_data(lax::index_in_dim(sp, i, 0, false))),
                words_of(rnd::key_data(rnd::split(lax::index_in_dim(keys, i, 0, false), 3))));
    // vmap of key(seed) over seeds and of fold_in over data.
    Array seeds = numpy::arange(int64_t{4});
    Array ks = vmap([](const Array& s) { return rnd::key(s); })(seeds);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(pair_of(lax::index_in_dim(ks, i, 0, false)), pair_of(rnd::key(i)));
    Array fk = vmap([&](const Array& d) { return rnd::fold_in(rnd::key(9), d); })(seeds);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(pair_of(lax::index_in_dim(fk, i, 0, false)), pair_of(rnd::fold_in(rnd::key(9), i)));
    // Other distributions under vmap (batch axis 1 of the raw keys' words is rejected by
    // random_wrap's rule and moved).
    auto mix = [](const Array& k) {
      return numpy::add(numpy::add(rnd::uniform(k, {4}),
                                   numpy::astype(rnd::randint(k, {4}, 0, 9), DType::kFloat32)),
                        numpy::astype(rnd::permutation(k, 4), DType::kFloat32));
    };
    Array vm = vmap(mix, {1})(numpy::transpose(raw));
    std::vector<Array> loop2;
    for (int i = 0; i < 5; ++i) loop2.push_back(mix(lax::index_in_dim(raw, i, 0, false)));
    EXPECT_EQ(to_doubles(vm), to_doubles(numpy::stack(loop2)));
  }
}

TEST(Transforms, JitEqualsEagerBitwise) {
  const Array k = rnd::key(1234);
  auto check = [&](const char* name, std::function<Array(const Array&)> f) {
    auto jf = jit(f);
    EXPECT_EQ(to_doubles(jf(k)), to_doubles(f(k))) << name;
  };
  check("normal", [](const Array& key) { return rnd::normal(key, {1000}); });
  check("uniform", [](const Array& key) {
    return rnd::uniform(key, {3, 7}, std::nullopt, -1.0, 2.0);
  });
  check("randint", [](const Array& key) { return rnd::randint(key, {100}, -3, 17); });
  check("bits8", [](const Array& key) { return rnd::bits(key, {33}, DType::kUInt8); });
  check("split", [](const Array& key) { return rnd::key_data(rnd::split(key, 4)); });
  check("permutation", [](const Array& key) { return rnd::permutation(key, 100); });
  check("gumbel", [](const Array& key) { return rnd::gumbel(key, {50}); });
  check("truncated",
        [](const Array& key) { return rnd::truncated_normal(key, -0.5, 0.5, Shape{50}); });
  // Typed keys as jit arguments and results.
  auto js = jit([](const Array& key) { return rnd::split(key); });
  Array out = js(k);
  EXPECT_EQ(out.dtype(), DType::kKeyThreefry);
  EXPECT_EQ(words_of(rnd::key_data(out)), words_of(rnd::key_data(rnd::split(k))));
}

TEST(Transforms, GradOfReparameterizedSamples) {
  const Array k = rnd::key(77);
  const Array eps = rnd::normal(k, {10});
  // d/dmu sum(mu + sigma * normal) = 10; d/dsigma = sum(normal).
  auto f = [&](const Array& mu, const Array& sigma) {
    return numpy::sum(numpy::add(mu, numpy::multiply(sigma, rnd::normal(k, {10}))));
  };
  Array mu = numpy::scalar(0.5, DType::kFloat32), sigma = numpy::scalar(2.0, DType::kFloat32);
  auto [gmu, gsigma] = grad(f, argnums<0, 1>)(mu, sigma);
  EXPECT_FLOAT_EQ(static_cast<float>(to_doubles(gmu)[0]), 10.0f);
  EXPECT_NEAR(to_doubles(gsigma)[0], to_doubles(numpy::sum(eps))[0], 1e-5);
  // Through truncated_normal's bounds the clip's stop_gradient keeps the derivative finite.
  auto g = [&](const Array& mu2) {
    return numpy::sum(numpy::multiply(mu2, rnd::uniform(k, {5}, std::nullopt, 1.0, 2.0)));
  };
  EXPECT_NEAR(to_doubles(grad(g)(mu))[0],
              to_doubles(numpy::sum(rnd::uniform(k, {5}, std::nullopt, 1.0, 2.0)))[0], 1e-6);
}

}  // namespace
}  // namespace tessera
