// The kernel IR's scalar operations: the closed list every elementwise primitive's per-element
// computation is written in (its scalar definition), that the reference evaluator runs
// (scalar_eval.h) and that a compiler backend implements, each op once.
//
// A scalar program is SSA: instructions in order, each with a result type and up to three
// operands defined before it. Types are Tessera's non-extended dtypes (bool, the integers,
// float16, bfloat16, float32, float64). Semantics are XLA's:
//
//  * No implicit conversion. Operands of an op share one type unless the op says otherwise;
//    `convert` is the only value-changing change of type and `bitcast` the only reinterpreting one.
//  * 16-bit floats are storage types here: only convert, bitcast and select take float16 or
//    bfloat16 (no arithmetic, no comparison). A definition
//    converts them to float32, computes, and converts back (the definition driver inserts those
//    converts, so eager "computed in float32, rounded once" is what the program says).
//  * convert: float -> float rounds to nearest even (one rounding, also float64 -> 16-bit);
//    integer -> float rounds to nearest even; float -> integer truncates toward zero and
//    saturates (NaN -> 0, +-inf and out-of-range values -> the type's max/min); integer ->
//    integer wraps (two's complement); bool -> number is 0/1; number -> bool is `!= 0`.
//  * Float arithmetic is IEEE 754 binary32/binary64 with round-to-nearest-even. add, sub, mul,
//    div, sqrt, fma are correctly rounded; `fma` is the only fused multiply-add: a backend never
//    contracts mul+add on its own (the eager build uses -ffp-contract=off). Denormals are kept
//    (no flush-to-zero of inputs or results; a backend that flushes must say so and is outside
//    the bitwise contract).
//  * Transcendental ops (exp ... atan2, pow) are not correctly rounded: each has an accuracy
//    bound stated by the backend (the eager float32 kernels: vec_math.h, vec_math_extra.h);
//    IEEE special values at +-0, +-inf and NaN are exact.
//  * max/min: NaN if either is NaN, else a > b ? a : b (min: <), so equal operands (+0, -0) give
//    b. Comparisons are IEEE (NaN unequal to everything, `ne` true). select(c, t, f): bool c.
//  * Integer arithmetic wraps. div: x / 0 == -1 (all ones unsigned), INT_MIN / -1 == INT_MIN;
//    rem: x % 0 == x, INT_MIN % -1 == 0 (sign of the dividend, C's truncation). Shift amounts
//    are read as unsigned: an amount >= the bit width gives 0 (shl, shr_logical) or the sign
//    fill (shr_arith). clz(0) is the bit width. On bool, not/and/or/xor are logical.
//  * `extern` calls a named scalar function that a backend takes from a library (libm and
//    Tessera's special-function kernels on CPU, libdevice on NVIDIA); externs are float64 only,
//    so a definition converts around them (what the eager kernels do: double, rounded once).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessera/dtype.h"

namespace tessera::scalar {

// V(enumerator, name, operand count); -1: variadic (extern: its function's arity).
#define TESSERA_SCALAR_OPS(V)                                              \
  V(kInput, "input", 0)     /* program input `index` */                    \
  V(kConst, "const", 0)     /* literal of the result type */               \
  V(kConvert, "convert", 1) /* to the result type (rules above) */         \
  V(kBitcast, "bitcast", 1) /* same width, the bits reinterpreted */       \
  V(kNeg, "neg", 1)         /* numbers; integers wrap */                   \
  V(kAbs, "abs", 1)         /* numbers; abs(INT_MIN) == INT_MIN */         \
  V(kAdd, "add", 2)         /* numbers */                                  \
  V(kSub, "sub", 2)                                                        \
  V(kMul, "mul", 2)                                                        \
  V(kDiv, "div", 2) /* integers: the rules above */                        \
  V(kRem, "rem", 2) /* floats: C's fmod */                                 \
  V(kFma, "fma", 3) /* floats: a * b + c, one rounding */                  \
  V(kMax, "max", 2) /* any type; NaN-propagating */                        \
  V(kMin, "min", 2)                                                        \
  V(kCopySign, "copysign", 2) /* floats: |a| with the sign bit of b */     \
  V(kFloor, "floor", 1)       /* floats */                                 \
  V(kCeil, "ceil", 1)                                                      \
  V(kRoundEven, "round_even", 1) /* halves to even */                      \
  V(kRoundAway, "round_away", 1) /* halves away from zero */               \
  V(kSqrt, "sqrt", 1)            /* floats, correctly rounded */           \
  V(kRsqrt, "rsqrt", 1)          /* floats, 1/sqrt(x) (backend's bound) */ \
  V(kCbrt, "cbrt", 1)                                                      \
  V(kExp, "exp", 1)                                                        \
  V(kExp2, "exp2", 1)                                                      \
  V(kExpm1, "expm1", 1)                                                    \
  V(kLog, "log", 1)                                                        \
  V(kLog1p, "log1p", 1)                                                    \
  V(kSin, "sin", 1)                                                        \
  V(kCos, "cos", 1)                                                        \
  V(kTan, "tan", 1)                                                        \
  V(kTanh, "tanh", 1)                                                      \
  V(kAtan2, "atan2", 2)                                                    \
  V(kPow, "pow", 2)             /* floats, C's pow special cases */        \
  V(kNextAfter, "nextafter", 2) /* floats, exact; denormal steps kept */   \
  V(kEq, "eq", 2)               /* any type -> bool */                     \
  V(kNe, "ne", 2)                                                          \
  V(kLt, "lt", 2)                                                          \
  V(kLe, "le", 2)                                                          \
  V(kGt, "gt", 2)                                                          \
  V(kGe, "ge", 2)                                                          \
  V(kNot, "not", 1) /* bool and integers */                                \
  V(kAnd, "and", 2)                                                        \
  V(kOr, "or", 2)                                                          \
  V(kXor, "xor", 2)                                                        \
  V(kShl, "shl", 2) /* integers */                                         \
  V(kShrLogical, "shr_logical", 2)                                         \
  V(kShrArith, "shr_arith", 2)                                             \
  V(kPopcnt, "popcnt", 1)                                                  \
  V(kClz, "clz", 1)                                                        \
  V(kSelect, "select", 3)  /* (bool, T, T) -> T */                         \
  V(kExtern, "extern", -1) /* float64 library function `fn` */

enum class Op : uint8_t {
#define TESSERA_SCALAR_OP_ENUM(e, name, n) e,
  TESSERA_SCALAR_OPS(TESSERA_SCALAR_OP_ENUM)
#undef TESSERA_SCALAR_OP_ENUM
};
inline constexpr int kNumOps = 0
#define TESSERA_SCALAR_OP_COUNT(e, name, n) +1
    TESSERA_SCALAR_OPS(TESSERA_SCALAR_OP_COUNT)
#undef TESSERA_SCALAR_OP_COUNT
    ;
const char* op_name(Op op);
int op_arity(Op op);  // -1 for kExtern

// The extern scalar functions, float64 -> float64 (V(enumerator, name, arity)). Domains and
// special values are XLA's (the eager special-function kernels state them).
#define TESSERA_SCALAR_EXTERNS(V)                                             \
  V(kErf, "erf", 1)                                                           \
  V(kErfc, "erfc", 1)                                                         \
  V(kLgamma, "lgamma", 1)                                                     \
  V(kDigamma, "digamma", 1)                                                   \
  V(kPolygamma, "polygamma", 2)               /* (m, x) */                    \
  V(kZeta, "zeta", 2)                         /* Hurwitz (s, q) */            \
  V(kIgamma, "igamma", 2)                     /* regularized lower P(a, x) */ \
  V(kIgammac, "igammac", 2)                   /* upper Q(a, x) */             \
  V(kIgammaGradA, "igamma_grad_a", 2)         /* dP/da */                     \
  V(kBesselI0e, "bessel_i0e", 1)              /* exp(-|x|) I0(x) */           \
  V(kBesselI1e, "bessel_i1e", 1)              /* exp(-|x|) I1(x) */           \
  V(kBetainc, "betainc", 3)                   /* regularized I_x(a, b) */     \
  V(kRandomGammaGrad, "random_gamma_grad", 2) /* d sample / d alpha */

enum class Fn : uint8_t {
#define TESSERA_SCALAR_FN_ENUM(e, name, n) e,
  TESSERA_SCALAR_EXTERNS(TESSERA_SCALAR_FN_ENUM)
#undef TESSERA_SCALAR_FN_ENUM
};
inline constexpr int kNumFns = 0
#define TESSERA_SCALAR_FN_COUNT(e, name, n) +1
    TESSERA_SCALAR_EXTERNS(TESSERA_SCALAR_FN_COUNT)
#undef TESSERA_SCALAR_FN_COUNT
    ;
const char* fn_name(Fn f);
int fn_arity(Fn f);

// One instruction. `literal` holds a kConst value: the bits of a double for float types (every
// float16/bfloat16/float32 value is exactly a double), the value sign- or zero-extended to 64
// bits for integers and bool.
struct Instr {
  Op op;
  DType type;
  int32_t args[3] = {-1, -1, -1};
  int32_t index = -1;  // kInput: the input; kExtern: the Fn
  uint64_t literal = 0;
};

struct Program {
  std::vector<DType> inputs;
  std::vector<Instr> instrs;
  std::vector<int32_t> outputs;  // instruction indices
  std::vector<DType> output_types() const;
  // One instruction a line: "%3:f32 = add %1 %2".
  std::string str() const;
};

// An SSA value of the program being built.
struct Value {
  int32_t id = -1;
  DType type = DType::kFloat32;
};

// Builds a program, checking every op's operand types as it goes (a definition that breaks the
// rules above is an InternalError naming the op and the types: definitions are Tessera's own).
class Builder {
 public:
  explicit Builder(std::span<const DType> inputs);
  Value input(int i) const;
  int num_inputs() const { return static_cast<int>(inputs_.size()); }

  Value constant(double v, DType t);  // floats; integers and bool take the value if exact
  Value constant_bits(uint64_t bits, DType t);
  Value like(double v, Value x) { return constant(v, x.type); }

  Value op(Op op, std::span<const Value> args, DType result);
  Value unary(Op o, Value a) { return op(o, {&a, 1}, a.type); }
  Value binary(Op o, Value a, Value b);
  Value compare(Op o, Value a, Value b);
  Value convert(Value a, DType t);
  Value bitcast(Value a, DType t);
  Value select(Value c, Value t, Value f);
  Value fma(Value a, Value b, Value c);
  Value call(Fn f, std::span<const Value> args);

  // Shorthands.
  Value add(Value a, Value b) { return binary(Op::kAdd, a, b); }
  Value sub(Value a, Value b) { return binary(Op::kSub, a, b); }
  Value mul(Value a, Value b) { return binary(Op::kMul, a, b); }
  Value div(Value a, Value b) { return binary(Op::kDiv, a, b); }
  Value max(Value a, Value b) { return binary(Op::kMax, a, b); }
  Value min(Value a, Value b) { return binary(Op::kMin, a, b); }
  Value neg(Value a) { return unary(Op::kNeg, a); }
  Value abs(Value a) { return unary(Op::kAbs, a); }
  Value sqrt(Value a) { return unary(Op::kSqrt, a); }
  Value exp(Value a) { return unary(Op::kExp, a); }
  Value log(Value a) { return unary(Op::kLog, a); }
  Value log1p(Value a) { return unary(Op::kLog1p, a); }
  Value expm1(Value a) { return unary(Op::kExpm1, a); }
  Value eq(Value a, Value b) { return compare(Op::kEq, a, b); }
  Value lt(Value a, Value b) { return compare(Op::kLt, a, b); }
  Value le(Value a, Value b) { return compare(Op::kLe, a, b); }
  Value gt(Value a, Value b) { return compare(Op::kGt, a, b); }
  Value ge(Value a, Value b) { return compare(Op::kGe, a, b); }
  Value ne(Value a, Value b) { return compare(Op::kNe, a, b); }
  Value is_nan(Value a) { return ne(a, a); }
  Value bit_and(Value a, Value b) { return binary(Op::kAnd, a, b); }
  Value bit_or(Value a, Value b) { return binary(Op::kOr, a, b); }
  Value bit_not(Value a) { return unary(Op::kNot, a); }

  Program finish(std::span<const Value> outputs) &&;
  const Program& program() const { return prog_; }

 private:
  Value push(Instr in);
  void check(bool ok, Op o, std::span<const Value> args, const char* why) const;
  std::vector<DType> inputs_;
  Program prog_;
};

// The typed scalar value the reference evaluator works on: floats as a double (exactly the value
// of the type), integers and bool sign- or zero-extended to 64 bits.
struct ScalarValue {
  DType type = DType::kFloat32;
  uint64_t bits = 0;                                // integers/bool; floats: the double's bits
  static ScalarValue of_double(double v, DType t);  // rounds v to t (floats) / converts (ints)
  static ScalarValue of_int(int64_t v, DType t);
  double as_double() const;  // the value (floats and integers)
  int64_t as_int() const;    // integers and bool
};

// Runs a program on one set of inputs (their types must be the program's inputs): the reference
// semantics of every op — IEEE arithmetic in the type, transcendental ops as float64 libm rounded
// to the type, externs as Tessera's float64 kernels. A compiler backend is tested against it.
std::vector<ScalarValue> evaluate(const Program& p, std::span<const ScalarValue> inputs);

}  // namespace tessera::scalar
