// flat::custom_jvp_call / flat::custom_vjp_call: stage the primal function, then bind the
// primitive that carries it (src/prims/custom_derivatives.cpp holds the rules).
#include "tessera/custom_derivatives_flat.h"

#include <string>

#include "prims/custom_derivatives.h"
#include "tessera/errors.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::flat {

namespace {

// f staged on the avals of args: (call_jaxpr, operands = closure constants then args).
std::pair<std::shared_ptr<const Jaxpr>, std::vector<Array>> stage(const Fun& f,
                                                                  std::span<const Array> args,
                                                                  std::string_view op) {
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].defined())
      throw ValueError(op_message(
          op, "argument " + std::to_string(i) + " is an empty Array handle (default-constructed)"));
  auto [call, consts] = trace::hoist_consts(make_jaxpr(f, args));
  for (const Array& c : consts)
    if (!c.is_concrete())
      throw TypeError(op_message(
          op, std::string("the ") + std::string(op) + " function closes over a traced value (" +
                  c.aval().str() +
                  "); pass it as an explicit argument (JAX's jax.closure_convert does this)"));
  std::vector<Array> operands = std::move(consts);
  operands.insert(operands.end(), args.begin(), args.end());
  return {std::move(call), std::move(operands)};
}

}  // namespace

std::vector<Array> custom_jvp_call(const Fun& f, const JvpFun& jvp, std::span<const Array> args,
                                   bool symbolic_zeros) {
  if (!jvp)
    throw TypeError(op_message("custom_jvp",
                               "No JVP defined for custom_jvp function; call defjvp before "
                               "calling the function"));
  auto [call, operands] = stage(f, args, "custom_jvp");
  int64_t nc = static_cast<int64_t>(operands.size() - args.size());
  return tessera::bind(prims::custom_jvp_call, operands,
                       prims::custom_jvp_params(std::move(call), jvp, nc, symbolic_zeros));
}

std::vector<Array> custom_vjp_call(const Fun& f, const FwdFun& fwd, const BwdFun& bwd,
                                   std::span<const Array> args) {
  if (!fwd || !bwd)
    throw TypeError(op_message("custom_vjp",
                               "No VJP defined for custom_vjp function; call defvjp before "
                               "calling the function"));
  auto [call, operands] = stage(f, args, "custom_vjp");
  int64_t nc = static_cast<int64_t>(operands.size() - args.size());
  return tessera::bind(prims::custom_vjp_call, operands,
                       prims::custom_vjp_params(std::move(call), fwd, bwd, nc));
}

}  // namespace tessera::flat
