// Dimension-list helpers shared by gather's and the scatters' rules (gather.cpp, scatter.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/errors.h"
#include "tessera/shape.h"

namespace tessera::prims::gather_dims {

inline bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Every dim + 1 (a batch axis inserted at 0).
inline std::vector<int64_t> plus1(const std::vector<int64_t>& v) {
  std::vector<int64_t> r;
  for (int64_t d : v) r.push_back(d + 1);
  return r;
}

// JAX's checks of a dimension list: each in [0, bound), no repeats, sorted when required.
// `family` is "gather" or "scatter" (JAX's wording: "... in gather op must be sorted").
inline void check_dim_list(const char* op, const char* family, const std::vector<int64_t>& v,
                           int64_t bound, const char* what, const char* of, bool sorted = true) {
  const std::string ds = shape_str(v);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= bound)
      throw TypeError(op_message(op, std::string("All components of ") + what +
                                         " must lie in the range [0, " + std::to_string(bound) +
                                         ") (the rank of the " + of + "), got " + ds + "."));
    for (size_t j = 0; j < i; ++j)
      if (v[j] == v[i])
        throw TypeError(op_message(
            op, std::string(what) + " in " + family + " op must not repeat; got: " + ds + "."));
    if (sorted && i > 0 && v[i] < v[i - 1])
      throw TypeError(op_message(
          op, std::string(what) + " in " + family + " op must be sorted; got: " + ds + "."));
  }
}

}  // namespace tessera::prims::gather_dims
