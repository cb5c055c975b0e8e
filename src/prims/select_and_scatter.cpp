// The two selection primitives behind the derivatives of reduce_window_max/min
// (jax/_src/lax/windowed_reductions.py):
//   select_and_gather_add(tangents, operand) {select_prim, window_dimensions, window_strides,
//     padding, base_dilation, window_dilation}: for each window of `operand`, the tangent at the
//     element the selection keeps (the max for select_prim = ge, the min for le);
//   select_and_scatter_add(source, operand) {select_prim, window_dimensions, window_strides,
//     padding}: each source element added at the operand position its window selects.
// Both are linear in their first argument and transpose to each other.
//
// Selection (one rule for both, so that they are exact adjoints): the candidates are every
// window position in window order (row-major over the window), padding and base-dilation holes
// included as the identity (-inf for ge, +inf for le) with a zero tangent. The first candidate is
// selected; each later candidate replaces the selection when select_prim(selected, candidate)
// is false, so among equal values the first in window order wins (XLA's select semantics).
// Floating dtypes only, as JAX's (16-bit floats compare in float32; scatter sums of 16-bit floats
// accumulate in float32 and round once).
//
// Kernels: gather runs output positions in parallel; scatter selects a chunk of windows in
// parallel, then adds the chunk's sources in window order, in parallel over the contiguous inner
// block (distinct inner indices never write one element), so results do not depend on the
// thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/reduce_window.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"
#include "tessera/param_types.h"

namespace tessera::prims {

Primitive select_and_gather_add("select_and_gather_add");
Primitive select_and_scatter_add("select_and_scatter_add");

namespace {

using ad::JvpOut;
using ad::one;
using batching::BatchOut;
using kernels::compute_t;
using window::WindowParams;

constexpr const char* kGather = "select_and_gather_add";
constexpr const char* kScatter = "select_and_scatter_add";

bool select_is_ge(const char* op, const Params& p) {
  const std::string& s = p.get<std::string>("select_prim");
  if (s == "ge") return true;
  if (s == "le") return false;
  throw ValueError(
      op_message(op, std::string(op) + " select_prim must be ge or le, got " + s + "."));
}

void check_float(const char* op, const Aval& a, const Aval& b, const char* an, const char* bn) {
  if (!is_floating(b.dtype))
    throw TypeError(op_message(op, std::string(op) + " requires a floating operand, got " +
                                       std::string(dtype_name(b.dtype)) + "."));
  if (a.dtype != b.dtype)
    throw TypeError(op_message(op, std::string(op) + " " + an + " and " + bn +
                                       " must have one dtype, got " +
                                       std::string(dtype_name(a.dtype)) + " and " +
                                       std::string(dtype_name(b.dtype)) + "."));
}

std::vector<Aval> gather_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(kGather, in, 2);
  select_is_ge(kGather, p);
  const Aval& t = in[0];
  const Aval& x = in[1];
  if (t.shape != x.shape)
    throw TypeError(op_message(kGather,
                               "select_and_gather_add tangents and operand shapes must match, "
                               "got " +
                                   shape_str(t.shape) + " and " + shape_str(x.shape) + "."));
  check_float(kGather, t, x, "tangents", "operand");
  return {Aval{window::out_shape(kGather, x.shape, WindowParams::from(p)), t.dtype, t.weak_type}};
}

std::vector<Aval> scatter_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(kScatter, in, 2);
  select_is_ge(kScatter, p);
  const Aval& s = in[0];
  const Aval& x = in[1];
  check_float(kScatter, s, x, "source", "operand");
  const Shape want = window::out_shape(kScatter, x.shape, WindowParams::from(p, false));
  if (s.shape != want)
    throw TypeError(op_message(kScatter, "select_and_scatter_add source shape " +
                                             shape_str(s.shape) +
                                             " must be the window output shape " + shape_str(want) +
                                             " of operand shape " + shape_str(x.shape) + "."));
  return {Aval{x.shape, s.dtype, s.weak_type}};
}

template <bool Ge, class C>
inline bool keeps(C selected, C candidate) {
  if constexpr (Ge)
    return selected >= candidate;
  else
    return selected <= candidate;
}

template <class C, bool Ge>
constexpr C identity() {
  return Ge ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
}

// For each window (outer position r) and inner index c, the selected candidate: its operand
// offset (off + c), or -1 for padding and holes. `key` is scratch of plan.inner entries.
template <class T, bool Ge>
void select_window(const T* x, const window::Plan& plan, const std::vector<int64_t>& offsets,
                   std::vector<compute_t<T>>& key, int64_t* sel) {
  using C = compute_t<T>;
  const int64_t inner = plan.inner;
  bool first = true;
  for (int64_t off : offsets) {
    if (first) {
      first = false;
      for (int64_t c = 0; c < inner; ++c) {
        key[c] = off < 0 ? identity<C, Ge>() : kernels::load(x[off + c]);
        sel[c] = off < 0 ? -1 : off + c;
      }
      continue;
    }
    if (off < 0) {
      const C id = identity<C, Ge>();
      for (int64_t c = 0; c < inner; ++c)
        if (!keeps<Ge>(key[c], id)) {
          key[c] = id;
          sel[c] = -1;
        }
      continue;
    }
    for (int64_t c = 0; c < inner; ++c) {
      const C v = kernels::load(x[off + c]);
      if (!keeps<Ge>(key[c], v)) {
        key[c] = v;
        sel[c] = off + c;
      }
    }
  }
}

template <class T, bool Ge>
void gather_kernel(const T* t, const T* x, T* out, const window::Plan& plan) {
  const int64_t inner = plan.inner;
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, inner * plan.window_size));
  runtime::parallel_for(plan.outer_out, grain, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> offsets, scratch, sel(static_cast<size_t>(inner));
    std::vector<compute_t<T>> key(static_cast<size_t>(inner));
    for (int64_t r = r0; r < r1; ++r) {
      window::window_offsets(plan, r, offsets, scratch);
      select_window<T, Ge>(x, plan, offsets, key, sel.data());
      T* dst = out + r * inner;
      for (int64_t c = 0; c < inner; ++c) dst[c] = sel[c] < 0 ? T{} : t[sel[c]];
    }
  });
}

template <class T, bool Ge>
void scatter_kernel(const T* src, const T* x, T* out, int64_t out_size, const window::Plan& plan) {
  using C = compute_t<T>;
  const int64_t inner = plan.inner;
  // 16-bit floats accumulate in a float32 copy; the others in place.
  std::vector<C> half_acc(kernels::is_half_v<T> ? static_cast<size_t>(out_size) : 0, C(0));
  C* acc;
  if constexpr (kernels::is_half_v<T>)
    acc = half_acc.data();
  else
    acc = out;
  if constexpr (!kernels::is_half_v<T>) std::fill(out, out + out_size, T(0));
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, inner));
  std::vector<int64_t> sel(static_cast<size_t>(std::min(chunk, plan.outer_out) * inner));
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, inner * plan.window_size));
  for (int64_t q0 = 0; q0 < plan.outer_out; q0 += chunk) {
    const int64_t q1 = std::min(plan.outer_out, q0 + chunk);
    runtime::parallel_for(q1 - q0, grain, [&](int64_t a, int64_t b) {
      std::vector<int64_t> offsets, scratch;
      std::vector<C> key(static_cast<size_t>(inner));
      for (int64_t r = q0 + a; r < q0 + b; ++r) {
        window::window_offsets(plan, r, offsets, scratch);
        select_window<T, Ge>(x, plan, offsets, key, sel.data() + (r - q0) * inner);
      }
    });
    const int64_t cgrain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, q1 - q0));
    runtime::parallel_for(inner, cgrain, [&](int64_t c0, int64_t c1) {
      for (int64_t r = q0; r < q1; ++r) {
        const int64_t* s = sel.data() + (r - q0) * inner;
        const T* v = src + r * inner;
        for (int64_t c = c0; c < c1; ++c)
          if (s[c] >= 0) acc[s[c]] += kernels::load(v[c]);
      }
    });
  }
  if constexpr (kernels::is_half_v<T>)
    runtime::parallel_for(out_size, int64_t{1} << 16, [&](int64_t a, int64_t b) {
      for (int64_t i = a; i < b; ++i) out[i] = kernels::store<T>(acc[i]);
    });
}

template <class F>
void dispatch_float(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::kFloat16:
      return f.template operator()<float16_t>();
    case DType::kBFloat16:
      return f.template operator()<bfloat16_t>();
    case DType::kFloat32:
      return f.template operator()<float>();
    case DType::kFloat64:
      return f.template operator()<double>();
    default:
      break;
  }
  throw_internal("prims/select_and_scatter",
                 std::string(op) + " reached its kernel with dtype " + std::string(dtype_name(d)));
}

std::vector<Array> gather_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                               std::span<const Aval> outs) {
  Array out = empty_array(outs[0], kGather, ctx.device);
  if (outs[0].size() == 0) return {out};
  const window::Plan plan =
      window::make_plan(args[1].shape(), outs[0].shape, WindowParams::from(p));
  const bool ge = select_is_ge(kGather, p);
  dispatch_float(args[1].dtype(), kGather, [&]<class T>() {
    const T* t = static_cast<const T*>(args[0].raw_data());
    const T* x = static_cast<const T*>(args[1].raw_data());
    T* o = static_cast<T*>(out.buffer()->data());
    if (ge)
      gather_kernel<T, true>(t, x, o, plan);
    else
      gather_kernel<T, false>(t, x, o, plan);
  });
  return {out};
}

std::vector<Array> scatter_impl(const ExecContext& ctx, std::span<const Array> args,
                                const Params& p, std::span<const Aval> outs) {
  Array out = empty_array(outs[0], kScatter, ctx.device);
  if (outs[0].size() == 0) return {out};
  const bool ge = select_is_ge(kScatter, p);
  const window::Plan plan =
      window::make_plan(args[1].shape(), args[0].shape(), WindowParams::from(p, false));
  dispatch_float(args[1].dtype(), kScatter, [&]<class T>() {
    const T* s = static_cast<const T*>(args[0].raw_data());
    const T* x = static_cast<const T*>(args[1].raw_data());
    T* o = static_cast<T*>(out.buffer()->data());
    const int64_t n = outs[0].size();
    if (args[0].size() == 0) {
      std::fill(o, o + n, kernels::store<T>(compute_t<T>(0)));
    } else if (ge) {
      scatter_kernel<T, true>(s, x, o, n, plan);
    } else {
      scatter_kernel<T, false>(s, x, o, n, plan);
    }
  });
  return {out};
}

Params with_select(const Params& p, const WindowParams& w, bool dilations) {
  Params q;
  q.set("select_prim", p.get<std::string>("select_prim"));
  w.set(q, dilations);
  return q;
}

JvpOut gather_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                  const Params& p) {
  const Array& x = primals[1];
  return ad::linear_jvp(primals, tangents, [&](const Array& t) {
    return bind1(select_and_gather_add, {t, x}, p);
  });
}

JvpOut scatter_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                   const Params& p) {
  const Array& x = primals[1];
  return ad::linear_jvp(primals, tangents, [&](const Array& s) {
    return bind1(select_and_scatter_add, {s, x}, p);
  });
}

// JAX's _select_and_gather_add_transpose: a base-dilated operand is interior-padded with the
// identity (the holes the gather saw), scattered into, and the holes sliced away.
std::vector<Array> gather_transpose(std::span<const Array> cts, std::span<const Array> args,
                                    std::span<const Aval> arg_avals, const Params& p) {
  if (args[0].defined() || !args[1].defined())
    ad::bad_linearity(kGather, "select_and_gather_add is linear in tangents only");
  const WindowParams w = WindowParams::from(p);
  for (int64_t d : w.window_dilation)
    if (d != 1)
      throw NotImplementedError(op_message(
          kGather,
          "VJP not implemented for select_and_gather (MaxPool) with window dilation, got "
          "window_dilation=" +
              shape_str(w.window_dilation) + "."));
  Array x = args[1];
  const bool dilated =
      std::any_of(w.base_dilation.begin(), w.base_dilation.end(), [](int64_t d) { return d != 1; });
  if (dilated) {
    const bool ge = select_is_ge(kGather, p);
    std::vector<lax::PadConfig> cfg;
    for (int64_t d : w.base_dilation) cfg.push_back({0, 0, d - 1});
    const double inf = std::numeric_limits<double>::infinity();
    x = lax::pad(x, ad::scalar_const(ge ? -inf : inf, x.dtype()), cfg);
  }
  Array r = bind1(select_and_scatter_add, {cts[0], x}, with_select(p, w, false));
  if (dilated) {
    std::vector<int64_t> start(static_cast<size_t>(r.ndim()), 0);
    r = lax::slice(r, start, r.shape(), w.base_dilation);
  }
  if (r.shape() != arg_avals[0].shape)
    throw_internal("prims/select_and_scatter", "select_and_gather_add transpose made shape " +
                                                   shape_str(r.shape()) + " for tangents " +
                                                   shape_str(arg_avals[0].shape));
  return {r, Array()};
}

// JAX's _select_and_scatter_add_transpose: the gather with unit dilations.
std::vector<Array> scatter_transpose(std::span<const Array> cts, std::span<const Array> args,
                                     std::span<const Aval>, const Params& p) {
  if (args[0].defined() || !args[1].defined())
    ad::bad_linearity(kScatter, "select_and_scatter_add is linear in source only");
  const WindowParams w = WindowParams::from(p, false);
  return {bind1(select_and_gather_add, {cts[0], args[1]}, with_select(p, w, true)), Array()};
}

// Both arguments' batch axes move to the front and get a window of size 1.
BatchOut select_batch(const Primitive& prim, bool dilations, std::span<const Array> args,
                      std::span<const int64_t> bdims, const Params& p) {
  const int64_t size = batching::batch_size(args, bdims);
  Array a = batching::batch_at(args[0], bdims[0], size, 0);
  Array x = batching::batch_at(args[1], bdims[1], size, 0);
  const WindowParams w = WindowParams::from(p, dilations).with_unit_dim(0);
  return {one(bind1(prim, {a, x}, with_select(p, w, dilations))), {0}};
}

std::vector<ParamSpec> specs(bool dilations) {
  std::vector<ParamSpec> s = {{"select_prim", ParamKind::kString},
                              {"window_dimensions", ParamKind::kInts},
                              {"window_strides", ParamKind::kInts},
                              {"padding", ParamKind::kTuple}};
  if (dilations) {
    s.push_back({"base_dilation", ParamKind::kInts});
    s.push_back({"window_dilation", ParamKind::kInts});
  }
  return s;
}

}  // namespace

void register_select_and_scatter() {
  select_and_gather_add.kind = PrimitiveKind::kLibraryCall;
  select_and_gather_add.signature = Signature::fixed(2, specs(true));
  select_and_gather_add.abstract_eval = gather_abstract;
  select_and_gather_add.impl = gather_impl;
  select_and_gather_add.jvp = gather_jvp;
  select_and_gather_add.transpose = gather_transpose;
  select_and_gather_add.batch = [](const BatchAxis&, std::span<const Array> args,
                                   std::span<const int64_t> bdims, const Params& p) {
    return select_batch(select_and_gather_add, true, args, bdims, p);
  };
  register_primitive(select_and_gather_add);

  select_and_scatter_add.kind = PrimitiveKind::kLibraryCall;
  select_and_scatter_add.signature = Signature::fixed(2, specs(false));
  select_and_scatter_add.abstract_eval = scatter_abstract;
  select_and_scatter_add.impl = scatter_impl;
  select_and_scatter_add.jvp = scatter_jvp;
  select_and_scatter_add.transpose = scatter_transpose;
  select_and_scatter_add.batch = [](const BatchAxis&, std::span<const Array> args,
                                    std::span<const int64_t> bdims, const Params& p) {
    return select_batch(select_and_scatter_add, false, args, bdims, p);
  };
  register_primitive(select_and_scatter_add);
}

}  // namespace tessera::prims
