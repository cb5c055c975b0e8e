// lax::reduce: traces the computation once on rank-0 values into a jaxpr and binds the generic
// `reduce` primitive, or, when the computation is a known monoid with its identity as the init
// value, that monoid's reduction primitive (as JAX's _get_monoid_reducer).
#include <limits>
#include <string>

#include "api/lax_monoid.h"
#include "prims/prims.h"
#include "tessera/jaxpr.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::lax {

namespace {

// The monoid reduction the one-operand body computes with this init value, or nullptr.
const Primitive* monoid_reducer(const Jaxpr& body, const Array& init) {
  const std::string op = detail::monoid_op(body);
  if (op.empty() || !detail::is_monoid_identity(init, op)) return nullptr;
  if (op == "add") return &prims::reduce_sum;
  if (op == "mul") return &prims::reduce_prod;
  if (op == "max") return &prims::reduce_max;
  if (op == "min") return &prims::reduce_min;
  if (op == "and") return &prims::reduce_and;
  if (op == "or") return &prims::reduce_or;
  if (op == "xor") return &prims::reduce_xor;
  return nullptr;
}

}  // namespace

std::vector<Array> reduce(const std::vector<Array>& operands, const std::vector<Array>& init_values,
                          const ReduceComputation& computation,
                          const std::vector<int64_t>& dimensions) {
  const size_t n = operands.size();
  if (n == 0 || init_values.size() != n)
    throw TypeError(op_message("reduce", "expects one init value per operand (at least one), got " +
                                             std::to_string(n) + " operands and " +
                                             std::to_string(init_values.size()) + " init values"));
  for (size_t i = 0; i < n; ++i)
    if (!operands[i].defined() || !init_values[i].defined())
      throw ValueError(op_message(
          "reduce", "operand or init value " + std::to_string(i) + " is an empty Array handle"));
  // Trace the computation on rank-0 values of the init values' dtypes (JAX traces it on the
  // init values' avals), accumulators first.
  std::vector<Aval> avals;
  for (int k = 0; k < 2; ++k)
    for (const Array& v : init_values) avals.push_back(Aval{{}, v.dtype(), false});
  ClosedJaxpr body = trace::stage_closed(
      [&](std::span<const Array> xs) {
        std::vector<Array> acc(xs.begin(), xs.begin() + n), val(xs.begin() + n, xs.end());
        std::vector<Array> outs = computation(acc, val);
        if (outs.size() != n)
          throw TypeError(op_message("reduce", "the computation returned " +
                                                   std::to_string(outs.size()) + " values for " +
                                                   std::to_string(n) +
                                                   " operands; it must return one accumulator "
                                                   "per operand"));
        return outs;
      },
      avals);
  if (n == 1)
    if (const Primitive* m = monoid_reducer(*body.jaxpr, init_values[0]))
      return tessera::bind(*m, {operands[0]}, Params{{"axes", dimensions}});
  std::vector<Array> args = operands;
  args.insert(args.end(), init_values.begin(), init_values.end());
  args.insert(args.end(), body.consts.begin(), body.consts.end());
  return tessera::bind(prims::reduce, args,
                       Params{{"computation", intern(*body.jaxpr)}, {"dimensions", dimensions}});
}

Array reduce(const Array& operand, const Array& init_value,
             const std::function<Array(const Array&, const Array&)>& computation,
             const std::vector<int64_t>& dimensions) {
  return reduce(
      {operand}, {init_value},
      [&](const std::vector<Array>& acc, const std::vector<Array>& val) {
        return std::vector<Array>{computation(acc[0], val[0])};
      },
      dimensions)[0];
}

}  // namespace tessera::lax
