// The loop-carry decisions of control_flow_flat.h: JAX's weak-type promotion of initial carries,
// the strong type of a weak output for a strong carry, and which components' types differ.
// scan and while_loop (lax_scan.cpp, lax_cond.cpp) and the Python package all call these.
#include <vector>

#include "tessera/control_flow_flat.h"

namespace tessera::flat {

namespace {

bool typematch(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

}  // namespace

std::optional<DType> promoted_carry_dtype(const Aval& init, const Aval& body_out) {
  if (!init.weak_type) return std::nullopt;
  if (typematch(init, body_out) && body_out.weak_type) return std::nullopt;
  return result_type({init.typed(), body_out.typed()}).dtype;
}

bool carry_output_made_strong(const Aval& init, const Aval& body_out) {
  return !init.weak_type && body_out.weak_type && typematch(init, body_out);
}

std::vector<CarryMismatch> carry_mismatches(std::span<const Aval> in, std::span<const Aval> out) {
  std::vector<CarryMismatch> diffs;
  for (size_t k = 0; k < in.size() && k < out.size(); ++k) {
    CarryMismatch m{k, in[k].dtype != out[k].dtype, in[k].shape != out[k].shape};
    if (m.dtype || m.shape) diffs.push_back(m);
  }
  return diffs;
}

}  // namespace tessera::flat
