// lax.gather and the lax.scatter family (tessera/lax_gather.h): params built from the typed
// dimension numbers, bound by primitive name (the family lives above this layer).
#include "tessera/lax_gather.h"

#include <string>

#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/primitive.h"

namespace tessera::lax {

namespace {

const Primitive& prim(const char* name) {
  const Primitive* p = find_primitive(name);
  if (!p)
    throw InternalError(std::string("internal error: primitive ") + name + " is not registered");
  return *p;
}

Array bind_scatter(const char* name, const Array& x, const Array& idx, const Array& u,
                   const ScatterDimensionNumbers& dn, const ScatterOptions& o) {
  Params p{{"dimension_numbers", dn.to_param()},
           {"indices_are_sorted", o.indices_are_sorted},
           {"unique_indices", o.unique_indices},
           {"mode", to_param(o.mode.value_or(GatherScatterMode::kFillOrDrop))}};
  return bind1(prim(name), {x, idx, u}, p);
}

}  // namespace

Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dimension_numbers,
             const std::vector<int64_t>& slice_sizes, const GatherOptions& o) {
  Params p{{"dimension_numbers", dimension_numbers.to_param()},
           {"slice_sizes", slice_sizes},
           {"indices_are_sorted", o.indices_are_sorted},
           {"unique_indices", o.unique_indices},
           {"mode", to_param(o.mode.value_or(GatherScatterMode::kPromiseInBounds))}};
  if (o.fill_value) p.set("fill_value", *o.fill_value);
  return bind1(prim("gather"), {operand, start_indices}, p);
}

Array scatter(const Array& x, const Array& idx, const Array& u, const ScatterDimensionNumbers& dn,
              const ScatterOptions& o) {
  return bind_scatter("scatter", x, idx, u, dn, o);
}
Array scatter_add(const Array& x, const Array& idx, const Array& u,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& o) {
  return bind_scatter("scatter-add", x, idx, u, dn, o);
}
// x - u == x + (-u) exactly for floats (IEEE negation is exact) and modulo 2^n for integers.
Array scatter_sub(const Array& x, const Array& idx, const Array& u,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& o) {
  if (u.defined() && u.dtype() == DType::kBool)
    throw TypeError(op_message("scatter_sub", "subtraction is not defined for bool updates (" +
                                                  u.aval().str() + "); use scatter with a mask"));
  return bind_scatter("scatter-add", x, idx, lax::neg(u), dn, o);
}
Array scatter_mul(const Array& x, const Array& idx, const Array& u,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& o) {
  return bind_scatter("scatter-mul", x, idx, u, dn, o);
}
Array scatter_min(const Array& x, const Array& idx, const Array& u,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& o) {
  return bind_scatter("scatter-min", x, idx, u, dn, o);
}
Array scatter_max(const Array& x, const Array& idx, const Array& u,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& o) {
  return bind_scatter("scatter-max", x, idx, u, dn, o);
}

}  // namespace tessera::lax
