// gather(operand, indices) with JAX's rules (jax/_src/lax/slicing.py): the shape rule and its
// errors, the eager kernel (gather_kernels.h), the JVP (the same gather of the tangent, filling
// with 0), the transpose (a scatter-add of the cotangent into zeros with the mirrored dimension
// numbers), batching into one gather with batching dims (operand and/or indices batched:
// never a loop), and the index map that lets jit fuse a clamping gather with its consumers as
// an indirect load.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "compiler/index_map.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/gather_dims.h"
#include "prims/gather_kernels.h"
#include "prims/gather_scatter.h"
#include "prims/kernel_util.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive gather_p("gather");

namespace {

using ad::JvpOut;
using ad::one;
using batching::BatchOut;
using batching::kNotMapped;
using gather_dims::contains;
using gather_dims::plus1;

constexpr const char* kOp = "gather";

std::string dims_str(const std::vector<int64_t>& v) { return shape_str(v); }

std::vector<Aval> gather_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(kOp, in, 2);
  const Aval& x = in[0];
  const Aval& idx = in[1];
  const GatherArgs a = GatherArgs::from(p);
  const auto& dn = a.dnums;
  if (!is_integer(idx.dtype))
    throw TypeError(op_message(kOp, "indices must have an integer type, got " + idx.str() +
                                        "; convert the indices with astype(int32)."));
  if (idx.ndim() < 1)
    throw TypeError(op_message(
        kOp, "indices must have rank >= 1 (the last dimension is the index vector), got " +
                 idx.str() + "; add a trailing dimension with indices[..., None]."));
  const int64_t xr = x.ndim(), ir = idx.ndim();
  const int64_t out_rank = static_cast<int64_t>(dn.offset_dims.size()) + ir - 1;
  gather_dims::check_dim_list(kOp, "gather", dn.offset_dims, out_rank, "offset_dims", "output");
  gather_dims::check_dim_list(kOp, "gather", dn.collapsed_slice_dims, xr, "collapsed_slice_dims",
                              "operand");
  gather_dims::check_dim_list(kOp, "gather", dn.operand_batching_dims, xr, "operand_batching_dims",
                              "operand");
  gather_dims::check_dim_list(kOp, "gather", dn.start_indices_batching_dims, ir - 1,
                              "start_indices_batching_dims", "indices without the index vector dim",
                              false);
  gather_dims::check_dim_list(kOp, "gather", dn.start_index_map, xr, "start_index_map", "operand",
                              false);
  for (int64_t d : dn.collapsed_slice_dims)
    if (contains(dn.operand_batching_dims, d))
      throw TypeError(op_message(kOp,
                                 "collapsed_slice_dims and operand_batching_dims must not "
                                 "overlap, got " +
                                     dims_str(dn.collapsed_slice_dims) + " and " +
                                     dims_str(dn.operand_batching_dims) + "."));
  for (int64_t d : dn.start_index_map)
    if (contains(dn.operand_batching_dims, d))
      throw TypeError(op_message(kOp,
                                 "start_index_map and operand_batching_dims must not "
                                 "overlap, got " +
                                     dims_str(dn.start_index_map) + " and " +
                                     dims_str(dn.operand_batching_dims) + "."));
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size())
    throw TypeError(op_message(
        kOp,
        "operand_batching_dims and start_indices_batching_dims must have the same length, "
        "got " +
            dims_str(dn.operand_batching_dims) + " and " +
            dims_str(dn.start_indices_batching_dims) + "."));
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t od = dn.operand_batching_dims[i], id = dn.start_indices_batching_dims[i];
    if (x.shape[od] != idx.shape[id])
      throw TypeError(
          op_message(kOp, "operand dimension " + std::to_string(od) + " (size " +
                              std::to_string(x.shape[od]) + ") and indices dimension " +
                              std::to_string(id) + " (size " + std::to_string(idx.shape[id]) +
                              ") are a batching pair and must have the same size; operand " +
                              x.str() + ", indices " + idx.str() + "."));
  }
  if (static_cast<int64_t>(dn.start_index_map.size()) != idx.shape[ir - 1])
    throw TypeError(op_message(
        kOp, "Gather op has " + std::to_string(dn.start_index_map.size()) +
                 " elements in start_index_map and the bound of the index vector dimension (the "
                 "last) of indices " +
                 idx.str() + " is " + std::to_string(idx.shape[ir - 1]) +
                 ". These two numbers must be equal."));
  if (static_cast<int64_t>(a.slice_sizes.size()) != xr)
    throw TypeError(op_message(kOp,
                               "Gather op must have one slice size for every input "
                               "dimension; got: len(slice_sizes)=" +
                                   std::to_string(a.slice_sizes.size()) +
                                   ", input_shape.rank=" + std::to_string(xr) + "."));
  for (int64_t d = 0; d < xr; ++d) {
    const int64_t s = a.slice_sizes[d];
    if (s < 0 || s > x.shape[d])
      throw TypeError(op_message(kOp, "Slice size at index " + std::to_string(d) +
                                          " in gather op is out of range, must be within [0, " +
                                          std::to_string(x.shape[d]) + "], got " +
                                          std::to_string(s) + "."));
  }
  for (int64_t d : dn.collapsed_slice_dims)
    if (a.slice_sizes[d] > 1)
      throw TypeError(op_message(kOp,
                                 "Gather op can only collapse slice dims with bound 1 or 0, "
                                 "but bound is " +
                                     std::to_string(a.slice_sizes[d]) + " for index " +
                                     std::to_string(d) + " at position " +
                                     "in collapsed_slice_dims " +
                                     dims_str(dn.collapsed_slice_dims) + "."));
  for (int64_t d : dn.operand_batching_dims)
    if (a.slice_sizes[d] > 1)
      throw TypeError(op_message(kOp,
                                 "Gather op can only have operand batching dims with bound "
                                 "0/1, but bound is " +
                                     std::to_string(a.slice_sizes[d]) + " for index " +
                                     std::to_string(d) + "."));
  if (static_cast<int64_t>(dn.offset_dims.size() + dn.collapsed_slice_dims.size() +
                           dn.operand_batching_dims.size()) != xr)
    throw TypeError(
        op_message(kOp,
                   "All components of the offset index in a gather op must either be a offset "
                   "dimension or explicitly collapsed/batching; got len(offset_dims)=" +
                       std::to_string(dn.offset_dims.size()) +
                       ", collapsed_slice_dims=" + dims_str(dn.collapsed_slice_dims) +
                       ", operand_batching_dims=" + dims_str(dn.operand_batching_dims) +
                       ", operand rank " + std::to_string(xr) + "."));
  Shape out(static_cast<size_t>(out_rank));
  std::vector<int64_t> window;
  for (int64_t d = 0; d < xr; ++d)
    if (!contains(dn.collapsed_slice_dims, d) && !contains(dn.operand_batching_dims, d))
      window.push_back(a.slice_sizes[d]);
  size_t wi = 0, bi = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    out[i] = contains(dn.offset_dims, i) ? window[wi++] : idx.shape[bi++];
  return {Aval{out, x.dtype, x.weak_type}};
}

// The fill of an out-of-bounds window, as one element of dtype d.
void fill_bits(DType d, const std::optional<double>& v, void* bits) {
  kernels::dispatch_dtype(d, [&]<class T>() {
    using C = kernels::compute_t<T>;
    C c;
    if (v) {
      if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
        // A float fill for an integer operand: saturate (a plain cast would be undefined).
        const double lo = static_cast<double>(std::numeric_limits<C>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<C>::max());
        c = std::isnan(*v) ? C(0)
            : *v <= lo     ? std::numeric_limits<C>::lowest()
            : *v >= hi     ? std::numeric_limits<C>::max()
                           : static_cast<C>(*v);
      } else {
        c = static_cast<C>(*v);
      }
    } else if constexpr (std::is_same_v<C, bool>) {
      c = true;
    } else if constexpr (std::is_floating_point_v<C>) {
      c = std::numeric_limits<C>::quiet_NaN();
    } else if constexpr (std::is_signed_v<C>) {
      c = std::numeric_limits<C>::lowest();
    } else {
      c = std::numeric_limits<C>::max();
    }
    const T t = kernels::store<T>(c);
    std::memcpy(bits, &t, sizeof(T));
  });
}

gather_kernels::WindowPlan gather_plan(const GatherArgs& a, const Shape& x, const Shape& idx,
                                       const Shape& out) {
  const auto& dn = a.dnums;
  gather_kernels::WindowPlan w;
  w.operand = x;
  w.window = a.slice_sizes;
  w.index_map = dn.start_index_map;
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i)
    w.batching.push_back({dn.operand_batching_dims[i], dn.start_indices_batching_dims[i]});
  w.points.assign(idx.begin(), idx.end() - 1);
  const std::vector<int64_t> ost = row_major_strides(out);
  size_t oi = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d) {
    if (contains(dn.collapsed_slice_dims, d) || contains(dn.operand_batching_dims, d)) continue;
    w.wdims.push_back(d);
    w.other_wst.push_back(ost[dn.offset_dims[oi++]]);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
    if (!contains(dn.offset_dims, i)) w.other_bst.push_back(ost[i]);
  return w;
}

std::vector<Array> gather_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                               std::span<const Aval> outs) {
  const GatherArgs a = GatherArgs::from(p);
  const Aval& oa = outs[0];
  Array out = empty_array(oa, kOp, ctx.device);
  if (oa.size() == 0) return {out};
  alignas(8) unsigned char fill[8] = {0};
  fill_bits(oa.dtype, a.fill_value, fill);
  const bool clamp =
      a.mode != GatherScatterMode::kFillOrDrop && a.mode != GatherScatterMode::kOneHot;
  gather_kernels::gather(args[0], args[1],
                         gather_plan(a, args[0].shape(), args[1].shape(), oa.shape), clamp, fill,
                         out.buffer()->data());
  return {out};
}

// Linear in the operand; the tangent's out-of-bounds windows are 0.
JvpOut gather_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                  const Params& p) {
  GatherArgs a = GatherArgs::from(p);
  Array out = bind_gather(primals[0], primals[1], a);
  if (ad::zero_tangent(primals[0], tangents[0])) return {one(out), one(Array())};
  a.fill_value = 0.0;
  return {one(out), one(bind_gather(tangents[0], primals[1], a))};
}

std::vector<Array> gather_transpose(std::span<const Array> cts, std::span<const Array> args,
                                    std::span<const Aval> arg_avals, const Params& p) {
  if (args[0].defined()) ad::bad_linearity(kOp, "the operand must be the linear input");
  if (!args[1].defined()) ad::bad_linearity(kOp, "the indices are not differentiable");
  std::vector<Array> res(2);
  if (!cts[0].defined()) return res;
  const GatherArgs a = GatherArgs::from(p);
  const Aval& xa = arg_avals[0];
  Array zeros = ad::zeros_like_aval(Aval{xa.shape, cts[0].dtype(), false});
  res[0] = bind_scatter(scatter_add_p, zeros, args[1], cts[0], scatter_of_gather(a));
  return res;
}

BatchOut gather_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                      const Params& p) {
  GatherArgs a = GatherArgs::from(p);
  auto& dn = a.dnums;
  const int64_t bo = bdims[0], bi = bdims[1];
  if (bo != kNotMapped && bi == kNotMapped) {
    // The batch axis is one more window dim of the operand, taken whole.
    Array x = batching::move_axis(args[0], bo, 0);
    dn.offset_dims = plus1(dn.offset_dims);
    dn.offset_dims.insert(dn.offset_dims.begin(), 0);
    dn.collapsed_slice_dims = plus1(dn.collapsed_slice_dims);
    dn.start_index_map = plus1(dn.start_index_map);
    dn.operand_batching_dims = plus1(dn.operand_batching_dims);
    a.slice_sizes.insert(a.slice_sizes.begin(), x.shape()[0]);
    return {one(bind_gather(x, args[1], a)), {0}};
  }
  if (bo == kNotMapped) {
    // The batch axis is one more leading point dim of the indices.
    Array idx = batching::move_axis(args[1], bi, 0);
    dn.offset_dims = plus1(dn.offset_dims);
    dn.start_indices_batching_dims = plus1(dn.start_indices_batching_dims);
    return {one(bind_gather(args[0], idx, a)), {0}};
  }
  // Both: a batching pair (operand dim 0, indices dim 0).
  Array x = batching::move_axis(args[0], bo, 0);
  Array idx = batching::move_axis(args[1], bi, 0);
  dn.offset_dims = plus1(dn.offset_dims);
  dn.collapsed_slice_dims = plus1(dn.collapsed_slice_dims);
  dn.start_index_map = plus1(dn.start_index_map);
  dn.operand_batching_dims = plus1(dn.operand_batching_dims);
  dn.operand_batching_dims.insert(dn.operand_batching_dims.begin(), 0);
  dn.start_indices_batching_dims = plus1(dn.start_indices_batching_dims);
  dn.start_indices_batching_dims.insert(dn.start_indices_batching_dims.begin(), 0);
  a.slice_sizes.insert(a.slice_sizes.begin(), x.shape()[0] == 0 ? 0 : 1);
  return {one(bind_gather(x, idx, a)), {0}};
}

// The index map of a gather: the output element at `at` is the operand element at the window
// start plus the offset coordinates, each start the index read at the point's batch coordinates
// (a symbol of the kernel: an indirect load). The output's batch dimensions (those not in
// offset_dims) are the indices' dimensions before the index vector; operand batching dims take
// their batch coordinate. CLIP and PROMISE_IN_BOUNDS clamp each start into [0, dim - size].
// FILL_OR_DROP (and ONE_HOT) clamp it into [-1, dim - size + 1] instead — one step past each end
// stands for every start outside — and select: the operand's element where every start is in
// [0, dim - size] (guards on the symbols), else the fill value.
std::optional<compiler::IndexMapResult> gather_map(std::span<const Aval> in, const Aval& out,
                                                   const Params& p,
                                                   std::span<const compiler::kir::Affine> at,
                                                   const compiler::DynamicValue& dynamic) {
  using compiler::kir::Affine;
  if (in.size() != 2 || at.size() != out.shape.size()) return std::nullopt;
  const GatherArgs a = GatherArgs::from(p);
  const bool fill =
      a.mode != GatherScatterMode::kClip && a.mode != GatherScatterMode::kPromiseInBounds;
  const auto& dn = a.dnums;
  const Shape& x = in[0].shape;
  const Shape& idx = in[1].shape;
  std::vector<Affine> batch;
  for (size_t d = 0; d < at.size(); ++d)
    if (!contains(dn.offset_dims, static_cast<int64_t>(d))) batch.push_back(at[d]);
  if (batch.size() + 1 != idx.size()) return std::nullopt;
  compiler::IndexMapResult r;
  r.point.assign(x.size(), Affine{});
  size_t w = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    const auto dd = static_cast<int64_t>(d);
    if (contains(dn.collapsed_slice_dims, dd) || contains(dn.operand_batching_dims, dd)) continue;
    r.point[d] = at[static_cast<size_t>(dn.offset_dims[w++])];
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i)
    r.point[static_cast<size_t>(dn.operand_batching_dims[i])] =
        batch[static_cast<size_t>(dn.start_indices_batching_dims[i])];
  std::vector<compiler::kir::Guard> inside;
  for (size_t j = 0; j < dn.start_index_map.size(); ++j) {
    const auto d = static_cast<size_t>(dn.start_index_map[j]);
    const int64_t last = x[d] - a.slice_sizes[d];  // the greatest start in bounds
    if (!fill && last == 0) continue;              // the window covers the dimension: start 0
    std::vector<Affine> ip = batch;
    ip.push_back(Affine::constant(static_cast<int64_t>(j), 0));
    const Affine start = fill ? dynamic(1, ip, -1, last + 1) : dynamic(1, ip, 0, last);
    if (fill) inside.push_back({start, 0, last + 1});
    r.point[d] = r.point[d] + start;
  }
  if (!fill) return r;
  compiler::IndexMapResult sel;
  sel.kind = compiler::IndexMapResult::Kind::kSelect;
  sel.pieces.push_back({0, r.point, inside});
  uint64_t bits = 0;
  fill_bits(out.dtype, a.fill_value, &bits);
  compiler::IndexMapPiece filled;
  filled.constant = compiler::kir::read_element(&bits, out.dtype, 0);
  sel.pieces.push_back(std::move(filled));
  return sel;
}

}  // namespace

Params GatherArgs::params() const {
  Params p{{"dimension_numbers", dnums.to_param()},
           {"slice_sizes", slice_sizes},
           {"indices_are_sorted", indices_are_sorted},
           {"unique_indices", unique_indices},
           {"mode", to_param(mode)}};
  if (fill_value) p.set("fill_value", *fill_value);
  return p;
}

GatherArgs GatherArgs::from(const Params& p) {
  GatherArgs a;
  a.dnums = GatherDimensionNumbers::from_param(
      p.get_record("dimension_numbers", kGatherDimensionNumbersDef));
  a.slice_sizes = p.get_ints("slice_sizes");
  a.indices_are_sorted = p.get_bool("indices_are_sorted");
  a.unique_indices = p.get_bool("unique_indices");
  a.mode = static_cast<GatherScatterMode>(p.get_enum("mode", kGatherScatterModeDef));
  if (p.has("fill_value")) a.fill_value = p.get<double>("fill_value");
  return a;
}

Array bind_gather(const Array& operand, const Array& indices, const GatherArgs& a) {
  return bind1(gather_p, {operand, indices}, a.params());
}

ScatterArgs scatter_of_gather(const GatherArgs& g) {
  ScatterArgs s;
  s.dnums.update_window_dims = g.dnums.offset_dims;
  s.dnums.inserted_window_dims = g.dnums.collapsed_slice_dims;
  s.dnums.scatter_dims_to_operand_dims = g.dnums.start_index_map;
  s.dnums.operand_batching_dims = g.dnums.operand_batching_dims;
  s.dnums.scatter_indices_batching_dims = g.dnums.start_indices_batching_dims;
  s.indices_are_sorted = g.indices_are_sorted;
  s.unique_indices = g.unique_indices;
  s.mode = g.mode;
  return s;
}

void register_gather() {
  gather_p.kind = PrimitiveKind::kIndexMap;
  gather_p.signature = Signature::fixed(
      2, {{"dimension_numbers", ParamKind::kRecord, true, nullptr, &kGatherDimensionNumbersDef},
          {"slice_sizes", ParamKind::kInts},
          {"indices_are_sorted", ParamKind::kBool},
          {"unique_indices", ParamKind::kBool},
          {"mode", ParamKind::kEnum, true, &kGatherScatterModeDef},
          {"fill_value", ParamKind::kFloat, false}});
  gather_p.abstract_eval = gather_abstract;
  gather_p.impl = gather_impl;
  gather_p.jvp = gather_jvp;
  gather_p.transpose = gather_transpose;
  gather_p.batch = gather_batch;
  compiler::register_index_map(gather_p, compiler::DynamicIndexMapRule(gather_map));
  register_primitive(gather_p);
}

}  // namespace tessera::prims
