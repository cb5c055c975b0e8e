// scatter, scatter-add, scatter-mul, scatter-min, scatter-max (operand, indices, updates) with
// JAX's rules (jax/_src/lax/slicing.py): one shape rule, the eager kernel (gather_kernels.h),
// and per combiner:
//   scatter-add  linear in (operand, updates): its own JVP; transpose: the cotangent for the
//                operand, a gather of it for the updates.
//   scatter      linear in (operand, updates) too: duplicates resolve by position (the last
//                update wins), so the tangent scatter picks the same winners. Transpose: a
//                scatter of update ids finds the winners; each gets its cotangent, the others 0.
//   scatter-mul  JVP in the operand always; in the updates only with unique_indices (JAX's
//                restriction), as operand · t_u where written.
//   scatter-min/max  JVP as JAX's: the tangent of whichever of operand / updates equals the
//                result, averaged over ties.
// Batching gives one scatter: an unbatched index keeps the batch axis as a window dim of the
// operand and updates; a batched one makes it a batching pair.
#include <algorithm>
#include <string>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/gather_dims.h"
#include "prims/gather_kernels.h"
#include "prims/gather_scatter.h"
#include "prims/kernel_util.h"
#include "prims/slicing_kernels.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive scatter_p("scatter");
Primitive scatter_add_p("scatter-add");
Primitive scatter_mul_p("scatter-mul");
Primitive scatter_min_p("scatter-min");
Primitive scatter_max_p("scatter-max");

namespace {

using ad::JvpOut;
using ad::one;
using batching::BatchOut;
using batching::kNotMapped;
using gather_dims::contains;
using gather_dims::plus1;
using gather_kernels::Combine;

std::string dims_str(const std::vector<int64_t>& v) { return shape_str(v); }

// The operand dims the update window spans, in order (neither inserted nor batching).
std::vector<int64_t> window_operand_dims(const ScatterDimensionNumbers& dn, int64_t rank) {
  std::vector<int64_t> r;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(dn.inserted_window_dims, d) && !contains(dn.operand_batching_dims, d))
      r.push_back(d);
  return r;
}

std::vector<Aval> scatter_abstract_for(const char* op, std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(op, in, 3);
  const Aval& x = in[0];
  const Aval& idx = in[1];
  const Aval& u = in[2];
  const auto dn = ScatterArgs::from(p).dnums;
  if (!is_integer(idx.dtype))
    throw TypeError(op_message(op, "indices must have an integer type, got " + idx.str() +
                                       "; convert the indices with astype(int32)."));
  if (idx.ndim() < 1)
    throw TypeError(op_message(
        op, "indices must have rank >= 1 (the last dimension is the index vector), got " +
                idx.str() + "; add a trailing dimension with indices[..., None]."));
  if (u.dtype != x.dtype)
    throw TypeError(op_message(op, "lax." + std::string(op) +
                                       " requires arguments to have the same dtypes, got operand " +
                                       x.str() + " and updates " + u.str() +
                                       "; convert the updates to the operand's dtype."));
  const int64_t xr = x.ndim(), ir = idx.ndim(), ur = u.ndim();
  gather_dims::check_dim_list(op, "scatter", dn.update_window_dims, ur, "update_window_dims",
                              "updates");
  gather_dims::check_dim_list(op, "scatter", dn.inserted_window_dims, xr, "inserted_window_dims",
                              "operand");
  gather_dims::check_dim_list(op, "scatter", dn.operand_batching_dims, xr, "operand_batching_dims",
                              "operand");
  gather_dims::check_dim_list(op, "scatter", dn.scatter_indices_batching_dims, ir - 1,
                              "scatter_indices_batching_dims",
                              "indices without the index vector dim", false);
  gather_dims::check_dim_list(op, "scatter", dn.scatter_dims_to_operand_dims, xr,
                              "scatter_dims_to_operand_dims", "operand", false);
  for (int64_t d : dn.inserted_window_dims)
    if (contains(dn.operand_batching_dims, d))
      throw TypeError(op_message(op,
                                 "inserted_window_dims and operand_batching_dims must not "
                                 "overlap, got " +
                                     dims_str(dn.inserted_window_dims) + " and " +
                                     dims_str(dn.operand_batching_dims) + "."));
  for (int64_t d : dn.scatter_dims_to_operand_dims)
    if (contains(dn.operand_batching_dims, d))
      throw TypeError(op_message(op,
                                 "scatter_dims_to_operand_dims and operand_batching_dims "
                                 "must not overlap, got " +
                                     dims_str(dn.scatter_dims_to_operand_dims) + " and " +
                                     dims_str(dn.operand_batching_dims) + "."));
  if (dn.operand_batching_dims.size() != dn.scatter_indices_batching_dims.size())
    throw TypeError(op_message(
        op,
        "operand_batching_dims and scatter_indices_batching_dims must have the same length, "
        "got " +
            dims_str(dn.operand_batching_dims) + " and " +
            dims_str(dn.scatter_indices_batching_dims) + "."));
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t od = dn.operand_batching_dims[i], id = dn.scatter_indices_batching_dims[i];
    if (x.shape[od] != idx.shape[id])
      throw TypeError(
          op_message(op, "operand dimension " + std::to_string(od) + " (size " +
                             std::to_string(x.shape[od]) + ") and indices dimension " +
                             std::to_string(id) + " (size " + std::to_string(idx.shape[id]) +
                             ") are a batching pair and must have the same size; operand " +
                             x.str() + ", indices " + idx.str() + "."));
  }
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != idx.shape[ir - 1])
    throw TypeError(op_message(
        op, "Scatter op has " + std::to_string(dn.scatter_dims_to_operand_dims.size()) +
                " elements in scatter_dims_to_operand_dims and the bound of the index vector "
                "dimension (the last) of indices " +
                idx.str() + " is " + std::to_string(idx.shape[ir - 1]) +
                ". These two numbers must be equal."));
  if (static_cast<int64_t>(dn.update_window_dims.size() + dn.inserted_window_dims.size() +
                           dn.operand_batching_dims.size()) != xr)
    throw TypeError(op_message(
        op, "Scatter op has window of size " + std::to_string(dn.update_window_dims.size()) +
                "; doesn't match operand of rank " + std::to_string(xr) +
                " with inserted_window_dims " + dims_str(dn.inserted_window_dims) +
                " and operand_batching_dims " + dims_str(dn.operand_batching_dims) + "."));
  if (ur != static_cast<int64_t>(dn.update_window_dims.size()) + ir - 1)
    throw TypeError(op_message(
        op, "Updates tensor must be of rank " +
                std::to_string(dn.update_window_dims.size() + static_cast<size_t>(ir - 1)) +
                " (len(update_window_dims) plus the rank of indices without the index vector "
                "dim); got updates " +
                u.str() + " with indices " + idx.str() + "."));
  const std::vector<int64_t> wod = window_operand_dims(dn, xr);
  size_t wi = 0, si = 0;
  for (int64_t i = 0; i < ur; ++i) {
    if (contains(dn.update_window_dims, i)) {
      const int64_t d = wod[wi++];
      if (u.shape[i] > x.shape[d])
        throw TypeError(op_message(
            op,
            "Bounds of the window dimensions of updates must not exceed the bounds of the "
            "corresponding dimensions of operand. For dimension " +
                std::to_string(i) + ", updates bound is " + std::to_string(u.shape[i]) +
                ", operand bound is " + std::to_string(x.shape[d]) + "."));
    } else {
      const int64_t want = idx.shape[si++];
      if (u.shape[i] != want)
        throw TypeError(op_message(
            op,
            "Bounds of the scatter dimensions of updates must be the same as the bounds of "
            "the corresponding dimensions of scatter indices. For scatter dimension " +
                std::to_string(i) + ", updates bound is " + std::to_string(u.shape[i]) +
                ", scatter_indices bound is " + std::to_string(want) + "."));
    }
  }
  return {x};
}

template <const char* const* Name>
std::vector<Aval> scatter_abstract(std::span<const Aval> in, const Params& p) {
  return scatter_abstract_for(*Name, in, p);
}

gather_kernels::WindowPlan scatter_plan(const ScatterDimensionNumbers& dn, const Shape& x,
                                        const Shape& idx, const Shape& u) {
  gather_kernels::WindowPlan w;
  w.operand = x;
  const int64_t xr = static_cast<int64_t>(x.size());
  w.window.assign(static_cast<size_t>(xr), 1);
  w.index_map = dn.scatter_dims_to_operand_dims;
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i)
    w.batching.push_back({dn.operand_batching_dims[i], dn.scatter_indices_batching_dims[i]});
  w.points.assign(idx.begin(), idx.end() - 1);
  const std::vector<int64_t> ust = row_major_strides(u);
  const std::vector<int64_t> wod = window_operand_dims(dn, xr);
  for (size_t k = 0; k < wod.size(); ++k) {
    w.window[wod[k]] = u[dn.update_window_dims[k]];
    w.wdims.push_back(wod[k]);
    w.other_wst.push_back(ust[dn.update_window_dims[k]]);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(u.size()); ++i)
    if (!contains(dn.update_window_dims, i)) w.other_bst.push_back(ust[i]);
  return w;
}

template <Combine C>
std::vector<Array> scatter_impl(const ExecContext& ctx, std::span<const Array> args,
                                const Params& p, std::span<const Aval> outs) {
  const ScatterArgs a = ScatterArgs::from(p);
  const Aval& oa = outs[0];
  const Array& x = args[0];
  Array out = empty_array(oa, "scatter", ctx.device);
  if (oa.size() == 0) return {out};
  slicing_kernels::CopyPlan all;
  all.dims = {oa.size()};
  all.in_st = all.out_st = {1};
  slicing_kernels::strided_copy(x.raw_data(), out.buffer()->data(), itemsize(oa.dtype), all);
  const bool clamp =
      a.mode == GatherScatterMode::kClip || a.mode == GatherScatterMode::kPromiseInBounds;
  gather_kernels::scatter(out.buffer()->data(), args[2], args[1],
                          scatter_plan(a.dnums, x.shape(), args[1].shape(), args[2].shape()), clamp,
                          C);
  return {out};
}

// ---------------------------------------------------------------- JVPs

Array instantiate_tangent(const Array& primal, const Array& t) {
  return ad::zero_tangent(primal, t) ? ad::zeros_like_aval(primal.aval()) : t;
}

// scatter and scatter-add are linear in (operand, updates) jointly.
template <const Primitive* P>
JvpOut linear_scatter_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                          const Params& p) {
  const ScatterArgs a = ScatterArgs::from(p);
  Array out = bind_scatter(*P, primals[0], primals[1], primals[2], a);
  const bool zx = ad::zero_tangent(primals[0], tangents[0]);
  const bool zu = ad::zero_tangent(primals[2], tangents[2]);
  if (zx && zu) return {one(out), one(Array())};
  return {one(out), one(bind_scatter(*P, instantiate_tangent(primals[0], tangents[0]), primals[1],
                                     instantiate_tangent(primals[2], tangents[2]), a))};
}

JvpOut scatter_mul_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                       const Params& p) {
  const ScatterArgs a = ScatterArgs::from(p);
  const Array& x = primals[0];
  const Array& idx = primals[1];
  const Array& u = primals[2];
  Array out = bind_scatter(scatter_mul_p, x, idx, u, a);
  Array t;
  if (!ad::zero_tangent(x, tangents[0])) t = bind_scatter(scatter_mul_p, tangents[0], idx, u, a);
  if (!ad::zero_tangent(u, tangents[2])) {
    if (!a.unique_indices)
      throw NotImplementedError(
          op_message("scatter-mul",
                     "scatter_mul gradients are only implemented if `unique_indices=True`; "
                     "pass unique_indices=True when the indices do not repeat (JAX has the "
                     "same restriction)"));
    // Where written (once: unique), out = x · u: its tangent in u is x · t_u; elsewhere 0.
    Array tu =
        lax::mul(x, bind_scatter(scatter_p, ad::zeros_like_aval(x.aval()), idx, tangents[2], a));
    t = t.defined() ? lax::add(t, tu) : tu;
  }
  return {one(out), one(t)};
}

template <const Primitive* P>
JvpOut scatter_extremal_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                            const Params& p) {
  const ScatterArgs a = ScatterArgs::from(p);
  const Array& x = primals[0];
  const Array& idx = primals[1];
  const Array& u = primals[2];
  Array out = bind_scatter(*P, x, idx, u, a);
  const bool zx = ad::zero_tangent(x, tangents[0]);
  const bool zu = ad::zero_tangent(u, tangents[2]);
  if (zx && zu) return {one(out), one(Array())};
  const DType dt = x.dtype();
  GatherArgs g = gather_of_scatter(a, u.shape());
  g.fill_value = std::nullopt;  // a dropped update reads NaN, which equals nothing
  Array out_at_u = bind_gather(out, idx, g);
  Array u_mask = lax::convert_element_type(lax::eq(u, out_at_u), dt);
  Array x_mask = lax::convert_element_type(lax::eq(x, out), dt);
  Array zeros = ad::zeros_like_aval(x.aval());
  Array num = zx ? zeros : lax::mul(x_mask, tangents[0]);
  if (!zu)
    num = lax::add(num, bind_scatter(scatter_add_p, zeros, idx, lax::mul(u_mask, tangents[2]), a));
  Array den = lax::add(x_mask, bind_scatter(scatter_add_p, zeros, idx, u_mask, a));
  return {one(out), one(lax::div(num, den))};
}

// ---------------------------------------------------------------- transposes

void check_linear_updates(const char* op, std::span<const Array> args) {
  if (!args[1].defined()) ad::bad_linearity(op, "the indices are not differentiable");
}

std::vector<Array> scatter_add_transpose(std::span<const Array> cts, std::span<const Array> args,
                                         std::span<const Aval> arg_avals, const Params& p) {
  check_linear_updates("scatter-add", args);
  std::vector<Array> res(3);
  const Array& ct = cts[0];
  if (!ct.defined()) return res;
  const ScatterArgs a = ScatterArgs::from(p);
  if (!args[0].defined()) res[0] = ct;
  if (!args[2].defined()) {
    GatherArgs g = gather_of_scatter(a, arg_avals[2].shape);
    g.fill_value = 0.0;
    res[2] = bind_gather(ct, args[1], g);
  }
  return res;
}

// Linear in the operand only (the JVP above never makes the updates linear): a scaling of the
// written elements, its own transpose.
std::vector<Array> scatter_mul_transpose(std::span<const Array> cts, std::span<const Array> args,
                                         std::span<const Aval>, const Params& p) {
  check_linear_updates("scatter-mul", args);
  if (args[0].defined() || !args[2].defined())
    ad::bad_linearity("scatter-mul", "only the operand may be the linear input");
  std::vector<Array> res(3);
  if (cts[0].defined())
    res[0] = bind_scatter(scatter_mul_p, cts[0], args[1], args[2], ScatterArgs::from(p));
  return res;
}

// The winners of a scatter: ids[p] = the flat index of the update element written at p (the
// last one in order), -1 where nothing is written.
Array winner_ids(const Array& idx, const Aval& operand, const Shape& updates,
                 const ScatterArgs& a) {
  int64_t n = 1;
  for (int64_t d : updates) n *= d;
  const DType it = n < (int64_t{1} << 31) ? DType::kInt32 : DType::kInt64;
  Array ids = lax::reshape(lax::iota(it, n), updates);
  Array none = lax::broadcast_in_dim(ad::scalar_const(-1.0, it), operand.shape, {});
  return bind_scatter(scatter_p, none, idx, ids, a);
}

std::vector<Array> scatter_transpose(std::span<const Array> cts, std::span<const Array> args,
                                     std::span<const Aval> arg_avals, const Params& p) {
  check_linear_updates("scatter", args);
  std::vector<Array> res(3);
  const Array& ct = cts[0];
  if (!ct.defined()) return res;
  const ScatterArgs a = ScatterArgs::from(p);
  const Shape& us = arg_avals[2].shape;
  Array ids = winner_ids(args[1], arg_avals[0], us, a);
  const DType it = ids.dtype();
  Array zero = ad::zeros_like_aval(Aval{ct.shape(), ct.dtype(), false});
  if (!args[0].defined())
    res[0] = lax::select_n(lax::eq(ids, ad::scalar_const(-1.0, it)), {zero, ct});
  if (!args[2].defined()) {
    GatherArgs g = gather_of_scatter(a, us);
    g.fill_value = 0.0;
    Array ct_u = bind_gather(ct, args[1], g);
    g.fill_value = -2.0;  // a dropped update is no winner
    Array won_by = bind_gather(ids, args[1], g);
    int64_t n = 1;
    for (int64_t d : us) n *= d;
    Array own = lax::reshape(lax::iota(it, n), us);
    Array zu = ad::zeros_like_aval(Aval{us, ct.dtype(), false});
    res[2] = lax::select_n(lax::eq(won_by, own), {zu, ct_u});
  }
  return res;
}

// ---------------------------------------------------------------- batching

template <const Primitive* P>
BatchOut scatter_batch(const BatchAxis&, std::span<const Array> args,
                       std::span<const int64_t> bdims, const Params& p) {
  ScatterArgs a = ScatterArgs::from(p);
  auto& dn = a.dnums;
  const int64_t B = batching::batch_size(args, bdims);
  Array x = batching::batch_at(args[0], bdims[0], B, 0);
  Array u = batching::batch_at(args[2], bdims[2], B, 0);
  dn.update_window_dims = plus1(dn.update_window_dims);
  dn.inserted_window_dims = plus1(dn.inserted_window_dims);
  dn.scatter_dims_to_operand_dims = plus1(dn.scatter_dims_to_operand_dims);
  dn.operand_batching_dims = plus1(dn.operand_batching_dims);
  if (bdims[1] == kNotMapped) {
    // The batch axis is a window dim of the operand and the updates, written whole.
    dn.update_window_dims.insert(dn.update_window_dims.begin(), 0);
    return {one(bind_scatter(*P, x, args[1], u, a)), {0}};
  }
  Array idx = batching::move_axis(args[1], bdims[1], 0);
  dn.operand_batching_dims.insert(dn.operand_batching_dims.begin(), 0);
  dn.scatter_indices_batching_dims = plus1(dn.scatter_indices_batching_dims);
  dn.scatter_indices_batching_dims.insert(dn.scatter_indices_batching_dims.begin(), 0);
  return {one(bind_scatter(*P, x, idx, u, a)), {0}};
}

constexpr const char* kScatterName = "scatter";
constexpr const char* kAddName = "scatter-add";
constexpr const char* kMulName = "scatter-mul";
constexpr const char* kMinName = "scatter-min";
constexpr const char* kMaxName = "scatter-max";

}  // namespace

Params ScatterArgs::params() const {
  return Params{{"dimension_numbers", dnums.to_param()},
                {"indices_are_sorted", indices_are_sorted},
                {"unique_indices", unique_indices},
                {"mode", to_param(mode)}};
}

ScatterArgs ScatterArgs::from(const Params& p) {
  ScatterArgs a;
  a.dnums = ScatterDimensionNumbers::from_param(
      p.get_record("dimension_numbers", kScatterDimensionNumbersDef));
  a.indices_are_sorted = p.get_bool("indices_are_sorted");
  a.unique_indices = p.get_bool("unique_indices");
  a.mode = static_cast<GatherScatterMode>(p.get_enum("mode", kGatherScatterModeDef));
  return a;
}

Array bind_scatter(const Primitive& p, const Array& operand, const Array& indices,
                   const Array& updates, const ScatterArgs& a) {
  return bind1(p, {operand, indices, updates}, a.params());
}

GatherArgs gather_of_scatter(const ScatterArgs& s, const Shape& updates) {
  const auto& dn = s.dnums;
  GatherArgs g;
  g.dnums.offset_dims = dn.update_window_dims;
  g.dnums.collapsed_slice_dims = dn.inserted_window_dims;
  g.dnums.start_index_map = dn.scatter_dims_to_operand_dims;
  g.dnums.operand_batching_dims = dn.operand_batching_dims;
  g.dnums.start_indices_batching_dims = dn.scatter_indices_batching_dims;
  const int64_t rank =
      static_cast<int64_t>(dn.update_window_dims.size() + dn.inserted_window_dims.size() +
                           dn.operand_batching_dims.size());
  g.slice_sizes.assign(static_cast<size_t>(rank), 1);
  const std::vector<int64_t> wod = window_operand_dims(dn, rank);
  for (size_t k = 0; k < wod.size(); ++k) g.slice_sizes[wod[k]] = updates[dn.update_window_dims[k]];
  g.indices_are_sorted = s.indices_are_sorted;
  g.unique_indices = s.unique_indices;
  g.mode = s.mode;
  return g;
}

void register_gather_scatter() {
  register_gather();
  const std::vector<ParamSpec> params{
      {"dimension_numbers", ParamKind::kRecord, true, nullptr, &kScatterDimensionNumbersDef},
      {"indices_are_sorted", ParamKind::kBool},
      {"unique_indices", ParamKind::kBool},
      {"mode", ParamKind::kEnum, true, &kGatherScatterModeDef}};
  for (Primitive* p :
       {&scatter_p, &scatter_add_p, &scatter_mul_p, &scatter_min_p, &scatter_max_p}) {
    p->kind = PrimitiveKind::kLibraryCall;
    p->signature = Signature::fixed(3, params);
  }
  scatter_p.abstract_eval = scatter_abstract<&kScatterName>;
  scatter_add_p.abstract_eval = scatter_abstract<&kAddName>;
  scatter_mul_p.abstract_eval = scatter_abstract<&kMulName>;
  scatter_min_p.abstract_eval = scatter_abstract<&kMinName>;
  scatter_max_p.abstract_eval = scatter_abstract<&kMaxName>;
  scatter_p.impl = scatter_impl<Combine::kSet>;
  scatter_add_p.impl = scatter_impl<Combine::kAdd>;
  scatter_mul_p.impl = scatter_impl<Combine::kMul>;
  scatter_min_p.impl = scatter_impl<Combine::kMin>;
  scatter_max_p.impl = scatter_impl<Combine::kMax>;
  scatter_p.jvp = linear_scatter_jvp<&scatter_p>;
  scatter_add_p.jvp = linear_scatter_jvp<&scatter_add_p>;
  scatter_mul_p.jvp = scatter_mul_jvp;
  scatter_min_p.jvp = scatter_extremal_jvp<&scatter_min_p>;
  scatter_max_p.jvp = scatter_extremal_jvp<&scatter_max_p>;
  scatter_p.transpose = scatter_transpose;
  scatter_add_p.transpose = scatter_add_transpose;
  scatter_mul_p.transpose = scatter_mul_transpose;
  scatter_p.batch = scatter_batch<&scatter_p>;
  scatter_add_p.batch = scatter_batch<&scatter_add_p>;
  scatter_mul_p.batch = scatter_batch<&scatter_mul_p>;
  scatter_min_p.batch = scatter_batch<&scatter_min_p>;
  scatter_max_p.batch = scatter_batch<&scatter_max_p>;
  for (Primitive* p : {&scatter_p, &scatter_add_p, &scatter_mul_p, &scatter_min_p, &scatter_max_p})
    register_primitive(*p);
}

}  // namespace tessera::prims
