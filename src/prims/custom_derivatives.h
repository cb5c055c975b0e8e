// custom_jvp_call and custom_vjp_call: primitives carrying the primal function as a sub-jaxpr
// (param call_jaxpr, whose invars are the num_consts closure constants then the arguments;
// operands likewise) and the user's rules as opaque params. See
// tessera/custom_derivatives_flat.h for the user-facing semantics.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/custom_derivatives_flat.h"
#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive custom_jvp_call;
extern Primitive custom_vjp_call;

struct CustomJvpRule final : OpaqueParam {
  flat::JvpFun jvp;
  std::string str() const override { return "<custom_jvp rule>"; }
};
struct CustomVjpFwd final : OpaqueParam {
  flat::FwdFun fwd;
  std::string str() const override { return "<custom_vjp fwd>"; }
};
struct CustomVjpBwd final : OpaqueParam {
  flat::BwdFun bwd;
  std::string str() const override { return "<custom_vjp bwd>"; }
};

// Params {call_jaxpr, jvp, num_consts, symbolic_zeros} / {bwd, call_jaxpr, fwd, num_consts}.
Params custom_jvp_params(std::shared_ptr<const Jaxpr> call, flat::JvpFun jvp, int64_t num_consts,
                         bool symbolic_zeros);
Params custom_vjp_params(std::shared_ptr<const Jaxpr> call, flat::FwdFun fwd, flat::BwdFun bwd,
                         int64_t num_consts);

void register_custom_derivatives();

}  // namespace tessera::prims
