// Binary elementwise math: atan2, nextafter, rem (lax broadcasting, one dtype, as add); and
// clamp(min, x, max), whose bounds are rank 0 or x's shape.
//
// atan2 and nextafter take floating dtypes; rem integers and floats: the remainder of truncated
// division with the dividend's sign (fmod, exact for floats; integers as XLA: x % 0 == x and
// INT_MIN % -1 == 0); clamp any dtype (bool included, as JAX): min(max(x, lo), hi),
// NaN-propagating. nextafter steps the bits of the operand's own format (16-bit floats are not
// computed in float32 here: their step is their own ulp).
//
// JVPs are JAX's; nextafter has none in JAX: we give it derivative 1 in x and 0 in y (the result
// is x moved by one ulp), so that code using it (e.g. to nudge a bound) stays differentiable.
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/vec_math_extra.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive atan2("atan2");
Primitive nextafter("nextafter");
Primitive rem("rem");
Primitive clamp("clamp");

namespace {

using elementwise::Accept;
using kernels::is_half_v;

constexpr const char* kLayer = "prims/binary_math";

// ---------------------------------------------------------------- kernels

// float32 through float64 libm, rounded once.
struct Atan2Op : elementwise::FloatKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, float>)
      return static_cast<float>(std::atan2(static_cast<double>(a), static_cast<double>(b)));
    else if constexpr (std::is_same_v<C, double>)
      return std::atan2(a, b);
    else
      return a;  // never instantiated for integers (accepts)
  }
};

struct RemOp : elementwise::NumberKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;  // INT_MIN % -1 would trap
      }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);  // exact
    }
  }
};

template <class T>
T next_toward(T a, T b) {
  using kernels::vmath::nextafter_bits;
  if constexpr (is_half_v<T>) {
    return T{nextafter_bits<uint16_t, float>(a.bits, b.bits, kernels::load(a), kernels::load(b))};
  } else if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(nextafter_bits<uint32_t, float>(std::bit_cast<uint32_t>(a),
                                                                std::bit_cast<uint32_t>(b), a, b));
  } else {
    return std::bit_cast<double>(nextafter_bits<uint64_t, double>(
        std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b), a, b));
  }
}

// One run of nextafter on the storage type (no float32 round trip), strides in {0, 1}.
template <class T>
void nextafter_run(const T* a, int64_t sa, const T* b, int64_t sb, T* o, int64_t n) {
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i) o[i] = next_toward(a[i], b[i]);
  } else if (sa) {
    const T y = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = next_toward(a[i], y);
  } else if (sb) {
    const T x = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = next_toward(x, b[i]);
  } else {
    const T v = next_toward(*a, *b);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

struct NextafterK : elementwise::FloatKernel {
  template <class T>
  void operator()(const T* a, int64_t sa, const T* b, int64_t sb, T* o, int64_t n) const {
    nextafter_run(a, sa, b, sb, o, n);
  }
};

// min(max(x, lo), hi) with NaN propagation (XLA's clamp). 16-bit floats compare as float.
template <class C>
inline C clamp_one(C lo, C x, C hi) {
  if constexpr (std::is_floating_point_v<C>) {
    const C m = x != x ? x : (x > lo ? x : lo);  // NaN lo: x > NaN is false -> lo
    return m != m ? m : (m < hi ? m : hi);
  } else {
    const C m = x > lo ? x : lo;
    return m < hi ? m : hi;
  }
}

template <class T>
void clamp_run(const T* lo, int64_t sl, const T* x, int64_t sx, const T* hi, int64_t sh, T* o,
               int64_t n) {
  using kernels::load;
  using kernels::store;
  if constexpr (is_half_v<T>) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = store<T>(clamp_one(load(lo[i * sl]), load(x[i * sx]), load(hi[i * sh])));
  } else if (sx && !sl && !sh) {  // the common case: scalar bounds, a plain loop
    const T l = *lo, h = *hi;
    for (int64_t i = 0; i < n; ++i) o[i] = clamp_one(l, x[i], h);
  } else if (sx && sl && sh) {
    for (int64_t i = 0; i < n; ++i) o[i] = clamp_one(lo[i], x[i], hi[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = clamp_one(lo[i * sl], x[i * sx], hi[i * sh]);
  }
}

// ---------------------------------------------------------------- clamp abstract eval and impl

std::vector<Aval> clamp_abstract(std::span<const Aval> in, const Params&) {
  const char* op = "clamp";
  kernels::check_num_operands(op, in, 3);
  for (const Aval& a : in) kernels::check_not_extended(op, a);
  kernels::check_same_dtype(op, in, "convert the bounds to the operand's dtype");
  const Aval& x = in[1];
  const char* names[] = {"min", "operand", "max"};
  for (int i : {0, 2}) {
    if (!in[i].shape.empty() && in[i].shape != x.shape) {
      throw TypeError(op_message(
          op, std::string("requires ") + names[i] + ".shape == operand.shape or " + names[i] +
                  ".shape == (), got " + names[i] + " " + in[i].str() + " and operand " + x.str() +
                  "; broadcast " + names[i] + " to the operand's shape first"));
    }
  }
  return {Aval{x.shape, x.dtype, in[0].weak_type && x.weak_type && in[2].weak_type}};
}

std::vector<Array> clamp_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                              std::span<const Aval> out_avals) {
  const char* op = "clamp";
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op, ctx.device);
  const auto plan =
      kernels::make_plan<3>(oa.shape, {&args[0].shape(), &args[1].shape(), &args[2].shape()});
  if (plan.size == 0) return {out};
  kernels::dispatch_dtype(oa.dtype, [&]<class T>() {
    const T* lo = static_cast<const T*>(args[0].raw_data(op));
    const T* x = static_cast<const T*>(args[1].raw_data(op));
    const T* hi = static_cast<const T*>(args[2].raw_data(op));
    T* o = static_cast<T*>(out.buffer()->data());
    kernels::parallel_runs<3>(plan,
                              [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t len) {
                                clamp_run(lo + off[0], plan.inner[0], x + off[1], plan.inner[1],
                                          hi + off[2], plan.inner[2], o + oo, len);
                              });
  });
  return {out};
}

// ---------------------------------------------------------------- JVP rules (JAX's)

using ad::JvpOut;

JvpOut pack(const Array& out, const Array& t) {
  if (!ad::has_tangent(out.dtype()) || !t.defined()) return {{out}, {Array()}};
  return {{out}, {ad::broadcast_to_shape(t, out.shape())}};
}

// atan2(x, y): tx * y / (x^2 + y^2) - ty * x / (x^2 + y^2).
JvpOut atan2_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &y = p[1];
  Array out = lax::atan2(x, y);
  if (!t[0].defined() && !t[1].defined()) return {{out}, {Array()}};
  Array d = lax::add(lax::square(x), lax::square(y));
  Array a = t[0].defined() ? lax::mul(t[0], lax::div(y, d)) : Array();
  Array b = t[1].defined() ? lax::mul(t[1], lax::div(lax::neg(x), d)) : Array();
  return pack(out, ad::add_tangents(ad::broadcast_to_shape(a, out.shape()),
                                    ad::broadcast_to_shape(b, out.shape())));
}

// rem(x, y) = x - y * trunc(x / y): tx - ty * sign(x / y) * floor(|x / y|), as JAX.
JvpOut rem_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &y = p[1];
  Array out = lax::rem(x, y);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  Array a = ad::broadcast_to_shape(t[0], out.shape());
  Array b;
  if (t[1].defined()) {
    Array q = lax::div(x, y);
    b = lax::mul(lax::neg(t[1]), lax::mul(lax::sign(q), lax::floor(lax::abs(q))));
    b = ad::broadcast_to_shape(b, out.shape());
  }
  return pack(out, ad::add_tangents(a, b));
}

// No rule in JAX; ours: derivative 1 in x, 0 in y (see the header).
JvpOut nextafter_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  Array out = lax::nextafter(p[0], p[1]);
  return pack(out, t[0]);
}

// JAX's select rule: x's tangent where lo < x < hi; lo's where lo > x (and lo < hi); hi's where
// hi < x. At x == lo or x == hi no tangent passes. Logical and is min on bool.
JvpOut clamp_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &lo = p[0], &x = p[1], &hi = p[2];
  Array out = lax::clamp(lo, x, hi);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  const Aval xa{x.shape(), x.dtype(), false};
  auto pick = [&](const Array& pred, const Array& tan) -> Array {
    if (!tan.defined()) return Array();
    return lax::select_n(pred, {ad::zeros_like_aval(xa), ad::broadcast_to_shape(tan, x.shape())});
  };
  Array t_lo = pick(lax::min(lax::gt(lo, x), lax::lt(lo, hi)), t[0]);
  Array t_x = pick(lax::min(lax::gt(x, lo), lax::lt(x, hi)), t[1]);
  Array t_hi = pick(lax::lt(hi, x), t[2]);
  return pack(out, ad::add_tangents(ad::add_tangents(t_lo, t_x), t_hi));
}

// ---------------------------------------------------------------- batching

// clamp's bounds must be rank 0 or x's full (batched) shape: no size-1 broadcasting. The batch
// axis stays where x has it (0 when x is unbatched); unbatched rank-0 bounds stay as they are,
// batched full-rank bounds are moved there, and the rest is broadcast to x's batched shape.
batching::BatchOut clamp_batch(const BatchAxis&, std::span<const Array> args,
                               std::span<const int64_t> dims, const Params& params) {
  using batching::kNotMapped;
  const int64_t size = batching::batch_size(args, dims);
  const int64_t rank = batching::logical_rank(args[1], dims[1]);
  const int64_t d = dims[1] == kNotMapped ? 0 : dims[1];
  std::vector<Array> a(3);
  a[1] = batching::batch_at(args[1], dims[1], size, d);
  for (int i : {0, 2}) {
    const Array& b = args[i];
    if (dims[i] == kNotMapped) {
      a[i] = b.ndim() == 0 ? b : batching::broadcast_batched(b, size, d);
    } else if (batching::logical_rank(b, dims[i]) == rank) {
      a[i] = batching::move_axis(b, dims[i], d);
    } else {  // shape (B,) against an operand of rank > 0
      a[i] = lax::broadcast_in_dim(b, a[1].shape(), {d});
    }
  }
  return {tessera::bind(clamp, a, params), {d}};
}

// ---- Scalar definitions (scalar_ir.h).

// clamp(lo, x, hi) = min(max(x, lo), hi), NaN-propagating.
elementwise::sdef::Values clamp_def(scalar::Builder& b, std::span<const scalar::Value> in,
                                    const Params&) {
  return {b.min(b.max(in[1], in[0]), in[2])};
}

// nextafter in the operand's own format: the op for float32/float64; 16-bit floats step their
// own bits (the kernel's nextafter_run): toward y by one ulp, the smallest subnormal from zero,
// y when equal, NaN when either is NaN.
elementwise::sdef::Values nextafter_def(scalar::Builder& b, std::span<const scalar::Value> in,
                                        const Params&) {
  const scalar::Value x = in[0], y = in[1];
  if (x.type == DType::kFloat32 || x.type == DType::kFloat64) {
    return {b.binary(scalar::Op::kNextAfter, x, y)};
  }
  const scalar::Value xf = b.convert(x, DType::kFloat32), yf = b.convert(y, DType::kFloat32);
  const scalar::Value zero = b.like(0.0, xf);
  const scalar::Value u = b.bitcast(x, DType::kUInt16);
  auto k = [&](uint64_t v) { return b.constant_bits(v, DType::kUInt16); };
  const scalar::Value away = b.eq(b.lt(xf, yf), b.gt(xf, zero));  // |x| grows
  const scalar::Value stepped = b.select(away, b.add(u, k(1)), b.sub(u, k(1)));
  const scalar::Value from_zero = b.select(b.gt(yf, zero), k(0x0001), k(0x8001));
  scalar::Value r = b.select(b.eq(xf, zero), from_zero, stepped);
  r = b.bitcast(r, x.type);
  r = b.select(b.eq(xf, yf), y, r);
  return {b.select(b.is_nan(xf), x, b.select(b.is_nan(yf), y, r))};
}

void set_scalar_defs() {
  using elementwise::sdef::op;
  using scalar::Op;
  atan2.scalar = op(Op::kAtan2);
  nextafter.scalar = {nextafter_def, true};
  rem.scalar = op(Op::kRem);
  clamp.scalar.rule = clamp_def;
}

}  // namespace

void register_binary_math() {
  for (Primitive* p : {&atan2, &nextafter, &rem, &clamp}) p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  for (Primitive* p : {&atan2, &rem, &nextafter}) p->signature = Signature::fixed(2);
  clamp.signature = Signature::fixed(3);  // min, x, max
  using elementwise::define_binary;
  using elementwise::Runs;
  const char* fix = "; convert with convert_element_type";
  define_binary<Runs<Atan2Op>>(atan2, kLayer, Accept::kFloating, fix);
  define_binary<Runs<RemOp>>(rem, kLayer, Accept::kNumber, "");
  define_binary<NextafterK>(nextafter, kLayer, Accept::kFloating, fix);
  atan2.jvp = atan2_jvp;
  rem.jvp = rem_jvp;
  nextafter.jvp = nextafter_jvp;
  // lax broadcasting stretches size-1 axes: only batched operands that disagree move.
  for (Primitive* p : {&atan2, &rem, &nextafter}) {
    p->batch = batching::broadcasting_rule(*p);
    register_primitive(*p);
  }
  clamp.abstract_eval = clamp_abstract;
  clamp.impl = clamp_impl;
  clamp.jvp = clamp_jvp;
  clamp.batch = clamp_batch;
  register_primitive(clamp);
}

}  // namespace tessera::prims
