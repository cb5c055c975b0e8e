// The primitive sweep: every primitive joins by adding one table row (tests/cpp/test_sweep.cpp),
// and gets, on fresh random inputs (the seed is printed by test_util):
//   forward   vs NumPy (the oracle harness) or a float64 reference, for each dtype and shape;
//   jvp       vs central finite differences in float64, first and second order (the jvp of
//             x -> jvp(f, x, v).tangent), or a zero tangent for non-differentiable rows;
//   vjp       <u, J v> == <J^T u, v> through flat::linearize in float32 and float64, the
//             linearized outputs equal to eager ones, grad(sum f) == vjp(ones); and second
//             order through reverse mode in float64 (reverse over forward, forward over reverse
//             vs finite differences, reverse over reverse);
//   vmap      vs loop-and-stack: the batch axis at the front, the back and in the middle, every
//             batched/unbatched combination of operands, batches of 3, 1 and 0, nested vmap,
//             out_axes at the back; and vmap of the jvp and of the vjp (smooth rows).
// As JAX's check_grads and _CheckBatching do, driven by a table:
//
//   Row r;
//   r.name = r.prim = "sin";
//   r.family = "unary";
//   r.fn = [](const Args& a) { return lax::sin(a[0]); };
//   r.operands = {any()};
//   r.shapes = {{{3, 4}}, {{}}};
//   r.dtypes = floats();
//   r.oracle_op = "lax.sin";
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/tessera.h"

namespace tessera::sweep {

using Args = std::vector<Array>;
// The op applied to its operands; static params are captured. It must only call tessera ops
// (it runs under every transformation).
using OpFn = std::function<Array(const Args&)>;

// A float64 reference for ops the NumPy oracle does not know: operand values (as doubles,
// row-major) and avals -> the expected output.
struct RefOut {
  Shape shape;
  DType dtype;
  std::vector<double> values;
};
using RefFn =
    std::function<RefOut(const std::vector<std::vector<double>>&, const std::vector<Aval>&)>;

// Distance of the inputs from the op's nearest non-differentiable point (max/min ties,
// reduce_max ties); inputs closer than Row::min_kink are redrawn for the derivative checks.
using KinkFn = std::function<double(const Args&)>;

// How the values of one operand are drawn.
struct Operand {
  double lo = -2.0, hi = 2.0;         // floats: uniform in [lo, hi)
  double min_abs = 0.0;               // floats and ints: |x| >= min_abs (redrawn magnitude)
  int64_t int_lo = -50, int_hi = 50;  // ints: uniform in [int_lo, int_hi] (clipped to the dtype)
  std::optional<DType> dtype;         // a fixed dtype (select_n's which); otherwise the row's dtype
  bool diff = true;                   // float operands: gets a tangent in the derivative checks
  bool weak = false;                  // a weakly typed value (a C++ scalar promoted to an array)
};
Operand any(double lo = -2.0, double hi = 2.0);
Operand positive(double lo = 0.5, double hi = 3.0);
Operand nonzero(double min_abs = 0.5, double max_abs = 2.0);  // random sign
Operand index(int64_t n);                                     // int32 in [0, n)
Operand predicate();                                          // bool
Operand of_dtype(DType d, Operand o = {});                    // o with a fixed dtype
Operand weak(Operand o = {});                                 // o weakly typed

enum class Deriv {
  kSmooth,       // finite differences (1st and 2nd order), vjp, grad of sum
  kZeroTangent,  // the output tangent must be zero (float0 for int/bool outputs)
  kNone,         // no operands to differentiate (iota)
};

struct Row {
  std::string name;    // unique; letters, digits and '_' (it names the gtest case)
  std::string prim;    // the primitive this row exercises; the row's fn must bind it
  std::string family;  // forward checks run one oracle batch (one python) per family
  OpFn fn;
  std::vector<Operand> operands;
  // Shape patterns: one Shape per operand each (lax broadcasting, rank 0, zero-size dims...).
  std::vector<std::vector<Shape>> shapes;
  // Dtypes of the operands without a fixed dtype (forward and vmap sweep all of them; the
  // derivative checks use float64, and float32 for vjp). Empty for rows without operands.
  std::vector<DType> dtypes;
  // Forward reference: an op name of tests/oracle/numpy_oracle.py and its JSON params, or
  // (oracle_op empty) `ref`, compared with ref_rtol/ref_atol.
  std::string oracle_op;
  std::string oracle_params = "{}";
  RefFn ref;
  double ref_rtol = 0.0, ref_atol = 0.0;

  Deriv deriv = Deriv::kSmooth;
  bool second_order = true;
  double fd_h = 1e-6;       // finite-difference step, times max(1, max |x|)
  double jvp_rtol = 1e-6;   // first order: |jvp - fd| <= rtol * (|fd| + max |fd| + 1)
  double jvp2_rtol = 1e-5;  // second order (step fd_h2)
  // Second-order adjoint checks (<u, L w> = <L^T u, w>) hold to 64 eps times this, relative to
  // |u| |L w|: rules whose second derivative sums cancelling terms need more than 1.
  double adjoint_tol_scale = 1.0;
  double fd_h2 = 1e-5;
  KinkFn kink;
  double min_kink = 1e-3;

  bool vmap = true;
  // Elementwise/structural ops: vmap equals the loop bit for bit. Accumulating ops (sums,
  // dots) may block differently: |diff| <= vmap_ulps * eps(dtype) * (max |out| + 1).
  bool vmap_exact = true;
  double vmap_ulps = 8.0;
  bool needs_x64 = false;  // the op makes 64-bit values whatever its operands (convert to f64)
};

// Counts of what a check compared (each a separate comparison against its reference).
struct Stats {
  int cases = 0;
};

// Sanity of the table: returns "" or what is wrong with the row (names, operand/shape counts,
// derivative rows without a float dtype...).
std::string validate(const Row& row);
// The primitives the row's fn binds (its jaxpr on the first shape pattern and dtype).
std::vector<std::string> bound_primitives(const Row& row);

// The checks. Each reports mismatches as gtest failures naming the row, the case and the seed.
Stats check_forward(const std::vector<const Row*>& rows, const std::string& family);
Stats check_jvp(const Row& row);   // finite differences, or the zero tangent
Stats check_vjp(const Row& row);   // adjoint identity (f32, f64), grad of sum, 2nd order
Stats check_vmap(const Row& row);  // loop-and-stack (also batches of 1 and 0, nested)
Stats check_jit(const Row& row);   // under jit equals eager, every dtype and shape pattern
// vmap of x, v -> jvp(f, x, v) and of x, u -> vjp(f, x)(u) vs the loop, primals batched or
// not (jacfwd/jacrev's pattern), in float32: the batching rules of the rules' own ops.
Stats check_vmap_of_ad(const Row& row);

// ---- helpers the table uses ----
std::vector<DType> floats();                          // f16 bf16 f32 f64
std::vector<DType> numbers();                         // floats + i8 i32 i64 u8 u32
std::vector<DType> all_types();                       // numbers + bool
double min_pairwise_gap(const Array& x);              // for reduce_max ties
double min_abs_diff(const Array& x, const Array& y);  // |x - y| under lax broadcasting

}  // namespace tessera::sweep
