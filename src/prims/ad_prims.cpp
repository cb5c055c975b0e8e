// stop_gradient: the identity with a zero tangent (custom_lin, the other primitive autodiff
// introduces, lives with the interpreters: trace/custom_lin.h).
#include <string>

#include "prims/prims.h"

namespace tessera::prims {

Primitive stop_gradient("stop_gradient");

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

}  // namespace

void register_ad_prims() {
  stop_gradient.kind = PrimitiveKind::kElementwise;
  stop_gradient.signature = Signature::fixed(1);
  define_stop_gradient();
  // The identity on every value (16-bit floats included, bit for bit).
  stop_gradient.scalar = {[](scalar::Builder&, std::span<const scalar::Value> in, const Params&) {
                            return std::vector<scalar::Value>{in[0]};
                          },
                          true};
}

}  // namespace tessera::prims
