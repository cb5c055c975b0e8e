// tessera::lax — the structural half: broadcasts, reshape, transpose, iota, reductions and dot.
// Thin wrappers: they build params and bind; every shape/dtype check lives in the primitive's
// abstract-eval rule. As JAX, no-op calls on concrete arrays return the operand itself.
#include <numeric>

#include "prims/prims.h"
#include "tessera/lax.h"

namespace tessera::lax {

namespace {
bool is_identity(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<int64_t>(i)) return false;
  return true;
}
}  // namespace

Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<int64_t>& broadcast_dimensions) {
  if (x.is_concrete() && x.shape() == shape && is_identity(broadcast_dimensions) &&
      static_cast<int64_t>(broadcast_dimensions.size()) == x.ndim())
    return x;
  return bind1(prims::broadcast_in_dim, {x},
               Params{{"shape", shape}, {"broadcast_dimensions", broadcast_dimensions}});
}

Array broadcast(const Array& x, const Shape& sizes) {
  Shape shape = sizes;
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  std::vector<int64_t> dims(static_cast<size_t>(x.ndim()));
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(sizes.size()));
  return broadcast_in_dim(x, shape, dims);
}

Array reshape(const Array& x, const Shape& new_sizes) {
  if (x.is_concrete() && x.shape() == new_sizes) return x;
  return bind1(prims::reshape, {x}, Params{{"new_sizes", new_sizes}});
}

Array transpose(const Array& x, const std::vector<int64_t>& permutation) {
  if (x.is_concrete() && static_cast<int64_t>(permutation.size()) == x.ndim() &&
      is_identity(permutation))
    return x;
  return bind1(prims::transpose, {x}, Params{{"permutation", permutation}});
}

Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension) {
  return bind1(
      prims::iota, {},
      Params{{"dtype", canonicalize_dtype(dtype)}, {"shape", shape}, {"dimension", dimension}});
}

Array iota(DType dtype, int64_t size) { return broadcasted_iota(dtype, Shape{size}, 0); }

Array reduce_sum(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_sum, {x}, Params{{"axes", axes}});
}

Array reduce_max(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_max, {x}, Params{{"axes", axes}});
}

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type) {
  Params p{{"dimension_numbers", dims.to_param()}};
  if (preferred_element_type)
    p.set("preferred_element_type", canonicalize_dtype(*preferred_element_type));
  return bind1(prims::dot_general, {lhs, rhs}, p);
}

Array dot(const Array& lhs, const Array& rhs, std::optional<DType> preferred_element_type) {
  const int64_t ln = lhs.ndim(), rn = rhs.ndim();
  if (ln < 1 || ln > 2 || rn < 1 || rn > 2 || lhs.shape().back() != rhs.shape()[0])
    throw TypeError(op_message("dot", "Incompatible shapes for dot: got " + shape_str(lhs.shape()) +
                                          " and " + shape_str(rhs.shape()) +
                                          "; lax.dot takes vectors and matrices whose inner "
                                          "dimensions agree (use dot_general otherwise)."));
  return dot_general(lhs, rhs, DotDimensionNumbers{{ln - 1}, {0}, {}, {}}, preferred_element_type);
}

}  // namespace tessera::lax

namespace tessera::lax {
Array stop_gradient(const Array& x) { return bind1(prims::stop_gradient, {x}); }
}  // namespace tessera::lax
