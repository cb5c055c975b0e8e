// conv_general_dilated: lax's general n-d convolution with padding, strides, lhs ("transposed")
// and rhs ("atrous") dilation, layouts by dimension numbers, feature groups and batch groups.
// Every rule follows jax/_src/lax/convolution.py: JAX's shape rule and messages, the bilinear
// JVP, the two transposes (convolutions with rearranged dimension numbers, JAX's vjp paddings,
// the kernel reversed, groups reshaped), and the batching rule that folds the vmapped axis into
// the batch dimension or into the feature groups.
//
// The eager kernel (conv_kernels.h) runs on canonical layouts: operands are transposed to
// [N, C, spatial...] and [O, I, spatial...] and converted to the compute type (float32, or
// float64 when an operand or the result is float64; 16-bit floats compute in float32 and round
// once; integers and bool in the result type), and the result transposed to out_spec.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/conv_kernels.h"
#include "prims/prims.h"
#include "runtime/blas.h"
#include "tessera/lax.h"
#include "tessera/param_types.h"

namespace tessera::prims {

Primitive conv_general_dilated("conv_general_dilated");

namespace {

constexpr const char* kOp = "conv_general_dilated";
using Pads = std::vector<std::pair<int64_t, int64_t>>;
using Ints = std::vector<int64_t>;

struct ConvParams {
  Ints strides;
  Pads padding;
  Ints lhs_dilation, rhs_dilation;
  ConvDimensionNumbers dn;
  int64_t feature_groups = 1, batch_groups = 1;
  std::optional<int32_t> precision;  // a lax.Precision member; nullopt is None
  std::optional<DType> preferred;
};

// precision: a lax.Precision, or None (absent). A parsed jaxpr may hold JAX's `None` as an
// empty value and `Precision.HIGHEST` as its text (the param is kAny so that JAX's printed
// `precision=None` parses).
std::optional<int32_t> read_precision(const ParamValue& v) {
  if (const auto* e = std::get_if<ParamEnum>(&v); e && e->def == &kPrecisionDef) return e->value;
  const auto* j = std::get_if<std::shared_ptr<const Jaxpr>>(&v);
  const auto* o = std::get_if<std::shared_ptr<const OpaqueParam>>(&v);
  const auto* str = std::get_if<std::string>(&v);
  if ((j && !*j) || (o && !*o) || (str && *str == "None")) return std::nullopt;
  const std::string_view prefix = "Precision.";
  if (str && str->starts_with(prefix))
    for (size_t i = 0; i < kPrecisionDef.members.size(); ++i)
      if (str->substr(prefix.size()) == kPrecisionDef.members[i]) return static_cast<int32_t>(i);
  throw TypeError(op_message(kOp,
                             "precision must be None or a lax.Precision value such as "
                             "Precision.HIGHEST, got " +
                                 param_value_str(v)));
}

ConvParams read_params(const Params& p) {
  ConvParams c;
  c.strides = p.get_ints("window_strides");
  c.padding = padding_pairs_from_param(p.at("padding"));
  c.lhs_dilation = p.get_ints("lhs_dilation");
  c.rhs_dilation = p.get_ints("rhs_dilation");
  c.dn =
      ConvDimensionNumbers::from_param(p.get_record("dimension_numbers", kConvDimensionNumbersDef));
  c.feature_groups = p.get_int("feature_group_count");
  c.batch_groups = p.get_int("batch_group_count");
  if (p.has("precision")) c.precision = read_precision(p.at("precision"));
  c.preferred = p.get_optional_dtype("preferred_element_type");
  return c;
}

Params make_params(const ConvParams& c) {
  Params p{{"window_strides", c.strides},          {"padding", padding_pairs_param(c.padding)},
           {"lhs_dilation", c.lhs_dilation},       {"rhs_dilation", c.rhs_dilation},
           {"dimension_numbers", c.dn.to_param()}, {"feature_group_count", c.feature_groups},
           {"batch_group_count", c.batch_groups}};
  if (c.precision) p.set("precision", to_param(static_cast<Precision>(*c.precision)));
  if (c.preferred) p.set("preferred_element_type", *c.preferred);
  return p;
}

Array bind_conv(const Array& lhs, const Array& rhs, const ConvParams& c) {
  return tessera::bind(conv_general_dilated, {lhs, rhs}, make_params(c))[0];
}

int64_t dilate_dim(int64_t d, int64_t dilation) { return d == 0 ? 0 : 1 + dilation * (d - 1); }

Shape take(const Shape& s, const Ints& idx) {
  Shape out;
  for (int64_t i : idx) out.push_back(s[static_cast<size_t>(i)]);
  return out;
}

Ints spatial(const Ints& spec) { return Ints(spec.begin() + 2, spec.end()); }

std::string ints_str(const Ints& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string pads_str(const Pads& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i) {
    if (i) s += ", ";
    s += "(";
    s += std::to_string(p[i].first);
    s += ", ";
    s += std::to_string(p[i].second);
    s += ")";
  }
  return s + (p.size() == 1 ? ",)" : ")");
}

[[noreturn]] void value_error(const std::string& msg) { throw ValueError(op_message(kOp, msg)); }
[[noreturn]] void type_error(const std::string& msg) { throw TypeError(op_message(kOp, msg)); }

int bit_width(DType d) { return static_cast<int>(itemsize(d)) * 8; }

// ---------------------------------------------------------------- abstract eval

void check_spec(const Ints& spec, int64_t nd, const char* name) {
  Ints sorted = spec;
  std::sort(sorted.begin(), sorted.end());
  bool perm = static_cast<int64_t>(spec.size()) == nd;
  for (int64_t i = 0; perm && i < nd; ++i) perm = sorted[static_cast<size_t>(i)] == i;
  if (!perm)
    type_error(std::string("convolution dimension_numbers.") + name + " must be a permutation of " +
               "the " + std::to_string(nd) + " operand dimensions, got " + ints_str(spec) +
               "; build it with lax.conv_dimension_numbers.");
}

// JAX's _conv_general_dilated_shape_rule (canonical-order computation, then out_spec's order).
Shape conv_shape(const Shape& lhs, const Shape& rhs, const ConvParams& c) {
  if (lhs.size() != rhs.size())
    value_error(
        "conv_general_dilated lhs and rhs must have the same number of dimensions, but "
        "got " +
        shape_str(lhs) + " and " + shape_str(rhs) + ".");
  const int64_t nd = static_cast<int64_t>(lhs.size());
  if (nd < 2)
    value_error(
        "conv_general_dilated operands must have rank at least 2 (batch and feature "
        "dimensions), got shapes " +
        shape_str(lhs) + " and " + shape_str(rhs) + ".");
  check_spec(c.dn.lhs_spec, nd, "lhs_spec");
  check_spec(c.dn.rhs_spec, nd, "rhs_spec");
  check_spec(c.dn.out_spec, nd, "out_spec");
  const auto& ls = c.dn.lhs_spec;
  const auto& rs = c.dn.rhs_spec;
  const int64_t fgc = c.feature_groups, bgc = c.batch_groups;
  if (!(fgc > 0))
    value_error("conv_general_dilated feature_group_count must be a positive integer, got " +
                std::to_string(fgc) + ".");
  const int64_t lhs_features = lhs[ls[1]];
  if (lhs_features % fgc != 0)
    value_error(
        "conv_general_dilated feature_group_count must divide lhs feature dimension "
        "size, but " +
        std::to_string(fgc) + " does not divide " + std::to_string(lhs_features) + ".");
  if (lhs_features / fgc != rhs[rs[1]])
    value_error(
        "conv_general_dilated lhs feature dimension size divided by "
        "feature_group_count must equal the rhs input feature dimension size, but " +
        std::to_string(lhs_features) + " // " + std::to_string(fgc) +
        " != " + std::to_string(rhs[rs[1]]) + ".");
  if (rhs[rs[0]] % fgc != 0)
    value_error(
        "conv_general_dilated rhs output feature dimension size must be a multiple of "
        "feature_group_count, but " +
        std::to_string(rhs[rs[0]]) + " is not a multiple of " + std::to_string(fgc) + ".");
  if (!(bgc > 0))
    value_error("conv_general_dilated batch_group_count must be a positive integer, got " +
                std::to_string(bgc) + ".");
  const int64_t lhs_batch = lhs[ls[0]];
  if (bgc > 1 && lhs_batch % bgc != 0)
    value_error(
        "conv_general_dilated batch_group_count must divide lhs batch dimension size, "
        "but " +
        std::to_string(bgc) + " does not divide " + std::to_string(lhs_batch) + ".");
  if (rhs[rs[0]] % bgc != 0)
    value_error(
        "conv_general_dilated rhs output feature dimension size must be a multiple of "
        "batch_group_count, but " +
        std::to_string(rhs[rs[0]]) + " is not a multiple of " + std::to_string(bgc) + ".");
  if (bgc > 1 && fgc > 1)
    value_error(
        "At most one of batch_group_count and feature_group_count may be > 1, got "
        "batch_group_count=" +
        std::to_string(bgc) + " and feature_group_count=" + std::to_string(fgc));
  const size_t ns = static_cast<size_t>(nd - 2);
  if (c.strides.size() != ns)
    value_error(
        "conv_general_dilated window and window_strides must have the same number of "
        "dimensions, but got " +
        std::to_string(ns) + " and " + std::to_string(c.strides.size()));
  if (c.padding.size() != ns)
    type_error("Wrong number of explicit pads for convolution: expected " + std::to_string(ns) +
               ", got " + std::to_string(c.padding.size()) + ".");
  if (c.lhs_dilation.size() != ns || c.rhs_dilation.size() != ns)
    value_error(
        "conv_general_dilated lhs_dilation and rhs_dilation must have one entry per "
        "spatial dimension (" +
        std::to_string(ns) + "), got " + ints_str(c.lhs_dilation) + " and " +
        ints_str(c.rhs_dilation) + ".");
  for (size_t i = 0; i < ns; ++i) {
    if (c.strides[i] <= 0)
      value_error("conv_general_dilated window_strides must be positive, got " +
                  ints_str(c.strides) + ".");
    if (c.lhs_dilation[i] <= 0 || c.rhs_dilation[i] <= 0)
      value_error("conv_general_dilated lhs_dilation and rhs_dilation must be positive, got " +
                  ints_str(c.lhs_dilation) + " and " + ints_str(c.rhs_dilation) + ".");
  }
  const Shape lt = take(lhs, ls), rt = take(rhs, rs);
  Shape out_t{bgc > 1 ? lt[0] / bgc : lt[0], rt[0]};
  Ints padded(ns);
  bool negative = false;
  for (size_t i = 0; i < ns; ++i) {
    padded[i] = dilate_dim(lt[i + 2], c.lhs_dilation[i]) + c.padding[i].first + c.padding[i].second;
    negative = negative || padded[i] < 0;
  }
  if (negative)
    value_error(
        "Negative padding is larger than the size of the corresponding dimension: got "
        "padding=" +
        pads_str(c.padding) + " for lhs_shape[2:]=" + ints_str(Ints(lt.begin() + 2, lt.end())));
  for (size_t i = 0; i < ns; ++i) {
    const int64_t window = dilate_dim(rt[i + 2], c.rhs_dilation[i]);
    out_t.push_back(padded[i] < window ? 0 : (padded[i] - window) / c.strides[i] + 1);
  }
  Shape out(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) out[c.dn.out_spec[i]] = out_t[i];
  return out;
}

std::vector<Aval> conv_abstract(std::span<const Aval> in, const Params& p) {
  if (in.size() != 2) type_error("takes 2 operands (lhs, rhs), got " + std::to_string(in.size()));
  const ConvParams c = read_params(p);
  const Aval& l = in[0];
  const Aval& r = in[1];
  if (l.dtype != r.dtype)
    type_error("conv_general_dilated requires arguments to have the same dtypes, got " +
               std::string(dtype_name(l.dtype)) + ", " + std::string(dtype_name(r.dtype)) +
               " (convert one with convert_element_type).");
  const DType d = l.dtype;
  if (is_extended(d))
    type_error("conv_general_dilated does not accept dtype " + std::string(dtype_name(d)) + ".");
  DType out_dtype = d;
  if (c.preferred && *c.preferred != d) {
    const DType pd = *c.preferred;
    const std::string got = "got preferred_element_type of " + std::string(dtype_name(pd)) +
                            " for operands of dtype " + std::string(dtype_name(d));
    if (is_extended(pd) || is_bool(pd))
      type_error("`preferred_element_type` must be a numeric dtype, " + got + ".");
    if (is_floating(d) && !is_floating(pd))
      type_error("`preferred_element_type` must be floating for floating operands, " + got + ".");
    if (!is_floating(d) && is_integer(pd) && bit_width(pd) < bit_width(d))
      type_error("`preferred_element_type` must not be narrower than the original type, " + got +
                 ".");
    out_dtype = pd;
  }
  return {
      Aval{conv_shape(l.shape, r.shape, c), out_dtype, l.weak_type && r.weak_type && !c.preferred}};
}

// ---------------------------------------------------------------- eager kernel

Array eager_transpose(const Array& x, const Ints& perm, Device* device) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  if (identity) return x;
  const Params p{{"permutation", perm}};
  const Aval a{take(x.shape(), perm), x.dtype(), false};
  const ExecContext ctx{device};
  return transpose.impl(ctx, std::span<const Array>(&x, 1), p, std::span<const Aval>(&a, 1))[0];
}

Array eager_convert(const Array& x, DType to, Device* device) {
  if (x.dtype() == to) return x;
  const Params p{{"new_dtype", to}, {"weak_type", false}};
  const Aval a{x.shape(), to, false};
  const ExecContext ctx{device};
  return convert_element_type.impl(ctx, std::span<const Array>(&x, 1), p,
                                   std::span<const Aval>(&a, 1))[0];
}

std::vector<Array> conv_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                             std::span<const Aval> outs) {
  const ConvParams c = read_params(p);
  const Aval& oa = outs[0];
  const DType rd = oa.dtype;
  DType cd = rd;  // the compute type
  if (is_floating(rd))
    cd = (rd == DType::kFloat64 || args[0].dtype() == DType::kFloat64) ? DType::kFloat64
                                                                       : DType::kFloat32;
  const Shape& ls = args[0].shape();
  const Shape& rs = args[1].shape();
  const Ints &lsp = c.dn.lhs_spec, &rsp = c.dn.rhs_spec, &osp = c.dn.out_spec;
  const int64_t nd = oa.ndim();
  conv::Geometry g;
  g.batch = ls[lsp[0]];
  g.features = ls[lsp[1]];
  g.out_features = rs[rsp[0]];
  g.in_features = rs[rsp[1]];
  g.feature_groups = c.feature_groups;
  g.batch_groups = c.batch_groups;
  for (int64_t i = 2; i < nd; ++i) {
    const size_t s = static_cast<size_t>(i - 2);
    g.in.push_back(ls[lsp[i]]);
    g.window.push_back(rs[rsp[i]]);
    g.out.push_back(oa.shape[osp[i]]);
    g.strides.push_back(c.strides[s]);
    g.pad_lo.push_back(c.padding[s].first);
    g.lhs_dilation.push_back(c.lhs_dilation[s]);
    g.rhs_dilation.push_back(c.rhs_dilation[s]);
  }
  if (nd == 2) {  // no spatial dims: one of size 1
    g.in = g.window = g.out = g.strides = g.lhs_dilation = g.rhs_dilation = {1};
    g.pad_lo = {0};
  }
  // The kernel's layout (conv_kernels.h): by output position for weight-gradient shapes,
  // channels-last when lhs and result have their features last (NHWC: no transposes of the big
  // arrays), else channels-first.
  auto spatial_then = [](const Ints& spec, std::initializer_list<int64_t> head,
                         std::initializer_list<int64_t> tail) {
    Ints v(head);
    v.insert(v.end(), spec.begin() + 2, spec.end());
    v.insert(v.end(), tail);
    return v;
  };
  Ints lperm = lsp, rperm = rsp, operm = osp;  // canonical dim order, as array positions
  if (conv::by_position(g)) {
    g.layout = conv::Layout::kByPosition;
    lperm = spatial_then(lsp, {lsp[1]}, {lsp[0]});
    rperm = spatial_then(rsp, {rsp[1]}, {rsp[0]});
    operm = spatial_then(osp, {osp[0]}, {osp[1]});
  } else if (nd > 2 && lsp[1] == nd - 1 && osp[1] == nd - 1) {
    g.layout = conv::Layout::kChannelsLast;
    lperm = spatial_then(lsp, {lsp[0]}, {lsp[1]});
    rperm = spatial_then(rsp, {}, {rsp[1], rsp[0]});
    operm = spatial_then(osp, {osp[0]}, {osp[1]});
  }
  const Array lhs = eager_convert(eager_transpose(args[0], lperm, ctx.device), cd, ctx.device);
  const Array rhs = eager_convert(eager_transpose(args[1], rperm, ctx.device), cd, ctx.device);
  const Shape out_t = take(oa.shape, operm);
  Array canon = empty_array(Aval{out_t, cd, false}, kOp, ctx.device);
  if (shape_size(out_t) > 0)
    conv::conv_canonical(cd, lhs.raw_data(), rhs.raw_data(), canon.buffer()->data(), g);
  // Canonical dim i goes to position operm[i].
  Ints perm(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) perm[operm[i]] = i;
  return {eager_transpose(eager_convert(canon, rd, ctx.device), perm, ctx.device)};
}

// ---------------------------------------------------------------- autodiff rules (JAX's)

std::pair<std::vector<Array>, std::vector<Array>> conv_jvp(std::span<const Array> primals,
                                                           std::span<const Array> tangents,
                                                           const Params& p) {
  const ConvParams c = read_params(p);
  const Array& lhs = primals[0];
  const Array& rhs = primals[1];
  Array out = bind_conv(lhs, rhs, c);
  Array t;
  if (is_inexact(out.dtype())) {
    if (!ad::zero_tangent(lhs, tangents[0]) && is_inexact(lhs.dtype()))
      t = bind_conv(tangents[0], rhs, c);
    if (!ad::zero_tangent(rhs, tangents[1]) && is_inexact(rhs.dtype())) {
      Array t2 = bind_conv(lhs, tangents[1], c);
      t = t.defined() ? lax::add(t, t2) : t2;
    }
  }
  return {{out}, {t}};
}

// x with axis src merged into axis dst (dst numbered with src removed), src the major part.
Array reshape_axis_into(int64_t src, int64_t dst, const Array& x) {
  Ints perm;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  Shape shape;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != src) shape.push_back(x.shape()[i]);
  shape[static_cast<size_t>(dst)] *= x.shape()[src];
  return lax::reshape(lax::transpose(x, perm), shape);
}

// x with axis src split into (size1, rest).
Array reshape_axis_out_of(int64_t src, int64_t size1, const Array& x) {
  Shape shape = x.shape();
  const int64_t size2 = size1 == 0 ? 0 : shape[src] / size1;
  shape[static_cast<size_t>(src)] = size2;
  shape.insert(shape.begin() + src, size1);
  return lax::reshape(x, shape);
}

Ints swap_first_two(const Ints& spec) {
  Ints s = spec;
  std::swap(s[0], s[1]);
  return s;
}

Ints dilate_shape(const Shape& s, const Ints& d) {
  Ints out;
  for (size_t i = 0; i < s.size(); ++i) out.push_back(dilate_dim(s[i], d[i]));
  return out;
}

// JAX's _conv_general_vjp_lhs_padding.
Pads vjp_lhs_padding(const Shape& in, const Shape& window, const Ints& strides, const Shape& out,
                     const Pads& padding, const Ints& lhs_dil, const Ints& rhs_dil) {
  const Ints ld = dilate_shape(in, lhs_dil), rd = dilate_shape(window, rhs_dil),
             od = dilate_shape(out, strides);
  Pads pads;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t before = rd[i] - padding[i].first - 1;
    pads.emplace_back(before, ld[i] + rd[i] - 1 - od[i] - before);
  }
  return pads;
}

// JAX's _conv_general_vjp_rhs_padding.
Pads vjp_rhs_padding(const Shape& in, const Shape& window, const Ints& strides, const Shape& out,
                     const Pads& padding, const Ints& lhs_dil, const Ints& rhs_dil) {
  const Ints ld = dilate_shape(in, lhs_dil), rd = dilate_shape(window, rhs_dil),
             od = dilate_shape(out, strides);
  Pads pads;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t lo = padding[i].first;
    pads.emplace_back(lo, (od[i] - ld[i]) + (rd[i] - lo - 1));
  }
  return pads;
}

// The cotangent of lhs: a convolution of ct with the reversed kernel (JAX's
// _conv_general_dilated_transpose_lhs).
Array transpose_lhs(const Array& ct, const Array& rhs_in, const Aval& lhs_aval, ConvParams c) {
  const Ints &lhs_spec = c.dn.lhs_spec, &rhs_spec = c.dn.rhs_spec, &out_spec = c.dn.out_spec;
  const Shape rhs_shape = rhs_in.shape();
  Array rhs = rhs_in;
  const int64_t bgc = c.batch_groups;
  int64_t fgc = c.feature_groups;
  if (fgc > 1) {
    rhs = reshape_axis_out_of(rhs_spec[0], fgc, rhs);
    rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs);
  } else if (bgc > 1) {
    rhs = reshape_axis_out_of(rhs_spec[0], bgc, rhs);
    rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs);
    fgc = bgc;
  }
  ConvParams t = c;
  t.dn = ConvDimensionNumbers{out_spec, swap_first_two(rhs_spec), lhs_spec};
  t.padding = vjp_lhs_padding(
      take(lhs_aval.shape, spatial(lhs_spec)), take(rhs_shape, spatial(rhs_spec)), c.strides,
      take(ct.shape(), spatial(out_spec)), c.padding, c.lhs_dilation, c.rhs_dilation);
  t.strides = c.lhs_dilation;
  t.lhs_dilation = c.strides;
  t.feature_groups = fgc;
  t.batch_groups = 1;
  Array revd = lax::rev(rhs, spatial(rhs_spec));
  if (revd.dtype() != ct.dtype()) revd = lax::convert_element_type(revd, ct.dtype());
  Array out = bind_conv(ct, revd, t);
  if (out.dtype() != lhs_aval.dtype) out = lax::convert_element_type(out, lhs_aval.dtype);
  if (bgc > 1) {
    out = reshape_axis_out_of(lhs_spec[1], bgc, out);
    out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out);
  }
  return out;
}

// The cotangent of rhs: a convolution of lhs with ct, feature and batch groups swapped (JAX's
// _conv_general_dilated_transpose_rhs).
Array transpose_rhs(const Array& ct, const Array& lhs_in, const Aval& rhs_aval, ConvParams c) {
  if (ct.size() == 0) return ad::zeros_like_aval(rhs_aval);
  const Ints &lhs_spec = c.dn.lhs_spec, &rhs_spec = c.dn.rhs_spec, &out_spec = c.dn.out_spec;
  ConvParams t = c;
  if (c.batch_groups > 1) {
    t.feature_groups = c.batch_groups;
    t.batch_groups = 1;
  } else if (c.feature_groups > 1) {
    t.batch_groups = c.feature_groups;
    t.feature_groups = 1;
  }
  t.dn = ConvDimensionNumbers{swap_first_two(lhs_spec), swap_first_two(out_spec),
                              swap_first_two(rhs_spec)};
  t.padding = vjp_rhs_padding(
      take(lhs_in.shape(), spatial(lhs_spec)), take(rhs_aval.shape, spatial(rhs_spec)), c.strides,
      take(ct.shape(), spatial(out_spec)), c.padding, c.lhs_dilation, c.rhs_dilation);
  t.strides = c.rhs_dilation;
  t.rhs_dilation = c.strides;
  Array lhs = lhs_in;
  if (lhs.dtype() != ct.dtype()) lhs = lax::convert_element_type(lhs, ct.dtype());
  Array out = bind_conv(lhs, ct, t);
  if (out.dtype() != rhs_aval.dtype) out = lax::convert_element_type(out, rhs_aval.dtype);
  return out;
}

std::vector<Array> conv_transpose(std::span<const Array> cts, std::span<const Array> args,
                                  std::span<const Aval> arg_avals, const Params& p) {
  if (args[0].defined() == args[1].defined())
    ad::bad_linearity(kOp, "transpose needs exactly one linear (undefined) operand");
  const ConvParams c = read_params(p);
  std::vector<Array> res(2);
  if (!cts[0].defined()) return res;
  if (!args[0].defined())
    res[0] = transpose_lhs(cts[0], args[1], arg_avals[0], c);
  else
    res[1] = transpose_rhs(cts[0], args[0], arg_avals[1], c);
  return res;
}

// ---------------------------------------------------------------- batching rule (JAX's)

batching::BatchOut conv_batch(const BatchAxis&, std::span<const Array> args,
                              std::span<const int64_t> dims, const Params& p) {
  using batching::kNotMapped;
  ConvParams c = read_params(p);
  const Array& lhs = args[0];
  const Array& rhs = args[1];
  const int64_t lb = dims[0], rb = dims[1];
  const Ints& ls = c.dn.lhs_spec;
  const Ints& rs = c.dn.rhs_spec;
  const Ints& os = c.dn.out_spec;
  // A zero-size vmap axis: the result is empty (the reshapes below cannot fold a size 0).
  if ((lb != kNotMapped && lhs.shape()[lb] == 0) || (rb != kNotMapped && rhs.shape()[rb] == 0)) {
    Shape l = lhs.shape(), r = rhs.shape();
    if (lb != kNotMapped) l.erase(l.begin() + lb);
    if (rb != kNotMapped) r.erase(r.begin() + rb);
    Shape out = conv_shape(l, r, c);
    out.insert(out.begin(), 0);
    return {{ad::zeros_like_aval(Aval{out, c.preferred.value_or(lhs.dtype()), false})}, {0}};
  }
  if (lb != kNotMapped && rb != kNotMapped) {
    const int64_t b = lhs.shape()[lb];
    Array new_lhs;
    if (c.batch_groups > 1) {
      new_lhs = reshape_axis_into(lb, ls[0], lhs);
      c.batch_groups *= b;
    } else {
      new_lhs = reshape_axis_into(lb, ls[1], lhs);
      c.feature_groups *= b;
    }
    const Array new_rhs = reshape_axis_into(rb, rs[0], rhs);
    const Array out = bind_conv(new_lhs, new_rhs, c);
    return {{reshape_axis_out_of(os[1], b, out)}, {os[1]}};
  }
  if (lb != kNotMapped) {
    const int64_t b = lhs.shape()[lb];
    Array new_lhs;
    if (c.batch_groups == 1) {
      new_lhs = reshape_axis_into(lb, ls[0], lhs);
    } else {
      new_lhs = reshape_axis_out_of(ls[0] + int64_t(lb <= ls[0]), c.batch_groups, lhs);
      new_lhs = reshape_axis_into(lb + int64_t(ls[0] < lb), ls[0] + 1, new_lhs);
      new_lhs = reshape_axis_into(ls[0], ls[0], new_lhs);
    }
    const Array out = bind_conv(new_lhs, rhs, c);
    return {{reshape_axis_out_of(os[0], b, out)}, {os[0]}};
  }
  const int64_t b = rhs.shape()[rb];
  if (c.feature_groups == 1 && c.batch_groups == 1) {
    const Array new_rhs = reshape_axis_into(rb, rs[0], rhs);
    const Array out = bind_conv(lhs, new_rhs, c);
    return {{reshape_axis_out_of(os[1], b, out)}, {os[1]}};
  }
  // Groups stay outermost in the rhs output features: factor them out, fold the vmapped axis
  // into the rest, put the groups back; the output is unfolded the same way.
  const int64_t groups = c.feature_groups > 1 ? c.feature_groups : c.batch_groups;
  Array new_rhs = reshape_axis_out_of(rs[0] + int64_t(rb <= rs[0]), groups, rhs);
  new_rhs = reshape_axis_into(rb + int64_t(rs[0] < rb), rs[0] + 1, new_rhs);
  new_rhs = reshape_axis_into(rs[0], rs[0], new_rhs);
  Array out = bind_conv(lhs, new_rhs, c);
  out = reshape_axis_out_of(os[1], groups, out);
  out = reshape_axis_out_of(os[1] + 1, b, out);
  out = reshape_axis_into(os[1], os[1] + 1, out);
  return {{out}, {os[1]}};
}

}  // namespace

void register_conv() {
  conv_general_dilated.kind = PrimitiveKind::kLibraryCall;
  conv_general_dilated.signature = Signature::fixed(
      2, {{"window_strides", ParamKind::kInts},
          {"padding", ParamKind::kTuple},
          {"lhs_dilation", ParamKind::kInts},
          {"rhs_dilation", ParamKind::kInts},
          {"dimension_numbers", ParamKind::kRecord, true, nullptr, &kConvDimensionNumbersDef},
          {"feature_group_count", ParamKind::kInt},
          {"batch_group_count", ParamKind::kInt},
          // A Precision or None (kAny: the parser reads JAX's `precision=None` as an empty value).
          {"precision", ParamKind::kAny, false},
          {"preferred_element_type", ParamKind::kOptionalDType, false}});
  runtime::blas::init();  // one thread pool: OpenBLAS runs single-threaded under ours
  conv_general_dilated.abstract_eval = conv_abstract;
  conv_general_dilated.impl = conv_impl;
  conv_general_dilated.jvp = conv_jvp;
  conv_general_dilated.transpose = conv_transpose;
  conv_general_dilated.batch = conv_batch;
  register_primitive(conv_general_dilated);
}

}  // namespace tessera::prims
