// The scalar runtime: the library functions a compiled kernel calls for the scalar ops it does
// not inline, each computing per element exactly what the eager kernel of that dtype computes.
//
// What: after expand_math (math_expand.h) a program's remaining library-like instructions are
// float64 libm ops (cbrt, exp, exp2, expm1, log, log1p, sin, cos, tan, tanh, atan2, pow, rem),
// float32 cbrt, atan2 and rem, the float32 sin/cos large-argument fallback, and the extern
// functions (float64). Each has a C-linkage function here, `tessera_rt_<op>_f32` /
// `tessera_rt_<op>_f64` / `tessera_rt_fn_<fn>`, exported from the shared library; a backend
// declares the symbol in its IR and resolves it to `address`.
// Why: bit-identical results need the eager kernel's own function (powf, not pow rounded;
// sinf for the sin fallback, not sin in double rounded; Tessera's special-function kernels), and
// LLVM's intrinsics (llvm.pow.f32, llvm.sin.f32) do not promise which one they call.
//
// Per element, as eager: float32 cbrt and atan2 go through double and round once; float32 pow
// expands (math_expand.h) and rem is fmodf (exact); float32 sin/cos are sinf/cosf (eager's libm
// fallback beyond kTrigMax; within it the expansion is used); float64 ops are libm; externs are the
// float64 kernels of special.cpp (erf/erfc from libm, the rest from special_kernels.h).
//
// The functions are defined in src/prims/scalar_runtime.cpp, beside the eager kernels they must
// match (the prims layer; this header, in the compiler layer, includes nothing from there: the
// split of scalar_ir.h and prims/scalar_eval.cpp).
#pragma once

#include <span>

#include "tessera/dtype.h"
#include "tessera/scalar_ir.h"

namespace tessera::compiler {

struct RuntimeFn {
  const char* symbol;  // e.g. "tessera_rt_pow_f64"
  void* address;       // float(float[, float]) or double(double[, double[, double]])
  int arity;
  DType type;  // of the operands and the result
};

// The function a kernel calls for op at type t; null when op at t is not a call (it is inlined,
// or expand_math replaces it, or the op does not take t).
const RuntimeFn* runtime_function(scalar::Op op, DType t);
// The function of an extern (float64).
const RuntimeFn* runtime_extern(scalar::Fn f);
// Every function above (for a backend that declares them all up front, and for tests).
std::span<const RuntimeFn> runtime_functions();

}  // namespace tessera::compiler

// The functions themselves, for direct calls (tests) and to pin their signatures.
#define TESSERA_RT_EXPORT extern "C" __attribute__((visibility("default")))
TESSERA_RT_EXPORT float tessera_rt_cbrt_f32(float x);
TESSERA_RT_EXPORT float tessera_rt_sin_f32(float x);
TESSERA_RT_EXPORT float tessera_rt_cos_f32(float x);
TESSERA_RT_EXPORT float tessera_rt_atan2_f32(float x, float y);
TESSERA_RT_EXPORT float tessera_rt_rem_f32(float x, float y);
TESSERA_RT_EXPORT double tessera_rt_cbrt_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_exp_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_exp2_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_expm1_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_log_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_log1p_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_sin_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_cos_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_tan_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_tanh_f64(double x);
TESSERA_RT_EXPORT double tessera_rt_atan2_f64(double x, double y);
TESSERA_RT_EXPORT double tessera_rt_pow_f64(double x, double y);
TESSERA_RT_EXPORT double tessera_rt_rem_f64(double x, double y);
TESSERA_RT_EXPORT double tessera_rt_fn_erf(double x);
TESSERA_RT_EXPORT double tessera_rt_fn_erfc(double x);
TESSERA_RT_EXPORT double tessera_rt_fn_lgamma(double x);
TESSERA_RT_EXPORT double tessera_rt_fn_digamma(double x);
TESSERA_RT_EXPORT double tessera_rt_fn_polygamma(double m, double x);
TESSERA_RT_EXPORT double tessera_rt_fn_zeta(double s, double q);
TESSERA_RT_EXPORT double tessera_rt_fn_igamma(double a, double x);
TESSERA_RT_EXPORT double tessera_rt_fn_igammac(double a, double x);
TESSERA_RT_EXPORT double tessera_rt_fn_igamma_grad_a(double a, double x);
TESSERA_RT_EXPORT double tessera_rt_fn_bessel_i0e(double x);
TESSERA_RT_EXPORT double tessera_rt_fn_bessel_i1e(double x);
TESSERA_RT_EXPORT double tessera_rt_fn_betainc(double a, double b, double x);
TESSERA_RT_EXPORT double tessera_rt_fn_random_gamma_grad(double a, double x);
