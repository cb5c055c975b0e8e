// select_n(which, *cases) and convert_element_type {new_dtype, weak_type}.
//
// select_n picks cases[which] elementwise; which is bool (at most 2 cases) or an integer
// (clamped into [0, ncases): out of range is undefined in JAX). convert_element_type converts
// between all numeric dtypes; float -> integer truncates toward zero, maps NaN to 0 and
// SATURATES out-of-range values to the integer's range (XLA leaves that implementation-defined;
// we pick the answer that never depends on the machine). Anything -> bool is x != 0.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "compiler/passes/simplify.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/vec_math.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive select_n("select_n");
Primitive convert_element_type("convert_element_type");

namespace {

using kernels::is_half_v;
using runtime::kElementwiseGrain;
using runtime::parallel_for;

// ---------------------------------------------------------------- select_n

std::vector<Aval> select_n_abstract(std::span<const Aval> in, const Params&) {
  const char* op = "select_n";
  if (in.size() < 2) {
    throw TypeError(op_message(op, "requires `which` and at least one case, got " +
                                       std::to_string(in.size()) + " operand(s)"));
  }
  const Aval& which = in[0];
  std::span<const Aval> cases = in.subspan(1);
  if (!is_bool(which.dtype) && !is_integer(which.dtype)) {
    throw TypeError(op_message(op, "`which` must be a bool or integer array, got " + which.str() +
                                       "; compare it with 0 or convert it to int32"));
  }
  if (is_bool(which.dtype) && cases.size() > 2) {
    throw TypeError(op_message(op, "a bool `which` selects between at most 2 cases, got " +
                                       std::to_string(cases.size()) +
                                       "; use an int32 `which` for more"));
  }
  bool weak = true;
  for (const Aval& c : cases) {
    if (c.dtype != cases[0].dtype || c.shape != cases[0].shape) {
      throw TypeError(op_message(op, "cases must have the same shape and dtype, got " +
                                         cases[0].str() + " and " + c.str() +
                                         "; broadcast or convert them first"));
    }
    weak = weak && c.weak_type;
  }
  if (which.ndim() != 0 && which.shape != cases[0].shape) {
    throw TypeError(op_message(op, "`which` must be scalar or have the cases' shape, got `which` " +
                                       which.str() + " and cases " + cases[0].str()));
  }
  return {Aval{cases[0].shape, cases[0].dtype, weak}};
}

template <class W>
int64_t clamp_which(W w, int64_t ncases) {
  if constexpr (std::is_same_v<W, bool>) {
    return w ? std::min<int64_t>(1, ncases - 1) : 0;
  } else if constexpr (std::is_signed_v<W>) {
    return w < 0 ? 0 : (static_cast<int64_t>(w) >= ncases ? ncases - 1 : static_cast<int64_t>(w));
  } else {
    return static_cast<uint64_t>(w) >= static_cast<uint64_t>(ncases) ? ncases - 1
                                                                     : static_cast<int64_t>(w);
  }
}

std::vector<Array> select_n_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                                 std::span<const Aval> out_avals) {
  const Array& which = args[0];
  const int64_t ncases = static_cast<int64_t>(args.size()) - 1;
  const Aval& oa = out_avals[0];
  auto same_aval = [&](const Array& c) -> Array {
    return c.aval() == oa ? c : Array(oa, c.buffer("select_n"));
  };
  if (ncases == 1) return {same_aval(args[1])};
  if (which.ndim() == 0) {  // one case wins everywhere: share its buffer
    const int64_t k = kernels::dispatch_dtype(which.dtype(), [&]<class W>() -> int64_t {
      if constexpr (is_half_v<W> || std::is_floating_point_v<W>) {
        throw_internal("prims/select_convert", "floating `which`");
      } else {
        return clamp_which(*static_cast<const W*>(which.raw_data("select_n")), ncases);
      }
    });
    return {same_aval(args[1 + k])};
  }
  Array out = empty_array(oa, "select_n", ctx.device);
  const int64_t n = oa.size();
  if (n == 0 || itemsize(oa.dtype) == 0) return {out};
  kernels::dispatch_dtype(which.dtype(), [&]<class W>() {
    if constexpr (is_half_v<W> || std::is_floating_point_v<W>) {
      throw_internal("prims/select_convert", "floating `which`");
    } else {
      kernels::dispatch_bits(itemsize(oa.dtype), [&]<class U>() {
        const W* w = static_cast<const W*>(which.raw_data("select_n"));
        U* o = static_cast<U*>(out.buffer()->data());
        std::vector<const U*> cs(static_cast<size_t>(ncases));
        for (int64_t k = 0; k < ncases; ++k) {
          cs[k] = static_cast<const U*>(args[1 + k].raw_data("select_n"));
        }
        parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
          if (ncases == 2) {  // the common case: a blend that vectorizes
            const U* c0 = cs[0];
            const U* c1 = cs[1];
            if constexpr (std::is_same_v<W, bool>) {
              // As in convert: read the 0/1 bytes as uint8_t so the blend vectorizes.
              const auto* wb = reinterpret_cast<const uint8_t*>(w);
              for (int64_t i = b; i < e; ++i) o[i] = wb[i] != 0 ? c1[i] : c0[i];
            } else {
              for (int64_t i = b; i < e; ++i) o[i] = w[i] > W(0) ? c1[i] : c0[i];
            }
          } else {
            for (int64_t i = b; i < e; ++i) o[i] = cs[clamp_which(w[i], ncases)][i];
          }
        });
      });
    }
  });
  return {out};
}

// ---------------------------------------------------------------- convert_element_type

std::vector<Aval> convert_abstract(std::span<const Aval> in, const Params& params) {
  const char* op = "convert_element_type";
  kernels::check_num_operands(op, in, 1);
  const DType to = params.get_dtype("new_dtype");
  const bool weak = params.get_bool("weak_type");
  const Aval& x = in[0];
  if (x.dtype != to && (is_extended(x.dtype) || is_extended(to))) {
    throw TypeError(op_message(op, "cannot convert " + x.str() + " to " +
                                       std::string(dtype_name(to)) +
                                       ": extended dtypes (float0, PRNG keys) have no numeric "
                                       "conversions"));
  }
  return {Aval{x.shape, to, weak}};
}

// Float -> integer: truncate toward zero, NaN -> 0, saturate out of range.
template <class D, class S>
D float_to_int(S v) {
  constexpr S lo = static_cast<S>(std::numeric_limits<D>::min());  // 0 or -2^(bits-1): exact
  constexpr S hi = static_cast<S>(D(1) << (std::numeric_limits<D>::digits - 1)) * S(2);  // 2^digits
  if (!(v == v)) return D(0);
  if (v >= hi) return std::numeric_limits<D>::max();
  if (v < lo) return std::numeric_limits<D>::min();
  return static_cast<D>(v);
}

// Integer -> bfloat16 rounded once (int32/int64 -> float would round twice): round the
// magnitude to 8 significant bits, to nearest even, in integer arithmetic; the rest is exact.
template <class S>
bfloat16_t int_to_bfloat16(S v) {
  bool negative = false;
  if constexpr (std::is_signed_v<S>) negative = v < 0;
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int shift = 0;
  const int len = 64 - std::countl_zero(mag);
  if (len > 8) {
    shift = len - 8;
    const uint64_t low = mag & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    mag >>= shift;
    if (low > half || (low == half && (mag & 1))) ++mag;  // may reach 256: still exact
  }
  const float f = std::ldexp(static_cast<float>(mag), shift);
  return kernels::store<bfloat16_t>(negative ? -f : f);
}

// One element, S and D not 16-bit floats.
template <class S, class D>
D convert_one(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_same_v<S, bool>) {
    return static_cast<D>(v ? 1 : 0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    return float_to_int<D>(v);
  } else {
    return static_cast<D>(v);  // int -> int wraps (C++20); to float rounds to nearest
  }
}

template <class S, class D>
void convert_n(const S* x, D* y, int64_t n) {
  if constexpr (is_half_v<S>) {
    // Exact to float32, then one rounding to D.
    float buf[kernels::kHalfBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kernels::kHalfBlock) {
      const int64_t m = std::min(kernels::kHalfBlock, n - i0);
      kernels::vmath::to_float_n(x + i0, buf, m);
      convert_n<float, D>(buf, y + i0, m);
    }
  } else if constexpr (is_half_v<D>) {
    if constexpr (std::is_same_v<S, float>) {
      kernels::vmath::from_float_n(x, y, n);
    } else if constexpr (std::is_same_v<S, double>) {
      for (int64_t i = 0; i < n; ++i) {
        y[i].bits = std::is_same_v<D, float16_t> ? double_to_half_bits(x[i])
                                                 : double_to_bfloat16_bits(x[i]);
      }
    } else if constexpr (std::is_same_v<D, bfloat16_t> && sizeof(S) >= 4) {
      for (int64_t i = 0; i < n; ++i) y[i] = int_to_bfloat16(x[i]);
    } else {
      // Small integers and bool are exact in float32; for float16, 32/64-bit integers round
      // to float32 first, which only matters beyond 2^24 where float16 is inf anyway.
      float buf[kernels::kHalfBlock];
      for (int64_t i0 = 0; i0 < n; i0 += kernels::kHalfBlock) {
        const int64_t m = std::min(kernels::kHalfBlock, n - i0);
        for (int64_t i = 0; i < m; ++i) buf[i] = convert_one<S, float>(x[i0 + i]);
        kernels::vmath::from_float_n(buf, y + i0, m);
      }
    }
  } else if constexpr (std::is_same_v<S, bool> && !std::is_same_v<D, bool>) {
    // bool loads compile to a compare-and-branch per element; the bytes are 0 or 1, so read
    // them as uint8_t, which vectorizes.
    const auto* xb = reinterpret_cast<const uint8_t*>(x);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<D>(xb[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = convert_one<S, D>(x[i]);
  }
}

std::vector<Array> convert_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                                std::span<const Aval> out_avals) {
  const Array& x = args[0];
  const Aval& oa = out_avals[0];
  if (x.aval() == oa) return {x};  // nothing to do: the input itself
  if (x.dtype() == oa.dtype) return {Array(oa, x.buffer("convert_element_type"))};
  Array out = empty_array(oa, "convert_element_type", ctx.device);
  const int64_t n = oa.size();
  if (n == 0) return {out};
  kernels::dispatch_dtype(x.dtype(), [&]<class S>() {
    kernels::dispatch_dtype(oa.dtype, [&]<class D>() {
      const S* px = static_cast<const S*>(x.raw_data("convert_element_type"));
      D* py = static_cast<D*>(out.buffer()->data());
      parallel_for(n, kElementwiseGrain,
                   [&](int64_t b, int64_t e) { convert_n<S, D>(px + b, py + b, e - b); });
    });
  });
  return {out};
}

// ---- JVP and transpose rules (JAX's lax rules; lax ops only, so they work under any trace).

using JvpOut = std::pair<std::vector<Array>, std::vector<Array>>;

// select_n: `which` has no tangent; the tangent selects among the cases' tangents (symbolic
// zeros instantiated), a symbolic zero when every case tangent is one.
JvpOut select_n_jvp(std::span<const Array> p, std::span<const Array> t, const Params& params) {
  Array out = bind1(select_n, p, params);
  bool any = false;
  for (size_t i = 1; i < t.size(); ++i) any = any || t[i].defined();
  if (!any || !ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  std::vector<Array> cases;
  for (size_t i = 1; i < p.size(); ++i) cases.push_back(ad::instantiate(t[i], p[i].aval()));
  return {{out}, {lax::select_n(p[0], cases)}};
}

// Linear in the cases: case i receives ct where `which` picks it and zero elsewhere.
std::vector<Array> select_n_transpose(std::span<const Array> ct, std::span<const Array> args,
                                      std::span<const Aval> avals, const Params&) {
  if (!args[0].defined()) ad::bad_linearity("select_n", "`which` cannot be linear");
  const Array& which = args[0];
  std::vector<Array> res(args.size());
  Array zeros;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i].defined()) continue;
    if (!zeros.defined()) zeros = ad::zeros_like_aval(ct[0].aval());
    std::vector<Array> cases(args.size() - 1, zeros);
    cases[i - 1] = ct[0];
    res[i] = lax::select_n(which, cases);
    if (res[i].aval() != avals[i]) {
      res[i] = bind1(convert_element_type, {res[i]},
                     Params{{"new_dtype", avals[i].dtype}, {"weak_type", avals[i].weak_type}});
    }
  }
  return res;
}

// Floating -> floating converts the tangent; to or from integers/bool the tangent is zero.
JvpOut convert_jvp(std::span<const Array> p, std::span<const Array> t, const Params& params) {
  Array out = bind1(convert_element_type, p, params);
  if (!t[0].defined() || !ad::has_tangent(p[0].dtype()) || !ad::has_tangent(out.dtype())) {
    return {{out}, {Array()}};
  }
  return {{out}, {bind1(convert_element_type, t, params)}};
}

std::vector<Array> convert_transpose(std::span<const Array> ct, std::span<const Array> args,
                                     std::span<const Aval> avals, const Params&) {
  if (args[0].defined()) {
    ad::bad_linearity("convert_element_type", "transpose needs a linear operand");
  }
  if (!ad::has_tangent(avals[0].dtype) || !ad::has_tangent(ct[0].dtype())) return {Array()};
  return {bind1(convert_element_type, {ct[0]},
                Params{{"new_dtype", avals[0].dtype}, {"weak_type", avals[0].weak_type}})};
}

// ---- Batching rules (lax ops only).

// select_n needs `which` rank 0 or of the cases' shape, and all cases of one shape: no size-1
// broadcasting. The batch axis goes where most batched operands already have it (common_dim);
// batched operands elsewhere are transposed, unbatched cases (and an unbatched full-shape
// `which`) are broadcast along it, and a batched rank-0 `which` is broadcast to the cases'
// shape when they are not rank 0. An unbatched rank-0 `which` is used as is.
batching::BatchOut select_n_batch(const BatchAxis&, std::span<const Array> args,
                                  std::span<const int64_t> dims, const Params& params) {
  using batching::kNotMapped;
  const int64_t size = batching::batch_size(args, dims);
  const int64_t rank = batching::logical_rank(args[1], dims[1]);
  const int64_t d = batching::common_dim(args, dims, rank);
  std::vector<Array> out(args.size());
  for (size_t i = 1; i < args.size(); ++i) out[i] = batching::batch_at(args[i], dims[i], size, d);
  const Array& which = args[0];
  if (dims[0] == kNotMapped) {
    out[0] = which.ndim() == 0 ? which : batching::broadcast_batched(which, size, d);
  } else if (batching::logical_rank(which, dims[0]) == rank) {
    out[0] = batching::move_axis(which, dims[0], d);
  } else {  // shape (B,) against cases of rank > 0
    out[0] = lax::broadcast_in_dim(which, out[1].shape(), {d});
  }
  return {tessera::bind(select_n, out, params), {d}};
}

// ---- Scalar definitions (scalar_ir.h).

namespace sd {
using scalar::Builder;
using scalar::Value;
using Values = std::vector<Value>;
}  // namespace sd

// cases[which], `which` clamped into [0, ncases) as the kernel does: a chain of selects.
sd::Values select_n_def(sd::Builder& b, std::span<const sd::Value> in, const Params&) {
  const sd::Value which = in[0];
  const std::span<const sd::Value> cases = in.subspan(1);
  if (cases.size() == 1) return {cases[0]};
  if (which.type == DType::kBool) return {b.select(which, cases[1], cases[0])};
  sd::Value r = cases.back();
  for (size_t k = cases.size() - 1; k-- > 0;) {
    r = b.select(b.le(which, b.constant(static_cast<double>(k), which.type)), cases[k], r);
  }
  return {r};
}

sd::Values convert_def(sd::Builder& b, std::span<const sd::Value> in, const Params& params) {
  return {b.convert(in[0], params.get_dtype("new_dtype"))};
}

void set_scalar_defs() {
  select_n.scalar.rule = select_n_def;
  convert_element_type.scalar = {convert_def, true};
}

}  // namespace

namespace {

// Every value of `from` converts to `to` exactly (and back): floats into floats with at least
// as many mantissa and exponent bits, integers into floats whose significand holds their
// magnitude and whose range holds their maximum (uint16 overflows float16), integers into
// integers of a range that contains theirs, bool into anything.
bool lossless(DType from, DType to) {
  if (from == to || is_bool(from)) return true;
  if (is_floating(from)) {
    if (!is_floating(to)) return false;
    const FInfo f = finfo(from), t = finfo(to);
    return t.nmant >= f.nmant && t.nexp >= f.nexp;
  }
  const IInfo i = iinfo(from);
  const int magnitude_bits = is_signed_integer(from) ? i.bits - 1 : i.bits;  // INT_MIN: 2^k
  if (is_floating(to)) {
    const FInfo t = finfo(to);
    return magnitude_bits <= t.nmant + 1 && static_cast<double>(i.max) <= t.max;
  }
  if (!is_integer(to)) return false;
  const IInfo o = iinfo(to);
  return o.min <= i.min && o.max >= i.max;
}

// Simplifications (compiler/passes/simplify.h): a convert to the operand's own type is the
// operand; a convert of a lossless convert is one convert (the exact intermediate changes no
// rounding; through a float into an integer only when the integer cannot wrap); select_n with a
// literal `which` is the case it selects.
void set_simplifications() {
  using compiler::forward;
  using compiler::new_eqn;
  using compiler::replace_with;
  using compiler::Rewrite;
  using compiler::SimplifyView;
  compiler::register_simplification(
      convert_element_type, [](const SimplifyView& v) -> std::optional<Rewrite> {
        const Atom& x = v.eqn.invars[0];
        const Aval& out = v.eqn.outvars[0].aval();
        const Aval& in = atom_aval(x);
        if (in.dtype == out.dtype && in.weak_type == out.weak_type) return forward(x);
        const JaxprEqn* inner = v.producer(x);
        if (inner == nullptr || inner->primitive != &convert_element_type) return std::nullopt;
        const Atom& src = inner->invars[0];
        const DType s = atom_aval(src).dtype;
        if (!lossless(s, in.dtype)) return std::nullopt;
        // The outer convert sees the same value, but float -> int saturates where int -> int
        // wraps: an integer through a float into an integer folds only when no wrap can occur.
        if (is_floating(s) != is_floating(in.dtype) && !is_floating(out.dtype) &&
            !is_bool(out.dtype) && !lossless(s, out.dtype))
          return std::nullopt;
        if (atom_aval(src).dtype == out.dtype && atom_aval(src).weak_type == out.weak_type)
          return forward(src);
        return replace_with(new_eqn(convert_element_type, {src}, {out}, v.eqn.params));
      });
  compiler::register_simplification(select_n, [](const SimplifyView& v) -> std::optional<Rewrite> {
    std::optional<double> which = compiler::scalar_literal(v.eqn.invars[0]);
    if (!which) return std::nullopt;
    const double cases = static_cast<double>(v.eqn.invars.size() - 1);
    if (*which < 0 || *which >= cases) return std::nullopt;
    return forward(v.eqn.invars[1 + static_cast<size_t>(*which)]);
  });
}

}  // namespace

void register_select_convert() {
  for (Primitive* p : {&select_n, &convert_element_type}) p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  // which and the cases: the rule reports a call without a case in its own words.
  select_n.signature = Signature::at_least(1);
  convert_element_type.signature =
      Signature::fixed(1, {{"new_dtype", ParamKind::kDType}, {"weak_type", ParamKind::kBool}});
  select_n.abstract_eval = select_n_abstract;
  select_n.impl = select_n_impl;
  select_n.jvp = select_n_jvp;
  select_n.transpose = select_n_transpose;
  register_primitive(select_n);
  convert_element_type.abstract_eval = convert_abstract;
  convert_element_type.impl = convert_impl;
  convert_element_type.const_fold = [](std::span<const Array> args, const Params&) {
    return args.size() == 1 && args[0].is_concrete() && args[0].ndim() == 0;
  };
  convert_element_type.jvp = convert_jvp;
  convert_element_type.transpose = convert_transpose;
  select_n.batch = select_n_batch;
  convert_element_type.batch = batching::vectorized_rule(convert_element_type);
  register_primitive(convert_element_type);
  set_simplifications();
}

}  // namespace tessera::prims
