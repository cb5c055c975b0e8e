// lax::reduce: traces the computation once on rank-0 values into a jaxpr and binds the generic
// `reduce` primitive, or, when the computation is a known monoid with its identity as the init
// value, that monoid's reduction primitive (as JAX's _get_monoid_reducer).
#include <limits>
#include <string>

#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "tessera/jaxpr.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::lax {

namespace {

enum class Identity { kZero, kOne, kLowest, kHighest, kAllOnes };

// Whether the concrete rank-0 x equals the identity, exactly, in x's dtype.
bool is_identity(const Array& x, Identity id) {
  if (!x.is_concrete() || x.ndim() != 0 || is_extended(x.dtype())) return false;
  return kernels::dispatch_dtype(x.dtype(), [&]<class T>() {
    using C = kernels::compute_t<T>;
    const C v = kernels::load(*static_cast<const T*>(x.raw_data("reduce")));
    switch (id) {
      case Identity::kZero:
        return v == C(0);
      case Identity::kOne:
        return v == C(1);
      case Identity::kLowest:
        if constexpr (std::is_floating_point_v<C>) return v == -std::numeric_limits<C>::infinity();
        return v == std::numeric_limits<C>::lowest();
      case Identity::kHighest:
        if constexpr (std::is_floating_point_v<C>) return v == std::numeric_limits<C>::infinity();
        return v == std::numeric_limits<C>::max();
      case Identity::kAllOnes:
        if constexpr (std::is_same_v<C, bool>)
          return v;
        else if constexpr (std::is_integral_v<C>)
          return v == static_cast<C>(~std::make_unsigned_t<C>(0));
        return false;
    }
    return false;
  });
}

// The monoid reduction the one-operand body computes with this init value, or nullptr.
const Primitive* monoid_reducer(const Jaxpr& body, const Array& init) {
  if (body.eqns.size() != 1 || body.invars.size() != 2 || body.outvars.size() != 1 ||
      !body.constvars.empty())
    return nullptr;
  const JaxprEqn& e = body.eqns[0];
  if (e.invars.size() != 2 || e.outvars.size() != 1 || !is_var(body.outvars[0]) ||
      !(std::get<Var>(body.outvars[0]) == e.outvars[0]))
    return nullptr;
  // The equation combines the two arguments (either order: these monoids commute).
  const Var &a = body.invars[0], &b = body.invars[1];
  auto is = [](const Atom& x, const Var& v) { return is_var(x) && std::get<Var>(x) == v; };
  if (!((is(e.invars[0], a) && is(e.invars[1], b)) || (is(e.invars[0], b) && is(e.invars[1], a))))
    return nullptr;
  const Primitive* p = e.primitive;
  if (p == &prims::add && is_identity(init, Identity::kZero)) return &prims::reduce_sum;
  if (p == &prims::mul && is_identity(init, Identity::kOne)) return &prims::reduce_prod;
  if (p == &prims::max && is_identity(init, Identity::kLowest)) return &prims::reduce_max;
  if (p == &prims::min && is_identity(init, Identity::kHighest)) return &prims::reduce_min;
  if (p == &prims::and_ && is_identity(init, Identity::kAllOnes)) return &prims::reduce_and;
  if (p == &prims::or_ && is_identity(init, Identity::kZero)) return &prims::reduce_or;
  if (p == &prims::xor_ && is_identity(init, Identity::kZero)) return &prims::reduce_xor;
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
