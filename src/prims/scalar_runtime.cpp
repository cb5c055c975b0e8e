// The scalar runtime (compiler/scalar_runtime.h): the C-linkage functions compiled kernels call,
// each the per-element computation of the eager kernel for its op and dtype, and their table.
// Here, in the prims layer, because the externs must call the eager special-function kernels
// (special_kernels.h) and every definition must stay next to the kernel it copies: each comment
// names the eager code (transcendental.cpp, binary_math.cpp, arithmetic.cpp, special.cpp).
// Compiled with the library's flags (-ffp-contract=off, -fno-math-errno), as those kernels are.
#include "compiler/scalar_runtime.h"

#include <array>
#include <cmath>

#include "prims/special_kernels.h"

namespace sk = tessera::kernels::special;

// ---- float32 (FloatFnKernel's float32 loops; Atan2Op, RemOp on float; pow expands).
float tessera_rt_cbrt_f32(float x) {  // via_f64<cbrt_f64>
  return static_cast<float>(std::cbrt(static_cast<double>(x)));
}
float tessera_rt_sin_f32(float x) { return std::sin(x); }  // vmath::sincos_n's libm fallback
float tessera_rt_cos_f32(float x) { return std::cos(x); }
float tessera_rt_atan2_f32(float x, float y) {
  return static_cast<float>(std::atan2(static_cast<double>(x), static_cast<double>(y)));
}
float tessera_rt_rem_f32(float x, float y) { return std::fmod(x, y); }  // fmodf, exact

// ---- float64: libm, as the float64 kernels.
double tessera_rt_cbrt_f64(double x) { return std::cbrt(x); }
double tessera_rt_exp_f64(double x) { return std::exp(x); }
double tessera_rt_exp2_f64(double x) { return std::exp2(x); }
double tessera_rt_expm1_f64(double x) { return std::expm1(x); }
double tessera_rt_log_f64(double x) { return std::log(x); }
double tessera_rt_log1p_f64(double x) { return std::log1p(x); }
double tessera_rt_sin_f64(double x) { return std::sin(x); }
double tessera_rt_cos_f64(double x) { return std::cos(x); }
double tessera_rt_tan_f64(double x) { return std::tan(x); }
double tessera_rt_tanh_f64(double x) { return std::tanh(x); }
double tessera_rt_atan2_f64(double x, double y) { return std::atan2(x, y); }
double tessera_rt_pow_f64(double x, double y) { return std::pow(x, y); }
double tessera_rt_rem_f64(double x, double y) { return std::fmod(x, y); }

// ---- externs: special.cpp's kernels in double.
double tessera_rt_fn_erf(double x) { return std::erf(x); }
double tessera_rt_fn_erfc(double x) { return std::erfc(x); }
double tessera_rt_fn_lgamma(double x) { return sk::log_gamma(x); }
double tessera_rt_fn_digamma(double x) { return sk::digamma(x); }
double tessera_rt_fn_polygamma(double m, double x) { return sk::polygamma(m, x); }
double tessera_rt_fn_zeta(double s, double q) { return sk::hurwitz_zeta(s, q); }
double tessera_rt_fn_igamma(double a, double x) { return sk::igamma(a, x); }
double tessera_rt_fn_igammac(double a, double x) { return sk::igammac(a, x); }
double tessera_rt_fn_igamma_grad_a(double a, double x) { return sk::igamma_grad_a(a, x); }
double tessera_rt_fn_bessel_i0e(double x) { return sk::bessel_i0e(x); }
double tessera_rt_fn_bessel_i1e(double x) { return sk::bessel_i1e(x); }
double tessera_rt_fn_betainc(double a, double b, double x) { return sk::betainc(a, b, x); }
double tessera_rt_fn_random_gamma_grad(double a, double x) { return sk::random_gamma_grad(a, x); }

namespace tessera::compiler {
namespace {

using scalar::Fn;
using scalar::Op;

struct OpEntry {
  Op op;
  RuntimeFn fn;
};

template <class F>
void* addr(F* f) {
  return reinterpret_cast<void*>(f);
}

#define TESSERA_RT_OP(op, name, n, T, sfx)                                                     \
  OpEntry {                                                                                    \
    Op::op, RuntimeFn { "tessera_rt_" #name "_" #sfx, addr(&tessera_rt_##name##_##sfx), n, T } \
  }
#define TESSERA_RT_F32(op, name, n) TESSERA_RT_OP(op, name, n, DType::kFloat32, f32)
#define TESSERA_RT_F64(op, name, n) TESSERA_RT_OP(op, name, n, DType::kFloat64, f64)

// The table is built at first use (function addresses are not constant expressions).
const std::array<OpEntry, 18>& op_table() {
  static const std::array<OpEntry, 18> t = {
      TESSERA_RT_F32(kCbrt, cbrt, 1),   TESSERA_RT_F32(kSin, sin, 1),
      TESSERA_RT_F32(kCos, cos, 1),     TESSERA_RT_F32(kAtan2, atan2, 2),
      TESSERA_RT_F32(kRem, rem, 2),     TESSERA_RT_F64(kCbrt, cbrt, 1),
      TESSERA_RT_F64(kExp, exp, 1),     TESSERA_RT_F64(kExp2, exp2, 1),
      TESSERA_RT_F64(kExpm1, expm1, 1), TESSERA_RT_F64(kLog, log, 1),
      TESSERA_RT_F64(kLog1p, log1p, 1), TESSERA_RT_F64(kSin, sin, 1),
      TESSERA_RT_F64(kCos, cos, 1),     TESSERA_RT_F64(kTan, tan, 1),
      TESSERA_RT_F64(kTanh, tanh, 1),   TESSERA_RT_F64(kAtan2, atan2, 2),
      TESSERA_RT_F64(kPow, pow, 2),     TESSERA_RT_F64(kRem, rem, 2),
  };
  return t;
}
#undef TESSERA_RT_F64
#undef TESSERA_RT_F32
#undef TESSERA_RT_OP

// Indexed by Fn, in TESSERA_SCALAR_EXTERNS order (the test checks each symbol against
// fn_name and fn_arity).
const std::array<RuntimeFn, scalar::kNumFns>& extern_table() {
  static_assert(scalar::kNumFns == 13, "a new extern needs its runtime function here");
  static const std::array<RuntimeFn, scalar::kNumFns> t = {
      RuntimeFn{"tessera_rt_fn_erf", addr(&tessera_rt_fn_erf), 1, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_erfc", addr(&tessera_rt_fn_erfc), 1, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_lgamma", addr(&tessera_rt_fn_lgamma), 1, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_digamma", addr(&tessera_rt_fn_digamma), 1, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_polygamma", addr(&tessera_rt_fn_polygamma), 2, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_zeta", addr(&tessera_rt_fn_zeta), 2, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_igamma", addr(&tessera_rt_fn_igamma), 2, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_igammac", addr(&tessera_rt_fn_igammac), 2, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_igamma_grad_a", addr(&tessera_rt_fn_igamma_grad_a), 2,
                DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_bessel_i0e", addr(&tessera_rt_fn_bessel_i0e), 1, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_bessel_i1e", addr(&tessera_rt_fn_bessel_i1e), 1, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_betainc", addr(&tessera_rt_fn_betainc), 3, DType::kFloat64},
      RuntimeFn{"tessera_rt_fn_random_gamma_grad", addr(&tessera_rt_fn_random_gamma_grad), 2,
                DType::kFloat64},
  };
  return t;
}

}  // namespace

const RuntimeFn* runtime_function(Op op, DType t) {
  for (const OpEntry& e : op_table())
    if (e.op == op && e.fn.type == t) return &e.fn;
  return nullptr;
}

const RuntimeFn* runtime_extern(Fn f) {
  const auto i = static_cast<size_t>(f);
  return i < extern_table().size() ? &extern_table()[i] : nullptr;
}

std::span<const RuntimeFn> runtime_functions() {
  static const auto all = [] {
    std::array<RuntimeFn, 18 + scalar::kNumFns> a{};
    size_t n = 0;
    for (const OpEntry& e : op_table()) a[n++] = e.fn;
    for (const RuntimeFn& f : extern_table()) a[n++] = f;
    return a;
  }();
  return all;
}

}  // namespace tessera::compiler
