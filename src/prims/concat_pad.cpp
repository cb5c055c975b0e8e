// concatenate(*operands) {dimension} and pad(x, padding_value) {padding_config: flat
// (low, high, interior) per dim; low/high may be negative (cropping)}, with JAX's rules
// (jax/_src/lax/lax.py): both are linear; concatenate transposes to slices, pad to a slice
// of the cropped/padded cotangent (and the padding value gets what the operand did not).
#include <algorithm>
#include <optional>
#include <string>

#include "compiler/index_map.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/prims.h"
#include "prims/slicing_kernels.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive concatenate("concatenate");
Primitive pad("pad");

namespace {

using ad::JvpOut;
using ad::one;
using batching::BatchOut;
using batching::kNotMapped;

// ---------------------------------------------------------------- concatenate

std::vector<Aval> concatenate_abstract(std::span<const Aval> in, const Params& p) {
  const char* op = "concatenate";
  const int64_t dim = p.get_int("dimension");
  if (in.empty())
    throw TypeError(op_message(op, "concatenate expects at least one operand, got 0."));
  for (const Aval& a : in) {
    if (a.dtype != in[0].dtype) {
      std::string dts;
      for (size_t i = 0; i < in.size(); ++i)
        dts += (i ? ", " : "") + std::string(dtype_name(in[i].dtype));
      throw TypeError(
          op_message(op, "lax.concatenate requires arguments to have the same dtypes, got " + dts +
                             "; convert the operands to one dtype first."));
    }
    if (a.ndim() != in[0].ndim())
      throw TypeError(
          op_message(op, "Cannot concatenate arrays with different numbers of dimensions: got " +
                             kernels::shapes_list(in) + "."));
  }
  const int64_t nd = in[0].ndim();
  if (dim < 0 || dim >= nd)
    throw TypeError(op_message(
        op, "concatenate dimension out of bounds: dimension " + std::to_string(dim) +
                " for shapes " + kernels::shapes_list(in) + "; pass a dimension in [0, rank)."));
  Shape out = in[0].shape;
  out[dim] = 0;
  bool weak = true;
  for (const Aval& a : in) {
    for (int64_t d = 0; d < nd; ++d) {
      if (d != dim && a.shape[d] != in[0].shape[d])
        throw TypeError(op_message(
            op,
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one "
            "being concatenated: concatenating along dimension " +
                std::to_string(dim) + " for shapes " + kernels::shapes_list(in) + "."));
    }
    out[dim] += a.shape[dim];
    weak = weak && a.weak_type;
  }
  return {Aval{out, in[0].dtype, weak}};
}

std::vector<Array> concatenate_impl(const ExecContext& ctx, std::span<const Array> args,
                                    const Params& p, std::span<const Aval> outs) {
  const Aval& oa = outs[0];
  if (args.size() == 1) return {Array(oa, args[0].buffer())};
  const int64_t dim = p.get_int("dimension");
  Array out = empty_array(oa, "concatenate", ctx.device);
  if (oa.size() == 0) return {out};
  const std::vector<int64_t> ost = row_major_strides(oa.shape);
  int64_t offset = 0;
  for (const Array& a : args) {
    slicing_kernels::CopyPlan plan;
    plan.dims = a.shape();
    plan.in_st = row_major_strides(a.shape());
    plan.out_st = ost;
    plan.out_off = offset * ost[dim];
    slicing_kernels::strided_copy(a.raw_data(), out.buffer()->data(), itemsize(oa.dtype), plan);
    offset += a.shape()[dim];
  }
  return {out};
}

JvpOut concatenate_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                       const Params& p) {
  Array out = bind1(concatenate, primals, p);
  bool any = false;
  for (const Array& t : tangents) any = any || t.defined();
  if (!any || !is_inexact(out.dtype())) return {one(out), one(Array())};
  std::vector<Array> ts;
  for (size_t i = 0; i < primals.size(); ++i)
    ts.push_back(ad::instantiate(tangents[i], primals[i].aval()));
  return {one(out), one(bind1(concatenate, std::span<const Array>(ts), p))};
}

// Each linear operand gets its slice of the cotangent.
std::vector<Array> concatenate_transpose(std::span<const Array> cts, std::span<const Array> args,
                                         std::span<const Aval> arg_avals, const Params& p) {
  const Array& ct = cts[0];
  const int64_t dim = p.get_int("dimension");
  std::vector<Array> res(args.size());
  int64_t offset = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const int64_t n = arg_avals[i].shape[dim];
    if (!args[i].defined()) {
      std::vector<int64_t> start(ct.ndim(), 0), limit(ct.shape().begin(), ct.shape().end());
      start[dim] = offset;
      limit[dim] = offset + n;
      res[i] = lax::slice(ct, start, limit);
    }
    offset += n;
  }
  return res;
}

// Batched operands meet at their most common batch position; unbatched ones are broadcast
// there (concatenate cannot broadcast by itself).
BatchOut concatenate_batch(const BatchAxis&, std::span<const Array> args,
                           std::span<const int64_t> bdims, const Params& p) {
  const int64_t B = batching::batch_size(args, bdims);
  int64_t rank = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (bdims[i] != kNotMapped) rank = args[i].ndim() - 1;
  }
  const int64_t pos = batching::common_dim(args, bdims, rank);
  std::vector<Array> xs;
  for (size_t i = 0; i < args.size(); ++i)
    xs.push_back(batching::batch_at(args[i], bdims[i], B, pos));
  const int64_t dim = batching::shift_dim(p.get_int("dimension"), pos);
  return {one(lax::concatenate(xs, dim)), {pos}};
}

// ---------------------------------------------------------------- pad

std::vector<lax::PadConfig> pad_config(const Params& p) {
  const auto& flat = p.get_ints("padding_config");
  std::vector<lax::PadConfig> cfg(flat.size() / 3);
  for (size_t d = 0; d < cfg.size(); ++d) cfg[d] = {flat[3 * d], flat[3 * d + 1], flat[3 * d + 2]};
  return cfg;
}

std::string config_str(const std::vector<int64_t>& flat) {
  std::string s = "(";
  for (size_t d = 0; d + 2 < flat.size(); d += 3) {
    s += (d ? ", (" : "(") + std::to_string(flat[d]) + ", " + std::to_string(flat[d + 1]) + ", " +
         std::to_string(flat[d + 2]) + ")";
  }
  return s + (flat.size() == 3 ? ",)" : ")");
}

std::vector<Aval> pad_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("pad", in, 2);
  const Aval& x = in[0];
  const Aval& v = in[1];
  const char* op = "pad";
  const auto& flat = p.get_ints("padding_config");
  if (v.dtype != x.dtype)
    throw TypeError(op_message(op, "pad operand and padding_value must be same dtype: got " +
                                       std::string(dtype_name(x.dtype)) + " and " +
                                       std::string(dtype_name(v.dtype)) + "."));
  if (v.ndim() != 0)
    throw TypeError(op_message(op, "pad padding_value must be a scalar (rank 0), got " + v.str() +
                                       "; pass one value of the operand's dtype."));
  if (flat.size() % 3 != 0 || static_cast<int64_t>(flat.size() / 3) != x.ndim())
    throw ValueError(
        op_message(op,
                   "length of padding_config must equal the number of axes of operand, got "
                   "padding_config " +
                       config_str(flat) + " for operand shape " + shape_str(x.shape) +
                       "; pass one (low, high, interior) per dimension."));
  const std::vector<lax::PadConfig> cfg = pad_config(p);
  for (const auto& c : cfg) {
    if (c.interior < 0)
      throw ValueError(op_message(
          op, "interior padding in padding_config must be nonnegative, got padding_config " +
                  config_str(flat) + "."));
  }
  Shape out(cfg.size());
  bool bad = false;
  for (size_t d = 0; d < cfg.size(); ++d) {
    const int64_t n = x.shape[d];
    // Checked: a huge interior or edge must say what overflowed, not wrap to a valid-looking size.
    const std::string what = "padded size of dimension " + std::to_string(d) + " (padding_config " +
                             config_str(flat) + ", operand shape " + shape_str(x.shape) + ")";
    int64_t size = checked_add(
        op, n, checked_mul(op, std::max<int64_t>(0, n - 1), cfg[d].interior, what), what);
    size = checked_add(op, checked_add(op, size, cfg[d].low, what), cfg[d].high, what);
    out[d] = size;
    bad = bad || out[d] < 0;
  }
  if (bad)
    throw ValueError(
        op_message(op, "Dimension size after padding is not at least 0, got result shape " +
                           shape_str(out) + ", for padding_config " + config_str(flat) +
                           " and operand shape " + shape_str(x.shape) + "; crop less."));
  return {Aval{out, x.dtype, x.weak_type && v.weak_type}};
}

std::vector<Array> pad_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                            std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  const std::vector<lax::PadConfig> cfg = pad_config(p);
  bool none = true;
  for (const auto& c : cfg) none = none && c.low == 0 && c.high == 0 && c.interior == 0;
  if (none) return {Array(oa, x.buffer())};
  Array out = empty_array(oa, "pad", ctx.device);
  if (oa.size() == 0) return {out};
  const size_t elem = itemsize(oa.dtype);
  slicing_kernels::fill(out.buffer()->data(), args[1].raw_data(), elem, oa.size());
  // The operand entries that land inside the output: i with 0 <= low + i*(interior+1) < out.
  slicing_kernels::CopyPlan plan;
  plan.in_st = row_major_strides(x.shape());
  plan.out_st = row_major_strides(oa.shape);
  for (size_t d = 0; d < cfg.size(); ++d) {
    // 128-bit: low may be near INT64_MIN (cropping) when high makes up for it.
    using i128 = __int128;
    const i128 s = i128{cfg[d].interior} + 1, lo = cfg[d].low, n = x.shape()[d];
    const i128 first = lo >= 0 ? 0 : (-lo + s - 1) / s;
    const i128 room = i128{oa.shape[d]} - lo;  // positions p - lo available past low
    const i128 end = room <= 0 ? 0 : std::min<i128>(n, (room + s - 1) / s);
    const i128 count = std::max<i128>(0, end - first);
    plan.dims.push_back(static_cast<int64_t>(count));
    if (count == 0) continue;  // nothing lands: no offsets to compute (they may not fit)
    plan.in_off += static_cast<int64_t>(first) * plan.in_st[d];
    plan.out_off += static_cast<int64_t>(lo + first * s) * plan.out_st[d];
    if (count > 1) plan.out_st[d] *= static_cast<int64_t>(s);  // one entry: the step is unused
  }
  slicing_kernels::strided_copy(x.raw_data(), out.buffer()->data(), elem, plan);
  return {out};
}

// Linear in (operand, padding_value) jointly.
JvpOut pad_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  Array out = bind1(pad, primals, p);
  const bool zx = !tangents[0].defined(), zv = !tangents[1].defined();
  if ((zx && zv) || !is_inexact(out.dtype())) return {one(out), one(Array())};
  Array tx = ad::instantiate(tangents[0], primals[0].aval());
  Array tv = ad::instantiate(tangents[1], primals[1].aval());
  return {one(out), one(bind1(pad, {tx, tv}, p))};
}

// Operand: crop/uncrop the edges (a pad by -low, -high), then take every (interior+1)-th entry;
// padding value: everything else, sum(ct) - sum(operand's part) (JAX's _pad_transpose).
std::vector<Array> pad_transpose(std::span<const Array> cts, std::span<const Array> args,
                                 std::span<const Aval> arg_avals, const Params& p) {
  const Array& ct = cts[0];
  const std::vector<lax::PadConfig> cfg = pad_config(p);
  std::vector<lax::PadConfig> unpad(cfg.size());
  std::vector<int64_t> starts(cfg.size(), 0), strides(cfg.size(), 1);
  bool strided = false;
  for (size_t d = 0; d < cfg.size(); ++d) {
    unpad[d] = {-cfg[d].low, -cfg[d].high, 0};
    strides[d] = cfg[d].interior + 1;
    strided = strided || strides[d] != 1;
  }
  Array unpadded = lax::pad(ct, ad::scalar_const(0.0, ct.dtype()), unpad);
  Array t_op =
      lax::slice(unpadded, starts, unpadded.shape(), strided ? strides : std::vector<int64_t>{});
  std::vector<Array> res(2);
  if (!args[0].defined()) res[0] = t_op;
  if (!args[1].defined()) {
    std::vector<int64_t> all(static_cast<size_t>(ct.ndim()));
    for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
    res[1] = lax::sub(lax::reduce_sum(ct, all), lax::reduce_sum(t_op, all));
    if (res[1].dtype() != arg_avals[1].dtype)
      res[1] = lax::convert_element_type(res[1], arg_avals[1].dtype);
  }
  return res;
}

// An unbatched padding value: the batch axis is not padded. A batched one: pad with zeros and
// select each example's value where the padding is (a mask padded the same way).
BatchOut pad_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                   const Params& p) {
  const int64_t B = batching::batch_size(args, bdims);
  const std::vector<lax::PadConfig> cfg = pad_config(p);
  const Array& v = args[1];
  if (bdims[1] == kNotMapped) {
    const int64_t b = bdims[0];
    std::vector<lax::PadConfig> c2 = cfg;
    c2.insert(c2.begin() + b, lax::PadConfig{});
    return {one(lax::pad(args[0], v, c2)), {b}};
  }
  const int64_t b = bdims[0] == kNotMapped ? 0 : bdims[0];
  Array x = batching::batch_at(args[0], bdims[0], B, b);
  Shape logical = x.shape();
  logical.erase(logical.begin() + b);
  std::vector<lax::PadConfig> c2 = cfg;
  c2.insert(c2.begin() + b, lax::PadConfig{});
  Array y = lax::pad(x, ad::scalar_const(0.0, x.dtype()), c2);
  Array mask = lax::pad(ad::full_like_aval(Aval{logical, DType::kBool, false}, 1.0),
                        ad::scalar_const(0.0, DType::kBool), cfg);
  std::vector<int64_t> mdims;
  for (int64_t d = 0; d < y.ndim(); ++d)
    if (d != b) mdims.push_back(d);
  mask = lax::broadcast_in_dim(mask, y.shape(), mdims);
  Array vb = lax::broadcast_in_dim(v, y.shape(), {b});
  return {one(lax::select_n(mask, {vb, y})), {b}};
}

// ---------------------------------------------------------------- index maps

// Operand k's element at the output point moved back by its offset along the axis, for the
// first operand whose range along the axis holds the point.
std::optional<compiler::IndexMapResult> concatenate_map(std::span<const Aval> in, const Aval&,
                                                        const Params& p,
                                                        std::span<const compiler::kir::Affine> at) {
  const size_t dim = static_cast<size_t>(p.get_int("dimension"));
  if (dim >= at.size()) return std::nullopt;
  compiler::IndexMapResult r;
  r.kind = compiler::IndexMapResult::Kind::kSelect;
  int64_t offset = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const int64_t n = in[k].shape[dim];
    if (n > 0) {
      compiler::IndexMapPiece piece;
      piece.operand = k;
      piece.point.assign(at.begin(), at.end());
      piece.point[dim].offset -= offset;
      // The last piece's guard keeps its loads inside it; it is selected where the others fail.
      piece.guards.push_back({at[dim], offset, offset + n});
      r.pieces.push_back(std::move(piece));
    }
    offset += n;
  }
  if (r.pieces.empty()) return std::nullopt;
  return r;
}

// The operand's element where the point lies inside it, else the padding value. Interior
// padding is not an affine map: such pads stay eager.
std::optional<compiler::IndexMapResult> pad_map(std::span<const Aval> in, const Aval&,
                                                const Params& p,
                                                std::span<const compiler::kir::Affine> at) {
  const std::vector<lax::PadConfig> cfg = pad_config(p);
  if (cfg.size() != at.size()) return std::nullopt;
  compiler::IndexMapPiece inside;
  for (size_t d = 0; d < cfg.size(); ++d) {
    if (cfg[d].interior != 0) return std::nullopt;
    compiler::kir::Affine a = at[d];
    a.offset -= cfg[d].low;
    inside.point.push_back(a);
    inside.guards.push_back({at[d], cfg[d].low, cfg[d].low + in[0].shape[d]});
  }
  compiler::IndexMapResult r;
  r.kind = compiler::IndexMapResult::Kind::kSelect;
  if (in[0].size() > 0) r.pieces.push_back(std::move(inside));
  r.pieces.push_back({1, {}, {}});
  return r;
}

}  // namespace

void register_concat_pad() {
  for (Primitive* p : {&concatenate, &pad}) p->kind = PrimitiveKind::kIndexMap;
  // The rule reports a call without operands in its own words.
  concatenate.signature = Signature::at_least(0, {{"dimension", ParamKind::kInt}});
  pad.signature =
      Signature::fixed(2, {{"padding_config", ParamKind::kInts}});  // (lo, hi, interior)*
  concatenate.abstract_eval = concatenate_abstract;
  concatenate.impl = concatenate_impl;
  concatenate.jvp = concatenate_jvp;
  concatenate.transpose = concatenate_transpose;
  concatenate.batch = concatenate_batch;
  pad.abstract_eval = pad_abstract;
  pad.impl = pad_impl;
  pad.jvp = pad_jvp;
  pad.transpose = pad_transpose;
  pad.batch = pad_batch;
  compiler::register_index_map(concatenate, concatenate_map);
  compiler::register_index_map(pad, pad_map);
  register_primitive(concatenate);
  register_primitive(pad);
}

}  // namespace tessera::prims
