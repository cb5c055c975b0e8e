// custom_jvp and custom_vjp over flat lists of arrays: the core that custom_derivatives.h (C++
// pytrees) and the Python package build on.
//
// A call stages the primal function on its arguments' avals and binds a primitive carrying
// that sub-jaxpr (custom_jvp_call / custom_vjp_call) and the user's rules as opaque params.
// Arrays the function closes over become leading operands (param num_consts, as in JAX); they
// must be concrete: closing over a traced value raises TypeError (pass it as an argument, as
// JAX asks of custom_vjp functions with jax.closure_convert).
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/transforms_flat.h"

namespace tessera::flat {

// (primals, tangents) -> (primal outputs, tangent outputs). A tangent is an undefined Array
// (symbolic zero) only with symbolic_zeros; otherwise zero tangents are instantiated. Tangent
// outputs may be undefined (zero); those of integer/bool outputs are ignored.
using JvpFun = std::function<std::pair<std::vector<Array>, std::vector<Array>>(
    std::span<const Array> primals, std::span<const Array> tangents)>;
// primals -> (outputs, residuals).
using FwdFun =
    std::function<std::pair<std::vector<Array>, std::vector<Array>>(std::span<const Array>)>;
// (residuals, output cotangents) -> one cotangent per primal input (undefined = zero).
using BwdFun =
    std::function<std::vector<Array>(std::span<const Array> residuals, std::span<const Array> cts)>;

// f(args), differentiated by `jvp` under jvp/linearize/grad (grad works through the JVP rule,
// as in JAX), batched by vmapping both f and jvp.
std::vector<Array> custom_jvp_call(const Fun& f, const JvpFun& jvp, std::span<const Array> args,
                                   bool symbolic_zeros = false);

// f(args), differentiated in reverse mode by fwd/bwd (vjp, grad, linearize; grad(grad) when
// bwd is differentiable). Forward mode (jvp) raises JAX's TypeError.
std::vector<Array> custom_vjp_call(const Fun& f, const FwdFun& fwd, const BwdFun& bwd,
                                   std::span<const Array> args);

}  // namespace tessera::flat
