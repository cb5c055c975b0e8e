// The eager convolution kernel of conv_general_dilated, on one of three canonical layouts
// (Layout below), all dense row-major in one element type. Per (output batch element, group,
// chunk of output positions) an im2col scratch matrix [I * prod(K), positions] (channels-last:
// its transpose; by position: [I * prod(K), batch elements] per output position) is filled
// (padding, lhs dilation as "the dilated input index must be a multiple of the dilation", rhs
// dilation, strides) and multiplied by the group's weights with one BLAS gemm (float32, float64) or
// a plain loop (integers, bool: wrapping multiply-adds, or-of-ands). Tasks are chosen from the
// geometry alone, so results never depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/dtype.h"

namespace tessera::prims::conv {

// The operand and result layouts the kernel runs on (the caller transposes to them):
//  kChannelsFirst  lhs [N, C, S...], rhs [O, I, K...], out [N', O, S'...]
//  kChannelsLast   lhs [N, S..., C], rhs [K..., I, O], out [N', S'..., O]  (NHWC/HWIO)
//  kByPosition     lhs [C, S..., N], rhs [I, K..., O], out [N', S'..., O]  (by_position(g))
// where N' = N / batch_groups.
enum class Layout { kChannelsFirst, kChannelsLast, kByPosition };

struct Geometry {
  int64_t batch = 0;         // lhs N
  int64_t features = 0;      // lhs C
  int64_t out_features = 0;  // rhs O
  int64_t in_features = 0;   // rhs I (= C / feature_groups)
  int64_t feature_groups = 1, batch_groups = 1;
  // Per spatial dim (at least one: a convolution with no spatial dims is given one of size 1).
  std::vector<int64_t> in, window, out, strides, pad_lo, lhs_dilation, rhs_dilation;
  Layout layout = Layout::kChannelsFirst;
};

// Whether a convolution of this geometry runs by output position (few output positions, many
// batch elements: the weight gradient's convolution, whose window is as large as the image).
bool by_position(const Geometry& g);

// out = conv(lhs, rhs) for element type dtype (float32, float64, an integer type or bool).
void conv_canonical(DType dtype, const void* lhs, const void* rhs, void* out, const Geometry& g);

}  // namespace tessera::prims::conv
