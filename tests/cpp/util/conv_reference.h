// A direct (nested-loop, float64) convolution written from XLA's definition, read through the
// dimension numbers: shared by test_conv.cpp and the sweep rows. No im2col, no BLAS.
#pragma once

#include <utility>
#include <vector>

#include "tessera/param_types.h"
#include "tessera/shape.h"

namespace tessera::testing {

// One convolution: operand shapes and conv_general_dilated's params.
struct ConvConfig {
  Shape lhs, rhs;
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> pads;
  std::vector<int64_t> ld, rd;  // lhs and rhs dilation
  ConvDimensionNumbers dn;
  int64_t fgc = 1, bgc = 1;  // feature and batch group counts
};

// out[n, o, y...] = sum over the group's input features c and window offsets k of
// lhs[batch(n, group), feature(c, group), x...] * rhs[o, c, k...], where the position
// y*stride + k*rhs_dilation - pad_lo of the dilated input must land on an input element (a
// multiple of lhs_dilation inside it). Groups are major in the feature (and batch) dims.
// Returns the output shape (in out_spec's layout) and values.
std::pair<Shape, std::vector<double>> ref_conv(const std::vector<double>& lhs,
                                               const std::vector<double>& rhs, const ConvConfig& c);

}  // namespace tessera::testing
