// slice {start_indices, limit_indices, strides (empty = all 1)}, dynamic_slice(x, *starts)
// {slice_sizes} and dynamic_update_slice(x, update, *starts), with JAX's rules
// (jax/_src/lax/slicing.py). Dynamic starts are rank-0 integers of any integer dtype, clamped
// into [0, dim - size] as XLA does.
//
// Batching with batched start indices becomes one gather (dynamic_slice) or one scatter
// (dynamic_update_slice) in CLIP mode, which clamps each example's window start exactly as
// dynamic_slice clamps its starts; the batch is a batching pair when the operand is batched.
#include <algorithm>
#include <bit>
#include <string>

#include "compiler/index_map.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/gather_scatter.h"
#include "prims/prims.h"
#include "prims/slicing_kernels.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive slice("slice");
Primitive dynamic_slice("dynamic_slice");
Primitive dynamic_update_slice("dynamic_update_slice");

namespace {

using ad::JvpOut;
using ad::one;
using ad::zero_tangent;
using batching::BatchOut;
using batching::kNotMapped;

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

// Binds without the lax wrappers' start normalization (the rules' indices are already final).
Array bind_ds(const Array& x, std::span<const Array> starts, const std::vector<int64_t>& sizes) {
  std::vector<Array> args{x};
  args.insert(args.end(), starts.begin(), starts.end());
  return bind1(dynamic_slice, std::span<const Array>(args), Params{{"slice_sizes", sizes}});
}

Array bind_dus(const Array& x, const Array& u, std::span<const Array> starts) {
  std::vector<Array> args{x, u};
  args.insert(args.end(), starts.begin(), starts.end());
  return bind1(dynamic_update_slice, std::span<const Array>(args));
}

// ---------------------------------------------------------------- slice

std::vector<int64_t> slice_strides(const Params& p, size_t n) {
  const auto& s = p.get_ints("strides");
  return s.empty() ? std::vector<int64_t>(n, 1) : s;
}

std::vector<Aval> slice_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("slice", in, 1);
  const Aval& x = in[0];
  const auto& start = p.get_ints("start_indices");
  const auto& limit = p.get_ints("limit_indices");
  const auto& st = p.get_ints("strides");
  const char* op = "slice";
  const size_t nd = x.shape.size();
  if (start.size() != nd)
    throw TypeError(
        op_message(op,
                   "slice start_indices must have length equal to the number of dimensions of the "
                   "operand, got indices " +
                       ints_str(start) + " for operand shape " + shape_str(x.shape) + "."));
  if (limit.size() != start.size())
    throw TypeError(
        op_message(op,
                   "slice limit_indices must have the same length as start_indices, got "
                   "start_indices " +
                       ints_str(start) + " and limit_indices " + ints_str(limit) + "."));
  for (size_t d = 0; d < nd; ++d) {
    if (limit[d] > x.shape[d])
      throw TypeError(
          op_message(op,
                     "slice limit_indices must be less than or equal to operand shape, got "
                     "limit_indices " +
                         ints_str(limit) + " for operand shape " + shape_str(x.shape) + "."));
  }
  for (int64_t s : start) {
    if (s < 0)
      throw TypeError(op_message(
          op, "slice start_indices must be greater than or equal to zero, got start_indices " +
                  ints_str(start) + "."));
  }
  for (size_t d = 0; d < nd; ++d) {
    if (limit[d] < start[d])
      throw TypeError(
          op_message(op,
                     "slice limit_indices must be greater than or equal to start_indices, got "
                     "start_indices " +
                         ints_str(start) + " and limit_indices " + ints_str(limit) + "."));
  }
  if (!st.empty()) {
    if (st.size() != nd)
      throw TypeError(
          op_message(op,
                     "slice strides must have length equal to the number of dimensions of the "
                     "operand, got strides " +
                         ints_str(st) + " for operand shape " + shape_str(x.shape) +
                         " (pass no strides for all 1)."));
    for (int64_t s : st) {
      if (s <= 0)
        throw TypeError(
            op_message(op, "slice strides must be positive, got " + ints_str(st) + "."));
    }
  }
  const std::vector<int64_t> strides = slice_strides(p, nd);
  Shape out(nd);
  // ceil((limit - start) / stride) without forming limit - start + stride - 1 (a huge stride).
  for (size_t d = 0; d < nd; ++d) {
    const int64_t span = limit[d] - start[d];  // 0 <= start <= limit <= dim
    out[d] = span == 0 ? 0 : 1 + (span - 1) / strides[d];
  }
  return {Aval{out, x.dtype, x.weak_type}};
}

std::vector<Array> slice_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                              std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  if (oa.shape == x.shape()) return {Array(oa, x.buffer())};  // the whole operand
  Array out = empty_array(oa, "slice", ctx.device);
  const auto& start = p.get_ints("start_indices");
  const std::vector<int64_t> strides = slice_strides(p, oa.shape.size());
  slicing_kernels::CopyPlan plan;
  plan.dims = oa.shape;
  plan.out_st = row_major_strides(oa.shape);
  plan.in_st = row_major_strides(x.shape());
  for (size_t d = 0; d < oa.shape.size(); ++d) {
    plan.in_off += start[d] * plan.in_st[d];
    if (oa.shape[d] > 1) plan.in_st[d] *= strides[d];  // one entry: a huge stride is unused
  }
  slicing_kernels::strided_copy(x.raw_data(), out.buffer()->data(), itemsize(oa.dtype), plan);
  return {out};
}

JvpOut slice_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  return ad::linear_jvp(primals, tangents, [&](const Array& x) { return bind1(slice, {x}, p); });
}

// The cotangent goes back where it was taken from: pad with zeros, interior = stride - 1.
std::vector<Array> slice_transpose(std::span<const Array> cts, std::span<const Array>,
                                   std::span<const Aval> arg_avals, const Params& p) {
  const Array& ct = cts[0];
  const Shape& xs = arg_avals[0].shape;
  const auto& start = p.get_ints("start_indices");
  const std::vector<int64_t> strides = slice_strides(p, xs.size());
  std::vector<lax::PadConfig> cfg(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t n = ct.shape()[d];
    const int64_t real_limit = start[d] + (n == 0 ? 0 : (n - 1) * strides[d] + 1);
    cfg[d] = {start[d], xs[d] - real_limit, strides[d] - 1};
  }
  return one(lax::pad(ct, ad::scalar_const(0.0, ct.dtype()), cfg));
}

// The batch axis is sliced whole.
BatchOut slice_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                     const Params& p) {
  const Array& x = args[0];
  const int64_t b = bdims[0];
  std::vector<int64_t> start = p.get_ints("start_indices");
  std::vector<int64_t> limit = p.get_ints("limit_indices");
  std::vector<int64_t> strides = p.get_ints("strides");
  start.insert(start.begin() + b, 0);
  limit.insert(limit.begin() + b, x.shape()[b]);
  if (!strides.empty()) strides.insert(strides.begin() + b, 1);
  return {one(lax::slice(x, start, limit, strides)), {b}};
}

// ---------------------------------------------------------------- shared index checks

void check_starts(const char* op, const Aval& x, std::span<const Aval> starts) {
  if (static_cast<int64_t>(starts.size()) != x.ndim())
    throw TypeError(op_message(
        op, std::string(op) +
                " start_indices must have length equal to the number of dimensions of the "
                "operand, got " +
                std::to_string(starts.size()) + " indices for operand shape " + shape_str(x.shape) +
                "; pass one rank-0 integer index per dimension."));
  for (size_t d = 0; d < starts.size(); ++d) {
    const Aval& i = starts[d];
    if (i.ndim() != 0 || !is_integer(i.dtype))
      throw TypeError(op_message(op, std::string(op) +
                                         " start indices must be rank-0 integer arrays, got " +
                                         i.str() + " for index " + std::to_string(d) + "."));
  }
}

// The clamped starts of a concrete call.
std::vector<int64_t> clamped_starts(std::span<const Array> starts, const Shape& xs,
                                    const Shape& sizes) {
  std::vector<int64_t> out(xs.size());
  for (size_t d = 0; d < xs.size(); ++d)
    out[d] = slicing_kernels::clamp_start(slicing_kernels::index_value(starts[d]), xs[d], sizes[d]);
  return out;
}

// ---------------------------------------------------------------- dynamic_slice

std::vector<Aval> dynamic_slice_abstract(std::span<const Aval> in, const Params& p) {
  const char* op = "dynamic_slice";
  if (in.empty())  // before in[0] and in.subspan(1)
    throw TypeError(op_message(op, "takes an operand and one start index per dimension, got 0"));
  const Aval& x = in[0];
  check_starts(op, x, in.subspan(1));
  const auto& sizes = p.get_ints("slice_sizes");
  if (static_cast<int64_t>(sizes.size()) != x.ndim())
    throw TypeError(
        op_message(op,
                   "dynamic_slice slice_sizes must have the same length as start_indices, got "
                   "slice_sizes " +
                       ints_str(sizes) + " for operand shape " + shape_str(x.shape) + "."));
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > x.shape[d])
      throw TypeError(
          op_message(op,
                     "dynamic_slice slice_sizes must be less than or equal to operand shape, got "
                     "slice_sizes " +
                         ints_str(sizes) + " for operand shape " + shape_str(x.shape) + "."));
    if (sizes[d] < 0)
      throw TypeError(
          op_message(op,
                     "dynamic_slice slice_sizes must be greater than or equal to zero, got "
                     "slice_sizes " +
                         ints_str(sizes) + "."));
  }
  return {Aval{sizes, x.dtype, x.weak_type}};
}

std::vector<Array> dynamic_slice_impl(const ExecContext& ctx, std::span<const Array> args,
                                      const Params&, std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  if (oa.shape == x.shape()) return {Array(oa, x.buffer())};  // the starts clamp to 0
  Array out = empty_array(oa, "dynamic_slice", ctx.device);
  if (oa.size() == 0) return {out};
  const std::vector<int64_t> start = clamped_starts(args.subspan(1), x.shape(), oa.shape);
  slicing_kernels::CopyPlan plan;
  plan.dims = oa.shape;
  plan.out_st = row_major_strides(oa.shape);
  plan.in_st = row_major_strides(x.shape());
  for (size_t d = 0; d < start.size(); ++d) plan.in_off += start[d] * plan.in_st[d];
  slicing_kernels::strided_copy(x.raw_data(), out.buffer()->data(), itemsize(oa.dtype), plan);
  return {out};
}

// The index operands have no tangents.
JvpOut dynamic_slice_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                         const Params& p) {
  const auto& sizes = p.get_ints("slice_sizes");
  const auto starts = primals.subspan(1);
  return ad::linear_jvp(primals, tangents,
                        [&](const Array& x) { return bind_ds(x, starts, sizes); });
}

// Linear in the operand: the cotangent is written into zeros at the (same, clamped) place.
std::vector<Array> dynamic_slice_transpose(std::span<const Array> cts, std::span<const Array> args,
                                           std::span<const Aval> arg_avals, const Params&) {
  if (args[0].defined()) ad::bad_linearity("dynamic_slice", "the operand must be the linear input");
  std::vector<Array> res(args.size());
  res[0] = bind_dus(ad::zeros_like_aval(arg_avals[0]), cts[0], args.subspan(1));
  return res;
}

// ---------------------------------------------------------------- batched starts

// A start index clamped into [0, n - k] (XLA's clamp), as int32 with the batch axis at 0:
// shape (B,) for a batched index, rank 0 for an unbatched one.
Array clamped_index(const Array& s, int64_t n, int64_t k) {
  Array i = s;
  const DType d = i.dtype();
  const int64_t hi = n - k;
  if (is_signed_integer(d)) i = lax::max(i, ad::scalar_const(0.0, d));
  const int bits = static_cast<int>(itemsize(d)) * 8 - (is_signed_integer(d) ? 1 : 0);
  const bool hi_fits = bits >= 63 || hi <= (int64_t{1} << bits) - 1;
  if (hi_fits) i = lax::min(i, ad::scalar_const(static_cast<double>(hi), d));
  // Now within [0, hi] (or [0, dtype max] < hi), which int32 holds.
  if (d != DType::kInt32) i = lax::convert_element_type(i, DType::kInt32);
  return i;
}

// The starts of a batched dynamic slice/update as gather/scatter indices (B, nd): each start
// clamped into [0, dim - size] (so int32 holds it), broadcast over the batch when unbatched.
Array batched_starts(std::span<const Array> starts, std::span<const int64_t> bdims, const Array& x,
                     int64_t bx, const std::vector<int64_t>& sizes, int64_t B) {
  std::vector<Array> cols;
  for (size_t d = 0; d < starts.size(); ++d) {
    const int64_t n = x.shape()[bx == kNotMapped ? d : (static_cast<int64_t>(d) >= bx ? d + 1 : d)];
    Array s = bdims[d] == kNotMapped ? starts[d] : batching::move_axis(starts[d], bdims[d], 0);
    s = clamped_index(s, n, sizes[d]);
    if (s.ndim() == 0) s = lax::broadcast_in_dim(s, {B}, {});
    cols.push_back(lax::reshape(s, {B, 1}));
  }
  if (cols.empty()) return lax::broadcast_in_dim(ad::scalar_const(0.0, DType::kInt32), {B, 0}, {});
  return cols.size() == 1 ? cols[0] : lax::concatenate(cols, 1);
}

// The operand of the gather: its batch axis first (or unbatched).
Array batched_x_for_gather(const Array& x, int64_t bx) {
  return bx == kNotMapped ? x : batching::move_axis(x, bx, 0);
}

// Gather params reading a (sizes) window at each example's starts; with a batched operand its
// dim 0 pairs with the indices' dim 0.
GatherArgs start_gather_args(int64_t nd, const std::vector<int64_t>& sizes, bool batched_operand,
                             int64_t B) {
  GatherArgs g;
  const int64_t off = batched_operand ? 1 : 0;
  for (int64_t d = 0; d < nd; ++d) {
    g.dnums.offset_dims.push_back(d + 1);
    g.dnums.start_index_map.push_back(d + off);
  }
  if (batched_operand) {
    g.dnums.operand_batching_dims = {0};
    g.dnums.start_indices_batching_dims = {0};
    g.slice_sizes.push_back(B == 0 ? 0 : 1);
  }
  g.slice_sizes.insert(g.slice_sizes.end(), sizes.begin(), sizes.end());
  g.mode = GatherScatterMode::kClip;
  return g;
}

BatchOut dynamic_slice_batch(const BatchAxis&, std::span<const Array> args,
                             std::span<const int64_t> bdims, const Params& p) {
  const int64_t B = batching::batch_size(args, bdims);
  const Array& x = args[0];
  const int64_t bx = bdims[0];
  const auto& sizes = p.get_ints("slice_sizes");
  const int64_t nd = static_cast<int64_t>(sizes.size());
  bool batched_index = false;
  for (int64_t d = 0; d < nd; ++d) batched_index = batched_index || bdims[1 + d] != kNotMapped;
  const Array zero_i = ad::scalar_const(0.0, DType::kInt32);
  if (!batched_index) {
    // Only the operand is batched: its batch axis is sliced whole, from 0.
    std::vector<Array> starts(args.begin() + 1, args.end());
    std::vector<int64_t> s2 = sizes;
    starts.insert(starts.begin() + bx, zero_i);
    s2.insert(s2.begin() + bx, B);
    return {one(bind_ds(x, starts, s2)), {bx}};
  }
  // One gather: indices (B, nd) of clamped starts; the operand's batch, if any, is a
  // batching pair with the indices' batch.
  return {one(bind_gather(batched_x_for_gather(x, bx),
                          batched_starts(args.subspan(1), bdims.subspan(1), x, bx, sizes, B),
                          start_gather_args(nd, sizes, bx != kNotMapped, B))),
          {0}};
}

// ---------------------------------------------------------------- dynamic_update_slice

std::vector<Aval> dynamic_update_slice_abstract(std::span<const Aval> in, const Params&) {
  const char* op = "dynamic_update_slice";
  if (in.size() < 2)  // before in[1] and in.subspan(2)
    throw TypeError(op_message(op,
                               "takes an operand, an update and one start index per "
                               "dimension, got " +
                                   std::to_string(in.size()) + " operands"));
  const Aval& x = in[0];
  const Aval& u = in[1];
  if (u.dtype != x.dtype)
    throw TypeError(op_message(
        op, "lax.dynamic_update_slice requires arguments to have the same dtypes, got " +
                std::string(dtype_name(x.dtype)) + ", " + std::string(dtype_name(u.dtype)) +
                "; convert the update to the operand's dtype."));
  if (u.ndim() != x.ndim())
    throw TypeError(op_message(
        op, "dynamic_update_slice update must have the same rank as operand, got update shape " +
                shape_str(u.shape) + " for operand shape " + shape_str(x.shape) + "."));
  check_starts(op, x, in.subspan(2));
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (u.shape[d] > x.shape[d])
      throw TypeError(
          op_message(op,
                     "dynamic_update_slice update shape must be smaller than operand shape, got "
                     "update shape " +
                         shape_str(u.shape) + " for operand shape " + shape_str(x.shape) + "."));
  }
  return {x};
}

std::vector<Array> dynamic_update_slice_impl(const ExecContext& ctx, std::span<const Array> args,
                                             const Params&, std::span<const Aval> outs) {
  const Array& x = args[0];
  const Array& u = args[1];
  const Aval& oa = outs[0];
  if (u.shape() == x.shape()) return {Array(oa, u.buffer())};  // the update covers everything
  if (u.size() == 0) return {Array(oa, x.buffer())};           // nothing changes
  Array out = empty_array(oa, "dynamic_update_slice", ctx.device);
  const size_t elem = itemsize(oa.dtype);
  slicing_kernels::CopyPlan all;
  all.dims = {oa.size()};
  all.in_st = all.out_st = {1};
  slicing_kernels::strided_copy(x.raw_data(), out.buffer()->data(), elem, all);
  const std::vector<int64_t> start = clamped_starts(args.subspan(2), x.shape(), u.shape());
  slicing_kernels::CopyPlan plan;
  plan.dims = u.shape();
  plan.in_st = row_major_strides(u.shape());
  plan.out_st = row_major_strides(oa.shape);
  for (size_t d = 0; d < start.size(); ++d) plan.out_off += start[d] * plan.out_st[d];
  slicing_kernels::strided_copy(u.raw_data(), out.buffer()->data(), elem, plan);
  return {out};
}

// Linear in (operand, update) jointly: a symbolic zero on one side is instantiated.
JvpOut dynamic_update_slice_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                const Params&) {
  const auto starts = primals.subspan(2);
  Array out = bind_dus(primals[0], primals[1], starts);
  const bool zx = zero_tangent(primals[0], tangents[0]);
  const bool zu = zero_tangent(primals[1], tangents[1]);
  if (zx && zu) return {one(out), one(Array())};
  Array tx = zx ? ad::zeros_like_aval(primals[0].aval()) : tangents[0];
  Array tu = zu ? ad::zeros_like_aval(primals[1].aval()) : tangents[1];
  return {one(out), one(bind_dus(tx, tu, starts))};
}

// Operand: the cotangent with the window zeroed; update: the cotangent's window.
std::vector<Array> dynamic_update_slice_transpose(std::span<const Array> cts,
                                                  std::span<const Array> args,
                                                  std::span<const Aval> arg_avals, const Params&) {
  const Array& ct = cts[0];
  const auto starts = args.subspan(2);
  std::vector<Array> res(args.size());
  if (!args[0].defined())
    res[0] = bind_dus(ct, ad::zeros_like_aval(Aval{arg_avals[1].shape, ct.dtype(), false}), starts);
  if (!args[1].defined()) {
    res[1] = bind_ds(ct, starts, arg_avals[1].shape);
    if (res[1].dtype() != arg_avals[1].dtype)
      res[1] = lax::convert_element_type(res[1], arg_avals[1].dtype);
  }
  return res;
}

BatchOut dynamic_update_slice_batch(const BatchAxis&, std::span<const Array> args,
                                    std::span<const int64_t> bdims, const Params&) {
  const int64_t B = batching::batch_size(args, bdims);
  const int64_t bx = bdims[0], bu = bdims[1];
  const int64_t nd = static_cast<int64_t>(args.size()) - 2;
  bool batched_index = false;
  for (int64_t d = 0; d < nd; ++d) batched_index = batched_index || bdims[2 + d] != kNotMapped;
  if (!batched_index) {
    // Operand and update carry the batch axis at one place; its start is 0.
    const int64_t pos = bx != kNotMapped ? bx : bu;
    Array x = batching::batch_at(args[0], bx, B, pos);
    Array u = batching::batch_at(args[1], bu, B, pos);
    std::vector<Array> starts(args.begin() + 2, args.end());
    starts.insert(starts.begin() + pos, ad::scalar_const(0.0, DType::kInt32));
    return {one(bind_dus(x, u, starts)), {pos}};
  }
  // One scatter: each example's update window written at its clamped starts, the batch a
  // batching pair.
  Array x = batching::batch_at(args[0], bx, B, 0);
  Array u = batching::batch_at(args[1], bu, B, 0);
  const Shape& us = u.shape();
  std::vector<int64_t> usizes(us.begin() + 1, us.end());
  Array idx = batched_starts(args.subspan(2), bdims.subspan(2), x, 0, usizes, B);
  ScatterArgs sa;
  for (int64_t d = 1; d <= nd; ++d) {
    sa.dnums.update_window_dims.push_back(d);
    sa.dnums.scatter_dims_to_operand_dims.push_back(d);
  }
  sa.dnums.operand_batching_dims = {0};
  sa.dnums.scatter_indices_batching_dims = {0};
  sa.mode = GatherScatterMode::kClip;
  sa.indices_are_sorted = sa.unique_indices = true;
  return {one(bind_scatter(scatter_p, x, idx, u, sa)), {0}};
}

// Index map (compiler/index_map.h): operand coordinate d = start[d] + stride[d] * i[d].
std::optional<compiler::IndexMapResult> slice_map(std::span<const Aval> in, const Aval&,
                                                  const Params& p,
                                                  std::span<const compiler::kir::Affine> at) {
  const auto& start = p.get_ints("start_indices");
  const std::vector<int64_t> st = slice_strides(p, in[0].shape.size());
  compiler::IndexMapResult r;
  for (size_t d = 0; d < at.size(); ++d) {
    compiler::kir::Affine a = at[d].scaled(st[d]);
    a.offset += start[d];
    r.point.push_back(std::move(a));
  }
  return r;
}

// Operand element at the point plus the clamped starts (XLA's clamp into [0, dim - size]).
std::optional<compiler::IndexMapResult> dynamic_slice_map(std::span<const Aval> in, const Aval& out,
                                                          const Params&,
                                                          std::span<const compiler::kir::Affine> at,
                                                          const compiler::DynamicValue& dynamic) {
  const Shape& x = in[0].shape;
  if (in.size() != x.size() + 1 || at.size() != x.size()) return std::nullopt;
  compiler::IndexMapResult r;
  r.point.assign(at.begin(), at.end());
  for (size_t d = 0; d < x.size(); ++d)
    if (x[d] != out.shape[d]) r.point[d] = r.point[d] + dynamic(d + 1, {}, 0, x[d] - out.shape[d]);
  return r;
}

// The update's element where the point lies inside the (clamped) window, else the operand's.
std::optional<compiler::IndexMapResult> dynamic_update_slice_map(
    std::span<const Aval> in, const Aval&, const Params&, std::span<const compiler::kir::Affine> at,
    const compiler::DynamicValue& dynamic) {
  const Shape& x = in[0].shape;
  const Shape& u = in[1].shape;
  if (in.size() != x.size() + 2 || at.size() != x.size() || u.size() != x.size())
    return std::nullopt;
  compiler::IndexMapResult r;
  r.kind = compiler::IndexMapResult::Kind::kSelect;
  compiler::IndexMapPiece inside{1, {}, {}};
  for (size_t d = 0; d < x.size(); ++d) {
    compiler::kir::Affine p = at[d];
    if (u[d] != x[d]) p = p + dynamic(d + 2, {}, 0, x[d] - u[d]).scaled(-1);
    inside.point.push_back(p);
    inside.guards.push_back({p, 0, u[d]});
  }
  bool empty = false;
  for (int64_t n : u) empty = empty || n == 0;
  if (!empty) r.pieces.push_back(std::move(inside));
  r.pieces.push_back({0, {at.begin(), at.end()}, {}});
  return r;
}

}  // namespace

void register_slicing() {
  for (Primitive* p : {&slice, &dynamic_slice, &dynamic_update_slice})
    p->kind = PrimitiveKind::kIndexMap;
  // strides is () for unit strides. dynamic_slice takes one start index per operand dimension
  // and dynamic_update_slice two operands before them: the abstract-eval rules check the count.
  slice.signature = Signature::fixed(1, {{"start_indices", ParamKind::kInts},
                                         {"limit_indices", ParamKind::kInts},
                                         {"strides", ParamKind::kInts}});
  dynamic_slice.signature = Signature::at_least(1, {{"slice_sizes", ParamKind::kInts}});
  dynamic_update_slice.signature = Signature::at_least(2);
  slice.abstract_eval = slice_abstract;
  slice.impl = slice_impl;
  slice.jvp = slice_jvp;
  slice.transpose = slice_transpose;
  slice.batch = slice_batch;
  compiler::register_index_map(slice, slice_map);
  dynamic_slice.abstract_eval = dynamic_slice_abstract;
  dynamic_slice.impl = dynamic_slice_impl;
  dynamic_slice.jvp = dynamic_slice_jvp;
  dynamic_slice.transpose = dynamic_slice_transpose;
  dynamic_slice.batch = dynamic_slice_batch;
  compiler::register_index_map(dynamic_slice, compiler::DynamicIndexMapRule(dynamic_slice_map));
  compiler::register_index_map(dynamic_update_slice,
                               compiler::DynamicIndexMapRule(dynamic_update_slice_map));
  dynamic_update_slice.abstract_eval = dynamic_update_slice_abstract;
  dynamic_update_slice.impl = dynamic_update_slice_impl;
  dynamic_update_slice.jvp = dynamic_update_slice_jvp;
  dynamic_update_slice.transpose = dynamic_update_slice_transpose;
  dynamic_update_slice.batch = dynamic_update_slice_batch;
  register_primitive(slice);
  register_primitive(dynamic_slice);
  register_primitive(dynamic_update_slice);
}

}  // namespace tessera::prims
