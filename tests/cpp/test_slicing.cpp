// The slicing family beyond the sweep (squeeze, rev, slice, dynamic_slice,
// dynamic_update_slice, concatenate, pad): error messages, bit-exact movement of NaN/inf/-0,
// start-index dtypes and XLA's clamping, the parallel kernels on large arrays against host
// loops, gradients of pad with cropping and of the dynamic ops against hand-derived
// cotangents, the batched-start vmap rules against loops, and make_jaxpr text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "prims/prims.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using Ints = std::vector<int64_t>;

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kI32 = DType::kInt32,
                kI8 = DType::kInt8, kU8 = DType::kUInt8, kI16 = DType::kInt16,
                kU32 = DType::kUInt32, kI64 = DType::kInt64, kU64 = DType::kUInt64;

Array from(const Shape& s, const std::vector<double>& v, DType d = kF32) {
  Aval a{s, d, false};
  std::vector<unsigned char> buf(a.nbytes() + 16);
  for (size_t i = 0; i < v.size(); ++i) store_from_double(d, buf.data() + i * itemsize(d), v[i]);
  return array_from_host(a, buf.data());
}

Array idx(double v, DType d = kI32) { return tnp::scalar(v, d); }

std::string text(const ClosedJaxpr& j) {
  verify(*j.jaxpr);
  return to_string(j);
}

ShapeDtypeStruct sds(Shape s, DType d = kF32) { return ShapeDtypeStruct{std::move(s), d}; }

// ---------------------------------------------------------------- errors

TEST(SlicingErrors, Squeeze) {
  Array x = tnp::zeros({3, 1, 4});
  EXPECT_ERROR(ValueError, lax::squeeze(x, {0}),
               "[squeeze] cannot select an axis to squeeze out which has size not equal to one, "
               "got shape=(3, 1, 4) and dimensions=(0,)");
  EXPECT_ERROR(ValueError, lax::squeeze(x, {3}), "dimensions outside range");
  EXPECT_ERROR(ValueError, lax::squeeze(x, {1, -2}), "not unique");
  EXPECT_ERROR(ValueError, bind1(prims::squeeze, {x}, Params{{"dimensions", Ints{-4}}}),
               "f32[3,1,4]");
  EXPECT_EQ(lax::squeeze(x, {-2}).shape(), (Shape{3, 4}));
  // The primitive itself accepts negative dims (canonicalized in its abstract eval).
  EXPECT_EQ(bind1(prims::squeeze, {x}, Params{{"dimensions", Ints{-2}}}).shape(), (Shape{3, 4}));
}

TEST(SlicingErrors, Rev) {
  Array x = tnp::zeros({3, 4});
  EXPECT_ERROR(ValueError, lax::rev(x, {0, 0}), "[rev] rev dimensions must be unique");
  EXPECT_ERROR(ValueError, lax::rev(x, {2}),
               "rev dimensions must all be in the range [0, 2), got dimensions (2,)");
  EXPECT_ERROR(ValueError, lax::rev(x, {-1}), "range [0, 2)");
}

TEST(SlicingErrors, Slice) {
  Array x = tnp::zeros({3, 4});
  EXPECT_ERROR(TypeError, lax::slice(x, {0, 0}, {3, 5}),
               "[slice] slice limit_indices must be less than or equal to operand shape, got "
               "limit_indices (3, 5) for operand shape (3, 4)");
  EXPECT_ERROR(TypeError, lax::slice(x, {0}, {3}), "start_indices must have length equal");
  EXPECT_ERROR(TypeError, lax::slice(x, {2, 0}, {1, 4}),
               "limit_indices must be greater than or equal to start_indices");
  EXPECT_ERROR(TypeError, lax::slice(x, {-1, 0}, {1, 4}), "greater than or equal to zero");
  EXPECT_ERROR(TypeError, lax::slice(x, {0, 0}, {3, 4}, {1, 0}), "strides must be positive");
  EXPECT_ERROR(TypeError, lax::slice(x, {0, 0}, {3, 4}, {1}), "strides must have length");
}

TEST(SlicingErrors, DynamicSlice) {
  Array x = tnp::zeros({3, 4});
  EXPECT_ERROR(TypeError, lax::dynamic_slice(x, {idx(0), idx(0)}, {2, 5}),
               "[dynamic_slice] dynamic_slice slice_sizes must be less than or equal to operand "
               "shape, got slice_sizes (2, 5) for operand shape (3, 4)");
  EXPECT_ERROR(TypeError, lax::dynamic_slice(x, {idx(0), idx(0)}, {-1, 2}),
               "greater than or equal to zero");
  EXPECT_ERROR(TypeError, lax::dynamic_slice(x, {idx(0), idx(0)}, {2}),
               "slice_sizes must have the same length");
  // Directly at the primitive (the lax wrapper checks indices first).
  EXPECT_ERROR(TypeError,
               bind1(prims::dynamic_slice, {x, idx(0), tnp::scalar(0.0, kF32)},
                     Params{{"slice_sizes", Ints{1, 1}}}),
               "start indices must be rank-0 integer arrays, got f32[] for index 1");
  EXPECT_ERROR(TypeError,
               bind1(prims::dynamic_slice, {x, idx(0)}, Params{{"slice_sizes", Ints{1, 1}}}),
               "got 1 indices for operand shape (3, 4)");
}

TEST(SlicingErrors, DynamicUpdateSlice) {
  Array x = tnp::zeros({3, 4});
  EXPECT_ERROR(TypeError, lax::dynamic_update_slice(x, tnp::zeros({2, 2}, kI32), {idx(0), idx(0)}),
               "[dynamic_update_slice] lax.dynamic_update_slice requires arguments to have the "
               "same dtypes, got float32, int32");
  EXPECT_ERROR(TypeError, lax::dynamic_update_slice(x, tnp::zeros({4, 1}), {idx(0), idx(0)}),
               "update shape must be smaller than operand shape, got update shape (4, 1) for "
               "operand shape (3, 4)");
  EXPECT_ERROR(TypeError, lax::dynamic_update_slice(x, tnp::zeros({2}), {idx(0), idx(0)}),
               "update must have the same rank as operand");
}

TEST(SlicingErrors, Concatenate) {
  Array a = tnp::zeros({2, 3}), b = tnp::zeros({2, 4});
  EXPECT_ERROR(TypeError, lax::concatenate({}, 0),
               "[concatenate] concatenate expects at least one operand");
  EXPECT_ERROR(TypeError, lax::concatenate({a, b}, 0),
               "shapes that differ in dimensions other than the one being concatenated: "
               "concatenating along dimension 0 for shapes (2, 3), (2, 4)");
  EXPECT_ERROR(TypeError, lax::concatenate({a, tnp::zeros({3})}, 0),
               "different numbers of dimensions");
  EXPECT_ERROR(TypeError, lax::concatenate({a, b}, 2),
               "concatenate dimension out of bounds: dimension 2");
  EXPECT_ERROR(TypeError, lax::concatenate({a, tnp::zeros({2, 3}, kI32)}, 0),
               "same dtypes, got float32, int32");
  EXPECT_EQ(lax::concatenate({a, b}, 1).shape(), (Shape{2, 7}));
}

TEST(SlicingErrors, Pad) {
  Array x = tnp::zeros({3, 4});
  const Array v = tnp::scalar(0.0, kF32);
  EXPECT_ERROR(TypeError, lax::pad(x, tnp::zeros({1}), {{0, 0, 0}, {0, 0, 0}}),
               "[pad] pad padding_value must be a scalar (rank 0), got f32[1]");
  EXPECT_ERROR(TypeError, lax::pad(x, tnp::scalar(0.0, kI32), {{0, 0, 0}, {0, 0, 0}}),
               "pad operand and padding_value must be same dtype: got float32 and int32");
  EXPECT_ERROR(ValueError, lax::pad(x, v, {{0, 0, 0}}),
               "length of padding_config must equal the number of axes of operand, got "
               "padding_config ((0, 0, 0),) for operand shape (3, 4)");
  EXPECT_ERROR(ValueError, lax::pad(x, v, {{0, 0, -1}, {0, 0, 0}}),
               "interior padding in padding_config must be nonnegative");
  EXPECT_ERROR(ValueError, lax::pad(x, v, {{-2, -2, 0}, {0, 0, 0}}),
               "Dimension size after padding is not at least 0, got result shape (-1, 4)");
  // Cropping to exactly nothing is fine.
  EXPECT_EQ(lax::pad(x, v, {{-2, -1, 0}, {0, 0, 0}}).shape(), (Shape{0, 4}));
}

// ---------------------------------------------------------------- values moved bit for bit

TEST(Slicing, SpecialValuesMoveBitExactly) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Array x = from({2, 3}, {nan, -0.0, inf, -inf, 1.5, -0.0});
  auto bits = [](const Array& a) {
    std::vector<uint32_t> b(static_cast<size_t>(a.size()));
    if (!b.empty()) std::memcpy(b.data(), a.raw_data(), b.size() * 4);
    return b;
  };
  auto f32bits = [](double v) {
    float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  const auto xb = bits(x);
  EXPECT_EQ(bits(lax::rev(x, {0, 1})),
            (std::vector<uint32_t>{xb[5], xb[4], xb[3], xb[2], xb[1], xb[0]}));
  EXPECT_EQ(bits(lax::slice(x, {0, 1}, {2, 3}, {1, 1})),
            (std::vector<uint32_t>{xb[1], xb[2], xb[4], xb[5]}));
  Array p = lax::pad(x, tnp::scalar(-0.0, kF32), {{0, 0, 0}, {1, 0, 1}});
  const uint32_t nz = f32bits(-0.0);
  EXPECT_EQ(bits(p), (std::vector<uint32_t>{nz, xb[0], nz, xb[1], nz, xb[2], nz, xb[3], nz, xb[4],
                                            nz, xb[5]}));
  Array c = lax::concatenate({x, x}, 0);
  std::vector<uint32_t> cc = xb;
  cc.insert(cc.end(), xb.begin(), xb.end());
  EXPECT_EQ(bits(c), cc);
  Array u = lax::dynamic_update_slice(tnp::zeros({2, 3}), lax::slice(x, {0, 0}, {1, 3}),
                                      {idx(1), idx(0)});
  const uint32_t z = f32bits(0.0);
  EXPECT_EQ(bits(u), (std::vector<uint32_t>{z, z, z, xb[0], xb[1], xb[2]}));
}

// ---------------------------------------------------------------- start indices

TEST(Slicing, StartIndexDtypesAndClamping) {
  Array x = from({9}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  auto first = [&](const Array& i) { return to_doubles(lax::dynamic_slice(x, {i}, {3}))[0]; };
  EXPECT_EQ(first(idx(2, kI8)), 2);
  EXPECT_EQ(first(idx(-2, kI8)), 6);    // -2 + 9 = 7, clamped to 9 - 3
  EXPECT_EQ(first(idx(-4, kI16)), 5);   // -4 + 9
  EXPECT_EQ(first(idx(-128, kI8)), 0);  // -119 clamps to 0
  EXPECT_EQ(first(idx(200, kU8)), 6);   // unsigned: never negative, clamped
  EXPECT_EQ(first(idx(4e9, kU32)), 6);  // beyond int32
  EXPECT_EQ(first(idx(7, kI32)), 6);
  {
    testing::X64Scope x64;
    EXPECT_EQ(first(idx(1099511627776.0, kI64)), 6);
    EXPECT_EQ(first(idx(-1099511627776.0, kI64)), 0);
    EXPECT_EQ(first(idx(1.8e19, kU64)), 6);
  }
  // Mixed index dtypes in one call.
  Array y = lax::dynamic_slice(from({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                               {idx(1, kU8), idx(-1, kI16)}, {2, 2});
  EXPECT_EQ(to_doubles(y), (std::vector<double>{6, 7, 10, 11}));
  // The update lands at the clamped place too.
  Array u = lax::dynamic_update_slice(tnp::zeros({5}), tnp::ones({2}), {idx(100, kI32)});
  EXPECT_EQ(to_doubles(u), (std::vector<double>{0, 0, 0, 1, 1}));
  u = lax::dynamic_update_slice(tnp::zeros({5}), tnp::ones({2}), {idx(-100, kI32)});
  EXPECT_EQ(to_doubles(u), (std::vector<double>{1, 1, 0, 0, 0}));
}

// ---------------------------------------------------------------- large arrays (parallel)

TEST(Slicing, LargeArraysMatchHostLoops) {
  const Shape s{300, 1001};
  Array x = random_array(s, kF32);
  const std::vector<double> xv = to_doubles(x);
  auto run_all = [&]() {
    std::vector<std::vector<double>> outs;
    outs.push_back(to_doubles(lax::slice(x, {1, 2}, {300, 1000}, {2, 3})));
    outs.push_back(to_doubles(lax::rev(x, {0, 1})));
    outs.push_back(to_doubles(lax::pad(x, tnp::scalar(7.0, kF32), {{-1, 2, 1}, {3, -2, 0}})));
    outs.push_back(to_doubles(lax::concatenate({x, lax::slice(x, {0, 0}, {300, 5})}, 1)));
    outs.push_back(
        to_doubles(lax::dynamic_update_slice(x, tnp::zeros({100, 200}), {idx(250), idx(-300)})));
    outs.push_back(to_doubles(lax::dynamic_slice(x, {idx(5), idx(7)}, {290, 900})));
    return outs;
  };
  std::vector<std::vector<double>> got;
  {
    testing::Threads t(2);
    got = run_all();
  }
  // Slice with strides.
  {
    std::vector<double> want;
    for (int64_t i = 1; i < 300; i += 2)
      for (int64_t j = 2; j < 1000; j += 3) want.push_back(xv[i * 1001 + j]);
    EXPECT_EQ(got[0], want);
  }
  {
    std::vector<double> want(xv.rbegin(), xv.rend());
    EXPECT_EQ(got[1], want);
  }
  {
    // pad: rows -1 + i*2 for i >= 1 (i = 0 is cropped), then 2 high; columns shifted by 3,
    // the last 2 cropped.
    const int64_t rows = -1 + 2 + 300 + 299, cols = 3 - 2 + 1001;
    std::vector<double> want(static_cast<size_t>(rows * cols), 7.0);
    for (int64_t i = 0; i < 300; ++i) {
      const int64_t r = -1 + 2 * i;
      if (r < 0 || r >= rows) continue;
      for (int64_t j = 0; j < 1001; ++j) {
        const int64_t c = 3 + j;
        if (c < cols) want[r * cols + c] = xv[i * 1001 + j];
      }
    }
    EXPECT_EQ(got[2], want);
  }
  {
    std::vector<double> want;
    for (int64_t i = 0; i < 300; ++i) {
      for (int64_t j = 0; j < 1001; ++j) want.push_back(xv[i * 1001 + j]);
      for (int64_t j = 0; j < 5; ++j) want.push_back(xv[i * 1001 + j]);
    }
    EXPECT_EQ(got[3], want);
  }
  {
    // Starts (250, -300 + 1001 = 701) clamp to (200, 701).
    std::vector<double> want = xv;
    for (int64_t i = 200; i < 300; ++i)
      for (int64_t j = 701; j < 901; ++j) want[i * 1001 + j] = 0.0;
    EXPECT_EQ(got[4], want);
  }
  {
    std::vector<double> want;
    for (int64_t i = 5; i < 295; ++i)
      for (int64_t j = 7; j < 907; ++j) want.push_back(xv[i * 1001 + j]);
    EXPECT_EQ(got[5], want);
  }
  testing::Threads t(1);
  EXPECT_EQ(run_all(), got);  // any thread count: the same bits
}

// ---------------------------------------------------------------- gradients

// f(x, v) = sum(w * pad(x, v)): d/dx picks w where each x entry lands (nothing where cropped),
// d/dv sums w over the padding positions. Cropping edges exercise JAX's _pad_transpose.
TEST(SlicingGrad, PadWithCroppingAndInterior) {
  testing::X64Scope x64;
  const Shape xs{4, 3};
  const std::vector<lax::PadConfig> cfg{{-2, 1, 1}, {2, -1, 0}};
  Array x = random_array(xs, kF64), v = tnp::scalar(0.5, kF64);
  const Shape os{-2 + 1 + 4 + 3, 2 - 1 + 3};
  Array w = random_array(os, kF64);
  auto f = [&](const Array& a, const Array& b) {
    return tnp::sum(lax::mul(w, lax::pad(a, b, cfg)));
  };
  auto [gx, gv] = grad(f, argnums<0, 1>)(x, v);
  const std::vector<double> wv = to_doubles(w);
  std::vector<double> want_x(12, 0.0);
  double want_v = 0.0;
  std::vector<bool> from_x(wv.size(), false);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const int64_t r = -2 + 2 * i, c = 2 + j;
      if (r < 0 || r >= os[0] || c >= os[1]) continue;
      want_x[i * 3 + j] = wv[r * os[1] + c];
      from_x[r * os[1] + c] = true;
    }
  for (size_t k = 0; k < wv.size(); ++k)
    if (!from_x[k]) want_v += wv[k];
  EXPECT_EQ(compare(to_doubles(gx), want_x, 1e-12, 1e-12), "");
  EXPECT_NEAR(gv.item<double>(), want_v, 1e-12);
}

TEST(SlicingGrad, DynamicOpsAtClampedStarts) {
  testing::X64Scope x64;
  Array x = random_array({5, 4}, kF64), u = random_array({2, 3}, kF64);
  Array w = random_array({5, 4}, kF64), w2 = random_array({2, 3}, kF64);
  const Array i = idx(9), j = idx(-1);  // clamp to (3, 1)
  auto f = [&](const Array& a, const Array& b) {
    return tnp::sum(lax::mul(w, lax::dynamic_update_slice(a, b, {i, j})));
  };
  auto [gx, gu] = grad(f, argnums<0, 1>)(x, u);
  const std::vector<double> wv = to_doubles(w);
  std::vector<double> want_x = wv, want_u;
  for (int64_t r = 3; r < 5; ++r)
    for (int64_t c = 1; c < 4; ++c) {
      want_u.push_back(wv[r * 4 + c]);
      want_x[r * 4 + c] = 0.0;
    }
  EXPECT_EQ(to_doubles(gx), want_x);
  EXPECT_EQ(to_doubles(gu), want_u);
  // dynamic_slice: the cotangent goes back to the clamped window.
  auto g = [&](const Array& a) {
    return tnp::sum(lax::mul(w2, lax::dynamic_slice(a, {i, j}, {2, 3})));
  };
  Array gs = grad(g)(x);
  std::vector<double> want_s(20, 0.0);
  const std::vector<double> w2v = to_doubles(w2);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 3; ++c) want_s[(3 + r) * 4 + 1 + c] = w2v[r * 3 + c];
  EXPECT_EQ(to_doubles(gs), want_s);
  // JVP with the operand constant: only the update's tangent flows.
  auto h = [&](const Array& b) { return lax::dynamic_update_slice(x, b, {i, j}); };
  auto [y, t] = jvp(h, std::make_tuple(u), std::make_tuple(tnp::ones({2, 3}, kF64)));
  std::vector<double> want_t(20, 0.0);
  for (int64_t r = 3; r < 5; ++r)
    for (int64_t c = 1; c < 4; ++c) want_t[r * 4 + c] = 1.0;
  EXPECT_EQ(to_doubles(t), want_t);
}

// ---------------------------------------------------------------- batched starts

// Per-example starts over a long dim (many barrel-shifter rounds), beyond both ends too.
TEST(SlicingBatch, BatchedStartsMatchTheLoop) {
  const int64_t B = 6, n = 37, k = 5;
  Array x = random_array({B, 3, n}, kF32);
  std::vector<double> starts;
  for (int64_t b = 0; b < B; ++b)
    starts.push_back(static_cast<double>(std::uniform_int_distribution<int>(-45, 45)(rng())));
  starts[0] = 32, starts[1] = 33, starts[2] = -1;
  Array s = from({B}, starts, kI32);
  Array u = random_array({B, 2, k}, kF32);
  auto ds = [&](const Array& a, const Array& i) {
    return lax::dynamic_slice(a, {idx(1), i}, {2, k});
  };
  auto dus = [&](const Array& a, const Array& b, const Array& i) {
    return lax::dynamic_update_slice(a, b, {idx(1), i});
  };
  Array got = vmap(ds, {0, 0})(x, s);
  Array got_u = vmap(dus, {0, 0, 0})(x, u, s);
  Array got_ux = vmap(dus, {std::nullopt, 0, 0})(lax::index_in_dim(x, 0, 0, false), u, s);
  for (int64_t b = 0; b < B; ++b) {
    Array xb = lax::index_in_dim(x, b, 0, false), ub = lax::index_in_dim(u, b, 0, false);
    Array sb = idx(starts[b]);
    EXPECT_EQ(to_doubles(lax::index_in_dim(got, b, 0, false)), to_doubles(ds(xb, sb))) << b;
    EXPECT_EQ(to_doubles(lax::index_in_dim(got_u, b, 0, false)), to_doubles(dus(xb, ub, sb))) << b;
    EXPECT_EQ(to_doubles(lax::index_in_dim(got_ux, b, 0, false)),
              to_doubles(dus(lax::index_in_dim(x, 0, 0, false), ub, sb)))
        << b;
  }
  // The rule is one gather (batched starts, CLIP mode) and the update one scatter: no loop,
  // no per-bit shifts.
  std::string j = text(make_jaxpr(vmap(ds, {0, 0}))(sds({B, 3, n}), sds({B}, kI32)));
  EXPECT_NE(j.find("= gather["), std::string::npos) << j;
  EXPECT_NE(j.find("mode=GatherScatterMode.CLIP"), std::string::npos) << j;
  EXPECT_EQ(j.find("= slice["), std::string::npos) << j;
  std::string ju =
      text(make_jaxpr(vmap(dus, {0, 0, 0}))(sds({B, 3, n}), sds({B, 2, k}), sds({B}, kI32)));
  EXPECT_NE(ju.find("= scatter["), std::string::npos) << ju;
}

TEST(SlicingBatch, UnbatchedStartsAddTheBatchAxis) {
  // The batch axis (at 1) is sliced whole from 0: one dynamic_slice, nothing moved (out_axes=1
  // keeps vmap itself from moving the result's batch axis).
  auto ds = [](const Array& a, const Array& i) { return lax::dynamic_slice(a, {i, i}, {2, 2}); };
  EXPECT_EQ(text(make_jaxpr(vmap(ds, {1, std::nullopt}, 1))(sds({3, 5, 4}), sds({}, kI32))),
            "{ lambda ; a:f32[3,5,4] b:i32[]. let\n"
            "    c:bool[] = lt b 0:i32[]\n"
            "    d:i32[] = add b 3:i32[]\n"
            "    e:i32[] = select_n c b d\n"
            "    f:bool[] = lt b 0:i32[]\n"
            "    g:i32[] = add b 4:i32[]\n"
            "    h:i32[] = select_n f b g\n"
            "    i:f32[2,5,2] = dynamic_slice[slice_sizes=(2, 5, 2)] a e 0:i32[] h\n"
            "  in (i,) }");
}

TEST(SlicingBatch, PadWithBatchedPaddingValue) {
  const std::vector<lax::PadConfig> cfg{{1, -1, 1}, {0, 2, 0}};
  Array x = random_array({4, 3, 2}, kF32), v = random_array({4}, kF32);
  auto f = [&](const Array& a, const Array& b) { return lax::pad(a, b, cfg); };
  Array got = vmap(f, {0, 0})(x, v);
  Array got2 = vmap(f, {std::nullopt, 0})(lax::index_in_dim(x, 0, 0, false), v);
  for (int64_t b = 0; b < 4; ++b) {
    Array vb = lax::index_in_dim(v, b, 0, false);
    EXPECT_EQ(to_doubles(lax::index_in_dim(got, b, 0, false)),
              to_doubles(f(lax::index_in_dim(x, b, 0, false), vb)));
    EXPECT_EQ(to_doubles(lax::index_in_dim(got2, b, 0, false)),
              to_doubles(f(lax::index_in_dim(x, 0, 0, false), vb)));
  }
}

// ---------------------------------------------------------------- make_jaxpr text

TEST(SlicingJaxpr, AsJaxPrintsThem) {
  // JAX prints strides=None for an absent strides tuple; ours is an empty tuple.
  EXPECT_EQ(text(make_jaxpr([](const Array& x) { return lax::slice(x, {1}, {3}); })(sds({5}))),
            "{ lambda ; a:f32[5]. let\n"
            "    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=()] a\n"
            "  in (b,) }");
  EXPECT_EQ(text(make_jaxpr([](const Array& x) {
              return lax::slice(x, {0, 1}, {4, 5}, {2, 3});
            })(sds({4, 5}))),
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[2,2] = slice[limit_indices=(4, 5) start_indices=(0, 1) strides=(2, 3)] a\n"
            "  in (b,) }");
  // JAX nests padding_config as ((1, 2, 0),); ours is the flat triple list.
  EXPECT_EQ(text(make_jaxpr([](const Array& x) {
              return lax::pad(x, tnp::scalar(0.0, kF32), {{1, 2, 0}});
            })(sds({3}))),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[6] = pad[padding_config=(1, 2, 0)] a 0.0:f32[]\n"
            "  in (b,) }");
  EXPECT_EQ(text(make_jaxpr([](const Array& x, const Array& y) {
              return lax::concatenate({x, y}, 0);
            })(sds({2}), sds({3}))),
            "{ lambda ; a:f32[2] b:f32[3]. let\n"
            "    c:f32[5] = concatenate[dimension=0] a b\n"
            "  in (c,) }");
  EXPECT_EQ(text(make_jaxpr([](const Array& x, const Array& i) {
              return lax::dynamic_slice(x, {i}, {2});
            })(sds({5}), sds({}, kI32))),
            "{ lambda ; a:f32[5] b:i32[]. let\n"
            "    c:bool[] = lt b 0:i32[]\n"
            "    d:i32[] = add b 5:i32[]\n"
            "    e:i32[] = select_n c b d\n"
            "    f:f32[2] = dynamic_slice[slice_sizes=(2,)] a e\n"
            "  in (f,) }");
  EXPECT_EQ(text(make_jaxpr([](const Array& x) { return lax::rev(lax::squeeze(x, {-1}), {0}); })(
                sds({3, 1}))),
            "{ lambda ; a:f32[3,1]. let\n"
            "    b:f32[3] = squeeze[dimensions=(1,)] a\n"
            "    c:f32[3] = rev[dimensions=(0,)] b\n"
            "  in (c,) }");
}

// The transpose of slice is a pad with interior stride - 1 (JAX's _slice_transpose_rule).
TEST(SlicingJaxpr, GradOfStridedSliceIsAPad) {
  auto f = [](const Array& x) { return tnp::sum(lax::slice(x, {1}, {6}, {2})); };
  const std::string j = text(make_jaxpr(grad(f))(sds({7})));
  EXPECT_NE(j.find("pad[padding_config=(1, 1, 1)]"), std::string::npos) << j;
}

}  // namespace
}  // namespace tessera
