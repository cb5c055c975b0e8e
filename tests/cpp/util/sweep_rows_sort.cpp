// Sweep rows of the sort family (src/prims/sort.cpp): one operand sorted along each dimension,
// sort_key_val's permuted values, and a three-operand sort with two keys, over rank 1-3 shapes
// with size-1 and zero-size dims and every dtype. Forward references come from
// tests/oracle/oracle_sort.py; the derivative checks keep the keys apart (no ties: the
// permutation is then locally constant).
#include <algorithm>
#include <cmath>

#include "tessera/lax_sort.h"
#include "util/oracle.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::json_int;
using testing::json_obj;
using Shapes = std::vector<std::vector<Shape>>;

Shapes shapes_for(int64_t dim, size_t operands) {
  Shapes base;
  if (dim == 0)
    base = {{{5}}, {{4, 3}}, {{1, 3}}, {{0, 3}}, {{3, 2, 2}}};
  else if (dim == 1)
    base = {{{3, 6}}, {{3, 1}}, {{0, 4}}, {{3, 0}}, {{2, 4, 3}}};
  else
    base = {{{2, 3, 4}}, {{2, 0, 3}}, {{1, 2, 1}}};
  for (auto& pattern : base) pattern.assign(operands, pattern[0]);
  return base;
}

Row row(const std::string& name, int64_t dim, size_t operands, int64_t num_keys,
        int64_t out_index) {
  Row r;
  r.name = name + "_dim" + std::to_string(dim);
  r.prim = "sort";
  r.family = "sort";
  r.operands.assign(operands, any());
  r.shapes = shapes_for(dim, operands);
  r.dtypes = all_types();
  r.oracle_op = "lax.sort";
  r.oracle_params = json_obj({{"dimension", json_int(dim)},
                              {"num_keys", json_int(num_keys)},
                              {"out_index", json_int(out_index)}});
  r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };  // ties in the primary key
  return r;
}

// top_k's reference: each last-axis row sorted descending, stably (NaN the largest, -0 == +0),
// its first k values (out 0) or indices (out 1).
RefOut top_k_ref(const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals,
                 int64_t k, int out) {
  const Shape& s = avals[0].shape;
  const int64_t n = s.back();
  const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(v[0].size()) / n;
  Shape os = s;
  os.back() = k;
  RefOut r{os, out == 0 ? avals[0].dtype : DType::kInt32, {}};
  auto greater = [](double a, double b) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
    return a > b;
  };
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[i] = i;
    const double* x = v[0].data() + row * n;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int64_t a, int64_t b) { return greater(x[a], x[b]); });
    for (int64_t j = 0; j < k; ++j)
      r.values.push_back(out == 0 ? x[idx[j]] : static_cast<double>(idx[j]));
  }
  return r;
}

}  // namespace

std::vector<Row> rows_sort() {
  std::vector<Row> t;
  for (int out : {0, 1}) {
    for (int64_t k : {0, 1, 3}) {
      Row r;
      r.name = std::string("top_k_") + (out == 0 ? "values" : "indices") + "_k" + std::to_string(k);
      r.prim = "top_k";
      r.family = "sort";
      r.operands = {any()};
      r.shapes = {{{5}}, {{4, 3}}, {{2, 3, 6}}, {{0, 4}}, {{3, 2, 3}}};
      r.dtypes = all_types();
      r.fn = [k, out](const Args& x) {
        auto [vals, idx] = lax::top_k(x[0], k);
        return out == 0 ? vals : idx;
      };
      r.ref = [k, out](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
        return top_k_ref(v, a, k, out);
      };
      r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };
      if (out == 1) r.deriv = Deriv::kZeroTangent;
      t.push_back(r);
    }
  }
  for (int64_t dim : {0, 1, 2}) {
    {
      Row r = row("sort", dim, 1, 1, 0);
      r.fn = [dim](const Args& x) { return lax::sort(x[0], dim); };
      t.push_back(r);
    }
    {
      Row r = row("sort_key_val", dim, 2, 1, 1);
      r.fn = [dim](const Args& x) { return lax::sort_key_val(x[0], x[1], dim).second; };
      t.push_back(r);
    }
    {
      // Two keys: integer and bool dtypes draw ties in the first, broken by the second.
      Row r = row("sort_two_keys", dim, 3, 2, 2);
      r.fn = [dim](const Args& x) { return lax::sort({x[0], x[1], x[2]}, dim, true, 2)[2]; };
      t.push_back(r);
    }
  }
  return t;
}

}  // namespace tessera::sweep
