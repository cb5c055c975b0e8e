// Vectorized math as scalar-IR expansions.
//
// What: expand_math rewrites every float32 transcendental instruction whose eager kernel is a
// branch-free function of vec_math.h / vec_math_extra.h (exp, exp2, expm1, log, log1p, tanh,
// sin, cos, tan, rsqrt, pow) into the scalar-IR instructions that function executes: the same fmas,
// constants, selects, bit casts and integer shifts, in the same order. It also expands rsqrt at
// float64 (1 / sqrt(x) in double, as eager) and nextafter at float32/float64 (eager steps the
// bits: vmath::nextafter_bits). Everything else is copied unchanged.
// Why: a fused kernel must compute the bits the eager kernel computes, and a libm call per
// element does not vectorize. Written once, in the kernel IR, every backend gets both: it only
// lowers arithmetic, and calls scalar_runtime.h's functions for what is left (float64 libm,
// cbrt, atan2, pow, rem, the externs, and the float32 sin/cos fallback below).
//
// The constants are vec_math.h's (tests/cpp/test_math_expand.cpp checks the expansions against
// the eager kernels bit for bit, so the two cannot drift apart silently). vec_math.h has no
// float -> int conversion (only bit casts and int -> float of small integers), so the IR's
// saturating convert never differs from the C++ cast there.
//
// Large arguments of sin/cos/tan. The eager kernels reduce |x| <= kTrigMax in float32 and call
// libm for the rest (and for inf/NaN): sin/cos call the FLOAT libm functions (sinf/cosf), tan
// calls tan in double and rounds. So an expansion is
//     select(le(abs(x), kTrigMax), <reduced>, <fallback>)
// with fallback `tan` = convert(kTan at float64, float32) (bit-identical: eager does exactly
// that), and fallback `sin`/`cos` = kSin/kCos at float32 itself, which a backend must lower to
// scalar_runtime's tessera_rt_sin_f32/cos_f32 (sinf/cosf). That cannot be written as a float64
// op: sinf(x) and (float)sin((double)x) differ for about 1.3% of floats beyond kTrigMax. (The
// reference evaluator computes a float32 kSin as the latter, so evaluate() of an expanded sin
// differs from eager there; see the test.) The fallback is only needed where the condition is
// false: a backend should compute it under a branch (e.g. "any lane out of range"), not for
// every element; is_range_fallback finds such selects. expand_math leaves these fallbacks
// alone, so running it twice gives the same program.
#pragma once

#include <cstdint>

#include "tessera/dtype.h"
#include "tessera/scalar_ir.h"

namespace tessera::compiler {

// vec_math.h's kTrigMax: sin, cos and tan reduce |x| <= this in float32.
inline constexpr float kTrigMax = 131072.0f;

// p with every instruction for which expands() holds replaced by its expansion (operands and
// outputs mapped; instruction order otherwise kept). The result is an equivalent program that
// computes the eager kernels' bits.
scalar::Program expand_math(const scalar::Program& p);

// Whether expand_math replaces op at type t.
bool expands(scalar::Op op, DType t);

// Whether instruction i of p is a select(le(abs(x), kTrigMax), fast, fallback) that an
// expansion emitted: its third operand is a library call needed only where |x| > kTrigMax or
// x is NaN.
bool is_range_fallback(const scalar::Program& p, int32_t i);

// ---- One expansion each, on a builder (operands float32 unless the name says otherwise; a
// wrong type is an InternalError). Each returns the eager kernel's value of its operand. ----
scalar::Value expand_exp_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_exp2_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_expm1_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_log_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_log1p_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_tanh_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_sin_f32(scalar::Builder& b, scalar::Value x);  // fallback: kSin f32
scalar::Value expand_cos_f32(scalar::Builder& b, scalar::Value x);  // fallback: kCos f32
scalar::Value expand_tan_f32(scalar::Builder& b, scalar::Value x);  // fallback: kTan f64
scalar::Value expand_rsqrt_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_rsqrt_f64(scalar::Builder& b, scalar::Value x);
// float32 or float64 (x and y of one type).
scalar::Value expand_nextafter(scalar::Builder& b, scalar::Value x, scalar::Value y);

// The eager float32 kernels of primitives that are not scalar ops (vmath::logistic, sinh, cosh,
// asinh, acosh, atanh), built from the expansions above: a scalar definition that uses them
// computes the eager bits (the XLA-style definitions of transcendental.cpp do not).
scalar::Value expand_logistic_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_sinh_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_cosh_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_asinh_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_acosh_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_atanh_f32(scalar::Builder& b, scalar::Value x);

// vec_math_special.h's float32 erf and erf_inv (the eager kernels of erf and erf_inv at float32
// and, through float32, the 16-bit floats): special.cpp's scalar definitions use them at float32.
scalar::Value expand_erf_f32(scalar::Builder& b, scalar::Value x);
scalar::Value expand_erf_inv_f32(scalar::Builder& b, scalar::Value x);
// vec_math_pow.h's float32 pow (lax.pow's eager kernel at float32): expand_math expands kPow at
// float32 into it.
scalar::Value expand_pow_f32(scalar::Builder& b, scalar::Value x, scalar::Value y);

}  // namespace tessera::compiler
