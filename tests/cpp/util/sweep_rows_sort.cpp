// Sweep rows of the sort family (src/prims/sort.cpp): one operand sorted along each dimension,
// sort_key_val's permuted values, and a three-operand sort with two keys, over rank 1-3 shapes
// with size-1 and zero-size dims and every dtype. Forward references come from
// tests/oracle/oracle_sort.py; the derivative checks keep the keys apart (no ties: the
// permutation is then locally constant).
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

}  // namespace

std::vector<Row> rows_sort() {
  std::vector<Row> t;
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
