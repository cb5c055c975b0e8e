// custom_lin: the equation linearize stages for a primitive with a VJP override. It holds the
// override's backward function (an opaque param); its operands are the num_res residuals
// (non-linear) and then the tangents of the primitive's differentiable inputs (linear). It has no
// forward rule (JAX's custom_lin neither): it is only ever transposed, which calls the backward
// function. A trace-level primitive: the JVP trace stages it, and its rules need no family.
#pragma once

#include <string>
#include <vector>

#include "tessera/primitive.h"

namespace tessera::trace {

extern Primitive custom_lin;

struct CustomLinParam final : OpaqueParam {
  std::string name;                // the primitive that was overridden
  VjpBwdFn bwd;                    // (residuals, output cotangents) -> cotangents of all inputs
  int64_t num_res = 0;             // leading operands that are residuals
  std::vector<int64_t> lin_index;  // which inputs the operands after the residuals are
  int64_t num_inputs = 0;
  std::vector<Aval> out_avals;
  std::string str() const override { return "<bwd of " + name + ">"; }
};

// Params of a custom_lin equation: {bwd: CustomLinParam}.
Params custom_lin_params(std::shared_ptr<const CustomLinParam> p);
const CustomLinParam& custom_lin_param(const Params& params);

// Defines custom_lin's rules and registers it (register_all calls it).
void register_custom_lin();

}  // namespace tessera::trace
