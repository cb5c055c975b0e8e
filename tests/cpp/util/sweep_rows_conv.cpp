// Sweep rows of conv_general_dilated (src/prims/conv.cpp): 1-D, 2-D and 3-D convolutions with
// strides, padding (negative too), both dilations, NHWC/HWIO layouts, feature groups
// (depthwise) and batch groups. The forward reference is the direct float64 convolution of
// util/conv_reference.h.
#include <string>

#include "tessera/lax_conv.h"
#include "util/conv_reference.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

// A row for one configuration; `shapes` lists (lhs, rhs) patterns that the params fit.
Row conv_row(const std::string& name, testing::ConvConfig c,
             std::vector<std::vector<Shape>> shapes) {
  Row r;
  r.name = name;
  r.prim = "conv_general_dilated";
  r.family = "conv";
  r.fn = [c](const Args& x) {
    return lax::conv_general_dilated(x[0], x[1], c.strides, c.pads, c.ld, c.rd, c.dn, c.fgc, c.bgc);
  };
  r.operands = {any(-1, 1), any(-1, 1)};
  r.shapes = std::move(shapes);
  r.dtypes = {DType::kFloat32, DType::kFloat64};
  r.ref = [c](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
    testing::ConvConfig cc = c;
    cc.lhs = avals[0].shape;
    cc.rhs = avals[1].shape;
    auto [shape, values] = testing::ref_conv(v[0], v[1], cc);
    return RefOut{shape, avals[0].dtype, values};
  };
  r.ref_rtol = 1e-5;
  r.ref_atol = 1e-5;
  r.vmap_exact = false;  // batched convolutions may sum in another order
  r.vmap_ulps = 64;
  return r;
}

}  // namespace

std::vector<Row> rows_conv() {
  std::vector<Row> t;
  const std::vector<int64_t> i3{0, 1, 2}, i4{0, 1, 2, 3}, i5{0, 1, 2, 3, 4};
  {
    testing::ConvConfig c;
    c.strides = {2, 1};
    c.pads = {{1, 0}, {-1, 2}};
    c.ld = {1, 1};
    c.rd = {1, 2};
    c.dn = {i4, i4, i4};
    t.push_back(
        conv_row("conv_2d_nchw", c, {{{2, 3, 6, 5}, {4, 3, 3, 2}}, {{0, 3, 6, 5}, {4, 3, 3, 2}}}));
  }
  {
    testing::ConvConfig c;  // NHWC depthwise, channel multiplier 2
    c.strides = {1, 2};
    c.pads = {{1, 1}, {0, 1}};
    c.ld = {1, 1};
    c.rd = {2, 1};
    c.fgc = 3;
    c.dn = {{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}};
    t.push_back(conv_row("conv_2d_nhwc_depthwise", c, {{{2, 5, 6, 3}, {2, 2, 1, 6}}}));
  }
  {
    testing::ConvConfig c;  // batch groups (what the rhs transpose makes) with lhs dilation
    c.strides = {1};
    c.pads = {{1, 2}};
    c.ld = {2};
    c.rd = {1};
    c.bgc = 2;
    c.dn = {i3, i3, i3};
    t.push_back(conv_row("conv_1d_batch_groups", c, {{{4, 2, 5}, {4, 2, 3}}}));
  }
  {
    testing::ConvConfig c;
    c.strides = {1, 2, 1};
    c.pads = {{0, 0}, {1, 1}, {1, 0}};
    c.ld = {1, 1, 1};
    c.rd = {1, 1, 1};
    c.fgc = 2;
    c.dn = {i5, i5, i5};
    t.push_back(conv_row("conv_3d_groups", c, {{{1, 4, 3, 4, 3}, {2, 2, 2, 2, 2}}}));
  }
  return t;
}

}  // namespace tessera::sweep
