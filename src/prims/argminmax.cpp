// argmax and argmin {axes: one axis, index_dtype}: the index of the first maximum/minimum along
// the axis, as XLA/JAX: NaN counts as both the maximum and the minimum, so the first NaN wins.
// The result is an integer (index_dtype) without tangents. Under jit, an argmax over the last axis
// expands (compiler/passes/expand.h) into a max and a min over the same row — the extreme, then
// the least index holding it or a NaN — which fusion computes as two stages of one kernel.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/passes/expand.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::prims {

Primitive argmax("argmax");
Primitive argmin("argmin");

namespace {

constexpr int64_t kTaskElems = int64_t{1} << 15;

std::vector<Aval> argminmax_abstract(const char* op, std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  const auto& axes = p.get_ints("axes");
  const DType index_dtype = p.get_dtype("index_dtype");
  if (is_extended(x.dtype))
    throw TypeError(op_message(op, std::string(op) + " does not accept dtype " +
                                       std::string(dtype_name(x.dtype)) +
                                       "; it takes numbers and bool."));
  if (!is_integer(index_dtype))
    throw TypeError(op_message(op, "index_dtype must be an integer type, but got " +
                                       std::string(dtype_name(index_dtype)) + "."));
  if (axes.size() != 1)
    throw ValueError(op_message(
        op, std::string(op) + " reduces exactly one axis, got axes " + shape_str(axes) + "."));
  const int64_t axis = axes[0];
  if (axis < 0 || axis >= x.ndim())
    throw IndexError(op_message(op, "axis " + std::to_string(axis) + " is out of bounds for " +
                                        x.str() + "; it must be in [0, " +
                                        std::to_string(x.ndim()) +
                                        ") at the lax level (normalize negative axes first)."));
  if (x.shape[axis] < 1)
    throw ValueError(op_message(op, "attempt to get " + std::string(op) +
                                        " of an empty sequence: argmin and argmax "
                                        "require a non-empty reduced dimension, got operand " +
                                        x.str() + " and axis " + std::to_string(axis) + "."));
  Shape out;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != axis) out.push_back(x.shape[d]);
  return {Aval{out, index_dtype, false}};
}

// Whether v replaces the current best b: strictly better, or the first NaN.
template <bool kMax, class C>
inline bool better(C v, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (v != v) return b == b;
    return kMax ? v > b : v < b;
  } else {
    return kMax ? v > b : v < b;
  }
}

// x viewed as [O, R, I]; idx[o, i] = first best r.
template <bool kMax, class T, class I>
void argminmax_kernel(const T* x, int64_t O, int64_t R, int64_t In, I* idx) {
  using C = kernels::compute_t<T>;
  if (In == 1) {
    runtime::parallel_for(O, std::max<int64_t>(1, kTaskElems / R), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const T* row = x + o * R;
        C best = kernels::load(row[0]);
        int64_t at = 0;
        for (int64_t r = 1; r < R; ++r) {
          const C v = kernels::load(row[r]);
          if (better<kMax>(v, best)) best = v, at = r;
        }
        idx[o] = static_cast<I>(at);
      }
    });
    return;
  }
  // Columns: the running best of a block of columns, rows streamed in order.
  constexpr int64_t kCols = 1024;
  const int64_t nb = (In + kCols - 1) / kCols;
  runtime::parallel_for(O * nb, std::max<int64_t>(1, kTaskElems / (R * std::min(In, kCols))),
                        [&](int64_t t0, int64_t t1) {
                          C best[kCols];
                          int64_t at[kCols];
                          for (int64_t t = t0; t < t1; ++t) {
                            const int64_t o = t / nb, c0 = (t % nb) * kCols;
                            const int64_t w = std::min(kCols, In - c0);
                            const T* base = x + o * R * In + c0;
                            for (int64_t j = 0; j < w; ++j)
                              best[j] = kernels::load(base[j]), at[j] = 0;
                            for (int64_t r = 1; r < R; ++r) {
                              const T* row = base + r * In;
                              for (int64_t j = 0; j < w; ++j) {
                                const C v = kernels::load(row[j]);
                                if (better<kMax>(v, best[j])) best[j] = v, at[j] = r;
                              }
                            }
                            for (int64_t j = 0; j < w; ++j)
                              idx[o * In + c0 + j] = static_cast<I>(at[j]);
                          }
                        });
}

template <bool kMax>
std::vector<Array> argminmax_impl(const ExecContext& ctx, const char* op,
                                  std::span<const Array> args, const Params& p,
                                  std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  Array out = empty_array(oa, op, ctx.device);
  if (oa.size() == 0) return {out};
  const int64_t axis = p.get_ints("axes")[0];
  int64_t O = 1, In = 1;
  for (int64_t d = 0; d < axis; ++d) O *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.ndim(); ++d) In *= x.shape()[d];
  const int64_t R = x.shape()[axis];
  kernels::dispatch_dtype(x.dtype(), [&]<class T>() {
    kernels::dispatch_dtype(oa.dtype, [&]<class I>() {
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        argminmax_kernel<kMax>(static_cast<const T*>(x.raw_data()), O, R, In,
                               static_cast<I*>(out.buffer()->data()));
      } else {
        throw_internal("prims/argminmax", "a non-integer index_dtype passed abstract eval");
      }
    });
  });
  return {out};
}

// The axis shifts past the batch axis, which stays where it is (after the kept axes before it).
BatchRule argminmax_batch(const Primitive& prim) {
  const Primitive* pp = &prim;
  return [pp](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
              const Params& p) -> batching::BatchOut {
    const int64_t b = dims[0], axis = p.get_ints("axes")[0];
    Params np = p;
    np.set("axes", std::vector<int64_t>{batching::shift_dim(axis, b)});
    return {tessera::bind(*pp, args, np), {axis < b ? b - 1 : b}};
  };
}

// argmax(x) over the last axis k of n elements as
//   m = max(x, k); hit = x == m | x != x; argmax = min(select(hit, iota_k, n), k)
// (argmin with min): the first extreme, or the first NaN when there is one (the extreme is then
// NaN and only NaNs are hits; with none, -0 and +0 are both hits and the first zero wins, as the
// eager kernel's strict comparison gives). Integers exactly, in any order. Declined for other
// axes (fusion folds trailing rows only), bool and 16-bit floats (not fused).
std::shared_ptr<const Jaxpr> argminmax_expansion(bool kmax, const JaxprEqn& e) {
  const Aval& x = atom_aval(e.invars[0]);
  const int64_t axis = e.params.get_ints("axes").at(0);
  if (axis != x.ndim() - 1 || x.dtype == DType::kBool) return nullptr;
  if (!is_integer(x.dtype) && !(is_floating(x.dtype) && itemsize(x.dtype) >= 4)) return nullptr;
  const DType idt = e.params.get_dtype("index_dtype");
  const int64_t n = x.shape[static_cast<size_t>(axis)];
  std::vector<int64_t> keep;
  for (int64_t d = 0; d < axis; ++d) keep.push_back(d);
  flat::Fun f = [&](std::span<const Array> a) -> std::vector<Array> {
    const Array& v = a[0];
    Array m = kmax ? lax::reduce_max(v, {axis}) : lax::reduce_min(v, {axis});
    Array hit = lax::eq(v, lax::broadcast_in_dim(m, x.shape, keep));
    if (is_floating(x.dtype)) hit = lax::bitwise_or(hit, lax::ne(v, v));
    Array none =
        lax::broadcast_in_dim(trace::scalar_const(static_cast<double>(n), idt), x.shape, {});
    Array cand = lax::select_n(hit, {none, lax::broadcasted_iota(idt, x.shape, axis)});
    return {lax::reduce_min(cand, {axis})};
  };
  trace::Staged st = trace::stage(f, std::vector<Aval>{Aval{x.shape, x.dtype, false}});
  if (!st.consts.empty()) return nullptr;
  return st.jaxpr;
}

template <bool kMax>
void set_rules(Primitive& prim, const char* name) {
  prim.abstract_eval = [name](std::span<const Aval> in, const Params& p) {
    return argminmax_abstract(name, in, p);
  };
  prim.impl = [name](const ExecContext& ctx, std::span<const Array> a, const Params& p,
                     std::span<const Aval> o) { return argminmax_impl<kMax>(ctx, name, a, p, o); };
  prim.jvp = ad::zero_jvp(prim);  // the output is an integer: no tangent
  prim.batch = argminmax_batch(prim);
  register_primitive(prim);
}

}  // namespace

void register_argminmax() {
  for (Primitive* p : {&argmax, &argmin}) p->kind = PrimitiveKind::kReduction;
  for (Primitive* p : {&argmax, &argmin})
    p->signature =
        Signature::fixed(1, {{"axes", ParamKind::kInts}, {"index_dtype", ParamKind::kDType}});
  set_rules<true>(argmax, "argmax");
  set_rules<false>(argmin, "argmin");
  compiler::register_expansion(argmax,
                               [](const JaxprEqn& e) { return argminmax_expansion(true, e); });
  compiler::register_expansion(argmin,
                               [](const JaxprEqn& e) { return argminmax_expansion(false, e); });
}

}  // namespace tessera::prims
