// The rules every primitive that calls a const-free body jaxpr on its operands shares (jit,
// checkpoint): the operand check of abstract eval, and JVP, transpose, batching and DCE, each
// binding the primitive again — through the family's `rebind` — on the body the
// jaxpr-transformation layer (trace/jaxpr_transforms.h) produced, with that transformation's
// consts as leading operands. Linearize differs per family (checkpoint's saveable policy) and
// stays with it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

using JaxprPtr = std::shared_ptr<const Jaxpr>;
// Binds the family's primitive on `body` (const-free) with these operands.
using Rebind = std::function<std::vector<Array>(JaxprPtr body, std::span<const Array> operands)>;

// TypeError "[op] <what><name> takes (...) but the call passes (...)" unless the operands are
// what the body takes (shapes and dtypes), checked before anything indexes them (the message is
// built only then: jit checks on every call).
void check_call_operands(const char* op, std::string_view what, std::string_view name,
                         const Jaxpr& body, std::span<const Aval> in);

std::pair<std::vector<Array>, std::vector<Array>> call_jvp(const Jaxpr& body,
                                                           std::span<const Array> primals,
                                                           std::span<const Array> tangents,
                                                           const Rebind& rebind);
// Linear in its undefined operands; the others are non-linear (evaluated forward first).
std::vector<Array> call_transpose(const Jaxpr& body, std::span<const Array> cts,
                                  std::span<const Array> args, const Rebind& rebind);
// Every output batched at axis 0.
std::pair<std::vector<Array>, std::vector<int64_t>> call_batch(const Jaxpr& body,
                                                               std::span<const Array> args,
                                                               std::span<const int64_t> dims,
                                                               const Rebind& rebind);
// JAX's DCE of a call: unused outputs go, and the operands the pruned body no longer reads
// (all kept when keep_operands). make_params(pruned body, used operands) gives the new
// equation's params.
using CallParams = std::function<Params(JaxprPtr body, const std::vector<bool>& used_operands)>;
std::pair<std::vector<bool>, std::optional<JaxprEqn>> call_dce(const std::vector<bool>& used,
                                                               const JaxprEqn& eqn,
                                                               bool keep_operands,
                                                               const CallParams& make_params);

}  // namespace tessera::prims
