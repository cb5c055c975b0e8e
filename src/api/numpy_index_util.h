// Helpers shared by numpy_index_funcs.cpp, numpy_index_arith.cpp and numpy_histogram.cpp: the
// concrete value behind a static-size argument (jnp's ConcretizationTypeError text otherwise),
// integer constants, axis checks.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/array.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/numpy_indexing.h"
#include "tessera/param_types.h"

namespace tessera::numpy::detail {

inline constexpr DType kIndexI32 = DType::kInt32;
inline constexpr GatherScatterMode kDropMode = GatherScatterMode::kFillOrDrop;

// The concrete value of x when known (a concrete array, or a tracer standing for one, as under
// grad of eager code), else null.
inline const Array* concrete_of(const Array& x) {
  return x.is_concrete() ? &x : x.tracer()->concrete_value();
}

// concrete_of(x), or ConcretizationError with jnp's text: "The size argument of jnp.<name> must
// be statically specified to use jnp.<name> within JAX transformations (<why>)." and the fix.
inline const Array& concrete_for(const std::string& name, const Array& x, const std::string& why,
                                 const std::string& fix) {
  const Array* v = concrete_of(x);
  if (!v)
    throw ConcretizationError(op_message(
        name, "The size argument of jnp." + name + " must be statically specified to use jnp." +
                  name + " within JAX transformations (" + why + "). Got the traced " +
                  x.aval().str() + "; " + fix));
  return *v;
}

// A rank-0 constant of dtype d, and one broadcast to shape s.
inline Array iconst(int64_t v, DType d) { return numpy::scalar(static_cast<double>(v), d); }
inline Array filled(int64_t v, DType d, const Shape& s) {
  return lax::broadcast_in_dim(iconst(v, d), s, {});
}

inline int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(op_message(op, "axis " + std::to_string(axis) +
                                        " is out of bounds for array of dimension " +
                                        std::to_string(ndim)));
  return axis < 0 ? axis + ndim : axis;
}

inline Array flat1(const Array& x) { return lax::reshape(x, {x.size()}); }

// IndexOptions with only a mode (or a mode and a fill value).
inline IndexOptions mode_opt(GatherScatterMode m, std::optional<double> fill = std::nullopt) {
  IndexOptions o;
  o.mode = m;
  o.fill_value = fill;
  return o;
}

// Python's repr of a string: 'left'.
inline std::string py_repr(const std::string& s) { return "'" + s + "'"; }

}  // namespace tessera::numpy::detail
