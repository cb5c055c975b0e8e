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
    b.add("where(cond)", "idx.nonzero", params({{"out", json_int(0)}}), {a},
          [&] { return tnp::where(a)[0]; });
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
  {
    // 64-bit mode: the produced indices become int64 (searchsorted's stay int32).
    X64Scope x64;
    add_nonzero_cases(b);
    add_search_cases(b);
    add_count_cases(b);
    add_partition_select_cases(b);
  }
  const auto sum = b.run();
  EXPECT_GT(sum.compared, 300);
  EXPECT_GE(sum.ops.size(), 22u);
}

// ---------------------------------------------------------------- naive references

TEST(IndexFuncs, GridsMatchLoops) {
  // ix_: each argument reshaped to its own axis.
  const Array a = ints_in({3}, -5, 5), b = ints_in({4}, 0, 9, kI8), c = ints_in({0}, 0, 1);
  const std::vector<Array> g = tnp::ix_({a, b, c});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].shape(), (Shape{3, 1, 1}));
  EXPECT_EQ(g[1].shape(), (Shape{1, 4, 1}));
  EXPECT_EQ(g[1].dtype(), kI8);
  EXPECT_EQ(g[2].shape(), (Shape{1, 1, 0}));
  EXPECT_EQ(compare(to_doubles(g[1]), to_doubles(b), 0, 0), "");
  // indices_sparse[k]: arange(dims[k]) along axis k; indices: their broadcast, stacked.
  const Shape dims = random_shape(1, 3);
  const std::vector<Array> sp = tnp::indices_sparse(dims, kI8);
  const Array dense = tnp::indices(dims);
  EXPECT_EQ(dense.dtype(), default_int_dtype());
  for (size_t k = 0; k < dims.size(); ++k) {
    Shape s(dims.size(), 1);
    s[k] = dims[k];
    EXPECT_EQ(sp[k].shape(), s);
    EXPECT_EQ(sp[k].dtype(), kI8);
    std::vector<double> want;
    for (int64_t i = 0; i < dims[k]; ++i) want.push_back(static_cast<double>(i));
    EXPECT_EQ(compare(to_doubles(sp[k]), want, 0, 0), "");
    const Array plane = lax::index_in_dim(dense, static_cast<int64_t>(k), 0, false);
    EXPECT_EQ(compare(to_doubles(plane), to_doubles(lax::broadcasted_iota(kI32, dims, k)), 0, 0),
              "");
  }
  // diag_indices(_from): ndim copies of arange(n).
  const int64_t n = uniform_int(0, 5);
  const std::vector<Array> di = tnp::diag_indices(n, 3);
  ASSERT_EQ(di.size(), 3u);
  for (const Array& d : di) EXPECT_EQ(compare(to_doubles(d), to_doubles(tnp::arange(n)), 0, 0), "");
  EXPECT_EQ(tnp::diag_indices_from(tnp::zeros({n, n, n, n})).size(), 4u);
}

TEST(IndexFuncs, PartitionPlacesKth) {
  // A naive check of the partition property on distinct values: kth in place, smaller before.
  const Array a =
      tnp::astype(lax::sort_key_val(random_array({9}, kF32), lax::iota(kI32, 9)).second, kF32);
  for (int64_t kth : {0, 4, 8, -1}) {
    const std::vector<double> p = to_doubles(tnp::partition(a, kth));
    const size_t k = static_cast<size_t>(kth < 0 ? kth + 9 : kth);
    EXPECT_EQ(p[k], static_cast<double>(k));
    for (size_t i = 0; i < 9; ++i) EXPECT_EQ(i < k, p[i] < p[k]);
  }
}

// ---------------------------------------------------------------- jit and vmap

TEST(IndexFuncs, StaticSizeFormsUnderJitEqualEager) {
  const Array a = tied({4, 5}, kF32, 0.1);
  const Array x = ints_in({12}, 0, 6);
  const Array m = random_array({5}, kBool);
  for (int64_t size : {0, 3, 25}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const tnp::NonzeroOptions o{.size = size, .fill_value = {-1, 7}};
    auto jn = tessera::jit([&o](const Array& v) { return tnp::nonzero(v, o); });
    const std::vector<Array> got = jn(a), want = tnp::nonzero(a, o);
    for (size_t k = 0; k < 2; ++k) EXPECT_EQ(eq(got[k], want[k]), "");
    const tnp::NonzeroOptions o1{.size = size, .fill_value = {-1}};
    EXPECT_EQ(eq(tessera::jit([&](const Array& v) { return tnp::argwhere(v, o1); })(a),
                 tnp::argwhere(a, o1)),
              "");
    EXPECT_EQ(eq(tessera::jit([&](const Array& v) { return tnp::flatnonzero(v, o1); })(a),
                 tnp::flatnonzero(a, o1)),
              "");
    const tnp::UniqueOptions uo{
        .return_index = true, .return_inverse = true, .return_counts = true, .size = size};
    auto ju = tessera::jit([&](const Array& v) {
      const tnp::UniqueResult r = tnp::unique(v, uo);
      return std::vector<Array>{r.values, r.indices, r.inverse, r.counts};
    });
    const std::vector<Array> ug = ju(a);
    const tnp::UniqueResult ue = tnp::unique(a, uo);
    EXPECT_EQ(eq(ug[0], ue.values), "");
    EXPECT_EQ(eq(ug[1], ue.indices), "");
    EXPECT_EQ(eq(ug[2], ue.inverse), "");
    EXPECT_EQ(eq(ug[3], ue.counts), "");
    EXPECT_EQ(eq(tessera::jit([&](const Array& c, const Array& v) {
                   return tnp::compress(c, v, 1, size, 2.5);
                 })(m, a),
                 tnp::compress(m, a, 1, size, 2.5)),
              "");
    EXPECT_EQ(eq(tessera::jit([&](const Array& c, const Array& v) {
                   return tnp::extract(c, v, size);
                 })(tnp::greater(a, 0), a),
                 tnp::extract(tnp::greater(a, 0), a, size)),
              "");
    EXPECT_EQ(
        eq(tessera::jit([&](const Array& v) { return tnp::bincount(v, std::nullopt, 0, size); })(x),
           tnp::bincount(x, std::nullopt, 0, size)),
        "");
  }
  // The other functions traced whole: searchsorted (every method), histogram with a range,
  // interp, choose/ravel_multi_index with static modes.
  const Array sorted = lax::sort(tied({11}, kF32, 0.2));
  const Array v = tied({3, 4}, kF32, 0.2);
  for (const char* method : {"scan", "scan_unrolled", "sort", "compare_all"})
    EXPECT_EQ(eq(tessera::jit([&](const Array& s, const Array& q) {
                   return tnp::searchsorted(s, q, "right", std::nullopt, method);
                 })(sorted, v),
                 tnp::searchsorted(sorted, v, "right", std::nullopt, method)),
              "")
        << method;
  const Array h = random_array({30}, kF32);
  auto jh = tessera::jit([](const Array& d) {
    return tnp::histogram(d, int64_t{4}, std::pair<double, double>{-1, 1});
  });
  const std::vector<Array> hg = jh(h), hw = tnp::histogram(h, int64_t{4}, {{-1, 1}});
  EXPECT_EQ(eq(hg[0], hw[0]), "");
  EXPECT_EQ(eq(hg[1], hw[1]), "");
  // Without a range the traced edges follow the data's min and max (computed in dt).
  const std::vector<Array> ht =
      tessera::jit([](const Array& d) { return tnp::histogram(d, int64_t{5}); })(h);
  EXPECT_EQ(compare(to_doubles(ht[0]), to_doubles(tnp::histogram(h, int64_t{5})[0]), 0, 0), "");
  EXPECT_EQ(compare(to_doubles(ht[1]), to_doubles(tnp::histogram(h, int64_t{5})[1]), 1e-6, 1e-6),
            "");
  const Array xp = tnp::array({-1.0, 0.0, 0.5, 2.0}), fp = tnp::array({3.0, 1.0, -2.0, 0.0});
  EXPECT_EQ(eq(tessera::jit([&](const Array& q) { return tnp::interp(q, xp, fp); })(v),
               tnp::interp(v, xp, fp)),
            "");
  const Array ci = ints_in({3, 4}, -4, 6);
  EXPECT_EQ(eq(tessera::jit([&](const Array& i) {
                 return tnp::choose(i, {v, tnp::negative(v)}, "wrap");
               })(ci),
               tnp::choose(ci, {v, tnp::negative(v)}, "wrap")),
            "");
}

std::vector<Array> vmap0(const flat::Fun& f, const std::vector<Array>& args,
                         const std::vector<std::optional<int64_t>>& in_axes) {
  return flat::vmap(f, args, in_axes,
                    [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
}

Array row(const Array& x, int64_t b) { return lax::index_in_dim(x, b, 0, false); }

TEST(IndexFuncs, VmapMatchesLoop) {
  const int64_t B = 4;
  const Array a = lax::sort(tied({B, 9}, kF32, 0.2), 1);
  const Array v = tied({B, 5}, kF32, 0.2);
  for (const char* method : {"scan", "sort", "compare_all"}) {
    flat::Fun f = [method](std::span<const Array> x) {
      return std::vector<Array>{tnp::searchsorted(x[0], x[1], "left", std::nullopt, method)};
    };
    const Array got = vmap0(f, {a, v}, {0, 0})[0];
    for (int64_t b = 0; b < B; ++b)
      EXPECT_EQ(
          eq(row(got, b), tnp::searchsorted(row(a, b), row(v, b), "left", std::nullopt, method)),
          "")
          << method;
  }
  const Array m = tied({B, 3, 4}, kI32);
  flat::Fun nz = [](std::span<const Array> x) { return tnp::nonzero(x[0], {.size = 7}); };
  const std::vector<Array> nzg = vmap0(nz, {m}, {0});
  const Array w = random_array({9}, kF32);
  const Array xs = ints_in({B, 9}, 0, 6);
  flat::Fun bc = [&w](std::span<const Array> x) {
    return std::vector<Array>{tnp::bincount(x[0], w, 0, 5)};
  };
  const Array bcg = vmap0(bc, {xs}, {0})[0];
  const Array xp = lax::sort(random_array({B, 6}, kF32), 1), fp = random_array({B, 6}, kF32);
  flat::Fun ip = [](std::span<const Array> x) {
    return std::vector<Array>{tnp::interp(x[0], x[1], x[2])};
  };
  const Array ipg = vmap0(ip, {v, xp, fp}, {0, 0, 0})[0];
  flat::Fun df = [](std::span<const Array> x) {
    return std::vector<Array>{tnp::diff(x[0], 2, 0, 0.5)};
  };
  const Array dg = vmap0(df, {v}, {0})[0];
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<Array> want = tnp::nonzero(row(m, b), {.size = 7});
    for (size_t k = 0; k < 2; ++k) EXPECT_EQ(eq(row(nzg[k], b), want[k]), "");
    EXPECT_EQ(eq(row(bcg, b), tnp::bincount(row(xs, b), w, 0, 5)), "");
    EXPECT_EQ(eq(row(ipg, b), tnp::interp(row(v, b), row(xp, b), row(fp, b))), "");
    EXPECT_EQ(eq(row(dg, b), tnp::diff(row(v, b), 2, 0, 0.5)), "");
  }
}

// ---------------------------------------------------------------- gradients

Array all_sum(const Array& a) {
  std::vector<int64_t> axes(static_cast<size_t>(a.ndim()));
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  return lax::reduce_sum(a, axes);
}

// grad of f at x against central differences (float64).
void check_grad(const std::function<Array(const Array&)>& f, const Array& x, double tol = 1e-6) {
  flat::Fun ff = [&](std::span<const Array> a) { return std::vector<Array>{f(a[0])}; };
  std::vector<Array> args{x};
  const std::vector<double> g = to_doubles(flat::value_and_grad(ff, args, false).grads[0]);
  const std::vector<double> xv = to_doubles(x);
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    std::vector<double> p = xv, m = xv;
    p[i] += h;
    m[i] -= h;
    const double fd = (f(testing::host_array(p, x.shape(), kF64)).item<double>() -
                       f(testing::host_array(m, x.shape(), kF64)).item<double>()) /
                      (2 * h);
    EXPECT_NEAR(g[i], fd, tol * (1 + std::fabs(fd))) << "element " << i;
  }
}

TEST(IndexFuncs, GradientsMatchFiniteDifferences) {
  X64Scope x64;
  const Array x = random_array({3, 5}, kF64), w = random_array({3, 5}, kF64);
  const Array pre = random_array({1, 5}, kF64);
  auto wsum = [](const Array& y, const Array& wt) {
    return all_sum(tnp::multiply(y, lax::slice(wt, std::vector<int64_t>(y.ndim(), 0), y.shape())));
  };
  check_grad([&](const Array& a) { return wsum(tnp::diff(a, 1, 1), w); }, x);
  check_grad([&](const Array& a) { return wsum(tnp::diff(a, 2, 0, pre, 1.5), w); }, x);
  check_grad([&](const Array& p) { return wsum(tnp::diff(x, 2, 0, p), w); }, pre);
  // interp: in the queries (away from the knots), the sample values and the sample points.
  const Array xp = testing::host_array({-1.0, -0.2, 0.3, 0.9, 1.6}, {5}, kF64);
  const Array fp = random_array({5}, kF64);
  const Array q = testing::host_array({-1.7, -0.6, 0.1, 0.45, 1.2, 2.3, 0.7}, {7}, kF64);
  const Array qw = random_array({7}, kF64);
  check_grad([&](const Array& t) { return wsum(tnp::interp(t, xp, fp), qw); }, q);
  check_grad([&](const Array& t) { return wsum(tnp::interp(t, xp, fp, "extrapolate", 2.0), qw); },
             q);
  check_grad([&](const Array& f) { return wsum(tnp::interp(q, xp, f), qw); }, fp);
  check_grad([&](const Array& p) { return wsum(tnp::interp(q, p, fp), qw); }, xp);
  check_grad([&](const Array& t) { return wsum(tnp::interp(t, xp, fp, {}, {}, 3.0), qw); }, q);
  // select and choose: the gradient flows to the chosen entries.
  const Array c1 = random_array({3, 5}, kBool), c2 = random_array({3, 5}, kBool);
  const Array y = random_array({3, 5}, kF64);
  check_grad(
      [&](const Array& a) {
        return wsum(tnp::select({c1, c2}, {a, tnp::multiply(a, a)}, tnp::sin(a)), w);
      },
      x);
  const Array idx = ints_in({3, 5}, -1, 3);
  check_grad(
      [&](const Array& a) {
        return wsum(tnp::choose(idx, {a, y, tnp::exp(a)}, "clip"), w);
      },
      x);
  check_grad([&](const Array& a) { return wsum(tnp::choose(idx, {y, a}, "wrap"), w); }, x);
}

// ---------------------------------------------------------------- errors

TEST(IndexFuncs, ErrorsNameTheFunctionAndTheFix) {
  const Array v = tnp::array({1.0, 0.0, 2.0});
  const Array i3 = tnp::array(std::vector<int32_t>{0, 2, 1}, {3});
  auto jit1 = [](auto f) { return tessera::jit([f](const Array& a) { return f(a); }); };
  // Data-dependent sizes under jit: jnp's ConcretizationTypeError text.
  EXPECT_ERROR(ConcretizationError, jit1([](const Array& a) { return tnp::nonzero(a)[0]; })(v),
               "The size argument of jnp.nonzero must be statically specified");
  EXPECT_ERROR(ConcretizationError, jit1([](const Array& a) { return tnp::argwhere(a); })(v),
               "The size argument of jnp.nonzero");
  EXPECT_ERROR(ConcretizationError, jit1([](const Array& a) { return tnp::unique(a).values; })(v),
               "The size argument of jnp.unique must be statically specified");
  EXPECT_ERROR(ConcretizationError,
               jit1([&](const Array& a) { return tnp::compress(tnp::greater(a, 0), a); })(v),
               "The size argument of jnp.compress");
  EXPECT_ERROR(ConcretizationError, jit1([](const Array& a) { return tnp::bincount(a); })(i3),
               "pass a static length");
  EXPECT_ERROR(ConcretizationError, jit1([&](const Array& a) {
                 return tnp::choose(a, {v, v, v});
               })(i3),
               "mode='wrap' or mode='clip'");
  EXPECT_ERROR(ConcretizationError,
               jit1([&](const Array& a) { return tnp::ravel_multi_index({a}, {3}); })(i3),
               "mode='wrap' or mode='clip'");
  EXPECT_ERROR(ConcretizationError, jit1([](const Array& b) {
                 return tnp::histogram(tnp::zeros({3}), b)[0];
               })(tnp::array(std::vector<int32_t>{4}, {})),
               "The bins argument of jnp.histogram must be concrete");
  // grad over eager code sees concrete values: no error.
  {
    X64Scope x64;
    const Array xv = testing::host_array({0.5, 0.0, 2.0}, {3}, kF64);
    check_grad([](const Array& a) { return all_sum(tnp::compress(tnp::greater(a, 0.1), a)); }, xv);
  }
  // Bad arguments.
  const Array s0 = tnp::scalar(1.0, kF32);
  const Array m22 = tnp::zeros({2, 2});
  EXPECT_ERROR(ValueError, tnp::nonzero(s0),
               "[nonzero] Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d");
  EXPECT_ERROR(ValueError, tnp::nonzero(m22, {.size = 2, .fill_value = {1, 2, 3}}),
               "fill_value must be a scalar or a tuple of length 2");
  EXPECT_ERROR(ValueError, tnp::searchsorted(v, v, "middle"),
               "'middle' is an invalid value for keyword 'side'. Expected one of ['left', "
               "'right'].");
  EXPECT_ERROR(ValueError, tnp::searchsorted(v, v, "left", std::nullopt, "bisect"),
               "'bisect' is an invalid value for keyword 'method'");
  EXPECT_ERROR(ValueError, tnp::searchsorted(m22, v), "a should be 1-dimensional");
  EXPECT_ERROR(ValueError, tnp::digitize(v, m22), "bins must be a 1-dimensional array");
  EXPECT_ERROR(TypeError, tnp::bincount(v),
               "x argument to bincount must have an integer type; got float32");
  EXPECT_ERROR(ValueError, tnp::bincount(tnp::zeros({2, 2}, kI32)),
               "only 1-dimensional input supported");
  EXPECT_ERROR(ValueError, tnp::bincount(i3, tnp::zeros({2})), "shape of weights must match");
  EXPECT_ERROR(ValueError, tnp::partition(v, 3), "kth=3 is out of bounds for an axis of size 3");
  EXPECT_ERROR(ValueError, tnp::argpartition(v, -4), "kth=-4 is out of bounds");
  EXPECT_ERROR(ValueError, tnp::select({tnp::greater(v, 0), tnp::less(v, 1)}, {v}),
               "condlist must have length equal to choicelist (2 vs 1)");
  EXPECT_ERROR(ValueError, tnp::select({}, {}), "condlist must be non-empty");
  EXPECT_ERROR(TypeError, tnp::select({v}, {v}), "condlist entries must be boolean arrays");
  EXPECT_ERROR(ValueError, tnp::choose(i3, {v, v}), "invalid entry in choice array");
  EXPECT_ERROR(ValueError, tnp::choose(i3, {v, v}, "bad"),
               "mode='bad' not understood. Must be 'raise', 'wrap', or 'clip'");
  EXPECT_ERROR(ValueError, tnp::compress(m22, v), "condition must be a 1D array");
  EXPECT_ERROR(ValueError, tnp::diff(v, -1), "order must be non-negative but got -1");
  EXPECT_ERROR(ValueError, tnp::diff(s0), "diff requires input that is at least one dimensional");
  EXPECT_ERROR(ValueError, tnp::unravel_index(i3, {2, 0}),
               "cannot unravel index into an empty shape");
  EXPECT_ERROR(TypeError, tnp::unravel_index(v, {3}), "only int indices permitted, got float32");
  EXPECT_ERROR(ValueError, tnp::ravel_multi_index({i3}, {3, 3}),
               "parameter multi_index must be a sequence of length 2");
  EXPECT_ERROR(ValueError, tnp::ravel_multi_index({i3}, {3}, "raise", "K"),
               "only 'C' or 'F' order is permitted");
  EXPECT_ERROR(ValueError, tnp::ravel_multi_index({i3}, {2}), "invalid entry in coordinates array");
  EXPECT_ERROR(ValueError, tnp::ravel_multi_index({i3}, {2}, "bad"),
               "invalid mode='bad'. Expected 'raise', 'wrap' or 'clip'");
  EXPECT_ERROR(TypeError, tnp::ravel_multi_index({v}, {3}), "only int indices permitted");
  EXPECT_ERROR(ValueError, tnp::ix_({m22}),
               "Arguments to jax.numpy.ix_ must be 1-dimensional, got shape (2, 2)");
  EXPECT_ERROR(NotImplementedError, tnp::ix_({tnp::greater(v, 0)}),
               "Boolean arguments to jax.numpy.ix_ are not implemented");
  EXPECT_ERROR(ValueError, tnp::tril_indices_from(v), "Only 2-D inputs are accepted");
  EXPECT_ERROR(ValueError, tnp::diag_indices(-1), "n and ndim must be non-negative, got -1 and 2");
  EXPECT_ERROR(ValueError, tnp::diag_indices_from(tnp::zeros({2, 3})),
               "All dimensions of input must be of equal length");
  EXPECT_ERROR(ValueError, tnp::put(v, i3, v),
               "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
               "Pass inplace=False to instead return an updated array.");
  EXPECT_ERROR(NotImplementedError, tnp::put(v, i3, v, "raise", false),
               "The 'raise' mode to jnp.put is not supported.");
  EXPECT_ERROR(ValueError, tnp::put_along_axis(v, i3, v, 0),
               "jax.numpy.put_along_axis cannot modify arrays in-place");
  EXPECT_ERROR(ValueError, tnp::histogram(v, int64_t{10}, std::nullopt, tnp::zeros({4})),
               "weights should have the same shape as a. (jnp.histogram: got a.shape=(3,), "
               "weights.shape=(4,))");
  EXPECT_ERROR(ValueError, tnp::histogram(v, int64_t{0}),
               "jnp.histogram: `bins` must be positive, when an integer; got 0");
  EXPECT_ERROR(ValueError, tnp::histogram(v, int64_t{3}, {{2.0, 1.0}}),
               "max must be larger than min in range parameter; got range=(2.0, 1.0)");
  EXPECT_ERROR(ValueError, tnp::histogram(v, tnp::array({0.0, 2.0, 1.0})),
               "`bins` must increase monotonically, when an array");
  EXPECT_ERROR(ValueError, tnp::histogram_bin_edges(v, m22),
               "bins must be an integer or a 1-D array of edges");
  EXPECT_ERROR(ValueError, tnp::interp(v, v, v, "foo"),
               "the only valid string value of `left` is 'extrapolate', got: 'foo'");
  EXPECT_ERROR(ValueError, tnp::interp(v, v, v, {}, {}, 0.0),
               "jnp.interp: period must be a non-zero value");
  EXPECT_ERROR(ValueError, tnp::interp(v, v, v, {}, {}, v), "period must be a scalar");
  EXPECT_ERROR(ValueError, tnp::interp(v, v, tnp::zeros({4})),
               "xp and fp must be one-dimensional arrays of equal size");
  EXPECT_ERROR(ValueError, tnp::interp(v, tnp::zeros({0}), tnp::zeros({0})), "must not be empty");
}

}  // namespace
}  // namespace tessera
