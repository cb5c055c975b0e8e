// A naive reference of gather and the scatters, written from XLA's semantics one output (or
// update) element at a time: shared by test_gather_scatter.cpp and the sweep rows.
#pragma once

#include <string>
#include <vector>

#include "tessera/param_types.h"
#include "tessera/shape.h"

namespace tessera::testing {

using Ints = std::vector<int64_t>;

// A gather configuration (the scatter tests use its mirror: update_window_dims = offset_dims...).
struct Config {
  Shape operand, indices;  // indices: points ... then the index vector
  GatherDimensionNumbers dn;
  Ints slice_sizes;
  Shape out;
};

bool contains(const Ints& v, int64_t x);
// Gather: every output element from the operand, or `fill` for a point out of bounds when
// !clamp.
std::vector<double> naive_gather(const Config& c, const std::vector<double>& x,
                                 const std::vector<double>& idx, bool clamp, double fill);
// Scatter in dtype's own arithmetic (float64, float32 or int32), points in row-major order and
// each point's window in order; op is "scatter", "add", "mul", "min" or "max".
std::vector<double> naive_scatter(const Config& c, const std::vector<double>& x,
                                  const std::vector<double>& idx, const std::vector<double>& u,
                                  bool clamp, const std::string& op, DType dtype);

}  // namespace tessera::testing
