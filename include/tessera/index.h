// Index expressions for Array::operator[] and numpy::getitem: NumPy's basic indexing.
//
//   using tessera::Slice; using tessera::newaxis; using tessera::ellipsis;
//   x[2]                                  // first axis, negative counts from the end
//   x[{1, Slice(0, 3)}]                   // x[1, 0:3]
//   x[{ellipsis, Slice({}, {}, -1)}]      // x[..., ::-1]
//   x[{newaxis, Slice(), 0}]              // x[None, :, 0]
//   x[{i}] with i a rank-0 integer Array  // dynamic index: clamped into range, as JAX
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "tessera/array.h"

namespace tessera {

// Python's start:stop:step (each optional).
struct Slice {
  Slice() = default;
  Slice(std::optional<int64_t> start, std::optional<int64_t> stop,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};
struct NewAxis {};
struct Ellipsis {};
inline constexpr NewAxis newaxis{};
inline constexpr Ellipsis ellipsis{};

class Index {
 public:
  using Value = std::variant<int64_t, Slice, NewAxis, Ellipsis, Array>;
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Index(I i) : v_(static_cast<int64_t>(i)) {}  // NOLINT: implicit by design
  Index(Slice s) : v_(s) {}                    // NOLINT
  Index(NewAxis) : v_(NewAxis{}) {}            // NOLINT
  Index(Ellipsis) : v_(Ellipsis{}) {}          // NOLINT
  Index(Array a) : v_(std::move(a)) {}         // NOLINT
  const Value& value() const { return v_; }

 private:
  Value v_;
};

namespace numpy {
using tessera::ellipsis;
using tessera::Index;
using tessera::newaxis;
using tessera::Slice;
// x[idx] with NumPy's basic-indexing rules; IndexError for out-of-range static indices, too
// many indices or two ellipses. Integer-array (advanced) indexing needs gather, which Tessera
// does not have yet: it raises IndexError saying so.
Array getitem(const Array& x, const std::vector<Index>& idx);
}  // namespace numpy

}  // namespace tessera
