// dot_general and lax.dot: every dtype, batch/contracting dims in many positions, the
// transposed-layout fast paths, mixed-precision results, thread-count independence, errors.
// The reference is a plain loop in double (exact 128-bit integers for integer results).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/blas.h"
#include "runtime/thread_pool.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using lax::DotDimensionNumbers;
using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;

using testing::Threads;

Array make_array(const Shape& s, DType dt, const std::vector<double>& v) {
  Array a = empty_array(Aval{s, dt, false}, "test");
  for (size_t i = 0; i < v.size(); ++i)
    store_from_double(dt, static_cast<char*>(a.buffer()->data()) + i * itemsize(dt), v[i]);
  return a;
}

bool same_bytes(const Array& a, const Array& b) {
  return a.aval() == b.aval() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::vector<int64_t> free_of(int64_t nd, const std::vector<int64_t>& b,
                             const std::vector<int64_t>& c) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < nd; ++d)
    if (std::count(b.begin(), b.end(), d) == 0 && std::count(c.begin(), c.end(), d) == 0)
      out.push_back(d);
  return out;
}

// Iterates a multi-index over `sizes`; returns false after the last one.
bool next_index(std::vector<int64_t>& idx, const Shape& sizes) {
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

double wrap_int(DType dt, __int128 v) {
  const int bits = static_cast<int>(itemsize(dt)) * 8;
  const unsigned __int128 mod = static_cast<unsigned __int128>(1) << bits;
  unsigned __int128 u = static_cast<unsigned __int128>(v) % mod;
  if (is_signed_integer(dt) && u >= mod / 2)
    return double(static_cast<__int128>(u) - (__int128)mod);
  return double(u);
}

struct Ref {
  Shape shape;
  std::vector<double> value, abs_sum;
};

// dot_general by definition: for each output index, sum over the contracting index.
Ref ref_dot(const Array& l, const Array& r, const DotDimensionNumbers& dn, DType out_dtype) {
  const std::vector<double> lv = to_doubles(l), rv = to_doubles(r);
  const auto lf = free_of(l.ndim(), dn.lhs_batch, dn.lhs_contracting);
  const auto rf = free_of(r.ndim(), dn.rhs_batch, dn.rhs_contracting);
  const std::vector<int64_t> ls = row_major_strides(l.shape()), rs = row_major_strides(r.shape());
  // Output dims as (size, lhs stride, rhs stride); contracting dims likewise.
  Shape osz, csz;
  std::vector<int64_t> ol, orr, cl, cr;
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    osz.push_back(l.shape()[dn.lhs_batch[i]]);
    ol.push_back(ls[dn.lhs_batch[i]]);
    orr.push_back(rs[dn.rhs_batch[i]]);
  }
  for (int64_t d : lf) osz.push_back(l.shape()[d]), ol.push_back(ls[d]), orr.push_back(0);
  for (int64_t d : rf) osz.push_back(r.shape()[d]), ol.push_back(0), orr.push_back(rs[d]);
  for (size_t i = 0; i < dn.lhs_contracting.size(); ++i) {
    csz.push_back(l.shape()[dn.lhs_contracting[i]]);
    cl.push_back(ls[dn.lhs_contracting[i]]);
    cr.push_back(rs[dn.rhs_contracting[i]]);
  }
  // Offsets of every contracting index, computed once.
  std::vector<int64_t> koff_l, koff_r;
  if (shape_size(csz) > 0) {
    std::vector<int64_t> ci(csz.size(), 0);
    do {
      int64_t a = 0, b = 0;
      for (size_t i = 0; i < ci.size(); ++i) a += ci[i] * cl[i], b += ci[i] * cr[i];
      koff_l.push_back(a);
      koff_r.push_back(b);
    } while (next_index(ci, csz));
  }
  Ref ref;
  ref.shape = osz;
  if (shape_size(osz) == 0) return ref;
  const bool int_out = is_integer(out_dtype), bool_out = is_bool(out_dtype);
  std::vector<int64_t> oi(osz.size(), 0);
  do {
    int64_t bl = 0, br = 0;
    for (size_t i = 0; i < oi.size(); ++i) bl += oi[i] * ol[i], br += oi[i] * orr[i];
    double s = 0, a = 0;
    __int128 is = 0;
    bool any = false;
    for (size_t k = 0; k < koff_l.size(); ++k) {
      const double x = lv[bl + koff_l[k]], y = rv[br + koff_r[k]];
      s += x * y;
      a += std::fabs(x * y);
      if (int_out) is += static_cast<__int128>(x) * static_cast<__int128>(y);
      any = any || (x != 0 && y != 0);
    }
    ref.value.push_back(bool_out ? double(any) : int_out ? wrap_int(out_dtype, is) : s);
    ref.abs_sum.push_back(a);
  } while (next_index(oi, osz));
  return ref;
}

// Float results: accumulation error bounded by a multiple of the compute eps times the sum of
// |products|, plus one rounding to the output dtype.
std::string check(const Array& got, const Ref& ref, double compute_eps) {
  if (got.shape() != ref.shape)
    return "shape " + shape_str(got.shape()) + " vs " + shape_str(ref.shape);
  const std::vector<double> g = to_doubles(got);
  if (!is_floating(got.dtype())) return compare(g, ref.value, 0, 0);
  const double out_eps = finfo(got.dtype()).eps;
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = 64 * compute_eps * ref.abs_sum[i] + out_eps * std::fabs(ref.value[i]);
    if (!(std::fabs(g[i] - ref.value[i]) <= tol))
      return "element " + std::to_string(i) + ": got " + std::to_string(g[i]) + " want " +
             std::to_string(ref.value[i]);
  }
  return "";
}

double compute_eps(DType in, DType out) {
  return (in == DType::kFloat64 || out == DType::kFloat64) ? 1.1e-16 : 6e-8;
}

struct DotCase {
  Shape l, r;
  DotDimensionNumbers dn;
  bool direct;  // both operands usable by BLAS as laid out (no copies)
};

const DotCase kCases[] = {
    {{5, 7}, {7, 3}, {{1}, {0}, {}, {}}, true},
    {{7, 5}, {7, 3}, {{0}, {0}, {}, {}}, true},  // lhs transposed
    {{5, 7}, {3, 7}, {{1}, {1}, {}, {}}, true},  // rhs transposed
    {{7, 5}, {3, 7}, {{0}, {1}, {}, {}}, true},  // both transposed
    {{4, 5, 7}, {4, 7, 3}, {{2}, {1}, {0}, {0}}, true},
    {{5, 4, 7}, {7, 4, 3}, {{2}, {0}, {1}, {1}}, true},  // batch in the middle
    {{4, 7, 5}, {4, 3, 7}, {{1}, {2}, {0}, {0}}, true},
    {{7, 5, 4}, {3, 4, 7}, {{0}, {2}, {2}, {1}}, false},  // batch innermost
    {{2, 5, 3, 6}, {3, 6, 2, 4}, {{3}, {1}, {0, 2}, {2, 0}}, false},
    {{3, 4, 5, 6}, {6, 2, 4}, {{1, 3}, {2, 0}, {}, {}}, false},
    {{4, 6, 5}, {6, 4, 3}, {{1, 0}, {0, 1}, {}, {}}, false},
    {{2, 3, 4}, {3, 4, 5}, {{2, 1}, {1, 0}, {}, {}}, true},  // pair order follows the layout
    {{3}, {4}, {{}, {}, {}, {}}, true},                      // outer product
    {{9}, {9}, {{0}, {0}, {}, {}}, true},
    {{5, 9}, {9}, {{1}, {0}, {}, {}}, true},
    {{9}, {9, 4}, {{0}, {0}, {}, {}}, true},
    {{}, {}, {{}, {}, {}, {}}, true},
    {{7, 5}, {7}, {{0}, {0}, {}, {}}, true},  // matrix-vector shapes (gemv)
    {{9}, {4, 9}, {{0}, {1}, {}, {}}, true},
    {{3, 5, 9}, {9, 3}, {{2}, {0}, {0}, {1}}, true},  // strided vector
    {{9, 3}, {3, 9, 4}, {{0}, {1}, {1}, {0}}, true},
    {{4, 3}, {4, 3}, {{}, {}, {0, 1}, {0, 1}}, false},
    {{1, 7}, {7, 1}, {{1}, {0}, {}, {}}, true},
    {{5, 1, 7}, {7, 1, 3}, {{2}, {0}, {}, {}}, true},
    {{0, 7}, {7, 3}, {{1}, {0}, {}, {}}, true},
    {{5, 0}, {0, 3}, {{1}, {0}, {}, {}}, true},
    {{0, 2, 3}, {0, 3, 4}, {{2}, {1}, {0}, {0}}, true},
};

TEST(DotGeneral, MatchesReferenceAcrossDTypesAndLayouts) {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                          DType::kInt8,    DType::kInt32,   DType::kUInt8,   DType::kInt16,
                          DType::kUInt32,  DType::kBool};
  for (DType dt : dtypes) {
    for (const auto& c : kCases) {
      Array l = random_array(c.l, dt), r = random_array(c.r, dt);
      Array y = lax::dot_general(l, r, c.dn);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(check(y, ref_dot(l, r, c.dn, dt), compute_eps(dt, dt)), "")
          << dtype_name(dt) << " " << shape_str(c.l) << " x " << shape_str(c.r) << " lc "
          << shape_str(c.dn.lhs_contracting) << " rc " << shape_str(c.dn.rhs_contracting) << " lb "
          << shape_str(c.dn.lhs_batch) << " rb " << shape_str(c.dn.rhs_batch);
    }
  }
}

TEST(DotGeneral, UsableLayoutsAreNotCopied) {
  for (const auto& c : kCases) {
    if (!c.direct) continue;
    Array l = random_array(c.l, DType::kFloat32), r = random_array(c.r, DType::kFloat32);
    const int64_t before = memory_stats().num_allocs;
    Array y = lax::dot_general(l, r, c.dn);
    EXPECT_EQ(memory_stats().num_allocs - before, 1)  // the output only
        << shape_str(c.l) << " x " << shape_str(c.r);
  }
}

TEST(DotGeneral, LargeAreThreadCountIndependentAndCorrect) {
  struct Case {
    Shape l, r;
    DotDimensionNumbers dn;
  };
  const Case cases[] = {
      {{300, 280}, {280, 260}, {{1}, {0}, {}, {}}},
      {{280, 300}, {260, 280}, {{0}, {1}, {}, {}}},
      {{6, 100, 150}, {6, 150, 120}, {{2}, {1}, {0}, {0}}},
      {{150, 3, 100}, {120, 3, 150}, {{0}, {2}, {1}, {1}}},  // copies needed
  };
  ASSERT_GT(runtime::blas::gemm_blocks(1, 300, 260, 280), 1);  // the split is exercised
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    for (const auto& c : cases) {
      Array l = random_array(c.l, dt), r = random_array(c.r, dt);
      Array y1, y2;
      {
        Threads t(1);
        y1 = lax::dot_general(l, r, c.dn);
      }
      {
        Threads t(2);
        y2 = lax::dot_general(l, r, c.dn);
      }
      EXPECT_TRUE(same_bytes(y1, y2)) << dtype_name(dt) << " " << shape_str(c.l);
      EXPECT_EQ(check(y2, ref_dot(l, r, c.dn, dt), compute_eps(dt, dt)), "")
          << dtype_name(dt) << " " << shape_str(c.l);
    }
  }
}

TEST(DotGeneral, Int8WithPreferredInt32AccumulatesInInt32) {
  std::uniform_int_distribution<int> d(-128, 127);
  const int64_t M = 37, K = 1000, N = 29;
  std::vector<double> lv(M * K), rv(K * N);
  for (auto& v : lv) v = d(rng());
  for (auto& v : rv) v = d(rng());
  // Some rows of extremes: |sum| reaches 1000 * 128 * 128, far beyond int16.
  for (int64_t k = 0; k < K; ++k) lv[k] = -128, rv[k * N] = -128;
  Array l = make_array({M, K}, DType::kInt8, lv), r = make_array({K, N}, DType::kInt8, rv);
  const DotDimensionNumbers dn{{1}, {0}, {}, {}};
  Array y = lax::dot_general(l, r, dn, DType::kInt32);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(check(y, ref_dot(l, r, dn, DType::kInt32), 0), "");
  EXPECT_EQ(y.to_vector<int32_t>()[0], 1000 * 128 * 128);
  // Without preferred_element_type the int8 result wraps, as XLA's.
  Array w = lax::dot_general(l, r, dn);
  EXPECT_EQ(w.dtype(), DType::kInt8);
  EXPECT_EQ(check(w, ref_dot(l, r, dn, DType::kInt8), 0), "");
  // uint8 -> int32, int16 -> int32, bool -> int32 (a count).
  Array ul = random_array({6, 50}, DType::kUInt8), ur = random_array({50, 4}, DType::kUInt8);
  EXPECT_EQ(
      check(lax::dot_general(ul, ur, dn, DType::kInt32), ref_dot(ul, ur, dn, DType::kInt32), 0),
      "");
  Array bl = random_array({6, 50}, DType::kBool), br = random_array({50, 4}, DType::kBool);
  EXPECT_EQ(
      check(lax::dot_general(bl, br, dn, DType::kInt32), ref_dot(bl, br, dn, DType::kInt32), 0),
      "");
  // Integers preferring a float result.
  Array il = random_array({6, 50}, DType::kInt8), ir = random_array({50, 4}, DType::kInt8);
  Array f = lax::dot_general(il, ir, dn, DType::kFloat32);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(check(f, ref_dot(il, ir, dn, DType::kFloat32), 6e-8), "");
}

TEST(DotGeneral, HalfFloatsAccumulateInFloat32AndRoundOnce) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    for (const auto& c : kCases) {
      Array l = random_array(c.l, dt), r = random_array(c.r, dt);
      Array y16 = lax::dot_general(l, r, c.dn);
      Array y32 = lax::dot_general(l, r, c.dn, DType::kFloat32);
      EXPECT_EQ(y32.dtype(), DType::kFloat32);
      EXPECT_EQ(check(y32, ref_dot(l, r, c.dn, DType::kFloat32), 6e-8), "") << dtype_name(dt);
      // The half result is the float32 result rounded once.
      std::vector<double> rounded;
      for (double v : to_doubles(y32)) {
        char buf[2];
        store_from_double(dt, buf, v);
        rounded.push_back(load_as_double(dt, buf));
      }
      EXPECT_EQ(compare(to_doubles(y16), rounded, 0, 0), "") << dtype_name(dt);
    }
  }
  // float32 operands may prefer a narrower float result (JAX allows it) or float64.
  Array l = random_array({8, 16}, DType::kFloat32), r = random_array({16, 5}, DType::kFloat32);
  const DotDimensionNumbers dn{{1}, {0}, {}, {}};
  EXPECT_EQ(lax::dot_general(l, r, dn, DType::kBFloat16).dtype(), DType::kBFloat16);
  EXPECT_EQ(check(lax::dot_general(l, r, dn, DType::kBFloat16), ref_dot(l, r, dn, DType::kBFloat16),
                  6e-8),
            "");
}

TEST(DotGeneral, WeakTypeOnlyWhenBothOperandsAreWeak) {
  Array l = random_array({2, 3}, DType::kFloat32), r = random_array({3, 2}, DType::kFloat32);
  Array wl(Aval{l.shape(), l.dtype(), true}, l.buffer()),
      wr(Aval{r.shape(), r.dtype(), true}, r.buffer());
  const DotDimensionNumbers dn{{1}, {0}, {}, {}};
  EXPECT_TRUE(lax::dot_general(wl, wr, dn).weak_type());
  EXPECT_FALSE(lax::dot_general(wl, r, dn).weak_type());
  EXPECT_FALSE(lax::dot_general(wl, wr, dn, DType::kFloat32).weak_type());
}

TEST(DotGeneral, Errors) {
  Array a = random_array({2, 3}, DType::kFloat32), b = random_array({3, 4}, DType::kFloat32);
  Array bi = random_array({3, 4}, DType::kInt32);
  EXPECT_ERROR(TypeError, lax::dot_general(a, bi, {{1}, {0}, {}, {}}),
               "[dot_general] lax.dot_general argument type error: float32, int32");
  EXPECT_ERROR(TypeError, lax::dot_general(a, b, {{0}, {0}, {}, {}}),
               "[dot_general] dot_general requires contracting dimensions to have the same shape, "
               "got (2,) and (3,).");
  EXPECT_ERROR(TypeError, lax::dot_general(a, b, {{2}, {0}, {}, {}}),
               "dot_general requires lhs dimension numbers to be nonnegative and less than the "
               "number of axes of the lhs value, got lhs_batch of () and lhs_contracting of (2,) "
               "for lhs of rank 2");
  EXPECT_ERROR(TypeError, lax::dot_general(a, b, {{1}, {-1}, {}, {}}),
               "requires rhs dimension numbers to be nonnegative");
  Array x = random_array({4, 2, 3}, DType::kFloat32), y = random_array({5, 3, 2}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::dot_general(x, y, {{2}, {1}, {0}, {0}}),
               "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
               "same shape, got (4,) and (5,).");
  EXPECT_ERROR(TypeError, lax::dot_general(x, y, {{2}, {1}, {0}, {}}),
               "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions");
  EXPECT_ERROR(TypeError, lax::dot_general(x, y, {{2}, {1}, {2}, {0}}),
               "dot_general requires lhs batch dimensions to be disjoint from contracting "
               "dimensions");
  EXPECT_ERROR(TypeError, lax::dot_general(x, x, {{1, 1}, {1, 1}, {}, {}}),
               "dot_general requires lhs contracting dimensions to be distinct");
  Array i32 = random_array({2, 3}, DType::kInt32), j32 = random_array({3, 2}, DType::kInt32);
  EXPECT_ERROR(TypeError, lax::dot_general(i32, j32, {{1}, {0}, {}, {}}, DType::kInt8),
               "`preferred_element_type` must not be narrower than the original type");
  EXPECT_ERROR(TypeError, lax::dot_general(a, b, {{1}, {0}, {}, {}}, DType::kInt32),
               "`preferred_element_type` must be floating for floating operands");
}

TEST(Dot, VectorsAndMatrices) {
  Array v = random_array({7}, DType::kFloat32), w = random_array({7}, DType::kFloat32);
  Array m = random_array({5, 7}, DType::kFloat32), n = random_array({7, 3}, DType::kFloat32);
  Array vv = lax::dot(v, w);
  EXPECT_EQ(vv.shape(), Shape{});
  EXPECT_EQ(check(vv, ref_dot(v, w, {{0}, {0}, {}, {}}, DType::kFloat32), 6e-8), "");
  EXPECT_EQ(check(lax::dot(m, v), ref_dot(m, v, {{1}, {0}, {}, {}}, DType::kFloat32), 6e-8), "");
  EXPECT_EQ(check(lax::dot(v, n), ref_dot(v, n, {{0}, {0}, {}, {}}, DType::kFloat32), 6e-8), "");
  EXPECT_EQ(check(lax::dot(m, n), ref_dot(m, n, {{1}, {0}, {}, {}}, DType::kFloat32), 6e-8), "");
  Array i = random_array({4, 6}, DType::kInt8), j = random_array({6}, DType::kInt8);
  Array ij = lax::dot(i, j, DType::kInt32);
  EXPECT_EQ(ij.dtype(), DType::kInt32);
  EXPECT_EQ(check(ij, ref_dot(i, j, {{1}, {0}, {}, {}}, DType::kInt32), 0), "");
}

TEST(Dot, Errors) {
  Array m = random_array({5, 7}, DType::kFloat32), t = random_array({2, 7, 3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::dot(m, m),
               "[dot] Incompatible shapes for dot: got (5, 7) and (5, 7)");
  EXPECT_ERROR(TypeError, lax::dot(m, t), "Incompatible shapes for dot: got (5, 7) and (2, 7, 3)");
  EXPECT_ERROR(TypeError, lax::dot(random_array({}, DType::kFloat32), m), "Incompatible shapes");
}

}  // namespace
}  // namespace tessera
