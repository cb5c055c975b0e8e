// squeeze {dimensions} (removes size-1 dims; the bytes stay, like reshape) and rev
// {dimensions} (reverses along dims), with their JVP, transpose and batching rules (JAX's
// jax/_src/lax/lax.py: both are linear and their own tangent maps).
#include <algorithm>
#include <string>

#include "compiler/index_map.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/prims.h"
#include "prims/slicing_kernels.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive squeeze("squeeze");
Primitive rev("rev");

namespace {

using ad::one;

using batching::BatchOut;

// ---------------------------------------------------------------- squeeze

// The dims to squeeze, canonical (negative dims count from the end, as lax.squeeze accepts)
// and sorted; ValueError for dims out of range, repeated, or of size other than 1.
std::vector<int64_t> squeeze_dims(const Aval& x, const std::vector<int64_t>& dims) {
  const int64_t nd = x.ndim();
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    if (d < -nd || d >= nd)
      throw ValueError(op_message("squeeze", "dimensions outside range [0, ndim): got dimensions " +
                                                 shape_str(dims) + " for an operand of shape " +
                                                 x.str() + "; pass dimensions in [-ndim, ndim)"));
    out.push_back(d < 0 ? d + nd : d);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ValueError(op_message(
        "squeeze", "dimensions are not unique: " + shape_str(dims) + "; name each dimension once"));
  for (int64_t d : out) {
    if (x.shape[d] != 1)
      throw ValueError(op_message(
          "squeeze",
          "cannot select an axis to squeeze out which has size not equal to one, got shape=" +
              shape_str(x.shape) + " and dimensions=" + shape_str(dims) +
              "; squeeze only size-1 dimensions (use reshape or a reduction for others)"));
  }
  return out;
}

std::vector<Aval> squeeze_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("squeeze", in, 1);
  const Aval& x = in[0];
  const std::vector<int64_t> dims = squeeze_dims(x, p.get_ints("dimensions"));
  Shape shape;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) shape.push_back(x.shape[d]);
  return {Aval{shape, x.dtype, x.weak_type}};
}

std::vector<Array> squeeze_impl(const ExecContext&, std::span<const Array> args, const Params&,
                                std::span<const Aval> outs) {
  return {Array(outs[0], args[0].buffer())};  // row-major: the same bytes
}

std::pair<std::vector<Array>, std::vector<Array>> squeeze_jvp(std::span<const Array> primals,
                                                              std::span<const Array> tangents,
                                                              const Params& p) {
  const auto& dims = p.get_ints("dimensions");
  return ad::linear_jvp(primals, tangents, [&](const Array& x) {
    return bind1(squeeze, {x}, Params{{"dimensions", dims}});
  });
}

// The cotangent gets the squeezed size-1 dims back: a reshape (JAX's expand_dims).
std::vector<Array> squeeze_transpose(std::span<const Array> cts, std::span<const Array>,
                                     std::span<const Aval> arg_avals, const Params&) {
  return one(lax::reshape(cts[0], arg_avals[0].shape));
}

// The batch axis stays where it is; the squeezed dims shift past it.
BatchOut squeeze_batch(const BatchAxis&, std::span<const Array> args,
                       std::span<const int64_t> bdims, const Params& p) {
  const Array& x = args[0];
  const int64_t b = bdims[0];
  Aval logical = x.aval();
  logical.shape.erase(logical.shape.begin() + b);
  const std::vector<int64_t> dims = squeeze_dims(logical, p.get_ints("dimensions"));
  int64_t out_b = b;
  for (int64_t d : dims)
    if (d < b) --out_b;
  return {one(bind1(squeeze, {x}, Params{{"dimensions", batching::shift_dims(dims, b)}})), {out_b}};
}

// ---------------------------------------------------------------- rev

void check_rev_dims(const Aval& x, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d < 0 || d >= x.ndim())
      throw ValueError(op_message("rev", "rev dimensions must all be in the range [0, " +
                                             std::to_string(x.ndim()) + "), got dimensions " +
                                             shape_str(dims) + " for an operand of shape " +
                                             x.str()));
  }
  std::vector<int64_t> s = dims;
  std::sort(s.begin(), s.end());
  if (std::adjacent_find(s.begin(), s.end()) != s.end())
    throw ValueError(op_message("rev", "rev dimensions must be unique, got " + shape_str(dims) +
                                           "; name each dimension once"));
}

std::vector<Aval> rev_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("rev", in, 1);
  check_rev_dims(in[0], p.get_ints("dimensions"));
  return {in[0]};
}

std::vector<Array> rev_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                            std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  const auto& dims = p.get_ints("dimensions");
  bool moves = false;
  for (int64_t d : dims) moves = moves || x.shape()[d] > 1;
  if (!moves || oa.size() == 0) return {Array(oa, x.buffer())};  // nothing changes place
  Array out = empty_array(oa, "rev", ctx.device);
  slicing_kernels::CopyPlan plan;
  plan.dims = oa.shape;
  plan.out_st = row_major_strides(oa.shape);
  plan.in_st = plan.out_st;
  for (int64_t d : dims) {
    plan.in_off += (oa.shape[d] - 1) * plan.in_st[d];
    plan.in_st[d] = -plan.in_st[d];
  }
  slicing_kernels::strided_copy(x.raw_data(), out.buffer()->data(), itemsize(oa.dtype), plan);
  return {out};
}

std::pair<std::vector<Array>, std::vector<Array>> rev_jvp(std::span<const Array> primals,
                                                          std::span<const Array> tangents,
                                                          const Params& p) {
  const auto& dims = p.get_ints("dimensions");
  return ad::linear_jvp(primals, tangents, [&](const Array& x) { return lax::rev(x, dims); });
}

std::vector<Array> rev_transpose(std::span<const Array> cts, std::span<const Array>,
                                 std::span<const Aval>, const Params& p) {
  return one(lax::rev(cts[0], p.get_ints("dimensions")));
}

BatchOut rev_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                   const Params& p) {
  const int64_t b = bdims[0];
  return {one(lax::rev(args[0], batching::shift_dims(p.get_ints("dimensions"), b))), {b}};
}

// Index maps (compiler/index_map.h). squeeze: the squeezed coordinates are 0.
std::optional<compiler::IndexMapResult> squeeze_map(std::span<const Aval> in, const Aval&,
                                                    const Params& p,
                                                    std::span<const compiler::kir::Affine> at) {
  const auto rank = static_cast<int64_t>(in[0].shape.size());
  std::vector<bool> gone(static_cast<size_t>(rank), false);
  for (int64_t d : p.get_ints("dimensions")) gone[static_cast<size_t>(d < 0 ? d + rank : d)] = true;
  const size_t n = at.empty() ? 0 : at[0].coeff.size();
  compiler::IndexMapResult r;
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d)
    r.point.push_back(gone[static_cast<size_t>(d)] ? compiler::kir::Affine::constant(0, n)
                                                   : at[k++]);
  return r;
}

// rev: coordinate d of a reversed dimension is (n - 1) - i[d].
std::optional<compiler::IndexMapResult> rev_map(std::span<const Aval> in, const Aval&,
                                                const Params& p,
                                                std::span<const compiler::kir::Affine> at) {
  const Shape& s = in[0].shape;
  const auto rank = static_cast<int64_t>(s.size());
  compiler::IndexMapResult r;
  r.point.assign(at.begin(), at.end());
  for (int64_t d : p.get_ints("dimensions")) {
    const auto k = static_cast<size_t>(d < 0 ? d + rank : d);
    compiler::kir::Affine a = at[k].scaled(-1);
    a.offset += s[k] - 1;
    r.point[k] = std::move(a);
  }
  return r;
}

}  // namespace

void register_squeeze_rev() {
  for (Primitive* p : {&squeeze, &rev}) p->kind = PrimitiveKind::kIndexMap;
  squeeze.signature = Signature::fixed(1, {{"dimensions", ParamKind::kInts}});
  rev.signature = Signature::fixed(1, {{"dimensions", ParamKind::kInts}});
  squeeze.abstract_eval = squeeze_abstract;
  squeeze.impl = squeeze_impl;
  squeeze.jvp = squeeze_jvp;
  squeeze.transpose = squeeze_transpose;
  squeeze.batch = squeeze_batch;
  rev.abstract_eval = rev_abstract;
  rev.impl = rev_impl;
  rev.jvp = rev_jvp;
  rev.transpose = rev_transpose;
  rev.batch = rev_batch;
  compiler::register_index_map(squeeze, squeeze_map);
  compiler::register_index_map(rev, rev_map);
  register_primitive(squeeze);
  register_primitive(rev);
}

}  // namespace tessera::prims
