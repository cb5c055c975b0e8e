// jnp's index functions in C++ (numpy_index_funcs.h): nonzero & co., searchsorted (every
// method), digitize, bincount, unique, partition, select, choose, compress/extract, diff,
// ediff1d, unravel_index, ravel_multi_index, indices, ix_, the *_indices helpers, put,
// put_along_axis, histogram, histogram_bin_edges and interp.
// References: NumPy through the oracle (tests/oracle/oracle_index_funcs.py) on fresh random
// inputs of several shapes and dtypes (exact for integer results); naive loops written here
// (ix_, indices_sparse, diag_indices); jit against eager for the static-size forms; vmap
// against a loop; grad against central finite differences in float64. The seed is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tessera/jit.h"
#include "tessera/numpy_index_funcs.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::json_bool;
using testing::json_int;
using testing::json_ints;
using testing::json_num;
using testing::json_obj;
using testing::json_str;
using testing::oracle_array;
using testing::OracleBatch;
using testing::random_array;
using testing::random_shape;
using testing::rng;
using testing::to_doubles;
using testing::ValueOpts;
using testing::X64Scope;
namespace tnp = numpy;

constexpr DType kBool = DType::kBool, kI8 = DType::kInt8, kI32 = DType::kInt32,
                kI64 = DType::kInt64, kU8 = DType::kUInt8, kF16 = DType::kFloat16,
                kBF16 = DType::kBFloat16, kF32 = DType::kFloat32, kF64 = DType::kFloat64;

int64_t uniform_int(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}
template <class T>
const T& pick(const std::vector<T>& v) {
  return v[static_cast<size_t>(uniform_int(0, static_cast<int64_t>(v.size()) - 1))];
}

// Values with many ties and zeros (small integers; floats also NaN/inf now and then).
Array tied(const Shape& s, DType dt, double specials = 0.1) {
  ValueOpts o;
  o.lo = -3;
  o.hi = 3;
  o.int_lo = is_unsigned_integer(dt) ? 0 : -3;
  o.int_hi = 3;
  o.int_full_range = false;
  o.special_rate = is_floating(dt) ? specials : 0.0;
  o.extremes = false;
  Array a = oracle_array(s, dt, o);
  if (!is_floating(dt)) return a;
  return tnp::round(a);  // integral floats: ties
}

// An index array of dtype dt with values in [lo, hi].
Array ints_in(const Shape& s, int64_t lo, int64_t hi, DType dt = kI32) {
  std::vector<double> v(static_cast<size_t>(shape_size(s)));
  for (double& e : v) e = static_cast<double>(uniform_int(lo, hi));
  return testing::host_array(v, s, dt);
}

std::string eq(const Array& got, const Array& want) {
  if (got.shape() != want.shape()) return "shape " + got.aval().str() + " vs " + want.aval().str();
  if (got.dtype() != want.dtype()) return "dtype " + got.aval().str() + " vs " + want.aval().str();
  return compare(to_doubles(got), to_doubles(want), 0, 0);
}

std::string params(std::initializer_list<std::pair<std::string_view, std::string>> kv) {
  return json_obj(kv);
}

// ---------------------------------------------------------------- the oracle

void add_nonzero_cases(OracleBatch& b) {
  for (DType dt : {kBool, kI32, kF32, kU8, kBF16}) {
    const Shape s = random_shape(1, 3);
    const Array a = tied(s, dt);
    const int64_t nd = static_cast<int64_t>(s.size());
    for (int64_t k = 0; k < nd; ++k)
      b.add("nonzero " + std::to_string(k), "idx.nonzero", params({{"out", json_int(k)}}), {a},
            [&] { return tnp::nonzero(a)[static_cast<size_t>(k)]; });
    const int64_t size = uniform_int(0, a.size() + 2);
    const int64_t fill = uniform_int(-3, 3);
    for (int64_t k = 0; k < nd; ++k)
      b.add("nonzero size " + std::to_string(k), "idx.nonzero",
            params({{"out", json_int(k)}, {"size", json_int(size)}, {"fill", json_int(fill)}}), {a},
            [&] { return tnp::where(a, {.size = size, .fill_value = {fill}})[k]; });
    b.add("flatnonzero", "idx.flatnonzero", "{}", {a}, [&] { return tnp::flatnonzero(a); });
    b.add("flatnonzero size", "idx.flatnonzero",
          params({{"size", json_int(size)}, {"fill", json_int(fill)}}), {a},
          [&] { return tnp::flatnonzero(a, {.size = size, .fill_value = {fill}}); });
    b.add("argwhere", "idx.argwhere", "{}", {a}, [&] { return tnp::argwhere(a); });
    b.add("argwhere size", "idx.argwhere",
          params({{"size", json_int(size)}, {"fill", json_int(fill)}}), {a},
          [&] { return tnp::argwhere(a, {.size = size, .fill_value = {fill}}); });
  }
  const Array s0 = testing::host_array({1}, {}, kF32);
  b.add("argwhere rank 0", "idx.argwhere", "{}", {s0}, [&] { return tnp::argwhere(s0); });
  b.add("flatnonzero rank 0", "idx.flatnonzero", "{}", {s0}, [&] { return tnp::flatnonzero(s0); });
}

void add_search_cases(OracleBatch& b) {
  for (DType dt : {kF32, kI32, kF16, kBF16, kI8, kBool}) {
    const int64_t n = uniform_int(0, 12);
    const Array a = lax::sort(tied({n}, dt, 0.15));
    const Array v = tied(random_shape(0, 2), dt, 0.15);
    for (const char* side : {"left", "right"})
      for (const char* method : {"scan", "scan_unrolled", "sort", "compare_all"})
        b.add(std::string("searchsorted ") + side + " " + method, "idx.searchsorted",
              params({{"side", json_str(side)}}), {a, v},
              [&] { return tnp::searchsorted(a, v, side, std::nullopt, method); });
  }
  // With a sorter: the oracle sees a[sorter].
  const Array raw = tied({9}, kF32);
  const Array sorter = tnp::argsort(raw);
  const Array v = tied({4}, kF32);
  b.add("searchsorted sorter", "idx.searchsorted", params({{"side", json_str("left")}}),
        {tnp::take(raw, sorter), v}, [&] { return tnp::searchsorted(raw, v, "left", sorter); });
  for (DType dt : {kF32, kI32}) {
    // digitize: strictly monotonic bins (NumPy's requirement), increasing or decreasing.
    const int64_t n = uniform_int(0, 6);
    std::vector<double> e;
    double x = static_cast<double>(uniform_int(-4, 0));
    for (int64_t i = 0; i < n; ++i) e.push_back(x += static_cast<double>(uniform_int(1, 2)));
    if (uniform_int(0, 1)) std::reverse(e.begin(), e.end());
    const Array bins = testing::host_array(e, {n}, dt);
    const Array xs = tied(random_shape(0, 2, 5), dt, 0.0);
    for (bool right : {false, true})
      for (const char* m : {"scan", "sort", "compare_all"})
        b.add(std::string("digitize ") + m, "idx.digitize", params({{"right", json_bool(right)}}),
              {xs, bins}, [&] { return tnp::digitize(xs, bins, right, std::string(m)); });
  }
}

void add_count_cases(OracleBatch& b) {
  for (DType dt : {kI32, kU8, kBool, kI8}) {
    const Array x =
        ints_in({uniform_int(0, 20)}, is_unsigned_integer(dt) ? 0 : -2, dt == kBool ? 1 : 9, dt);
    const int64_t minlength = uniform_int(0, 12);
    b.add("bincount", "idx.bincount", params({{"minlength", json_int(minlength)}}), {x},
          [&] { return tnp::bincount(x, std::nullopt, minlength); });
    const int64_t length = uniform_int(0, 8);
    b.add("bincount length", "idx.bincount", params({{"length", json_int(length)}}), {x},
          [&] { return tnp::bincount(x, std::nullopt, 0, length); });
    for (DType wdt : {kF32, kI32}) {
      const Array w = random_array(x.shape(), wdt);
      b.add("bincount weights", "idx.bincount", params({{"minlength", json_int(minlength)}}),
            {x, w}, [&] { return tnp::bincount(x, w, minlength); });
    }
  }
  for (DType dt : {kF32, kI32, kBool, kF16}) {
    const Array a = tied(random_shape(0, 3), dt, 0.2);
    const int64_t size = uniform_int(std::min<int64_t>(a.size(), 1), a.size() + 3);
    for (const char* out : {"values", "index", "inverse", "counts"}) {
      auto field = [out](const tnp::UniqueResult& r) {
        const std::string o = out;
        return o == "values"    ? r.values
               : o == "index"   ? r.indices
               : o == "inverse" ? r.inverse
                                : r.counts;
      };
      const tnp::UniqueOptions all{
          .return_index = true, .return_inverse = true, .return_counts = true};
      b.add(std::string("unique ") + out, "idx.unique", params({{"out", json_str(out)}}), {a},
            [&] { return field(tnp::unique(a, all)); });
      tnp::UniqueOptions sized = all;
      sized.size = size;
      if (uniform_int(0, 1)) sized.fill_value = 2.0;
      b.add(
          std::string("unique size ") + out, "idx.unique",
          sized.fill_value
              ? params({{"out", json_str(out)}, {"size", json_int(size)}, {"fill", json_num(2.0)}})
              : params({{"out", json_str(out)}, {"size", json_int(size)}}),
          {a}, [&] { return field(tnp::unique(a, sized)); });
    }
  }
}

void add_partition_select_cases(OracleBatch& b) {
  for (DType dt : {kF32, kI32, kBF16}) {
    const Shape s = random_shape(1, 3);
    const Array a = tied(s, dt);
    const int64_t axis =
        uniform_int(-static_cast<int64_t>(s.size()), static_cast<int64_t>(s.size()) - 1);
    const int64_t n = s[static_cast<size_t>(axis < 0 ? axis + s.size() : axis)];
    if (n == 0) continue;
    const int64_t kth = uniform_int(-n, n - 1);
    const std::string p = params({{"kth", json_int(kth)}, {"axis", json_int(axis)}});
    b.add("partition", "idx.partition", p, {a}, [&] { return tnp::partition(a, kth, axis); });
    b.add("argpartition", "idx.argpartition", p, {a},
          [&] { return tnp::argpartition(a, kth, axis); });
  }
  for (DType dt : {kF32, kI32}) {
    const Shape s = random_shape(0, 2);
    const int64_t n = uniform_int(1, 3);
    std::vector<Array> conds, choices, ins;
    for (int64_t i = 0; i < n; ++i) conds.push_back(random_array(s, kBool));
    for (int64_t i = 0; i < n; ++i) choices.push_back(random_array(s, dt));
    const Array def = random_array(s, dt);
    ins = conds;
    ins.insert(ins.end(), choices.begin(), choices.end());
    ins.push_back(def);
    b.add("select", "idx.select", params({{"n", json_int(n)}}), ins,
          [&] { return tnp::select(conds, choices, def); });
    const Array a = ints_in(s, -2, static_cast<int64_t>(n) + 1);
    const Array in_range = ints_in(s, 0, n - 1);
    std::vector<Array> cins{in_range};
    cins.insert(cins.end(), choices.begin(), choices.end());
    b.add("choose raise", "idx.choose", params({{"mode", json_str("raise")}}), cins,
          [&] { return tnp::choose(in_range, choices); });
    cins[0] = a;
    for (const char* mode : {"wrap", "clip"})
      b.add(std::string("choose ") + mode, "idx.choose", params({{"mode", json_str(mode)}}), cins,
            [&] { return tnp::choose(a, choices, mode); });
  }
}

void add_compress_diff_cases(OracleBatch& b) {
  for (DType dt : {kF32, kI32, kBool}) {
    const Shape s = random_shape(1, 3);
    const Array a = random_array(s, dt);
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t axis = uniform_int(-nd, nd - 1);
    const int64_t m = s[static_cast<size_t>(axis < 0 ? axis + nd : axis)];
    const Array cond = random_array({std::max<int64_t>(0, m + uniform_int(-1, 1))}, kBool);
    b.add("compress", "idx.compress", params({{"axis", json_int(axis)}}), {cond, a},
          [&] { return tnp::compress(cond, a, axis); });
    const int64_t size = uniform_int(0, m + 2);
    b.add("compress size", "idx.compress",
          params({{"axis", json_int(axis)}, {"size", json_int(size)}, {"fill", json_num(1)}}),
          {cond, a}, [&] { return tnp::compress(cond, a, axis, size, 1); });
    const Array fcond = random_array({a.size()}, kBool);
    b.add("compress flat", "idx.compress", "{}", {fcond, a},
          [&] { return tnp::compress(fcond, a); });
    const Array mask = random_array(s, kBool);
    b.add("extract", "idx.compress", "{}", {tnp::ravel(mask), a},
          [&] { return tnp::extract(mask, a); });
    b.add("extract size", "idx.compress", params({{"size", json_int(size)}, {"fill", json_num(0)}}),
          {tnp::ravel(mask), a}, [&] { return tnp::extract(mask, a, size); });
  }
  for (DType dt : {kF32, kI32, kBool, kBF16, kI8}) {
    const Shape s = random_shape(1, 3, 5);
    const Array a = random_array(s, dt, -50, 50);
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t axis = uniform_int(-nd, nd - 1);
    const int64_t n = uniform_int(0, 3);
    b.add("diff", "idx.diff", params({{"n", json_int(n)}, {"axis", json_int(axis)}}), {a},
          [&] { return tnp::diff(a, n, axis); });
    Shape es = s;
    es[static_cast<size_t>(axis < 0 ? axis + nd : axis)] = uniform_int(1, 2);
    const Array pre = random_array(es, dt, -50, 50);
    const Array app = testing::host_array({1}, {}, dt);
    b.add("diff prepend append", "idx.diff",
          params({{"n", json_int(n)},
                  {"axis", json_int(axis)},
                  {"prepend", json_bool(true)},
                  {"append", json_bool(true)}}),
          {a, pre, app}, [&] { return tnp::diff(a, n, axis, pre, app); });
    if (dt == kBool) continue;
    const Array tb = random_array({2}, dt), te = random_array({}, dt);
    b.add("ediff1d", "idx.ediff1d", "{}", {a}, [&] { return tnp::ediff1d(a); });
    b.add("ediff1d ends", "idx.ediff1d",
          params({{"to_begin", json_bool(true)}, {"to_end", json_bool(true)}}), {a, tb, te},
          [&] { return tnp::ediff1d(a, te, tb); });
  }
}

void add_index_arith_cases(OracleBatch& b) {
  for (DType dt : {kI32, kI64}) {
    X64Scope x64(dt == kI64);
    const Shape shape = random_shape(1, 3, 5, 0.0);
    const int64_t total = shape_size(shape);
    const Array idx = ints_in(random_shape(0, 2), -total - 2, total + 2, dt);
    for (size_t k = 0; k < shape.size(); ++k)
      b.add("unravel_index", "idx.unravel_index",
            params({{"shape", json_ints(shape)}, {"out", json_int(static_cast<int64_t>(k))}}),
            {idx}, [&] { return tnp::unravel_index(idx, shape)[k]; });
    const Shape is = random_shape(0, 2);
    std::vector<Array> multi, wild;
    for (int64_t d : shape) {
      multi.push_back(ints_in(is, 0, d - 1, dt));
      wild.push_back(ints_in(is, -3, d + 3, dt));
    }
    for (const char* order : {"C", "F"}) {
      b.add("ravel_multi_index raise", "idx.ravel_multi_index",
            params({{"dims", json_ints(shape)},
                    {"mode", json_str("raise")},
                    {"order", json_str(order)}}),
            multi, [&] { return tnp::ravel_multi_index(multi, shape, "raise", order); });
      for (const char* mode : {"wrap", "clip"})
        b.add(
            std::string("ravel_multi_index ") + mode, "idx.ravel_multi_index",
            params(
                {{"dims", json_ints(shape)}, {"mode", json_str(mode)}, {"order", json_str(order)}}),
            wild, [&] { return tnp::ravel_multi_index(wild, shape, mode, order); });
    }
  }
  for (bool x64 : {false, true}) {
    X64Scope scope(x64);
    const int64_t n = uniform_int(0, 5), k = uniform_int(-2, 2), m = uniform_int(0, 5);
    for (const char* fn : {"tril_indices", "triu_indices"})
      for (int64_t out : {0, 1}) {
        const bool lower = std::string(fn) == "tril_indices";
        b.add(fn, "idx.tri_indices",
              params({{"fn", json_str(fn)},
                      {"n", json_int(n)},
                      {"k", json_int(k)},
                      {"m", json_int(m)},
                      {"out", json_int(out)}}),
              {}, [&] {
                return (lower ? tnp::tril_indices(n, k, m) : tnp::triu_indices(n, k, m))[out];
              });
        const Array mat = tnp::zeros({n, m});
        b.add(
            std::string(fn) + "_from", "idx.tri_indices",
            params({{"fn", json_str(fn)},
                    {"n", json_int(n)},
                    {"k", json_int(k)},
                    {"m", json_int(m)},
                    {"out", json_int(out)}}),
            {}, [&] {
              return (lower ? tnp::tril_indices_from(mat, k) : tnp::triu_indices_from(mat, k))[out];
            });
      }
    const Shape dims = random_shape(0, 3);
    b.add("indices", "idx.indices", params({{"dims", json_ints(dims)}}), {},
          [&] { return tnp::indices(dims); });
  }
}

void add_put_cases(OracleBatch& b) {
  for (DType dt : {kF32, kI32, kBool}) {
    const Shape s = random_shape(1, 3, 4, 0.0);
    const Array a = random_array(s, dt);
    const int64_t n = a.size();
    // Distinct in-range indices (NumPy and JAX differ on the winner of duplicates).
    std::vector<double> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = static_cast<double>(i);
    std::shuffle(perm.begin(), perm.end(), rng());
    const int64_t k = uniform_int(1, n);
    std::vector<double> sel(perm.begin(), perm.begin() + k);
    for (double& e : sel)
      if (uniform_int(0, 1)) e -= static_cast<double>(n);  // negative: from the end
    const Array ind = testing::host_array(sel, {k}, kI32);
    const Array v = random_array({uniform_int(1, k)}, dt);
    b.add("put", "idx.put", "{}", {a, ind, v},
          [&] { return tnp::put(a, ind, v, std::nullopt, false); });
    const Array wild = ints_in({1}, n, n + 5);
    b.add("put wrap", "idx.put", params({{"mode", json_str("wrap")}}), {a, wild, v},
          [&] { return tnp::put(a, wild, v, "wrap", false); });
    b.add("put clip", "idx.put", params({{"mode", json_str("clip")}}), {a, wild, v},
          [&] { return tnp::put(a, wild, v, "clip", false); });
    // put_along_axis: one distinct index per slice along axis.
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t axis = uniform_int(0, nd - 1);
    Shape is = s;
    is[static_cast<size_t>(axis)] = 1;
    const Array idx = ints_in(is, 0, s[static_cast<size_t>(axis)] - 1);
    const Array vals = random_array(is, dt);
    b.add("put_along_axis", "idx.put_along_axis", params({{"axis", json_int(axis)}}),
          {a, idx, vals}, [&] { return tnp::put_along_axis(a, idx, vals, axis, false); });
  }
}

void add_histogram_cases(OracleBatch& b) {
  for (DType dt : {kF32, kI32, kF64}) {
    X64Scope x64(dt == kF64);
    const Array a = random_array(random_shape(1, 2, 12), dt, -4, 4);
    const Array w = random_array(a.shape(), kF32);
    const int64_t bins = uniform_int(1, 6);
    for (bool density : {false, true})
      for (bool with_range : {false, true}) {
        if (density && a.size() == 0) continue;
        const std::pair<double, double> r{-2.5, 3.0};
        const tnp::HistogramRange range = with_range ? tnp::HistogramRange(r) : std::nullopt;
        for (int64_t out : {0, 1}) {
          std::string p = with_range ? params({{"bins", json_int(bins)},
                                               {"range", testing::json_nums({-2.5, 3.0})},
                                               {"density", json_bool(density)},
                                               {"out", json_int(out)}})
                                     : params({{"bins", json_int(bins)},
                                               {"density", json_bool(density)},
                                               {"out", json_int(out)}});
          b.add("histogram", "idx.histogram", p, {a},
                [&] { return tnp::histogram(a, bins, range, std::nullopt, density)[out]; });
        }
        if (!density)
          b.add("histogram_bin_edges", "idx.histogram",
                with_range ? params({{"bins", json_int(bins)},
                                     {"range", testing::json_nums({-2.5, 3.0})},
                                     {"out", json_int(1)}})
                           : params({{"bins", json_int(bins)}, {"out", json_int(1)}}),
                {a}, [&] { return tnp::histogram_bin_edges(a, bins, range); });
      }
    // Explicit edges (sorted, distinct) and weights.
    const int64_t ne = uniform_int(2, 6);
    std::vector<double> e;
    double x = -4;
    for (int64_t i = 0; i < ne; ++i) e.push_back(x += 0.5 * static_cast<double>(uniform_int(1, 4)));
    const Array edges = testing::host_array(e, {ne}, dt == kI32 ? kF32 : dt);
    if (a.size() > 0 && dt != kI32)
      b.add("histogram edges weights", "idx.histogram",
            params({{"edges", json_bool(true)},
                    {"weights", json_bool(true)},
                    {"density", json_bool(true)},
                    {"out", json_int(0)}}),
            {a, tnp::astype(w, dt), edges},
            [&] { return tnp::histogram(a, edges, std::nullopt, tnp::astype(w, dt), true)[0]; });
    b.add("histogram edges", "idx.histogram",
          params({{"edges", json_bool(true)}, {"out", json_int(0)}}), {a, edges},
          [&] { return tnp::histogram(a, edges)[0]; });
  }
  for (DType dt : {kF32, kF64}) {
    X64Scope x64(dt == kF64);
    const int64_t n = uniform_int(1, 7);
    std::vector<double> xs;
    double x = -3;
    for (int64_t i = 0; i < n; ++i)
      xs.push_back(x += 0.25 * static_cast<double>(uniform_int(1, 6)));
    const Array xp = testing::host_array(xs, {n}, dt);
    const Array fp = random_array({n}, dt);
    const Array q = random_array(random_shape(0, 2, 6), dt, -4, 4);
    b.add("interp", "idx.interp", "{}", {q, xp, fp}, [&] { return tnp::interp(q, xp, fp); });
    b.add("interp left right", "idx.interp",
          params({{"left", json_num(-7)}, {"right", json_num(9)}}), {q, xp, fp},
          [&] { return tnp::interp(q, xp, fp, -7.0, 9.0); });
    b.add("interp period", "idx.interp", params({{"period", json_num(2.5)}}), {q, xp, fp},
          [&] { return tnp::interp(q, xp, fp, {}, {}, 2.5); });
  }
}

TEST(IndexFuncs, MatchNumpy) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("index_funcs", 3.0);
  // One fixed pass over every family, then random repetitions while the time box lasts.
  do {
    add_nonzero_cases(b);
    add_search_cases(b);
    add_count_cases(b);
    add_partition_select_cases(b);
    add_compress_diff_cases(b);
    add_index_arith_cases(b);
    add_put_cases(b);
    add_histogram_cases(b);
  } while (b.time_left() && b.size() < 2500);
  const auto sum = b.run();
  EXPECT_GT(sum.compared, 300);
  EXPECT_GE(sum.ops.size(), 22u);
}

}  // namespace
}  // namespace tessera
