// Windowed reductions (jax/_src/lax/windowed_reductions.py): reduce_window_sum,
// reduce_window_max, reduce_window_min (operand) {window_dimensions, window_strides, padding,
// base_dilation, window_dilation}, and the generic reduce_window(*operands, *init_values,
// *consts) {jaxpr, window_dimensions, ...} whose computation is a jaxpr on rank-0 values, as
// JAX's reduce_window_p (its constants travel as trailing operands, as for `reduce`).
//
// Eager kernels (sum/max/min): output positions in parallel, each reading its window in window
// order (reduce_window.h's tables), trailing dimensions without a window processed as
// contiguous vectors; no two tasks write one element, so results do not depend on the thread
// count. Padding and base-dilation holes hold the identity (0, -inf or the lowest integer,
// +inf or the highest), so they are skipped. 16-bit floats accumulate in float32 and round
// once; integer sums wrap around in their dtype; max/min propagate NaN as lax.max/lax.min.
//
// Rules as JAX's: sum is linear and transposes to a reduce_window_sum of the padded cotangent
// (strides = base_dilation, the cotangent interior-padded by stride - 1); max/min have JVPs
// through select_and_gather_add (select_and_scatter.cpp); batching adds a window dimension of
// size 1 at the batch axis. The generic primitive runs one composite everywhere: the operands
// padded with their init values (interior padding for base dilation), then for each window
// position in window order a strided slice folded into the accumulators by the computation,
// vmapped over the output. Its JVP is that composite's JVP (JAX has a JVP for reduce_window_p
// too; here reverse mode works as well, the composite being made of differentiable ops).
#include "prims/reduce_window.h"

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
#include "runtime/thread_pool.h"
#include "tessera/jaxpr.h"
#include "tessera/lax.h"
#include "tessera/param_types.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

Primitive reduce_window_sum("reduce_window_sum");
Primitive reduce_window_max("reduce_window_max");
Primitive reduce_window_min("reduce_window_min");
Primitive reduce_window("reduce_window", /*multiple_results=*/true);

namespace window {

namespace {

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

std::string pads_str(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", (" : "(") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + ")";
  return s + (p.size() == 1 ? ",)" : ")");
}

// JAX's _check_shapelike: every element nonnegative, or positive with non_zero.
void check_shapelike(const char* op, const std::string& jax, const char* what,
                     const std::vector<int64_t>& v, bool non_zero) {
  for (int64_t d : v)
    if (d < (non_zero ? 1 : 0))
      throw TypeError(op_message(op, jax + " " + what + " must have every element be " +
                                         (non_zero ? "strictly positive" : "nonnegative") +
                                         ", got " + ints_str(v) + "."));
}

// JAX's _dilate_shape: 0 for an empty dimension, else 1 + dilation * (d - 1).
int64_t dilate(const char* op, int64_t d, int64_t dilation) {
  if (d == 0) return 0;
  return checked_add(op, 1, checked_mul(op, dilation, d - 1, "dilated size"), "dilated size");
}

}  // namespace

WindowParams WindowParams::from(const Params& p, bool dilations) {
  WindowParams w;
  w.dims = p.get_ints("window_dimensions");
  w.strides = p.get_ints("window_strides");
  w.padding = padding_pairs_from_param(p.at("padding"));
  if (dilations) {
    w.base_dilation = p.get_ints("base_dilation");
    w.window_dilation = p.get_ints("window_dilation");
  } else {
    w.base_dilation.assign(w.dims.size(), 1);
    w.window_dilation.assign(w.dims.size(), 1);
  }
  return w;
}

void WindowParams::set(Params& p, bool dilations) const {
  p.set("window_dimensions", dims);
  p.set("window_strides", strides);
  p.set("padding", padding_pairs_param(padding));
  if (dilations) {
    p.set("base_dilation", base_dilation);
    p.set("window_dilation", window_dilation);
  }
}

WindowParams WindowParams::with_unit_dim(int64_t pos) const {
  WindowParams w = *this;
  w.dims.insert(w.dims.begin() + pos, 1);
  w.strides.insert(w.strides.begin() + pos, 1);
  w.padding.insert(w.padding.begin() + pos, {0, 0});
  w.base_dilation.insert(w.base_dilation.begin() + pos, 1);
  w.window_dilation.insert(w.window_dilation.begin() + pos, 1);
  return w;
}

Shape out_shape(const char* op, const Shape& in, const WindowParams& w) {
  // JAX's messages name the function whose shape rule raised them.
  const std::string jax = std::string_view(op).starts_with("select_and_scatter")
                              ? "select_and_scatter"
                              : "reduce_window";
  check_shapelike(op, jax, "window_dimensions", w.dims, true);
  check_shapelike(op, jax, "window_strides", w.strides, true);
  check_shapelike(op, jax, "base_dilation", w.base_dilation, false);
  check_shapelike(op, jax, "window_dilation", w.window_dilation, false);
  const size_t r = w.dims.size();
  if (in.size() != r)
    throw TypeError(op_message(op, jax +
                                       " got the wrong number of window_dimensions for operand: "
                                       "got operand shape " +
                                       shape_str(in) + " with window_dimensions " +
                                       ints_str(w.dims) + "."));
  auto inconsistent = [&](const char* what, const std::string& got) {
    throw TypeError(op_message(op, jax + " got inconsistent " + what +
                                       " and window_dimensions: got " + what + " " + got +
                                       " and window_dimensions " + ints_str(w.dims) + "."));
  };
  if (w.strides.size() != r) inconsistent("window_strides", ints_str(w.strides));
  if (w.padding.size() != r) inconsistent("padding", pads_str(w.padding));
  if (w.base_dilation.size() != r) inconsistent("base_dilation", ints_str(w.base_dilation));
  if (w.window_dilation.size() != r) inconsistent("window_dilation", ints_str(w.window_dilation));
  for (size_t d = 0; d < r; ++d)
    if (w.base_dilation[d] < 1 || w.window_dilation[d] < 1)
      throw TypeError(op_message(
          op, "All dilations must be positive, got " +
                  ints_str(w.base_dilation[d] < 1 ? w.base_dilation : w.window_dilation) + "."));
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    const int64_t padded =
        checked_add(op, checked_add(op, dilate(op, in[d], w.base_dilation[d]), w.padding[d].first),
                    w.padding[d].second);
    const int64_t win = dilate(op, w.dims[d], w.window_dilation[d]);
    const int64_t span = padded - win;
    // Floor division: one window fits when span >= 0; none when the window is one too long.
    const int64_t o = span >= 0 ? span / w.strides[d] + 1 : (span + 1 == 0 ? 0 : -1);
    if (o < 0 || padded < 0)
      throw ValueError(op_message(
          op, jax + " window of dimension " + std::to_string(d) + " (size " + std::to_string(win) +
                  " after window_dilation) is larger than the padded " + "operand (size " +
                  std::to_string(padded) + ") for operand shape " + shape_str(in) +
                  ", window_dimensions " + ints_str(w.dims) + ", padding " + pads_str(w.padding) +
                  "; pad the operand more or use a smaller window."));
    out[d] = o;
  }
  return out;
}

Plan make_plan(const Shape& in, const Shape& out, const WindowParams& w) {
  Plan p;
  int64_t r = static_cast<int64_t>(in.size());
  // Fold trailing dimensions with a trivial window into the contiguous inner block.
  while (r > 0) {
    const size_t d = static_cast<size_t>(r - 1);
    if (!(w.dims[d] == 1 && w.strides[d] == 1 &&
          w.padding[d] == std::pair<int64_t, int64_t>{0, 0} && w.base_dilation[d] == 1))
      break;
    p.inner *= in[d];
    --r;
  }
  p.rank = r;
  const std::vector<int64_t> st = row_major_strides(in);
  for (int64_t d = 0; d < r; ++d) {
    p.out.push_back(out[d]);
    p.win.push_back(w.dims[d]);
    p.in_step.push_back(st[d]);
    p.outer_out *= out[d];
    p.window_size *= w.dims[d];
    std::vector<int64_t> t(static_cast<size_t>(out[d] * w.dims[d]), -1);
    for (int64_t o = 0; o < out[d]; ++o)
      for (int64_t k = 0; k < w.dims[d]; ++k) {
        const int64_t pos = o * w.strides[d] + k * w.window_dilation[d] - w.padding[d].first;
        if (pos < 0 || pos % w.base_dilation[d] != 0) continue;
        const int64_t i = pos / w.base_dilation[d];
        if (i < in[d]) t[o * w.dims[d] + k] = i;
      }
    p.table.push_back(std::move(t));
  }
  return p;
}

void window_offsets(const Plan& plan, int64_t r, std::vector<int64_t>& offsets,
                    std::vector<int64_t>& o) {
  const int64_t rank = plan.rank;
  o.resize(static_cast<size_t>(rank));
  for (int64_t d = rank - 1; d >= 0; --d) {
    o[d] = r % plan.out[d];
    r /= plan.out[d];
  }
  // Row-major over the window, expanded one dimension at a time in place: entry j of the
  // previous dimensions becomes entries j * win .. j * win + win - 1, written from the back so
  // that no entry is overwritten before it is read.
  offsets.resize(static_cast<size_t>(plan.window_size));
  offsets[0] = 0;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t* row = plan.table[d].data() + o[d] * plan.win[d];
    const int64_t w = plan.win[d], step = plan.in_step[d];
    for (int64_t j = count - 1; j >= 0; --j) {
      const int64_t base = offsets[j];
      for (int64_t k = w - 1; k >= 0; --k)
        offsets[j * w + k] = base < 0 || row[k] < 0 ? -1 : base + row[k] * step;
    }
    count *= w;
  }
}

}  // namespace window

namespace {

using ad::JvpOut;
using ad::one;
using batching::BatchOut;
using batching::kNotMapped;
using kernels::compute_t;
using window::WindowParams;

enum class Red { kSum, kMax, kMin };

const char* red_name(Red r) {
  return r == Red::kSum   ? "reduce_window_sum"
         : r == Red::kMax ? "reduce_window_max"
                          : "reduce_window_min";
}

template <Red R>
std::vector<Aval> monoid_abstract(std::span<const Aval> in, const Params& p) {
  const char* op = red_name(R);
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  if (is_extended(x.dtype) || x.dtype == DType::kFloat0)
    throw TypeError(op_message(op, std::string(op) + " does not accept operands of dtype " +
                                       std::string(dtype_name(x.dtype)) + "."));
  if (R == Red::kSum && x.dtype == DType::kBool)
    throw TypeError(
        op_message(op,
                   "operand to reduce_window_sum must have a number dtype, got bool; convert it "
                   "with lax.convert_element_type first."));
  return {Aval{window::out_shape(op, x.shape, WindowParams::from(p)), x.dtype, x.weak_type}};
}

// Accumulator type: compute_t, except that signed integer sums wrap in the unsigned type.
template <class T, Red R>
struct Acc {
  using type = compute_t<T>;
};
template <class T, Red R>
requires(R == Red::kSum && std::is_integral_v<T> && std::is_signed_v<T>) struct Acc<T, R> {
  using type = std::make_unsigned_t<T>;
};
template <class T, Red R>
using acc_t = typename Acc<T, R>::type;

template <class A, Red R>
A identity() {
  if constexpr (R == Red::kSum) {
    return A(0);
  } else if constexpr (std::is_floating_point_v<A>) {
    return R == Red::kMax ? -std::numeric_limits<A>::infinity()
                          : std::numeric_limits<A>::infinity();
  } else {
    return R == Red::kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
}

template <Red R, class A, class X>
inline A combine(A a, X x) {
  if constexpr (R == Red::kSum) {
    return static_cast<A>(a + static_cast<A>(x));
  } else if constexpr (std::is_floating_point_v<A>) {
    // NaN-propagating, as lax.max / lax.min: a NaN operand wins and stays.
    if constexpr (R == Red::kMax)
      return (x > a || x != x) ? static_cast<A>(x) : a;
    else
      return (x < a || x != x) ? static_cast<A>(x) : a;
  } else {
    if constexpr (R == Red::kMax)
      return x > a ? static_cast<A>(x) : a;
    else
      return x < a ? static_cast<A>(x) : a;
  }
}

template <class T, Red R>
void monoid_kernel(const T* in, T* out, const window::Plan& plan) {
  using A = acc_t<T, R>;
  const int64_t inner = plan.inner;
  const int64_t work = std::max<int64_t>(1, inner * plan.window_size);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / work);
  runtime::parallel_for(plan.outer_out, grain, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> offsets, scratch;
    std::vector<A> acc(static_cast<size_t>(inner));
    for (int64_t r = r0; r < r1; ++r) {
      window::window_offsets(plan, r, offsets, scratch);
      std::fill(acc.begin(), acc.end(), identity<A, R>());
      for (int64_t off : offsets) {
        if (off < 0) continue;  // padding or a hole: the identity
        const T* src = in + off;
        if constexpr (std::is_same_v<A, T>) {
          for (int64_t c = 0; c < inner; ++c) acc[c] = combine<R, A>(acc[c], src[c]);
        } else {
          for (int64_t c = 0; c < inner; ++c) acc[c] = combine<R, A>(acc[c], kernels::load(src[c]));
        }
      }
      T* dst = out + r * inner;
      for (int64_t c = 0; c < inner; ++c) {
        if constexpr (kernels::is_half_v<T>)
          dst[c] = kernels::store<T>(acc[c]);
        else
          dst[c] = static_cast<T>(acc[c]);
      }
    }
  });
}

template <Red R>
std::vector<Array> monoid_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                               std::span<const Aval> outs) {
  const Array& x = args[0];
  Array out = empty_array(outs[0], red_name(R), ctx.device);
  if (outs[0].size() == 0) return {out};
  const window::Plan plan = window::make_plan(x.shape(), outs[0].shape, WindowParams::from(p));
  kernels::dispatch_dtype(x.dtype(), [&]<class T>() {
    if constexpr (R == Red::kSum && std::is_same_v<T, bool>) {
      throw_internal("prims/reduce_window", "reduce_window_sum reached the kernel with bool");
    } else {
      monoid_kernel<T, R>(static_cast<const T*>(x.raw_data()),
                          static_cast<T*>(out.buffer()->data()), plan);
    }
  });
  return {out};
}

Array bind_monoid(const Primitive& prim, const Array& x, const WindowParams& w) {
  Params p;
  w.set(p);
  return bind1(prim, {x}, p);
}

JvpOut sum_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  return ad::linear_jvp(primals, tangents,
                        [&](const Array& x) { return bind1(reduce_window_sum, {x}, p); });
}

// JAX's _reduce_window_sum_transpose_rule: the cotangent padded so that a window of the same
// size and dilation, striding by base_dilation, collects every output that read each input
// (JAX's _conv_general_vjp_lhs_padding), interior-padded by stride - 1.
std::vector<Array> sum_transpose(std::span<const Array> cts, std::span<const Array>,
                                 std::span<const Aval> arg_avals, const Params& p) {
  const Array& ct = cts[0];
  const Shape& in = arg_avals[0].shape;
  const WindowParams w = WindowParams::from(p);
  const char* op = "reduce_window_sum";
  if (shape_size(in) == 0 || ct.size() == 0) return {ad::zeros_like_aval(arg_avals[0])};
  std::vector<lax::PadConfig> cfg;
  WindowParams t;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t win = window::dilate(op, w.dims[d], w.window_dilation[d]);
    const int64_t lhs = window::dilate(op, in[d], w.base_dilation[d]);
    const int64_t outd = window::dilate(op, ct.shape()[d], w.strides[d]);
    const int64_t before = win - w.padding[d].first - 1;
    const int64_t after = lhs + win - 1 - outd - before;
    cfg.push_back({before, after, w.strides[d] - 1});
  }
  t.dims = w.dims;
  t.strides = w.base_dilation;
  t.padding.assign(in.size(), {0, 0});
  t.base_dilation.assign(in.size(), 1);
  t.window_dilation = w.window_dilation;
  Array padded = lax::pad(ct, ad::scalar_const(0.0, ct.dtype()), cfg);
  Array r = bind_monoid(reduce_window_sum, padded, t);
  if (r.shape() != in)
    throw_internal("prims/reduce_window", "reduce_window_sum transpose made shape " +
                                              shape_str(r.shape()) + " for operand " +
                                              shape_str(in));
  return {r};
}

// JAX's _reduce_window_chooser_jvp_rule: the tangent at the max (min) of each window.
template <Red R>
JvpOut chooser_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                   const Params& p) {
  Array out = bind1(R == Red::kMax ? reduce_window_max : reduce_window_min, primals, p);
  if (ad::zero_tangent(primals[0], tangents[0])) return {one(out), one(Array())};
  Params q;
  q.set("select_prim", std::string(R == Red::kMax ? "ge" : "le"));
  WindowParams::from(p).set(q);
  return {one(out), one(bind1(select_and_gather_add, {tangents[0], primals[0]}, q))};
}

template <Red R>
BatchOut monoid_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                      const Params& p) {
  const int64_t b = bdims[0];
  const Primitive& prim = R == Red::kSum   ? reduce_window_sum
                          : R == Red::kMax ? reduce_window_max
                                           : reduce_window_min;
  return {one(bind_monoid(prim, args[0], WindowParams::from(p).with_unit_dim(b))), {b}};
}

// ---- the generic reduce_window ----

using JaxprPtr = std::shared_ptr<const Jaxpr>;
constexpr const char* kGeneric = "reduce_window";

const Jaxpr& body_of(const Params& p) {
  const JaxprPtr& j = p.get<JaxprPtr>("jaxpr");
  if (!j) throw_internal("prims/reduce_window", "reduce_window has a null jaxpr");
  return *j;
}

int64_t num_operands(const Jaxpr& body, size_t nargs) {
  const size_t k = body.constvars.size();
  if (nargs < k + 2 || (nargs - k) % 2 != 0)
    throw TypeError(op_message(
        kGeneric,
        "expects operands and init values in equal numbers (at least one of each) followed by "
        "the computation's " +
            std::to_string(k) + " constants, got " + std::to_string(nargs) + " arguments"));
  return static_cast<int64_t>((nargs - k) / 2);
}

std::string dtypes_str(std::span<const Aval> avs) {
  std::string s = "[";
  for (size_t i = 0; i < avs.size(); ++i)
    s += (i ? ", " : "") + std::string(dtype_name(avs[i].dtype));
  return s + "]";
}

std::vector<Aval> generic_abstract(std::span<const Aval> in, const Params& p) {
  const Jaxpr& body = body_of(p);
  const int64_t n = num_operands(body, in.size());
  const auto ops = in.subspan(0, n), inits = in.subspan(n, n), consts = in.subspan(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    if (is_extended(ops[i].dtype) || ops[i].dtype == DType::kFloat0)
      throw TypeError(op_message(kGeneric, "reduce_window does not accept operands of dtype " +
                                               std::string(dtype_name(ops[i].dtype)) + "."));
    if (ops[i].dtype != inits[i].dtype)
      throw TypeError(op_message(
          kGeneric,
          "reduce_window got inconsistent dtypes for operands and init_values: got operand "
          "dtypes " +
              dtypes_str(ops) + " and init_value dtypes " + dtypes_str(inits) + "."));
    if (inits[i].ndim() != 0) {
      std::string shapes = "[";
      for (int64_t j = 0; j < n; ++j) shapes += (j ? ", " : "") + shape_str(inits[j].shape);
      throw TypeError(op_message(kGeneric,
                                 "reduce_window expected init_values to be scalars but "
                                 "init_values have shapes " +
                                     shapes + "]."));
    }
    if (ops[i].shape != ops[0].shape)
      throw ValueError(op_message(kGeneric, "reduce_window operands must have one shape, got " +
                                                shape_str(ops[0].shape) + " and " +
                                                shape_str(ops[i].shape) + "."));
  }
  bool ok = body.invars.size() == static_cast<size_t>(2 * n) &&
            body.outvars.size() == static_cast<size_t>(n);
  for (int64_t i = 0; ok && i < n; ++i) {
    const Aval& a = body.invars[i].aval();
    const Aval& b = body.invars[n + i].aval();
    const Aval& o = atom_aval(body.outvars[i]);
    ok = a.ndim() == 0 && b.ndim() == 0 && o.ndim() == 0 && a.dtype == ops[i].dtype &&
         b.dtype == ops[i].dtype && o.dtype == ops[i].dtype;
  }
  if (!ok)
    throw TypeError(op_message(kGeneric,
                               "the computation must map (accumulators, values), rank-0 values "
                               "of the operands' dtypes " +
                                   dtypes_str(ops) + ", to accumulators of the same types."));
  for (size_t c = 0; c < consts.size(); ++c)
    if (!(consts[c].shape == body.constvars[c].aval().shape &&
          consts[c].dtype == body.constvars[c].aval().dtype))
      throw TypeError(op_message(
          kGeneric, "constant " + std::to_string(c) + " of the computation is " + consts[c].str() +
                        " but the computation expects " + body.constvars[c].aval().str() + "."));
  const Shape out = window::out_shape(kGeneric, ops[0].shape, WindowParams::from(p));
  std::vector<Aval> res;
  for (int64_t i = 0; i < n; ++i) res.push_back(Aval{out, ops[i].dtype, ops[i].weak_type});
  return res;
}

// The composite: pad with the init values (interior padding = base_dilation - 1), then fold one
// strided slice per window position, in window order, into the accumulators.
std::vector<Array> generic_composite(const Jaxpr& body, std::span<const Array> args,
                                     const WindowParams& w) {
  const int64_t n = num_operands(body, args.size());
  const auto ops = args.subspan(0, n), inits = args.subspan(n, n);
  std::vector<Array> consts(args.begin() + 2 * n, args.end());
  const Shape out = window::out_shape(kGeneric, ops[0].shape(), w);
  std::vector<Array> acc;
  for (int64_t i = 0; i < n; ++i) acc.push_back(lax::broadcast_in_dim(inits[i], out, {}));
  if (shape_size(out) == 0) return acc;
  const size_t r = out.size();
  std::vector<lax::PadConfig> cfg(r);
  for (size_t d = 0; d < r; ++d)
    cfg[d] = {w.padding[d].first, w.padding[d].second, w.base_dilation[d] - 1};
  std::vector<Array> padded;
  for (int64_t i = 0; i < n; ++i) padded.push_back(lax::pad(ops[i], inits[i], cfg));
  const int64_t size = shape_size(out);
  auto flat = [&](const Array& a) { return lax::reshape(a, {size}); };
  std::vector<int64_t> k(r, 0);
  int64_t count = 1;
  for (int64_t d : w.dims) count *= d;
  for (int64_t step = 0; step < count; ++step) {
    std::vector<int64_t> start(r), limit(r);
    for (size_t d = 0; d < r; ++d) {
      start[d] = k[d] * w.window_dilation[d];
      limit[d] = start[d] + (out[d] - 1) * w.strides[d] + 1;
    }
    std::vector<Array> xs;
    for (const Array& a : acc) xs.push_back(flat(a));
    for (int64_t i = 0; i < n; ++i)
      xs.push_back(flat(lax::slice(padded[i], start, limit, w.strides)));
    std::vector<Array> next =
        trace::batch_fun([&](std::span<const Array> v) { return eval_jaxpr(body, consts, v); }, xs,
                         std::vector<int64_t>(xs.size(), 0), size);
    for (int64_t i = 0; i < n; ++i) acc[i] = lax::reshape(next[i], out);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {  // row-major odometer
      if (++k[d] < w.dims[d]) break;
      k[d] = 0;
    }
  }
  return acc;
}

std::vector<Array> generic_impl(const ExecContext&, std::span<const Array> args, const Params& p,
                                std::span<const Aval> out_avals) {
  Trace* bottom = current_trace();
  while (bottom->parent() != nullptr) bottom = bottom->parent();
  TraceScope scope(bottom);
  std::vector<Array> outs = generic_composite(body_of(p), args, WindowParams::from(p));
  for (size_t i = 0; i < outs.size(); ++i)  // the declared types (weak flags)
    if (!(outs[i].aval() == out_avals[i])) outs[i] = Array(out_avals[i], outs[i].buffer());
  return outs;
}

JvpOut generic_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                   const Params& p) {
  const Jaxpr& body = body_of(p);
  const WindowParams w = WindowParams::from(p);
  auto [outs, touts] = trace::jvp_fun(
      [&](std::span<const Array> xs) { return generic_composite(body, xs, w); }, primals, tangents);
  for (size_t i = 0; i < outs.size(); ++i)
    if (!ad::has_tangent(outs[i].dtype())) touts[i] = Array();
  return {std::move(outs), std::move(touts)};
}

// JAX's _generic_reduce_window_batch_rule: the operands' batch axis moves to the front and gets
// a window of size 1. Batched init values or constants (which JAX does not batch): the
// composite, mapped.
BatchOut generic_batch(const BatchAxis&, std::span<const Array> args,
                       std::span<const int64_t> bdims, const Params& p) {
  const Jaxpr& body = body_of(p);
  const int64_t n = num_operands(body, args.size());
  const int64_t size = batching::batch_size(args, bdims);
  const WindowParams w = WindowParams::from(p);
  const bool others =
      std::any_of(bdims.begin() + n, bdims.end(), [](int64_t d) { return d != kNotMapped; });
  if (others) {
    std::vector<Array> outs =
        trace::batch_fun([&](std::span<const Array> xs) { return generic_composite(body, xs, w); },
                         args, bdims, size);
    return {outs, std::vector<int64_t>(outs.size(), 0)};
  }
  std::vector<Array> xs(args.begin(), args.end());
  for (int64_t i = 0; i < n; ++i) xs[i] = batching::batch_at(args[i], bdims[i], size, 0);
  Params q = p;
  w.with_unit_dim(0).set(q);
  std::vector<Array> outs = tessera::bind(reduce_window, xs, q);
  return {outs, std::vector<int64_t>(outs.size(), 0)};
}

std::vector<ParamSpec> window_specs() {
  return {{"window_dimensions", ParamKind::kInts},
          {"window_strides", ParamKind::kInts},
          {"padding", ParamKind::kTuple},
          {"base_dilation", ParamKind::kInts},
          {"window_dilation", ParamKind::kInts}};
}

}  // namespace

void register_reduce_window() {
  for (Primitive* p : {&reduce_window_sum, &reduce_window_max, &reduce_window_min}) {
    p->kind = PrimitiveKind::kLibraryCall;
    p->signature = Signature::fixed(1, window_specs());
  }
  reduce_window_sum.abstract_eval = monoid_abstract<Red::kSum>;
  reduce_window_sum.impl = monoid_impl<Red::kSum>;
  reduce_window_sum.jvp = sum_jvp;
  reduce_window_sum.transpose = sum_transpose;
  reduce_window_sum.batch = monoid_batch<Red::kSum>;
  reduce_window_max.abstract_eval = monoid_abstract<Red::kMax>;
  reduce_window_max.impl = monoid_impl<Red::kMax>;
  reduce_window_max.jvp = chooser_jvp<Red::kMax>;
  reduce_window_max.batch = monoid_batch<Red::kMax>;
  reduce_window_min.abstract_eval = monoid_abstract<Red::kMin>;
  reduce_window_min.impl = monoid_impl<Red::kMin>;
  reduce_window_min.jvp = chooser_jvp<Red::kMin>;
  reduce_window_min.batch = monoid_batch<Red::kMin>;
  for (Primitive* p : {&reduce_window_sum, &reduce_window_max, &reduce_window_min})
    register_primitive(*p);

  reduce_window.kind = PrimitiveKind::kLibraryCall;
  std::vector<ParamSpec> specs = window_specs();
  specs.insert(specs.begin(), {"jaxpr", ParamKind::kJaxpr});
  reduce_window.signature = Signature::at_least(2, specs);
  reduce_window.abstract_eval = generic_abstract;
  reduce_window.impl = generic_impl;
  reduce_window.jvp = generic_jvp;
  reduce_window.batch = generic_batch;
  register_primitive(reduce_window);
}

}  // namespace tessera::prims
