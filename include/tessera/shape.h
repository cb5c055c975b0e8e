// Shapes and abstract values (avals): what every primitive's abstract-eval rule computes.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tessera/dtype.h"

namespace tessera {

using Shape = std::vector<int64_t>;

// Number of elements (1 for rank 0).
int64_t shape_size(const Shape& s);
// "(3, 4)" as NumPy prints shapes; "(5,)" for rank 1.
std::string shape_str(const Shape& s);
// Row-major element strides.
std::vector<int64_t> row_major_strides(const Shape& s);
// Normalizes a possibly negative axis for an array of rank ndim; throws IndexError naming op.
int normalize_axis(const char* op, int64_t axis, int64_t ndim);

// Shape + dtype + weak flag (later: sharding). Cheap to copy.
struct Aval {
  Shape shape;
  DType dtype = DType::kFloat32;
  bool weak_type = false;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const { return shape_size(shape); }
  size_t nbytes() const { return static_cast<size_t>(size()) * itemsize(dtype); }
  // jaxpr style: "f32[3,4]", "i32[]"; weak types print as JAX does: "f32[]{weak}" is not used,
  // JAX prints weak scalars without a marker in jaxprs, so str() matches that.
  std::string str() const;
  bool operator==(const Aval& o) const {
    return dtype == o.dtype && weak_type == o.weak_type && shape == o.shape;
  }
  TypedDType typed() const { return {dtype, weak_type}; }
};
std::ostream& operator<<(std::ostream& os, const Aval& a);

}  // namespace tessera
