// The sort primitive {dimension, is_stable, num_keys} (jax.lax's sort_p), multiple results.
//
// Eager kernel: sort_kernels.h (order-preserving integer keys, LSD radix sort for long one-key
// rows, comparison sort otherwise; rows in parallel). Always stable.
//
// Rules as JAX's, without gather:
//  - JVP: the tangents follow the primal permutation — one more sort of the primal keys with
//    the nonzero tangents appended as non-key operands (num_keys unchanged).
//  - Transpose (linear in the non-key operands only; a linear key breaks the contract): the
//    inverse permutation. perm = sort(keys..., iota)[num_keys] is where each sorted element came
//    from; sorting (perm, ct...) by perm puts every cotangent back at its origin.
//  - Batching: the operands get the batch axis at one position (unbatched ones broadcast) and
//    the dimension moves past it.
// Kind: a library call (not fusible); under jit it runs as an eager thunk.
#include "prims/sort.h"

#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/sort_kernels.h"
#include "tessera/errors.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive sort("sort", true);

namespace {

using batching::BatchOut;

std::string shapes_str(std::span<const Aval> in) {
  std::string s;
  for (const Aval& a : in) s += (s.empty() ? "" : " ") + shape_str(a.shape);
  return s;
}

std::vector<Aval> sort_abstract(std::span<const Aval> in, const Params& p) {
  const char* op = "sort";
  const int64_t dim = p.get_int("dimension");
  const int64_t nk = p.get_int("num_keys");
  if (in.empty())
    throw TypeError(op_message(op,
                               "Sort requires at least one operand; pass one or more arrays "
                               "of one shape."));
  for (const Aval& a : in) {
    if (is_extended(a.dtype))
      throw TypeError(op_message(op, "sort does not accept operands of dtype " +
                                         std::string(dtype_name(a.dtype)) +
                                         "; it sorts numbers and bools."));
    if (a.shape != in[0].shape)
      throw TypeError(op_message(op, "Arguments to sort must have equal shapes, got: " +
                                         shapes_str(in) + "; give every operand the same shape."));
  }
  if (in[0].ndim() == 0)
    throw TypeError(op_message(op, "sort requires operands of rank >= 1, got " + in[0].str() +
                                       "; reshape a scalar to shape (1,) to sort it."));
  if (dim < 0 || dim >= in[0].ndim())
    throw TypeError(op_message(op, "dimension " + std::to_string(dim) +
                                       " is out of range for operands of shape " +
                                       shape_str(in[0].shape) +
                                       "; lax takes 0 <= dimension < rank (lax.sort normalizes "
                                       "negative dimensions)."));
  if (nk < 1 || nk > static_cast<int64_t>(in.size()))
    throw TypeError(op_message(op, "num_keys=" + std::to_string(nk) +
                                       " must be between 1 and the number of operands (" +
                                       std::to_string(in.size()) + ")."));
  return {in.begin(), in.end()};
}

std::vector<Array> sort_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                             std::span<const Aval> outs) {
  std::vector<Array> res;
  res.reserve(outs.size());
  for (const Aval& a : outs) res.push_back(empty_array(a, "sort", ctx.device));
  if (outs[0].size() == 0) return res;
  const Shape& s = outs[0].shape;
  const int64_t dim = p.get_int("dimension");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= s[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(s.size()); ++d) inner *= s[d];
  std::vector<sort_kernels::Operand> ops;
  for (size_t i = 0; i < args.size(); ++i)
    ops.push_back({args[i].raw_data(), res[i].buffer()->data(), args[i].dtype()});
  sort_kernels::sort(ops, outer, s[dim], inner, p.get_int("num_keys"), ctx.device);
  return res;
}

ad::JvpOut sort_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                    const Params& p) {
  const int64_t nk = p.get_int("num_keys");
  std::vector<Array> outs = tessera::bind(sort, primals, p);
  std::vector<Array> touts(primals.size());
  std::vector<size_t> which;
  std::vector<Array> args(primals.begin(), primals.begin() + nk);
  for (size_t i = 0; i < primals.size(); ++i)
    if (!ad::zero_tangent(primals[i], tangents[i])) {
      which.push_back(i);
      args.push_back(tangents[i]);
    }
  if (which.empty()) return {std::move(outs), std::move(touts)};
  std::vector<Array> r = tessera::bind(sort, args, p);
  for (size_t j = 0; j < which.size(); ++j) touts[which[j]] = r[nk + j];
  return {std::move(outs), std::move(touts)};
}

std::vector<Array> sort_transpose(std::span<const Array> cts, std::span<const Array> args,
                                  std::span<const Aval> avals, const Params& p) {
  const int64_t nk = p.get_int("num_keys");
  const int64_t dim = p.get_int("dimension");
  for (int64_t k = 0; k < nk; ++k)
    if (!args[k].defined())
      ad::bad_linearity("sort", "sort key operand " + std::to_string(k) +
                                    " is linear; sort is linear only in its non-key operands");
  std::vector<Array> res(args.size());
  std::vector<size_t> lin;
  for (size_t i = static_cast<size_t>(nk); i < args.size(); ++i)
    if (!args[i].defined()) lin.push_back(i);
  if (lin.empty()) return res;
  const Shape& shape = avals[0].shape;
  const DType idx = shape[dim] < (int64_t{1} << 31) ? DType::kInt32 : DType::kInt64;
  std::vector<Array> ks(args.begin(), args.begin() + nk);
  ks.push_back(lax::broadcasted_iota(idx, shape, dim));
  const Array perm = tessera::bind(sort, ks, p)[nk];
  std::vector<Array> inv{perm};
  for (size_t i : lin) inv.push_back(cts[i]);
  Params q = p;
  q.set("num_keys", int64_t{1});
  std::vector<Array> r = tessera::bind(sort, inv, q);
  for (size_t j = 0; j < lin.size(); ++j) res[lin[j]] = r[1 + j];
  return res;
}

BatchOut sort_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                    const Params& p) {
  const int64_t size = batching::batch_size(args, dims);
  const int64_t rank = batching::logical_rank(args[0], dims[0]);
  const int64_t b = batching::common_dim(args, dims, rank);
  std::vector<Array> xs;
  for (size_t i = 0; i < args.size(); ++i)
    xs.push_back(batching::batch_at(args[i], dims[i], size, b));
  Params q = p;
  q.set("dimension", batching::shift_dim(p.get_int("dimension"), b));
  std::vector<Array> outs = tessera::bind(sort, xs, q);
  return {outs, std::vector<int64_t>(outs.size(), b)};
}

}  // namespace

void register_sort() {
  sort.kind = PrimitiveKind::kLibraryCall;
  sort.signature = Signature::at_least(0, {{"dimension", ParamKind::kInt},
                                           {"is_stable", ParamKind::kBool},
                                           {"num_keys", ParamKind::kInt}});
  sort.abstract_eval = sort_abstract;
  sort.impl = sort_impl;
  sort.jvp = sort_jvp;
  sort.transpose = sort_transpose;
  sort.batch = sort_batch;
  register_primitive(sort);
}

}  // namespace tessera::prims
