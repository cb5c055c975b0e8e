// lax::reduce_window and its monoid forms: resolve the padding and the default strides and
// dilations, trace a computation once on rank-0 values, and bind the windowed-reduction
// primitives (src/prims/reduce_window.cpp, src/prims/select_and_scatter.cpp).
#include "tessera/lax_window.h"

#include <limits>
#include <string>

#include "api/lax_monoid.h"
#include "tessera/errors.h"
#include "tessera/jaxpr.h"
#include "tessera/param_types.h"
#include "tessera/primitive.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::lax {

namespace {

std::vector<int64_t> ones_if_empty(const std::vector<int64_t>& v, size_t n) {
  return v.empty() ? std::vector<int64_t>(n, 1) : v;
}

struct Window {
  std::vector<int64_t> dims, strides, base_dilation, window_dilation;
  Pads padding;
};

Window resolve(const Shape& in, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& strides, const WindowPadding& padding,
               const std::vector<int64_t>& base_dilation,
               const std::vector<int64_t>& window_dilation) {
  Window w;
  w.dims = dims;
  w.strides = ones_if_empty(strides, dims.size());
  w.base_dilation = ones_if_empty(base_dilation, dims.size());
  w.window_dilation = ones_if_empty(window_dilation, dims.size());
  w.padding = padding.resolve(in, w.dims, w.strides, w.window_dilation);
  return w;
}

Params window_params(const Window& w, bool dilations = true, Params p = Params()) {
  p.set("window_dimensions", w.dims);
  p.set("window_strides", w.strides);
  p.set("padding", padding_pairs_param(w.padding));
  if (dilations) {
    p.set("base_dilation", w.base_dilation);
    p.set("window_dilation", w.window_dilation);
  }
  return p;
}

Array monoid(const Primitive& prim, const Array& x, const std::vector<int64_t>& dims,
             const std::vector<int64_t>& strides, const WindowPadding& padding,
             const std::vector<int64_t>& base_dilation,
             const std::vector<int64_t>& window_dilation) {
  return bind1(
      prim, {x},
      window_params(resolve(x.shape(), dims, strides, padding, base_dilation, window_dilation)));
}

// The primitives by name (the lax wrappers sit below the families that define them).
const Primitive& prim(const char* name) {
  const Primitive* p = find_primitive(name);
  if (p == nullptr) throw_internal("lax/window", std::string("primitive ") + name + " not found");
  return *p;
}

// The monoid window primitive of a one-operand body `a op b` (either order) with its identity as
// init (add, max, min), or nullptr.
const Primitive* monoid_reducer(const Jaxpr& body, const Array& init) {
  const std::string op = detail::monoid_op(body);
  if ((op != "add" && op != "max" && op != "min") || !detail::is_monoid_identity(init, op))
    return nullptr;
  return &prim(op == "add"   ? "reduce_window_sum"
               : op == "max" ? "reduce_window_max"
                             : "reduce_window_min");
}

}  // namespace

Pads WindowPadding::resolve(const Shape& in, const std::vector<int64_t>& window_dimensions,
                            const std::vector<int64_t>& window_strides,
                            const std::vector<int64_t>& window_dilation) const {
  if (const Pads* p = std::get_if<Pads>(&v_)) return *p;
  // JAX: padtype_to_pads(operand shape, window dilated by window_dilation, strides, padding).
  // Mismatched lengths: no padding, so that the primitive's shape rule reports the mismatch.
  if (window_dimensions.size() != in.size() || window_strides.size() != in.size() ||
      window_dilation.size() != in.size())
    return Pads(window_dimensions.size(), {0, 0});
  std::vector<int64_t> dilated(in.size());
  for (size_t d = 0; d < in.size(); ++d)
    dilated[d] =
        window_dimensions[d] == 0 ? 0 : 1 + window_dilation[d] * (window_dimensions[d] - 1);
  return padtype_to_pads(in, dilated, window_strides, std::get<PaddingType>(v_));
}

Array reduce_window_sum(const Array& x, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const WindowPadding& padding,
                        const std::vector<int64_t>& base_dilation,
                        const std::vector<int64_t>& window_dilation) {
  return monoid(prim("reduce_window_sum"), x, window_dimensions, window_strides, padding,
                base_dilation, window_dilation);
}
Array reduce_window_max(const Array& x, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const WindowPadding& padding,
                        const std::vector<int64_t>& base_dilation,
                        const std::vector<int64_t>& window_dilation) {
  return monoid(prim("reduce_window_max"), x, window_dimensions, window_strides, padding,
                base_dilation, window_dilation);
}
Array reduce_window_min(const Array& x, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const WindowPadding& padding,
                        const std::vector<int64_t>& base_dilation,
                        const std::vector<int64_t>& window_dilation) {
  return monoid(prim("reduce_window_min"), x, window_dimensions, window_strides, padding,
                base_dilation, window_dilation);
}

std::vector<Array> reduce_window(const std::vector<Array>& operands,
                                 const std::vector<Array>& init_values,
                                 const WindowComputation& computation,
                                 const std::vector<int64_t>& window_dimensions,
                                 const std::vector<int64_t>& window_strides,
                                 const WindowPadding& padding,
                                 const std::vector<int64_t>& base_dilation,
                                 const std::vector<int64_t>& window_dilation, bool detect_monoid) {
  const size_t n = operands.size();
  if (n == 0)
    throw ValueError(op_message("reduce_window", "reduce_window must have at least one operand."));
  if (init_values.size() != n)
    throw ValueError(op_message(
        "reduce_window", "Must have same total number of operands as init_values:  " +
                             std::to_string(n) + " vs. " + std::to_string(init_values.size())));
  for (size_t i = 0; i < n; ++i)
    if (!operands[i].defined() || !init_values[i].defined())
      throw ValueError(op_message("reduce_window", "operand or init value " + std::to_string(i) +
                                                       " is an empty Array handle"));
  const Window w = resolve(operands[0].shape(), window_dimensions, window_strides, padding,
                           base_dilation, window_dilation);
  // Traced on rank-0 values of the init values' dtypes, accumulators first (as JAX).
  std::vector<Aval> avals;
  for (int k = 0; k < 2; ++k)
    for (const Array& v : init_values) avals.push_back(Aval{{}, v.dtype(), false});
  ClosedJaxpr body = trace::stage_closed(
      [&](std::span<const Array> xs) {
        std::vector<Array> acc(xs.begin(), xs.begin() + n), val(xs.begin() + n, xs.end());
        std::vector<Array> outs = computation(acc, val);
        if (outs.size() != n)
          throw ValueError(op_message(
              "reduce_window",
              "reduce_window output must have the same tree structure as the "
              "operands: the computation returned " +
                  std::to_string(outs.size()) + " values for " + std::to_string(n) + " operands"));
        return outs;
      },
      avals);
  if (n == 1 && detect_monoid)
    if (const Primitive* m = monoid_reducer(*body.jaxpr, init_values[0]))
      return {bind1(*m, {operands[0]}, window_params(w))};
  std::vector<Array> args = operands;
  args.insert(args.end(), init_values.begin(), init_values.end());
  args.insert(args.end(), body.consts.begin(), body.consts.end());
  return tessera::bind(prim("reduce_window"), args,
                       window_params(w, true, Params{{"jaxpr", intern(*body.jaxpr)}}));
}

Array reduce_window(const Array& operand, const Array& init_value,
                    const std::function<Array(const Array&, const Array&)>& computation,
                    const std::vector<int64_t>& window_dimensions,
                    const std::vector<int64_t>& window_strides, const WindowPadding& padding,
                    const std::vector<int64_t>& base_dilation,
                    const std::vector<int64_t>& window_dilation) {
  return reduce_window(
      {operand}, {init_value},
      [&](const std::vector<Array>& acc, const std::vector<Array>& val) {
        return std::vector<Array>{computation(acc[0], val[0])};
      },
      window_dimensions, window_strides, padding, base_dilation, window_dilation)[0];
}

Array select_and_gather_add(const Array& tangents, const Array& operand, bool select_ge,
                            const std::vector<int64_t>& window_dimensions,
                            const std::vector<int64_t>& window_strides, const Pads& padding,
                            const std::vector<int64_t>& base_dilation,
                            const std::vector<int64_t>& window_dilation) {
  Window w = resolve(operand.shape(), window_dimensions, window_strides, padding, base_dilation,
                     window_dilation);
  return bind1(
      prim("select_and_gather_add"), {tangents, operand},
      window_params(w, true, Params{{"select_prim", std::string(select_ge ? "ge" : "le")}}));
}

Array select_and_scatter_add(const Array& source, const Array& operand, bool select_ge,
                             const std::vector<int64_t>& window_dimensions,
                             const std::vector<int64_t>& window_strides, const Pads& padding) {
  Window w = resolve(operand.shape(), window_dimensions, window_strides, padding, {}, {});
  return bind1(
      prim("select_and_scatter_add"), {source, operand},
      window_params(w, false, Params{{"select_prim", std::string(select_ge ? "ge" : "le")}}));
}

}  // namespace tessera::lax
