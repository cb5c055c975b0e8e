// Monoid recognition shared by lax::reduce and lax::reduce_window (lax_monoid.h).
#include "api/lax_monoid.h"

#include <limits>
#include <type_traits>

#include "prims/kernel_util.h"

namespace tessera::lax::detail {

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

}  // namespace

std::string monoid_op(const Jaxpr& body) {
  if (body.eqns.size() != 1 || body.invars.size() != 2 || body.outvars.size() != 1 ||
      !body.constvars.empty())
    return "";
  const JaxprEqn& e = body.eqns[0];
  if (e.invars.size() != 2 || e.outvars.size() != 1 || !is_var(body.outvars[0]) ||
      !(std::get<Var>(body.outvars[0]) == e.outvars[0]))
    return "";
  // The equation combines the two arguments (either order: these monoids commute).
  const Var &a = body.invars[0], &b = body.invars[1];
  auto is = [](const Atom& x, const Var& v) { return is_var(x) && std::get<Var>(x) == v; };
  if (!((is(e.invars[0], a) && is(e.invars[1], b)) || (is(e.invars[0], b) && is(e.invars[1], a))))
    return "";
  return e.primitive->name();
}

bool is_monoid_identity(const Array& x, std::string_view op) {
  if (op == "add" || op == "or" || op == "xor") return is_identity(x, Identity::kZero);
  if (op == "mul") return is_identity(x, Identity::kOne);
  if (op == "max") return is_identity(x, Identity::kLowest);
  if (op == "min") return is_identity(x, Identity::kHighest);
  if (op == "and") return is_identity(x, Identity::kAllOnes);
  return false;
}

}  // namespace tessera::lax::detail
