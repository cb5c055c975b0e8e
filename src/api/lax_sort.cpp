// lax.sort and lax.sort_key_val: JAX's argument checks and axis normalization, then one bind of
// the sort primitive (rules in src/prims/sort.cpp; found by name in the registry, so that this
// layer includes nothing of the families above it).
#include "tessera/lax_sort.h"

#include <string>
#include <vector>

#include "tessera/errors.h"
#include "tessera/primitive.h"

namespace tessera::lax {

namespace {

// JAX's canonicalize_axis.
int64_t canonical_dimension(int64_t dimension, int64_t ndim) {
  if (dimension < -ndim || dimension >= ndim)
    throw ValueError(op_message(
        "sort", "axis " + std::to_string(dimension) + " is out of bounds for array of dimension " +
                    std::to_string(ndim) + (ndim == 0 ? "; sort needs arrays of rank >= 1" : "")));
  return dimension < 0 ? dimension + ndim : dimension;
}

std::vector<Array> bind_sort(const std::vector<Array>& ops, int64_t dimension, bool is_stable,
                             int64_t num_keys) {
  for (const Array& a : ops)
    if (!a.defined()) throw ValueError(op_message("sort", "an operand is an empty Array handle"));
  const int64_t dim = canonical_dimension(dimension, ops[0].ndim());
  static const Primitive* const sort_p = find_primitive("sort");
  return tessera::bind(
      *sort_p, ops, Params{{"dimension", dim}, {"is_stable", is_stable}, {"num_keys", num_keys}});
}

}  // namespace

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, bool is_stable,
                        int64_t num_keys) {
  if (operands.empty()) throw TypeError(op_message("sort", "Sort requires at least one operand"));
  if (num_keys < 1 || num_keys > static_cast<int64_t>(operands.size()))
    throw ValueError(op_message(
        "sort", "num_keys=" + std::to_string(num_keys) +
                    " must be between 1 and len(operand)=" + std::to_string(operands.size())));
  return bind_sort(operands, dimension, is_stable, num_keys);
}

Array sort(const Array& operand, int64_t dimension, bool is_stable, int64_t num_keys) {
  if (num_keys != 1)
    throw ValueError(op_message(
        "sort", "num_keys=" + std::to_string(num_keys) + " must equal 1 for a single operand."));
  return bind_sort({operand}, dimension, is_stable, 1)[0];
}

std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int64_t dimension,
                                     bool is_stable) {
  std::vector<Array> r = bind_sort({keys, values}, dimension, is_stable, 1);
  return {r[0], r[1]};
}

std::pair<Array, Array> top_k(const Array& operand, int64_t k) {
  static const Primitive* const top_k_p = find_primitive("top_k");
  std::vector<Array> r = tessera::bind(*top_k_p, {operand}, Params{{"k", k}});
  return {r[0], r[1]};
}

}  // namespace tessera::lax
