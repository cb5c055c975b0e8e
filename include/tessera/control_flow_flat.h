// Control flow over flat argument lists (the pytree API of control_flow.h and the Python
// package call these). Each stages its function arguments into const-free sub-jaxprs and binds
// one primitive (cond, while, scan) carrying them, so that every transformation sees the
// structure: grad through cond/scan, vmap of while with a batched predicate, jit of loops.
//
// Function conventions: a branch/body receives and returns flat lists of arrays.
//  - cond/switch: every branch maps `operands` to outputs of identical types.
//  - while_loop: cond_fun(carry) -> {bool scalar}; body_fun(carry) -> carry (identical types).
//  - fori_loop: body(i, carry...) -> carry, i an int scalar of the bounds' dtype.
//  - scan: f(carry..., x...) -> (carry..., y...): its first init.size() outputs are the new
//    carry, the rest are the per-step outputs stacked into ys.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "tessera/transforms_flat.h"

namespace tessera::flat {

// ---- loop carries: the one place their types are decided ----
// scan, while_loop and fori_loop call these, and so does the Python package (it only adds the
// pytree structure checks and names the components by key path).
//
// JAX's weak-type rule for loop carries (_promote_weak_typed_inputs): a weakly typed initial
// carry (a C++/Python scalar) whose body output has another type, or the same type strongly,
// takes the strong type result_type(init, output); the body is then staged again. nullopt: the
// carry keeps its type.
std::optional<DType> promoted_carry_dtype(const Aval& init, const Aval& body_out);
// A weakly typed body output for a strongly typed carry of its shape and dtype is made strong
// (the carry keeps its input's type; the comparison of types ignores weak types, as JAX's
// typematch).
bool carry_output_made_strong(const Aval& init, const Aval& body_out);
// How one carry component's output type differs from its input type.
struct CarryMismatch {
  size_t index = 0;    // the carry leaf
  bool dtype = false;  // the dtypes differ
  bool shape = false;  // the shapes differ
};
// The mismatching components of equally long carry lists, in order (empty: the types agree).
std::vector<CarryMismatch> carry_mismatches(std::span<const Aval> in, std::span<const Aval> out);
// Raises the carry type error in the caller's words (it must throw); called with the input and
// output carry types and their mismatches. Unset: the core's TypeError, naming carry[k].
using CarryTypeError = std::function<void(std::span<const Aval> in, std::span<const Aval> out,
                                          std::span<const CarryMismatch> mismatches)>;

// lax.cond: pred is a scalar bool (or a number, compared with zero).
std::vector<Array> cond(const Array& pred, const Fun& true_fun, const Fun& false_fun,
                        std::span<const Array> operands);
// lax.switch: index is an integer scalar, clamped into [0, branches.size() - 1].
std::vector<Array> switch_(const Array& index, std::span<const Fun> branches,
                           std::span<const Array> operands);
// lax.while_loop. on_carry_type_error replaces the core's body type error when given.
std::vector<Array> while_loop(const Fun& cond_fun, const Fun& body_fun, std::span<const Array> init,
                              const CarryTypeError& on_carry_type_error = {});
// lax.fori_loop: a scan when both bounds are concrete (reverse mode works), a while_loop
// otherwise. unroll is passed to the scan.
std::vector<Array> fori_loop(const Array& lower, const Array& upper, const Fun& body,
                             std::span<const Array> init, int64_t unroll = 1);

struct ScanOptions {
  std::optional<int64_t> length;  // required when there are no xs
  bool reverse = false;
  int64_t unroll = 1;  // a positive step count, or 0 meaning full unroll (JAX's unroll=True)
  CarryTypeError on_carry_type_error = {};  // replaces the core's carry type error when set
};
struct ScanResult {
  std::vector<Array> carry;
  std::vector<Array> ys;
};
// lax.scan.
ScanResult scan(const Fun& f, std::span<const Array> init, std::span<const Array> xs,
                const ScanOptions& options = {});
// lax.map: f over the leading axis of xs (f(x...) -> y...), in chunks of batch_size vmapped
// steps when given (the remainder vmapped once more), as JAX.
std::vector<Array> map(const Fun& f, std::span<const Array> xs,
                       std::optional<int64_t> batch_size = std::nullopt);

}  // namespace tessera::flat
