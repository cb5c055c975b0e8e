// flat::cond, flat::switch_ and flat::while_loop (tessera/control_flow_flat.h): JAX's argument
// checks and messages, then the functions staged into const-free jaxprs (closure constants
// hoisted to leading operands) and one cond / while primitive bound on them.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "prims/ad_util.h"
#include "prims/cond.h"
#include "prims/prims.h"
#include "prims/while_loop.h"
#include "tessera/control_flow_flat.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::flat {

namespace {

std::vector<Aval> avals_of(std::span<const Array> xs) {
  std::vector<Aval> out;
  out.reserve(xs.size());
  for (const Array& x : xs) {
    if (!x.defined())
      throw ValueError("[lax] an operand is an empty Array handle (default-constructed)");
    out.push_back(x.aval());
  }
  return out;
}

// How JAX shows a value in these messages: the aval (a value's repr can be huge).
std::string value_str(const Array& x) { return x.aval().str(); }

std::vector<Array> bind_cond(const Array& index, const prims::StagedBranches& sb,
                             std::span<const Array> operands) {
  std::vector<Array> ops{index};
  ops.insert(ops.end(), sb.consts.begin(), sb.consts.end());
  ops.insert(ops.end(), operands.begin(), operands.end());
  return tessera::bind(prims::cond, ops, prims::cond_params(sb.branches));
}

}  // namespace

std::vector<Array> cond(const Array& pred, const Fun& true_fun, const Fun& false_fun,
                        std::span<const Array> operands) {
  if (!pred.defined()) throw TypeError("[cond] cond predicate is None");
  if (pred.ndim() != 0)
    throw TypeError(op_message("cond", "Pred must be a scalar, got " + value_str(pred) +
                                           " of shape " + shape_str(pred.shape()) + "."));
  Array p = pred;
  if (!is_bool(p.dtype())) {
    if (is_integer(p.dtype()) || is_floating(p.dtype()))
      p = lax::ne(p, prims::ad::scalar_const(0, p.dtype()));
    else
      throw TypeError(op_message("cond", "Pred type must be either boolean or number, got " +
                                             std::string(dtype_name(p.dtype())) + "."));
  }
  std::vector<Aval> avals = avals_of(operands);
  // Staged in JAX's order (true_fun first); bound as branches (false_fun, true_fun).
  std::vector<Fun> funs{true_fun, false_fun};
  prims::StagedBranches sb = prims::stage_branches(funs, avals);
  prims::check_same_types("cond", "true_fun and false_fun output",
                          trace::out_avals(*sb.branches[0]), trace::out_avals(*sb.branches[1]));
  std::swap(sb.branches[0], sb.branches[1]);
  Array index = lax::convert_element_type(p, DType::kInt32);
  return bind_cond(index, sb, operands);
}

std::vector<Array> switch_(const Array& index, std::span<const Fun> branches,
                           std::span<const Array> operands) {
  if (!index.defined()) throw TypeError("[switch] the branch index is None");
  if (index.ndim() != 0)
    throw TypeError(op_message("switch", "Branch index must be scalar, got " + value_str(index) +
                                             " of shape " + shape_str(index.shape()) + "."));
  if (!is_integer(index.dtype()))
    throw TypeError(op_message("switch", "Index type must be an integer, got " + value_str(index) +
                                             " as " + std::string(dtype_name(index.dtype()))));
  if (branches.empty()) throw ValueError("[switch] Empty branch sequence");
  if (branches.size() == 1) return branches[0](operands);
  Array i = lax::convert_element_type(index, DType::kInt32);
  i = lax::clamp(prims::ad::scalar_const(0, DType::kInt32), i,
                 prims::ad::scalar_const(static_cast<double>(branches.size() - 1), DType::kInt32));
  std::vector<Aval> avals = avals_of(operands);
  prims::StagedBranches sb = prims::stage_branches(branches, avals);
  std::vector<Aval> out0 = trace::out_avals(*sb.branches[0]);
  for (size_t k = 1; k < sb.branches.size(); ++k)
    prims::check_same_types("switch", "branch 0 and " + std::to_string(k) + " outputs", out0,
                            trace::out_avals(*sb.branches[k]));
  return bind_cond(i, sb, operands);
}

std::vector<Array> while_loop(const Fun& cond_fun, const Fun& body_fun, std::span<const Array> init,
                              const CarryTypeError& on_carry_type_error) {
  std::vector<Array> carry(init.begin(), init.end());
  std::vector<Aval> avals = avals_of(carry);
  // The body as staged: a weak output for a strong carry of its type is made strong.
  Fun body = [&body_fun, &avals](std::span<const Array> v) {
    std::vector<Array> out = body_fun(v);
    for (size_t k = 0; k < avals.size() && k < out.size(); ++k)
      if (out[k].defined() && carry_output_made_strong(avals[k], out[k].aval()))
        out[k] = lax::convert_element_type(out[k], out[k].dtype());
    return out;
  };
  trace::Staged sc, sb;
  // JAX's _promote_weak_typed_inputs (promoted_carry_dtype): a weakly typed initial value takes
  // the type the body returns for it (while_loop(c, lambda x: x + 1.5, 0) loops on float32),
  // and the functions are staged once more.
  for (int attempt = 0;; ++attempt) {
    sc = trace::stage(cond_fun, avals);
    sb = trace::stage(body, avals);
    std::vector<Aval> outs = trace::out_avals(*sb.jaxpr);
    if (outs.size() != avals.size() || attempt > 0) break;
    bool changed = false;
    for (size_t i = 0; i < avals.size(); ++i) {
      if (std::optional<DType> d = promoted_carry_dtype(avals[i], outs[i])) {
        carry[i] = lax::convert_element_type(carry[i], *d);
        avals[i] = carry[i].aval();
        changed = true;
      }
    }
    if (!changed) break;
  }
  std::vector<Aval> cond_out = trace::out_avals(*sc.jaxpr);
  if (cond_out.size() != 1 || cond_out[0].ndim() != 0 || cond_out[0].dtype != DType::kBool)
    throw TypeError(
        op_message("while_loop", "cond_fun must return a boolean scalar, but got output type(s) " +
                                     prims::shaped_array_list_str(cond_out) + "."));
  const std::vector<Aval> body_out = trace::out_avals(*sb.jaxpr);
  if (on_carry_type_error && body_out.size() == avals.size()) {
    const std::vector<CarryMismatch> diffs = carry_mismatches(avals, body_out);
    if (!diffs.empty()) on_carry_type_error(avals, body_out, diffs);
  }
  prims::check_same_types("while_loop", "body_fun output and input", body_out, avals);
  // Operands [cond consts, body consts, init]: each function's closure constants hoisted.
  std::vector<Array> ops = sc.consts;
  ops.insert(ops.end(), sb.consts.begin(), sb.consts.end());
  ops.insert(ops.end(), carry.begin(), carry.end());
  return tessera::bind(prims::while_loop, ops,
                       prims::while_params(sc.jaxpr, static_cast<int64_t>(sc.consts.size()),
                                           sb.jaxpr, static_cast<int64_t>(sb.consts.size())));
}

}  // namespace tessera::flat
