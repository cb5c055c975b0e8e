// Sweep rows of the cumulative family (src/prims/cumulative.cpp): cumsum, cumprod, cummax,
// cummin and cumlogsumexp along each axis, forward and reverse, over rank 1-3 shapes with
// size-1 and zero-size dims. Forward references come from tests/oracle/oracle_cumulative.py.
#include "tessera/lax_assoc_scan.h"
#include "util/oracle.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::json_bool;
using testing::json_int;
using testing::json_obj;
using Shapes = std::vector<std::vector<Shape>>;
using CumFn = Array (*)(const Array&, int64_t, bool);

Row cum(const std::string& prim, CumFn op, int64_t axis, bool reverse, Shapes shapes) {
  Row r;
  r.name = prim + "_axis" + std::to_string(axis) + (reverse ? "_rev" : "");
  r.prim = prim;
  r.family = "cumulative";
  r.fn = [op, axis, reverse](const Args& x) { return op(x[0], axis, reverse); };
  r.operands = {any()};
  r.shapes = std::move(shapes);
  r.dtypes = numbers();
  r.oracle_op = "lax." + prim;
  r.oracle_params = json_obj({{"axis", json_int(axis)}, {"reverse", json_bool(reverse)}});
  return r;
}

Shapes shapes_for(int64_t axis) {
  if (axis == 0) return {{{5}}, {{4, 3}}, {{1, 3}}, {{0, 3}}, {{3, 2, 2}}};
  if (axis == 1) return {{{3, 6}}, {{3, 1}}, {{0, 4}}, {{3, 0}}, {{2, 4, 3}}};
  return {{{2, 3, 4}}, {{2, 0, 3}}, {{1, 2, 1}}};
}

}  // namespace

std::vector<Row> rows_cumulative() {
  std::vector<Row> t;
  for (int64_t axis : {0, 1, 2})
    for (bool reverse : {false, true}) {
      const Shapes s = shapes_for(axis);
      t.push_back(cum("cumsum", lax::cumsum, axis, reverse, s));
      {
        // Factors of magnitude near 1 keep products of every dtype in range.
        Row r = cum("cumprod", lax::cumprod, axis, reverse, s);
        r.operands = {any(-1.5, 1.5)};
        r.operands[0].int_lo = -3, r.operands[0].int_hi = 3;
        t.push_back(r);
      }
      for (const auto& [prim, op] :
           {std::pair<std::string, CumFn>{"cummax", lax::cummax}, {"cummin", lax::cummin}}) {
        Row r = cum(prim, op, axis, reverse, s);
        r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };  // ties
        t.push_back(r);
      }
      {
        Row r = cum("cumlogsumexp", lax::cumlogsumexp, axis, reverse, s);
        r.dtypes = floats();
        t.push_back(r);
      }
    }
  return t;
}

}  // namespace tessera::sweep
