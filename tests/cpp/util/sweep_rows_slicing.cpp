// Sweep rows of the slicing family (src/prims/squeeze_rev.cpp, slicing.cpp, concat_pad.cpp):
// squeeze, rev, slice, dynamic_slice, dynamic_update_slice, concatenate, pad. Forward
// references come from tests/oracle/oracle_slicing.py. The start indices of the dynamic ops
// are int32 operands (drawn in range, or beyond both ends so that lax's negative-index
// normalization and XLA's clamping are exercised); vmap batches them too, which exercises the
// batched-start rules.
#include "util/oracle.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::json_int;
using testing::json_ints;
using testing::json_obj;
using Ints = std::vector<int64_t>;
using Shapes = std::vector<std::vector<Shape>>;

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kBF16 = DType::kBFloat16,
                kI32 = DType::kInt32, kU8 = DType::kUInt8, kBool = DType::kBool;

// The dynamic rows sweep fewer dtypes: each has several operands, so vmap's combinations
// multiply.
std::vector<DType> dynamic_types() { return {kF32, kF64, kBF16, kI32, kU8, kBool}; }

// An int32 start index drawn from [lo, hi].
Operand start(int64_t lo, int64_t hi) {
  Operand o = of_dtype(kI32);
  o.int_lo = lo, o.int_hi = hi, o.diff = false;
  return o;
}

Row base(std::string name, std::string prim, Shapes shapes) {
  Row r;
  r.name = std::move(name);
  r.prim = prim;
  r.family = "slicing";
  r.oracle_op = "lax." + prim;
  r.shapes = std::move(shapes);
  r.dtypes = all_types();
  return r;
}

Row squeeze(std::string name, Shapes shapes, Ints dims) {
  Row r = base(std::move(name), "squeeze", std::move(shapes));
  r.fn = [dims](const Args& x) { return lax::squeeze(x[0], dims); };
  r.operands = {any()};
  r.oracle_params = json_obj({{"dimensions", json_ints(dims)}});
  return r;
}

Row rev(std::string name, Shapes shapes, Ints dims) {
  Row r = base(std::move(name), "rev", std::move(shapes));
  r.fn = [dims](const Args& x) { return lax::rev(x[0], dims); };
  r.operands = {any()};
  r.oracle_params = json_obj({{"dimensions", json_ints(dims)}});
  return r;
}

Row slice(std::string name, Shapes shapes, Ints start_i, Ints limit, Ints strides = {}) {
  Row r = base(std::move(name), "slice", std::move(shapes));
  r.fn = [start_i, limit, strides](const Args& x) {
    return lax::slice(x[0], start_i, limit, strides);
  };
  r.operands = {any()};
  r.oracle_params = json_obj({{"start_indices", json_ints(start_i)},
                              {"limit_indices", json_ints(limit)},
                              {"strides", strides.empty() ? "null" : json_ints(strides)}});
  return r;
}

// config: flat (low, high, interior) per dim; the padding value is a second operand.
Row pad(std::string name, Shape x, Ints config) {
  Row r = base(std::move(name), "pad", {{x, {}}});
  r.fn = [config](const Args& a) {
    std::vector<lax::PadConfig> cfg;
    for (size_t i = 0; i + 2 < config.size(); i += 3)
      cfg.push_back({config[i], config[i + 1], config[i + 2]});
    return lax::pad(a[0], a[1], cfg);
  };
  r.operands = {any(), any()};
  r.oracle_params = json_obj({{"padding_config", json_ints(config)}});
  return r;
}

Row concatenate(std::string name, Shapes shapes, int64_t dim) {
  Row r = base(std::move(name), "concatenate", std::move(shapes));
  r.fn = [dim](const Args& x) { return lax::concatenate(x, dim); };
  r.operands = std::vector<Operand>(r.shapes[0].size(), any());
  r.oracle_params = json_obj({{"dimension", json_int(dim)}});
  return r;
}

// x of shape `x`, one start per dim drawn from [lo, hi].
Row dynamic_slice(std::string name, Shape x, Ints sizes, int64_t lo, int64_t hi) {
  std::vector<Shape> shapes{x};
  for (size_t d = 0; d < x.size(); ++d) shapes.push_back({});
  Row r = base(std::move(name), "dynamic_slice", {shapes});
  r.fn = [sizes](const Args& a) {
    return lax::dynamic_slice(a[0], Args(a.begin() + 1, a.end()), sizes);
  };
  r.operands = {any()};
  for (size_t d = 0; d < x.size(); ++d) r.operands.push_back(start(lo, hi));
  r.dtypes = dynamic_types();
  r.oracle_params = json_obj({{"slice_sizes", json_ints(sizes)}});
  return r;
}

Row dynamic_update_slice(std::string name, Shape x, Shape u, int64_t lo, int64_t hi) {
  std::vector<Shape> shapes{x, u};
  for (size_t d = 0; d < x.size(); ++d) shapes.push_back({});
  Row r = base(std::move(name), "dynamic_update_slice", {shapes});
  r.fn = [](const Args& a) {
    return lax::dynamic_update_slice(a[0], a[1], Args(a.begin() + 2, a.end()));
  };
  r.operands = {any(), any()};
  for (size_t d = 0; d < x.size(); ++d) r.operands.push_back(start(lo, hi));
  r.dtypes = dynamic_types();
  return r;
}

}  // namespace

std::vector<Row> rows_slicing() {
  std::vector<Row> t;
  // -- squeeze: one dim, several, all (to rank 0), a negative dim, zero-size neighbours
  t.push_back(squeeze("squeeze_one", {{{3, 1, 4}}, {{0, 1, 2}}}, {1}));
  t.push_back(squeeze("squeeze_several", {{{1, 3, 1, 1}}, {{1, 0, 1, 1}}}, {0, 2, 3}));
  t.push_back(squeeze("squeeze_all", {{{1, 1}}}, {0, 1}));
  t.push_back(squeeze("squeeze_negative", {{{3, 1}}, {{2, 1, 1}}}, {-1}));
  t.push_back(squeeze("squeeze_none", {{{3, 4}}, {{}}}, {}));
  // -- rev: none, one, all dims
  t.push_back(rev("rev_none", {{{3, 4}}}, {}));
  t.push_back(rev("rev_last", {{{3, 4}}, {{0, 4}}, {{3, 1}}}, {1}));
  t.push_back(rev("rev_first", {{{5}}, {{4, 3}}}, {0}));
  t.push_back(rev("rev_all", {{{2, 3, 4}}, {{1, 2, 1}}}, {0, 1, 2}));
  t.push_back(rev("rev_outer_inner", {{{2, 3, 4}}}, {0, 2}));
  // -- slice: plain, strided, empty results, zero-size operands, rank 0, the whole operand
  t.push_back(slice("slice_basic", {{{5, 6}}}, {1, 2}, {4, 6}));
  t.push_back(slice("slice_strided", {{{7, 8}}}, {1, 0}, {7, 8}, {2, 3}));
  t.push_back(slice("slice_strided_rank3", {{{4, 5, 6}}}, {0, 1, 2}, {4, 5, 6}, {3, 2, 4}));
  t.push_back(slice("slice_inner_stride", {{{3, 9}}}, {0, 1}, {3, 8}, {1, 3}));
  t.push_back(slice("slice_empty", {{{5, 6}}}, {2, 3}, {2, 6}));
  t.push_back(slice("slice_empty_strided", {{{5, 6}}}, {5, 0}, {5, 6}, {2, 2}));
  t.push_back(slice("slice_zero_operand", {{{0, 4}}}, {0, 1}, {0, 3}));
  t.push_back(slice("slice_scalar", {{{}}}, {}, {}));
  t.push_back(slice("slice_whole", {{{3, 4}}}, {0, 0}, {3, 4}));
  t.push_back(slice("slice_1d", {{{10}}}, {3}, {9}, {2}));
  // -- pad: edges, interior, negative edges (cropping), crossing, zero-size, rank 0
  t.push_back(pad("pad_edges", {3, 4}, {1, 2, 0, 0, 3, 0}));
  t.push_back(pad("pad_interior", {3, 4}, {0, 0, 1, 2, 1, 2}));
  t.push_back(pad("pad_negative", {5, 6}, {-1, 2, 0, 1, -2, 1}));
  t.push_back(pad("pad_crop", {3, 4}, {-1, -1, 0, 0, -2, 0}));
  t.push_back(pad("pad_crop_to_empty", {3, 4}, {-1, -1, 0, 0, -4, 0}));
  t.push_back(pad("pad_negative_interior", {4}, {-3, -2, 2}));
  t.push_back(pad("pad_zero_operand", {0, 3}, {1, 1, 2, 0, 1, 0}));
  t.push_back(pad("pad_scalar", {}, {}));
  t.push_back(pad("pad_none", {2, 3}, {0, 0, 0, 0, 0, 0}));
  t.push_back(pad("pad_rank3", {2, 3, 2}, {1, 0, 1, -1, 1, 0, 0, 2, 3}));
  // -- concatenate: 1, 2 and 3 operands along each axis, with zero-size pieces
  t.push_back(concatenate("concatenate_one", {{{3, 4}}, {{0, 2}}}, 0));
  t.push_back(concatenate("concatenate_two_axis0", {{{2, 4}, {3, 4}}, {{0, 4}, {3, 4}}}, 0));
  t.push_back(concatenate("concatenate_two_axis1", {{{3, 2}, {3, 4}}, {{3, 0}, {3, 0}}}, 1));
  t.push_back(concatenate("concatenate_three_axis0",
                          {{{1, 3}, {2, 3}, {4, 3}}, {{2, 0}, {1, 0}, {0, 0}}}, 0));
  t.push_back(concatenate("concatenate_three_axis1", {{{2, 1}, {2, 3}, {2, 0}}}, 1));
  t.push_back(concatenate("concatenate_rank3_axis2", {{{2, 3, 1}, {2, 3, 2}}}, 2));
  t.push_back(concatenate("concatenate_rank3_axis1", {{{2, 1, 2}, {2, 2, 2}, {2, 1, 2}}}, 1));
  t.push_back(concatenate("concatenate_1d", {{{3}, {4}}, {{0}, {2}}}, 0));
  // -- dynamic_slice: starts in range, beyond both ends (negative ones count from the end,
  //    then XLA clamps), the whole operand, empty sizes
  t.push_back(dynamic_slice("dynamic_slice_in_range", {5, 6}, {2, 3}, 0, 3));
  t.push_back(dynamic_slice("dynamic_slice_clamped", {5, 6}, {2, 3}, -9, 9));
  t.push_back(dynamic_slice("dynamic_slice_1d", {9}, {4}, -12, 12));
  t.push_back(dynamic_slice("dynamic_slice_whole", {3, 4}, {3, 4}, -2, 5));
  t.push_back(dynamic_slice("dynamic_slice_rank3", {3, 4, 5}, {1, 2, 3}, -5, 6));
  t.push_back(dynamic_slice("dynamic_slice_empty", {4, 3}, {0, 2}, -3, 4));
  t.push_back(dynamic_slice("dynamic_slice_size1", {6, 1}, {1, 1}, -7, 7));
  // -- dynamic_update_slice: the same, with the update as a second operand
  t.push_back(dynamic_update_slice("dynamic_update_slice_in_range", {5, 6}, {2, 3}, 0, 3));
  t.push_back(dynamic_update_slice("dynamic_update_slice_clamped", {5, 6}, {2, 3}, -9, 9));
  t.push_back(dynamic_update_slice("dynamic_update_slice_1d", {9}, {4}, -12, 12));
  t.push_back(dynamic_update_slice("dynamic_update_slice_whole", {3, 4}, {3, 4}, -2, 5));
  t.push_back(dynamic_update_slice("dynamic_update_slice_rank3", {3, 4, 5}, {1, 2, 3}, -5, 6));
  t.push_back(dynamic_update_slice("dynamic_update_slice_empty", {4, 3}, {0, 2}, -3, 4));
  t.push_back(dynamic_update_slice("dynamic_update_slice_row", {4, 5}, {1, 5}, -5, 5));
  return t;
}

}  // namespace tessera::sweep
