// The scan primitive (JAX's scan_p): a loop over the leading axis of its scanned operands,
// carrying state. Operands are [consts..., init carry..., xs...]; params:
//   jaxpr       the body, const-free: invars [consts, carry, x slices] -> outvars
//               [new carry, y slices]
//   num_consts, num_carry, length, reverse (bool), unroll (int, >= 1)
// Outputs are [final carry..., ys...], each ys stacked along a new leading axis of `length`.
// Its rules: abstract eval, eager loop, JVP, linearize (known scan saving stacked residuals +
// linear scan), transpose (a scan in the opposite direction), batching, DCE and effects.
// Files: scan.cpp (params, abstract eval, impl, DCE, effects, registration), scan_ad.cpp
// (JVP, linearize, transpose), scan_batch.cpp (batching).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive scan;

// The params of one scan equation, unpacked.
struct ScanParams {
  std::shared_ptr<const Jaxpr> jaxpr;
  int64_t num_consts = 0;
  int64_t num_carry = 0;
  int64_t length = 0;
  bool reverse = false;
  int64_t unroll = 1;
};
ScanParams scan_params_of(const Params& p);
Params make_scan_params(const ScanParams& sp);

// Binds scan on [consts..., init..., xs...] through the current trace.
std::vector<Array> bind_scan(const ScanParams& sp, std::span<const Array> operands);

// A jaxpr with its invars / outvars picked (and reordered) by index; invars left out must be
// unused by the equations. Interned.
std::shared_ptr<const Jaxpr> reorder_jaxpr(const Jaxpr& j, const std::vector<size_t>& in_order,
                                           const std::vector<size_t>& out_order);

// Rules defined in scan_ad.cpp / scan_batch.cpp.
ad::JvpOut scan_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                    const Params& params);
ad::JvpOut scan_linearize(std::span<const Array> primals, std::span<const Array> tangents,
                          const Params& params);
std::vector<Array> scan_transpose(std::span<const Array> cts, std::span<const Array> args,
                                  std::span<const Aval> arg_avals, const Params& params);
batching::BatchOut scan_batch(const BatchAxis&, std::span<const Array> args,
                              std::span<const int64_t> dims, const Params& params);

void register_scan();

}  // namespace tessera::prims
