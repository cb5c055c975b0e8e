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
#include <optional>
#include <span>
#include <vector>

#include "tessera/transforms_flat.h"

namespace tessera::flat {

// lax.cond: pred is a scalar bool (or a number, compared with zero).
std::vector<Array> cond(const Array& pred, const Fun& true_fun, const Fun& false_fun,
                        std::span<const Array> operands);
// lax.switch: index is an integer scalar, clamped into [0, branches.size() - 1].
std::vector<Array> switch_(const Array& index, std::span<const Fun> branches,
                           std::span<const Array> operands);
// lax.while_loop.
std::vector<Array> while_loop(const Fun& cond_fun, const Fun& body_fun,
                              std::span<const Array> init);
// lax.fori_loop: a scan when both bounds are concrete (reverse mode works), a while_loop
// otherwise. unroll is passed to the scan.
std::vector<Array> fori_loop(const Array& lower, const Array& upper, const Fun& body,
                             std::span<const Array> init, int64_t unroll = 1);

struct ScanOptions {
  std::optional<int64_t> length;  // required when there are no xs
  bool reverse = false;
  int64_t unroll = 1;  // a positive step count, or 0 meaning full unroll (JAX's unroll=True)
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
