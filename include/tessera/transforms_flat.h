// The transformation core: non-templated, over flat lists of arrays. The templated API of
// transforms.h flattens pytrees to these calls and unflattens the results; the Python package
// does the same with Python pytrees.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/array.h"
#include "tessera/debug_info.h"
#include "tessera/flat_fun.h"
#include "tessera/jaxpr.h"

namespace tessera::flat {

// Forward mode: (outputs, output tangents). Undefined input tangents are zeros; output
// tangents are instantiated (float0 zeros for non-float outputs). Tangents must have their
// primal's shape and dtype (float0 for integer/bool primals).
std::pair<std::vector<Array>, std::vector<Array>> jvp(const Fun& f, std::span<const Array> primals,
                                                      std::span<const Array> tangents);

// f linearized at `primals`: the outputs, evaluated now, and the linear map from input tangents
// to output tangents as a jaxpr whose constants are the residuals.
class Linearized {
 public:
  const std::vector<Array>& outs() const { return outs_; }
  // Output tangents for input tangents (undefined = zero; one per primal input).
  std::vector<Array> jvp(std::span<const Array> tangents) const;
  // Input cotangents for output cotangents (undefined = zero; one per output). Cotangents of
  // non-float inputs are float0 zeros; others are instantiated zeros when no path reaches them.
  std::vector<Array> vjp(std::span<const Array> cts) const;
  // The linear jaxpr: invars are the tangents of the float inputs, outvars the tangents of
  // the outputs that depend on them.
  const ClosedJaxpr& linear_jaxpr() const { return lin_; }
  const std::vector<Aval>& in_avals() const { return in_avals_; }
  const std::vector<Aval>& out_avals() const { return out_avals_; }

 private:
  friend Linearized linearize(const Fun& f, std::span<const Array> primals);
  std::vector<Array> outs_;
  ClosedJaxpr lin_;
  std::vector<Aval> in_avals_, out_avals_;
  std::vector<int64_t> in_var_;   // input i -> invar index of the linear jaxpr, or -1
  std::vector<int64_t> out_var_;  // output i -> outvar index, or -1 (zero tangent)
};
Linearized linearize(const Fun& f, std::span<const Array> primals);

// Transposes f, which must be linear in its inputs: a function from output cotangents to input
// cotangents. `primals` give the input avals (values are not used).
std::function<std::vector<Array>(std::span<const Array>)> linear_transpose(
    const Fun& f, std::span<const Array> primals);

// vmap: in_axes one per argument (nullopt = unbatched; negative counts from the end);
// out_axes_for(num_outputs) gives one per output once f has run. axis_size is required when
// no argument is batched; otherwise it must agree with the batched arguments.
std::vector<Array> vmap(
    const Fun& f, std::span<const Array> args, std::span<const std::optional<int64_t>> in_axes,
    const std::function<std::vector<std::optional<int64_t>>(size_t)>& out_axes_for,
    std::optional<int64_t> axis_size = std::nullopt, const std::string& axis_name = "");

// Stages f on abstract arguments with the avals of `args` (their values are not used) into a
// closed jaxpr. Values f closes over become constvars (rank-0 concrete ones literals). `debug`
// names f and its arguments in concretization errors (default: "fn", "args[i]").
ClosedJaxpr make_jaxpr(const Fun& f, std::span<const Array> args, const DebugInfo* debug = nullptr);

// An Array that stands for an argument of the given aval without a value (ShapeDtypeStruct):
// only make_jaxpr and eval_shape accept it.
Array abstract_placeholder(const Aval& aval);

}  // namespace tessera::flat

namespace tessera::flat {

// grad's core: f's first output is the loss (a float scalar); the remaining outputs (aux) are
// returned as values and not differentiated. Integer/bool inputs raise TypeError unless
// allow_int, when their cotangents are float0 zeros.
struct ValueAndGrad {
  std::vector<Array> outs;   // the loss, then the aux outputs
  std::vector<Array> grads;  // one per argument
};
ValueAndGrad value_and_grad(const Fun& f, std::span<const Array> args, bool allow_int,
                            std::string_view op = "grad");

// Jacobians of every output leaf with respect to every input leaf, row-major
// ([out 0 wrt in 0, out 0 wrt in 1, ..., out 1 wrt in 0, ...]); each has shape
// out.shape + in.shape. jacfwd pushes forward a vmapped basis of input tangents (cheap for few
// inputs), jacrev pulls back a vmapped basis of output cotangents (cheap for few outputs).
// `outs`, when given, receives f's outputs. The last `num_aux` outputs are auxiliary (has_aux):
// returned in `outs`, not differentiated. `num_aux` is asked after f has run (a Python
// function's aux structure is known only then).
using CountFn = std::function<size_t()>;
std::vector<Array> jacfwd(const Fun& f, std::span<const Array> args,
                          std::vector<Array>* outs = nullptr, const CountFn& num_aux = nullptr);
std::vector<Array> jacrev(const Fun& f, std::span<const Array> args,
                          std::vector<Array>* outs = nullptr, const CountFn& num_aux = nullptr);

}  // namespace tessera::flat
