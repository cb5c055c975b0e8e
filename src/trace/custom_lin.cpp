// custom_lin (see custom_lin.h).
#include "trace/custom_lin.h"

#include <string>

#include "tessera/errors.h"

namespace tessera::trace {

Primitive custom_lin("custom_lin", /*multiple_results=*/true);

Params custom_lin_params(std::shared_ptr<const CustomLinParam> p) {
  return Params{{"bwd", std::shared_ptr<const OpaqueParam>(std::move(p))}};
}

const CustomLinParam& custom_lin_param(const Params& params) {
  const auto& o = params.get<std::shared_ptr<const OpaqueParam>>("bwd");
  const auto* p = dynamic_cast<const CustomLinParam*>(o.get());
  if (p == nullptr)
    throw TypeError(op_message("custom_lin", "the bwd param is not the object linearize makes"));
  return *p;
}

void register_custom_lin() {
  Primitive& p = custom_lin;
  p.kind = PrimitiveKind::kEffectful;
  // Residuals then linear inputs, as many as its CustomLinParam says.
  p.signature = Signature::at_least(0, {{"bwd", ParamKind::kOpaque}});
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    return custom_lin_param(params).out_avals;
  };
  p.impl = [](const ExecContext&, std::span<const Array>, const Params& params,
              std::span<const Aval>) -> std::vector<Array> {
    throw TypeError(
        op_message("custom_lin",
                   "can't apply forward-mode autodiff (jvp) or evaluate the linearized "
                   "tangent of '" +
                       custom_lin_param(params).name +
                       "', whose derivative is defined only by a VJP rule; use vjp/grad "
                       "(reverse mode) instead"));
  };
  p.transpose = [](std::span<const Array> cts, std::span<const Array> args, std::span<const Aval>,
                   const Params& params) {
    const CustomLinParam& c = custom_lin_param(params);
    std::vector<Array> res(args.begin(), args.begin() + c.num_res);
    for (const Array& r : res)
      if (!r.defined())
        throw_internal("custom_lin", "a residual operand is linear; residuals must be known");
    std::vector<Array> all = c.bwd(res, cts);
    if (static_cast<int64_t>(all.size()) != c.num_inputs)
      throw TypeError(op_message(c.name, "the VJP rule returned " + std::to_string(all.size()) +
                                             " cotangents for " + std::to_string(c.num_inputs) +
                                             " inputs; return one per input"));
    std::vector<Array> out(args.size());
    for (size_t i = 0; i < c.lin_index.size(); ++i) out[c.num_res + i] = all[c.lin_index[i]];
    return out;
  };
  register_primitive(p);
}

}  // namespace tessera::trace
