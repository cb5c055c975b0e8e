// Primitives that exist for autodiff: stop_gradient (identity with a zero tangent) and
// custom_lin (see custom_lin.h).
#include <string>

#include "prims/custom_lin.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive stop_gradient("stop_gradient");
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

namespace {

void define_stop_gradient() {
  Primitive& p = stop_gradient;
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    if (in.size() != 1)
      throw TypeError(
          op_message("stop_gradient", "takes 1 operand, got " + std::to_string(in.size())));
    return std::vector<Aval>{in[0]};
  };
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params&,
              std::span<const Aval>) {
    return std::vector<Array>{args[0]};  // arrays are immutable: the same buffer
  };
  p.jvp = [](std::span<const Array> primals, std::span<const Array>, const Params& params) {
    // The primal still goes through stop_gradient so that staged programs show it.
    std::vector<Array> outs = tessera::bind(stop_gradient, primals, params);
    return std::make_pair(std::move(outs), std::vector<Array>{Array()});
  };
  p.batch = [](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
               const Params& params) {
    return std::make_pair(tessera::bind(stop_gradient, args, params),
                          std::vector<int64_t>{dims[0]});
  };
  register_primitive(p);
}

void define_custom_lin() {
  Primitive& p = custom_lin;
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

}  // namespace

void register_ad_prims() {
  stop_gradient.kind = PrimitiveKind::kElementwise;
  custom_lin.kind = PrimitiveKind::kEffectful;
  stop_gradient.signature = Signature::fixed(1);
  // Residuals then linear inputs, as many as its CustomLinParam says.
  custom_lin.signature = Signature::at_least(0, {{"bwd", ParamKind::kOpaque}});
  define_stop_gradient();
  // The identity on every value (16-bit floats included, bit for bit).
  stop_gradient.scalar = {[](scalar::Builder&, std::span<const scalar::Value> in, const Params&) {
                            return std::vector<scalar::Value>{in[0]};
                          },
                          true};
  define_custom_lin();
}

}  // namespace tessera::prims
