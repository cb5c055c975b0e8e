// Shapes and abstract values (avals): what every primitive's abstract-eval rule computes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/dtype.h"

namespace tessera {

class Sharding;      // sharding.h
struct AxisNameSet;  // sharding.h

using Shape = std::vector<int64_t>;

// The largest rank an array may have: NumPy 2's limit (NPY_MAXDIMS = 64). Shapes of higher rank
// (from a rule, a reshape, a .npy header, a parsed jaxpr, NumPy or DLPack) raise ValueError, so
// that no recursion over dimensions (printing, odometers) can exhaust the stack.
inline constexpr int64_t kMaxRank = 64;
// The largest byte count of one array: element counts and byte counts computed from user shapes
// never wrap around int64 (2^62 leaves room for size classes and alignment arithmetic).
inline constexpr int64_t kMaxArrayBytes = int64_t{1} << 62;

// Sizes computed from user input use checked arithmetic: on overflow they throw ValueError
// "[op] <what> overflows ..." rather than wrap around (signed overflow is undefined behaviour).
int64_t checked_mul(std::string_view op, int64_t a, int64_t b, std::string_view what = "size");
int64_t checked_add(std::string_view op, int64_t a, int64_t b, std::string_view what = "size");

// Number of elements (1 for rank 0). Throws ValueError naming `op` and the shape when the product
// of the dimensions overflows int64; valid avals (check_aval) never do.
int64_t shape_size(const Shape& s, std::string_view op = "shape");
// "(3, 4)" as NumPy prints shapes; "(5,)" for rank 1. Long shapes are abbreviated.
std::string shape_str(const Shape& s);
// Row-major element strides (checked like shape_size).
std::vector<int64_t> row_major_strides(const Shape& s);

// Checks that `s` is a valid array shape: rank <= kMaxRank, every dimension >= 0, and the
// element count times `itemsize` at most kMaxArrayBytes. Throws ValueError "[op] ..." naming the
// shape and the fix. Everything that makes a shape from user input calls it (or check_aval).
void check_shape(std::string_view op, const Shape& s, size_t itemsize = 1);
// Normalizes a possibly negative axis for an array of rank ndim; throws IndexError naming op.
int normalize_axis(const char* op, int64_t axis, int64_t ndim);

// Shape + dtype + weak flag (+ the reserved sharding and vma). Cheap to copy. Every aval bind hands
// to a rule or a kernel has passed check_aval, so size() and nbytes() cannot overflow.
struct Aval {
  Shape shape;
  DType dtype = DType::kFloat32;
  bool weak_type = false;
  // Reserved for the many-device issues (null today): the sharding of a value under
  // jit/shard_map (JAX's ShapedArray.sharding) and its varying-manual-axes set (JAX's `vma`, the
  // shard_map axes the value varies over). Both point at interned objects (sharding.h) that live
  // for the process, so an Aval stays cheap to copy and == compares them by identity.
  const Sharding* sharding = nullptr;
  const AxisNameSet* vma = nullptr;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const { return shape_size(shape); }
  size_t nbytes() const;
  // jaxpr style: "f32[3,4]", "i32[]"; weak types print as JAX does: "f32[]{weak}" is not used,
  // JAX prints weak scalars without a marker in jaxprs, so str() matches that.
  std::string str() const;
  bool operator==(const Aval& o) const {
    return dtype == o.dtype && weak_type == o.weak_type && shape == o.shape &&
           sharding == o.sharding && vma == o.vma;
  }
  TypedDType typed() const { return {dtype, weak_type}; }
};
std::ostream& operator<<(std::ostream& os, const Aval& a);
// check_shape(op, a.shape, itemsize(a.dtype)).
void check_aval(std::string_view op, const Aval& a);

}  // namespace tessera
