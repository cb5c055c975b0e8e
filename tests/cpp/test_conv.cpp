// conv_general_dilated and its lax wrappers. The reference is a direct nested-loop convolution
// in float64 written here (no im2col, no BLAS), read through the dimension numbers, on fresh
// random configurations: 0-3 spatial dims, random layouts, strides, padding (negative too),
// both dilations, feature groups (depthwise too) and batch groups. Gradients are checked entry
// by entry against float64 central differences of the reference; vmap against a loop for every
// batched-argument combination (with groups); jit against eager; dtypes, zero sizes, thread
// count independence and the errors of JAX's shape rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>

#include "prims/prims.h"
#include "tessera/lax_conv.h"
#include "util/conv_reference.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using Ints = std::vector<int64_t>;
using Pads = std::vector<std::pair<int64_t, int64_t>>;
using Cfg = testing::ConvConfig;
using testing::ref_conv;

std::string describe(const Cfg& c) {
  std::string s = "lhs " + shape_str(c.lhs) + " rhs " + shape_str(c.rhs) + " strides " +
                  shape_str(c.strides) + " ld " + shape_str(c.ld) + " rd " + shape_str(c.rd) +
                  " pads";
  for (auto [a, b] : c.pads) s += " (" + std::to_string(a) + "," + std::to_string(b) + ")";
  s += " specs " + shape_str(c.dn.lhs_spec) + shape_str(c.dn.rhs_spec) + shape_str(c.dn.out_spec) +
       " fgc " + std::to_string(c.fgc) + " bgc " + std::to_string(c.bgc);
  return s;
}

Array run_conv(const Array& l, const Array& r, const Cfg& c,
               std::optional<DType> pref = std::nullopt) {
  return lax::conv_general_dilated(l, r, c.strides, c.pads, c.ld, c.rd, c.dn, c.fgc, c.bgc,
                                   std::nullopt, pref);
}

int64_t dil(int64_t d, int64_t k) { return d == 0 ? 0 : 1 + k * (d - 1); }

Ints random_perm(size_t n) {
  Ints p(n);
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), rng());
  return p;
}

int64_t uni(int64_t a, int64_t b) { return std::uniform_int_distribution<int64_t>(a, b)(rng()); }

// Layouts of a random configuration: the default NC.../OI..., random permutations, or random
// ones with the lhs and output features last (NHWC-like: the kernel's channels-last path).
enum Layout { kDefault, kRandom, kChannelsLast };

// A random valid configuration with `ns` spatial dims. groups: 0 none, 1 feature, 2 batch.
Cfg random_cfg(size_t ns, int groups, Layout layout = kRandom, int64_t max_in = 6) {
  while (true) {
    Cfg c;
    const int64_t g = groups == 0 ? 1 : uni(2, 3);
    c.fgc = groups == 1 ? g : 1;
    c.bgc = groups == 2 ? g : 1;
    const int64_t nb = c.bgc * uni(1, 2), cin = uni(1, 3), o = g * uni(1, 2);
    Ints lc{nb, cin * c.fgc}, rc{o, cin};
    bool ok = true;
    for (size_t i = 0; i < ns; ++i) {
      lc.push_back(uni(1, max_in));
      rc.push_back(uni(1, 3));
      c.strides.push_back(uni(1, 3));
      c.ld.push_back(uni(1, 2));
      c.rd.push_back(uni(1, 2));
      c.pads.emplace_back(uni(-1, 2), uni(-1, 2));
      const int64_t padded =
          dil(lc.back(), c.ld.back()) + c.pads.back().first + c.pads.back().second;
      ok = ok && padded >= dil(rc.back(), c.rd.back());
    }
    if (!ok) continue;
    const size_t nd = ns + 2;
    Ints iota(nd);
    std::iota(iota.begin(), iota.end(), 0);
    c.dn = layout == kDefault
               ? ConvDimensionNumbers{iota, iota, iota}
               : ConvDimensionNumbers{random_perm(nd), random_perm(nd), random_perm(nd)};
    if (layout == kChannelsLast)
      for (Ints* spec : {&c.dn.lhs_spec, &c.dn.out_spec})
        std::iter_swap(spec->begin() + 1,
                       std::find(spec->begin(), spec->end(), static_cast<int64_t>(nd - 1)));
    c.lhs.assign(nd, 0);
    c.rhs.assign(nd, 0);
    for (size_t i = 0; i < nd; ++i) {
      c.lhs[static_cast<size_t>(c.dn.lhs_spec[i])] = lc[i];
      c.rhs[static_cast<size_t>(c.dn.rhs_spec[i])] = rc[i];
    }
    return c;
  }
}

// Time box for randomized loops.
struct Deadline {
  std::chrono::steady_clock::time_point end;
  explicit Deadline(double seconds)
      : end(std::chrono::steady_clock::now() +
            std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000))) {}
  bool passed() const { return std::chrono::steady_clock::now() > end; }
};

void check_forward(const Cfg& c, DType dt, double tol) {
  const Array l = random_array(c.lhs, dt, -1, 1), r = random_array(c.rhs, dt, -1, 1);
  const Array out = run_conv(l, r, c);
  const auto [shape, want] = ref_conv(to_doubles(l), to_doubles(r), c);
  ASSERT_EQ(out.shape(), shape) << describe(c);
  ASSERT_EQ(out.dtype(), dt);
  EXPECT_EQ(compare(to_doubles(out), want, tol, tol), "") << describe(c);
}

// ---------------------------------------------------------------- forward

TEST(Conv, RandomConfigsFloat64) {
  testing::X64Scope x64;
  Deadline dl(6.0);
  int n = 0;
  for (int it = 0; it < 400 && !dl.passed(); ++it, ++n) {
    const size_t ns = static_cast<size_t>(it % 4);
    check_forward(random_cfg(ns, it % 3, it % 2 ? kRandom : kChannelsLast, ns == 3 ? 4 : 6),
                  DType::kFloat64, 1e-12);
  }
  EXPECT_GE(n, 30);
}

TEST(Conv, RandomConfigsFloat32) {
  Deadline dl(3.0);
  for (int it = 0; it < 200 && !dl.passed(); ++it) {
    const size_t ns = static_cast<size_t>(1 + it % 3);
    check_forward(random_cfg(ns, it % 3, it % 2 ? kRandom : kChannelsLast, ns == 3 ? 4 : 7),
                  DType::kFloat32, 2e-5);
  }
}

// Larger shapes: several tasks per (batch, group), chunks of output rows, many columns.
TEST(Conv, LargerShapesSpanTasks) {
  testing::X64Scope x64;
  Cfg c;
  c.lhs = {2, 5, 37, 29};
  c.rhs = {6, 5, 3, 4};
  c.strides = {1, 2};
  c.pads = {{1, 2}, {0, 3}};
  c.ld = {1, 1};
  c.rd = {2, 1};
  c.dn = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}};
  check_forward(c, DType::kFloat64, 1e-12);
  check_forward(c, DType::kFloat32, 1e-5);
  // Channels-last (NHWC/HWIO) through the same geometry, with feature groups, threads 1 vs 2.
  c.lhs = {2, 37, 29, 6};
  c.rhs = {3, 4, 3, 8};
  c.fgc = 2;
  c.dn = lax::conv_dimension_numbers(c.lhs, c.rhs, {"NHWC", "HWIO", "NHWC"});
  check_forward(c, DType::kFloat64, 1e-12);
  check_forward(c, DType::kFloat32, 1e-5);
  const Array l = random_array(c.lhs, DType::kFloat32), r = random_array(c.rhs, DType::kFloat32);
  Array one, two;
  {
    testing::Threads t(1);
    one = run_conv(l, r, c);
  }
  {
    testing::Threads t(2);
    two = run_conv(l, r, c);
  }
  EXPECT_EQ(std::memcmp(one.raw_data(), two.raw_data(), one.nbytes()), 0);
}

// Few output positions and many batch elements (the shape of a weight gradient): the kernel's
// per-position path, with its inner dimension split into chunks (here 9600 > 8192 per chunk).
TEST(Conv, FewOutputPositionsManyBatchElements) {
  testing::X64Scope x64;
  Cfg c;
  c.lhs = {64, 8, 41, 31};
  c.rhs = {2, 8, 40, 30};
  c.strides = {1, 1};
  c.pads = {{0, 0}, {0, 0}};
  c.ld = c.rd = {1, 1};
  c.dn = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}};
  check_forward(c, DType::kFloat64, 1e-11);
  const Array l = random_array(c.lhs, DType::kInt32), r = random_array(c.rhs, DType::kInt32);
  EXPECT_EQ(to_doubles(run_conv(l, r, c)), ref_conv(to_doubles(l), to_doubles(r), c).second);
  // Feature and batch groups, a layout, strides and dilation on the same path.
  Cfg f = c;
  f.lhs = {12, 6, 9, 7};
  f.rhs = {4, 3, 7, 5};
  f.fgc = 2;
  f.strides = {2, 1};
  f.rd = {1, 1};
  f.pads = {{1, 0}, {0, 0}};
  check_forward(f, DType::kFloat64, 1e-12);
  Cfg b = f;
  b.fgc = 1;
  b.bgc = 2;
  b.rhs = {4, 6, 7, 6};
  b.dn = {{1, 0, 2, 3}, {0, 1, 2, 3}, {1, 0, 3, 2}};
  b.lhs = {6, 12, 9, 7};
  check_forward(b, DType::kFloat64, 1e-12);
  check_forward(b, DType::kFloat32, 1e-5);
  // Results do not depend on the thread count.
  const Array lf = random_array(c.lhs, DType::kFloat32), rf = random_array(c.rhs, DType::kFloat32);
  Array one, two;
  {
    testing::Threads t(1);
    one = run_conv(lf, rf, c);
  }
  {
    testing::Threads t(2);
    two = run_conv(lf, rf, c);
  }
  EXPECT_EQ(std::memcmp(one.raw_data(), two.raw_data(), one.nbytes()), 0);
}

TEST(Conv, NhwcHwioLayoutStrings) {
  const Array x = random_array({2, 9, 8, 4}, DType::kFloat32);
  const Array w = random_array({3, 3, 4, 5}, DType::kFloat32);
  const Array y =
      lax::conv_general_dilated(x, w, {1, 1}, {{1, 1}, {1, 1}}, {}, {}, {"NHWC", "HWIO", "NHWC"});
  ASSERT_EQ(y.shape(), (Shape{2, 9, 8, 5}));
  Cfg c;
  c.lhs = x.shape();
  c.rhs = w.shape();
  c.strides = {1, 1};
  c.pads = {{1, 1}, {1, 1}};
  c.ld = c.rd = {1, 1};
  c.dn = lax::conv_dimension_numbers(x.shape(), w.shape(), {"NHWC", "HWIO", "NHWC"});
  EXPECT_EQ(c.dn, (ConvDimensionNumbers{{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}}));
  EXPECT_EQ(compare(to_doubles(y), ref_conv(to_doubles(x), to_doubles(w), c).second, 2e-5, 2e-5),
            "");
}

TEST(Conv, DepthwiseAndChannelMultiplier) {
  testing::X64Scope x64;
  for (int64_t mult : {1, 2}) {
    Cfg c;
    c.lhs = {2, 7, 6, 4};         // NHWC, 4 channels
    c.rhs = {3, 3, 1, 4 * mult};  // HWIO with I = 1: one group per channel
    c.strides = {2, 1};
    c.pads = {{1, 1}, {2, 0}};
    c.ld = {1, 1};
    c.rd = {1, 2};
    c.fgc = 4;
    c.dn = lax::conv_dimension_numbers(c.lhs, c.rhs, {"NHWC", "HWIO", "NHWC"});
    check_forward(c, DType::kFloat64, 1e-12);
  }
}

TEST(Conv, StringPaddingSameValid) {
  const Array x = random_array({1, 2, 7, 6}, DType::kFloat32);
  const Array w = random_array({3, 2, 3, 2}, DType::kFloat32);
  // SAME keeps ceil(in / stride); VALID keeps the windows that fit.
  EXPECT_EQ(lax::conv(x, w, {2, 2}, "SAME").shape(), (Shape{1, 3, 4, 3}));
  EXPECT_EQ(lax::conv(x, w, {1, 1}, "VALID").shape(), (Shape{1, 3, 5, 5}));
  // SAME with an even window: the odd pad goes high (SAME) or low (SAME_LOWER).
  Cfg c;
  c.lhs = x.shape();
  c.rhs = w.shape();
  c.strides = {1, 1};
  c.ld = c.rd = {1, 1};
  c.dn = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}};
  c.pads = {{1, 1}, {0, 1}};
  EXPECT_EQ(compare(to_doubles(lax::conv(x, w, {1, 1}, "SAME")),
                    ref_conv(to_doubles(x), to_doubles(w), c).second, 2e-5, 2e-5),
            "");
  c.pads = {{1, 1}, {1, 0}};
  EXPECT_EQ(compare(to_doubles(lax::conv_general_dilated(x, w, {1, 1}, "SAME_LOWER")),
                    ref_conv(to_doubles(x), to_doubles(w), c).second, 2e-5, 2e-5),
            "");
  // With rhs dilation the dilated window decides the padding.
  c.rd = {2, 1};
  c.pads = {{2, 2}, {0, 1}};
  EXPECT_EQ(
      compare(to_doubles(lax::conv_with_general_padding(x, w, {1, 1}, "SAME", {1, 1}, {2, 1})),
              ref_conv(to_doubles(x), to_doubles(w), c).second, 2e-5, 2e-5),
      "");
}

TEST(Conv, Dtypes) {
  Cfg c = random_cfg(2, 1, kRandom);
  c.pads = {{1, 0}, {0, 1}};
  c.strides = {1, 1};
  c.ld = c.rd = {1, 1};
  // 16-bit floats: computed in float32 and rounded once.
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Array l = random_array(c.lhs, dt, -1, 1), r = random_array(c.rhs, dt, -1, 1);
    const Array y = run_conv(l, r, c);
    EXPECT_EQ(y.dtype(), dt);
    const auto want = ref_conv(to_doubles(l), to_doubles(r), c).second;
    const double eps = dt == DType::kFloat16 ? 1e-3 : 8e-3;
    EXPECT_EQ(compare(to_doubles(y), want, eps, eps), "") << dtype_name(dt);
    // preferred_element_type float32: no rounding to 16 bits.
    const Array y32 = run_conv(l, r, c, DType::kFloat32);
    EXPECT_EQ(y32.dtype(), DType::kFloat32);
    EXPECT_EQ(compare(to_doubles(y32), want, 1e-5, 1e-5), "");
  }
  // Integers: exact (the values are small), wrapping in the result type.
  for (DType dt : {DType::kInt32, DType::kInt8, DType::kUInt8, DType::kInt64}) {
    testing::X64Scope x64(dt == DType::kInt64);
    const Array l = random_array(c.lhs, dt), r = random_array(c.rhs, dt);
    const std::optional<DType> pref =
        itemsize(dt) == 1 ? std::optional<DType>(DType::kInt32) : std::nullopt;
    const Array y = run_conv(l, r, c, pref);
    EXPECT_EQ(y.dtype(), pref.value_or(dt));
    EXPECT_EQ(to_doubles(y), ref_conv(to_doubles(l), to_doubles(r), c).second) << dtype_name(dt);
  }
  // bool: an or of ands.
  const Array lb = random_array(c.lhs, DType::kBool), rb = random_array(c.rhs, DType::kBool);
  std::vector<double> want = ref_conv(to_doubles(lb), to_doubles(rb), c).second;
  for (double& v : want) v = v > 0 ? 1 : 0;
  EXPECT_EQ(to_doubles(run_conv(lb, rb, c)), want);
}

TEST(Conv, ZeroSizes) {
  const Ints iota{0, 1, 2};
  auto conv1d = [&](const Shape& ls, const Shape& rs, int64_t fgc = 1) {
    return lax::conv_general_dilated(random_array(ls, DType::kFloat32),
                                     random_array(rs, DType::kFloat32), {1}, {{0, 0}}, {}, {}, {},
                                     fgc);
  };
  EXPECT_EQ(conv1d({0, 2, 5}, {3, 2, 2}).shape(), (Shape{0, 3, 4}));
  EXPECT_EQ(conv1d({2, 2, 5}, {0, 2, 2}).shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(conv1d({2, 2, 1}, {3, 2, 2}).shape(), (Shape{2, 3, 0}));
  const Array z = conv1d({2, 0, 5}, {3, 0, 2});  // no input features: an empty sum
  EXPECT_EQ(z.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(to_doubles(z), std::vector<double>(24, 0.0));
  // A window of size 0 reads nothing.
  EXPECT_EQ(to_doubles(conv1d({1, 2, 3}, {2, 2, 0})), std::vector<double>(8, 0.0));
}

TEST(Conv, ThreadCountIndependent) {
  Cfg c;
  c.lhs = {3, 6, 40, 33};
  c.rhs = {8, 3, 3, 3};
  c.strides = {1, 1};
  c.pads = {{1, 1}, {1, 1}};
  c.ld = c.rd = {1, 1};
  c.fgc = 2;
  c.dn = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}};
  const Array l = random_array(c.lhs, DType::kFloat32), r = random_array(c.rhs, DType::kFloat32);
  Array a, b;
  {
    testing::Threads t(1);
    a = run_conv(l, r, c);
  }
  {
    testing::Threads t(2);
    b = run_conv(l, r, c);
  }
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

// ---------------------------------------------------------------- gradients

// d/dl and d/dr of sum(conv(l, r) * w), entry by entry, against central differences of the
// float64 reference (the loss is bilinear, so the differences are exact up to rounding).
void check_grads(const Cfg& c) {
  const Array l = random_array(c.lhs, DType::kFloat64, -1, 1);
  const Array r = random_array(c.rhs, DType::kFloat64, -1, 1);
  std::vector<double> lv = to_doubles(l), rv = to_doubles(r);
  const auto [oshape, o0] = ref_conv(lv, rv, c);
  const Array w = random_array(oshape, DType::kFloat64, -1, 1);
  const std::vector<double> wv = to_doubles(w);
  auto loss = [&](const Array& a, const Array& b) {
    return numpy::sum(lax::mul(run_conv(a, b, c), w));
  };
  auto [gl, gr] = grad(loss, argnums<0, 1>)(l, r);
  auto ref_loss = [&](const std::vector<double>& a, const std::vector<double>& b) {
    const auto o = ref_conv(a, b, c).second;
    double s = 0;
    for (size_t i = 0; i < o.size(); ++i) s += o[i] * wv[i];
    return s;
  };
  const double eps = 0.5;
  std::vector<double> want_l(lv.size()), want_r(rv.size());
  for (size_t i = 0; i < lv.size(); ++i) {
    const double v = lv[i];
    lv[i] = v + eps;
    const double up = ref_loss(lv, rv);
    lv[i] = v - eps;
    want_l[i] = (up - ref_loss(lv, rv)) / (2 * eps);
    lv[i] = v;
  }
  for (size_t i = 0; i < rv.size(); ++i) {
    const double v = rv[i];
    rv[i] = v + eps;
    const double up = ref_loss(lv, rv);
    rv[i] = v - eps;
    want_r[i] = (up - ref_loss(lv, rv)) / (2 * eps);
    rv[i] = v;
  }
  ASSERT_EQ(gl.shape(), l.shape());
  ASSERT_EQ(gr.shape(), r.shape());
  EXPECT_EQ(compare(to_doubles(gl), want_l, 1e-10, 1e-10), "") << "d/dlhs " << describe(c);
  EXPECT_EQ(compare(to_doubles(gr), want_r, 1e-10, 1e-10), "") << "d/drhs " << describe(c);
  // Forward mode: the tangent along (tl, tr) is a central difference along it.
  const Array tl = random_array(c.lhs, DType::kFloat64), tr = random_array(c.rhs, DType::kFloat64);
  auto f = [&](std::span<const Array> xs) { return std::vector<Array>{run_conv(xs[0], xs[1], c)}; };
  const std::vector<Array> prim{l, r}, tan{tl, tr};
  const auto [outs, touts] = flat::jvp(f, prim, tan);
  std::vector<double> lp = lv, lm = lv, rp = rv, rm = rv;
  const std::vector<double> tlv = to_doubles(tl), trv = to_doubles(tr);
  for (size_t i = 0; i < lv.size(); ++i) lp[i] += tlv[i], lm[i] -= tlv[i];
  for (size_t i = 0; i < rv.size(); ++i) rp[i] += trv[i], rm[i] -= trv[i];
  const auto up = ref_conv(lp, rp, c).second, dn = ref_conv(lm, rm, c).second;
  std::vector<double> want_t(up.size());
  for (size_t i = 0; i < up.size(); ++i) want_t[i] = (up[i] - dn[i]) / 2;
  EXPECT_EQ(compare(to_doubles(touts[0]), want_t, 1e-10, 1e-10), "") << "jvp " << describe(c);
}

TEST(Conv, GradsVsFiniteDifferences) {
  testing::X64Scope x64;
  Deadline dl(8.0);
  int n = 0;
  for (int it = 0; it < 150 && !dl.passed(); ++it, ++n) {
    const size_t ns = static_cast<size_t>(it % 4);
    check_grads(random_cfg(ns, it % 3, it % 2 ? kRandom : kChannelsLast, ns == 3 ? 3 : 5));
  }
  EXPECT_GE(n, 12);
}

// ---------------------------------------------------------------- vmap and jit

// vmap over lhs only, rhs only and both, with the batch axis at a random position, against a
// loop of single convolutions stacked.
void check_vmap(const Cfg& c, bool bl, bool br) {
  const int64_t b = 3;
  const int64_t al = uni(0, static_cast<int64_t>(c.lhs.size()));
  const int64_t ar = uni(0, static_cast<int64_t>(c.rhs.size()));
  Shape ls = c.lhs, rs = c.rhs;
  if (bl) ls.insert(ls.begin() + al, b);
  if (br) rs.insert(rs.begin() + ar, b);
  const Array l = random_array(ls, DType::kFloat64), r = random_array(rs, DType::kFloat64);
  auto f = [&](const Array& x, const Array& y) { return run_conv(x, y, c); };
  const Array got = vmap(f, {bl ? std::optional<int64_t>(al) : std::nullopt,
                             br ? std::optional<int64_t>(ar) : std::nullopt})(l, r);
  std::vector<Array> loop;
  for (int64_t i = 0; i < b; ++i)
    loop.push_back(f(bl ? lax::index_in_dim(l, i, al, false) : l,
                     br ? lax::index_in_dim(r, i, ar, false) : r));
  const Array want = numpy::stack(loop);
  ASSERT_EQ(got.shape(), want.shape()) << describe(c);
  EXPECT_EQ(compare(to_doubles(got), to_doubles(want), 1e-12, 1e-12), "")
      << describe(c) << " batched " << bl << br;
}

TEST(Conv, VmapMatchesLoop) {
  testing::X64Scope x64;
  Deadline dl(6.0);
  for (int it = 0; it < 120 && !dl.passed(); ++it) {
    const Cfg c =
        random_cfg(static_cast<size_t>(it % 3), (it / 3) % 3, it % 2 ? kRandom : kChannelsLast, 5);
    check_vmap(c, true, false);
    check_vmap(c, false, true);
    check_vmap(c, true, true);
  }
}

TEST(Conv, VmapOfGrad) {
  testing::X64Scope x64;
  const Cfg c = random_cfg(2, 1, kChannelsLast, 5);
  Shape ls = c.lhs;
  ls.insert(ls.begin(), 2);
  const Array l = random_array(ls, DType::kFloat64);
  const Array r = random_array(c.rhs, DType::kFloat64);
  auto loss = [&](const Array& a, const Array& b) { return numpy::sum(run_conv(a, b, c)); };
  const Array got = vmap(grad(loss, argnums<1>), {0, std::nullopt})(l, r);
  std::vector<Array> loop;
  for (int64_t i = 0; i < 2; ++i)
    loop.push_back(grad(loss, argnums<1>)(lax::index_in_dim(l, i, 0, false), r));
  EXPECT_EQ(compare(to_doubles(got), to_doubles(numpy::stack(loop)), 1e-12, 1e-12), "");
}

TEST(Conv, JitMatchesEager) {
  testing::X64Scope x64;
  for (int it = 0; it < 6; ++it) {
    const Cfg c =
        random_cfg(static_cast<size_t>(1 + it % 3), it % 3, it % 2 ? kRandom : kChannelsLast, 5);
    const Array l = random_array(c.lhs, DType::kFloat64), r = random_array(c.rhs, DType::kFloat64);
    auto f = [&](const Array& a, const Array& b) { return run_conv(a, b, c); };
    const Array e = f(l, r), j = jit(f)(l, r);
    ASSERT_EQ(e.aval(), j.aval());
    EXPECT_EQ(to_doubles(e), to_doubles(j)) << describe(c);
    auto loss = [&](const Array& a, const Array& b) { return numpy::sum(lax::sin(f(a, b))); };
    auto [g1, g2] = grad(loss, argnums<0, 1>)(l, r);
    auto [j1, j2] = jit(grad(loss, argnums<0, 1>))(l, r);
    EXPECT_EQ(compare(to_doubles(g1), to_doubles(j1), 1e-12, 1e-12), "");
    EXPECT_EQ(compare(to_doubles(g2), to_doubles(j2), 1e-12, 1e-12), "");
  }
}

TEST(Conv, JaxprPrintsJaxParams) {
  const Array x = random_array({1, 2, 5, 5}, DType::kFloat32);
  const Array w = random_array({3, 2, 3, 3}, DType::kFloat32);
  auto f = [&](std::span<const Array> xs) {
    return std::vector<Array>{lax::conv_general_dilated(xs[0], xs[1], {1, 2}, {{1, 1}, {0, 0}})};
  };
  const std::vector<Array> args{x, w};
  const std::string text = to_string(flat::make_jaxpr(f, args), 1000);
  EXPECT_NE(text.find("conv_general_dilated[batch_group_count=1 "
                      "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), "
                      "rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3)) feature_group_count=1 "
                      "lhs_dilation=(1, 1) padding=((1, 1), (0, 0))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rhs_dilation=(1, 1) window_strides=(1, 2)]"), std::string::npos) << text;
  // The parser reads it back (with a precision too) and the parsed program computes the same.
  auto g = [&](std::span<const Array> xs) {
    return std::vector<Array>{lax::conv_general_dilated(xs[0], xs[1], {1, 2}, {{1, -1}, {0, 2}},
                                                        {1, 2}, {2, 1}, {"NCHW", "OIHW", "NHWC"}, 1,
                                                        1, Precision::kHighest)};
  };
  const std::string gtext = to_string(flat::make_jaxpr(g, args), 1000);
  EXPECT_NE(gtext.find("precision=Precision.HIGHEST"), std::string::npos) << gtext;
  const Jaxpr parsed = parse_jaxpr(gtext);
  const std::vector<Array> none;
  EXPECT_EQ(to_doubles(eval_jaxpr(parsed, none, args)[0]), to_doubles(g(args)[0]));
  // A jaxpr as JAX prints it: precision=None and preferred_element_type=None.
  const Jaxpr jax = parse_jaxpr(
      "{ lambda ; a:f32[1,2,5,5] b:f32[3,2,3,3]. let\n"
      "    c:f32[1,3,5,2] = conv_general_dilated[batch_group_count=1 "
      "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), "
      "out_spec=(0, 1, 2, 3)) feature_group_count=1 lhs_dilation=(1, 1) padding=((1, 1), (0, 0)) "
      "precision=None preferred_element_type=None rhs_dilation=(1, 1) window_strides=(1, 2)] a b\n"
      "  in (c,) }");
  EXPECT_EQ(to_doubles(eval_jaxpr(jax, none, args)[0]), to_doubles(f(args)[0]));
  // Anything else as precision is a TypeError naming the op.
  EXPECT_ERROR(
      TypeError,
      tessera::bind(
          prims::conv_general_dilated, args,
          Params{{"window_strides", Ints{1, 1}},
                 {"padding", padding_pairs_param({{0, 0}, {0, 0}})},
                 {"lhs_dilation", Ints{1, 1}},
                 {"rhs_dilation", Ints{1, 1}},
                 {"dimension_numbers",
                  ConvDimensionNumbers{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}.to_param()},
                 {"feature_group_count", int64_t{1}},
                 {"batch_group_count", int64_t{1}},
                 {"precision", int64_t{3}}}),
      "precision must be None or a lax.Precision");
}

// ---------------------------------------------------------------- conv_transpose

// conv_transpose with transpose_kernel and consistent padding is the gradient of the forward
// convolution with that padding (PyTorch's conv_transpose), when the strides tile the input.
TEST(Conv, ConvTransposeIsGradientOfConv) {
  testing::X64Scope x64;
  const Array x = random_array({2, 9, 7, 3}, DType::kFloat64);  // NHWC
  const Array k = random_array({3, 3, 3, 4}, DType::kFloat64);  // HWIO
  const Pads pads{{1, 1}, {1, 1}};
  const Ints strides{2, 2};
  auto fwd = [&](const Array& a) {
    return lax::conv_general_dilated(a, k, strides, pads, {}, {}, {"NHWC", "HWIO", "NHWC"});
  };
  const Array y = fwd(x);
  ASSERT_EQ(y.shape(), (Shape{2, 5, 4, 4}));
  const Array ct = random_array(y.shape(), DType::kFloat64);
  auto [out, pullback] = vjp(fwd, x);
  const Array want = std::get<0>(pullback(ct));
  const Array got = lax::conv_transpose(ct, k, strides, pads, {}, {}, /*transpose_kernel=*/true,
                                        std::nullopt, std::nullopt,
                                        /*use_consistent_padding=*/true);
  ASSERT_EQ(got.shape(), x.shape());
  EXPECT_EQ(compare(to_doubles(got), to_doubles(want), 1e-12, 1e-12), "");
}

// Without transpose_kernel and with the string paddings: JAX's output sizes (in * stride for
// SAME, in * stride + max(k - stride, 0) for VALID), each entry a sum over the inputs whose
// strided placement covers it (a scatter reference).
TEST(Conv, ConvTransposeStringPaddings) {
  testing::X64Scope x64;
  const Array x = random_array({1, 4, 2}, DType::kFloat64);  // NHC
  const Array k = random_array({3, 2, 3}, DType::kFloat64);  // HIO
  const Array same = lax::conv_transpose(x, k, {2}, "SAME");
  const Array valid = lax::conv_transpose(x, k, {2}, "VALID");
  ASSERT_EQ(same.shape(), (Shape{1, 8, 3}));
  ASSERT_EQ(valid.shape(), (Shape{1, 9, 3}));
  // VALID: the kernel applied as a correlation over the stride-dilated input padded by k - 1.
  const auto xv = to_doubles(x), kv = to_doubles(k);
  std::vector<double> want(9 * 3, 0.0);
  for (int64_t p = 0; p < 9; ++p)
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t t = 0; t < 3; ++t) {
        const int64_t pos = p + t - 2;  // position in the stride-dilated input
        if (pos < 0 || pos % 2 != 0 || pos / 2 >= 4) continue;
        for (int64_t c = 0; c < 2; ++c)
          want[static_cast<size_t>(p * 3 + o)] += xv[static_cast<size_t>((pos / 2) * 2 + c)] *
                                                  kv[static_cast<size_t>((t * 2 + c) * 3 + o)];
      }
  EXPECT_EQ(compare(to_doubles(valid), want, 1e-12, 1e-12), "");
  // SAME (k=3, s=2): pads (2, 1) around the dilated input: the VALID result without its
  // last entry.
  std::vector<double> want_same(want.begin(), want.end() - 3);
  EXPECT_EQ(compare(to_doubles(same), want_same, 1e-12, 1e-12), "");
}

// ---------------------------------------------------------------- errors

TEST(Conv, Errors) {
  const Array x = random_array({2, 4, 6, 6}, DType::kFloat32);
  const Array w = random_array({6, 2, 3, 3}, DType::kFloat32);
  const Pads p0{{0, 0}, {0, 0}};
  EXPECT_ERROR(
      ValueError,
      lax::conv_general_dilated(random_array({2, 4, 6}, DType::kFloat32), w, {1, 1}, p0, {}, {},
                                ConvDimensionNumbers{{0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2}}),
      "must have the same number of dimensions");
  EXPECT_ERROR(TypeError, lax::conv(random_array({2, 4, 6}, DType::kFloat32), w, {1, 1}, p0),
               "convolution requires lhs and rhs ndim to be equal");
  EXPECT_ERROR(ValueError, lax::conv_general_dilated(x, w, {1, 1}, p0, {}, {}, {}, 3),
               "feature_group_count must divide lhs feature dimension size, but 3 does not "
               "divide 4");
  EXPECT_ERROR(ValueError, lax::conv(x, w, {1, 1}, p0),
               "lhs feature dimension size divided by feature_group_count must equal the rhs "
               "input feature dimension size, but 4 // 1 != 2");
  EXPECT_ERROR(ValueError,
               lax::conv_general_dilated(x, random_array({5, 2, 3, 3}, DType::kFloat32), {1, 1}, p0,
                                         {}, {}, {}, 2),
               "rhs output feature dimension size must be a multiple of feature_group_count");
  EXPECT_ERROR(ValueError,
               lax::conv_general_dilated(x, random_array({6, 4, 3, 3}, DType::kFloat32), {1, 1}, p0,
                                         {}, {}, {}, 1, 4),
               "batch_group_count must divide lhs batch dimension size");
  EXPECT_ERROR(ValueError, lax::conv_general_dilated(x, w, {1, 1}, p0, {}, {}, {}, 2, 2),
               "At most one of batch_group_count and feature_group_count may be > 1");
  EXPECT_ERROR(ValueError, lax::conv_general_dilated(x, w, {1, 1}, p0, {}, {}, {}, 0),
               "feature_group_count must be a positive integer, got 0");
  EXPECT_ERROR(ValueError, lax::conv_general_dilated(x, w, {1}, p0, {}, {}, {}, 2),
               "window and window_strides must have the same number of dimensions, but got 2 "
               "and 1");
  EXPECT_ERROR(TypeError, lax::conv_general_dilated(x, w, {1, 1}, Pads{{0, 0}}, {}, {}, {}, 2),
               "Wrong number of explicit pads for convolution: expected 2, got 1.");
  EXPECT_ERROR(ValueError,
               lax::conv_general_dilated(x, w, {1, 1}, Pads{{-4, -3}, {0, 0}}, {}, {}, {}, 2),
               "Negative padding is larger than the size of the corresponding dimension");
  EXPECT_ERROR(TypeError,
               lax::conv_general_dilated(x, random_array(w.shape(), DType::kFloat16), {1, 1}, p0,
                                         {}, {}, {}, 2),
               "conv_general_dilated requires arguments to have the same dtypes, got float32, "
               "float16");
  EXPECT_ERROR(
      TypeError,
      lax::conv_general_dilated(x, w, {1, 1}, p0, {}, {}, {}, 2, 1, std::nullopt, DType::kInt32),
      "`preferred_element_type` must be floating for floating operands");
  EXPECT_ERROR(ValueError, lax::conv_general_dilated(x, w, {1, 1}, "SAME", {2, 2}, {}, {}, 2),
               "String padding is not implemented for transposed convolution");
  EXPECT_ERROR(Error, lax::conv_general_dilated(x, w, {1, 1}, "FULL", {}, {}, {}, 2), "FULL");
  EXPECT_ERROR(ValueError, lax::conv_general_dilated(x, w, {0, 1}, p0, {}, {}, {}, 2),
               "window_strides must be positive");
  // Layout strings (JAX's conv_general_permutations messages).
  EXPECT_ERROR(TypeError,
               lax::conv_dimension_numbers(x.shape(), w.shape(), {"NCH", "OIHW", "NCHW"}),
               "convolution dimension_numbers[0] must have len equal to the ndim of lhs and rhs");
  EXPECT_ERROR(TypeError,
               lax::conv_dimension_numbers(x.shape(), w.shape(), {"NHWC", "HWIC", "NHWC"}),
               "convolution dimension_numbers[1] must contain the characters 'O' and 'I' exactly "
               "once");
  EXPECT_ERROR(TypeError,
               lax::conv_dimension_numbers(x.shape(), w.shape(), {"NHHC", "HWIO", "NHWC"}),
               "cannot have duplicate characters");
  EXPECT_ERROR(TypeError,
               lax::conv_dimension_numbers(x.shape(), w.shape(), {"NHWC", "HXIO", "NHWC"}),
               "must each have the same set of spatial characters");
  // Bad dimension numbers given as records.
  EXPECT_ERROR(
      TypeError,
      lax::conv_general_dilated(x, w, {1, 1}, p0, {}, {},
                                ConvDimensionNumbers{{0, 1, 2, 2}, {0, 1, 2, 3}, {0, 1, 2, 3}}, 2),
      "lhs_spec must be a permutation");
}

}  // namespace
}  // namespace tessera
