// vmap over flat argument lists.
#include <optional>
#include <string>

#include "prims/ad_util.h"
#include "tessera/lax.h"
#include "tessera/transforms_flat.h"
#include "trace/batch_trace.h"

namespace tessera::flat {

std::vector<Array> vmap(
    const Fun& f, std::span<const Array> args, std::span<const std::optional<int64_t>> in_axes,
    const std::function<std::vector<std::optional<int64_t>>(size_t)>& out_axes_for,
    std::optional<int64_t> axis_size, const std::string& axis_name) {
  if (in_axes.size() != args.size())
    throw ValueError(op_message("vmap", "in_axes has " + std::to_string(in_axes.size()) +
                                            " entries for " + std::to_string(args.size()) +
                                            " array arguments"));
  // Normalize axes and find the axis size.
  std::vector<int64_t> dims(args.size(), -1);
  std::string sizes;
  std::optional<int64_t> size = axis_size;
  bool inconsistent = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined())
      throw ValueError(op_message("vmap", "argument " + std::to_string(i) +
                                              " is an empty Array handle (default-constructed)"));
    if (!in_axes[i]) continue;
    int64_t nd = args[i].ndim();
    int64_t ax = *in_axes[i];
    if (ax < -nd || ax >= nd || nd == 0)
      throw ValueError(op_message("vmap", "in_axes specification " + std::to_string(ax) +
                                              " for argument " + std::to_string(i) + " of type " +
                                              args[i].aval().str() +
                                              " is out of range: it must be in [-ndim, ndim) = [" +
                                              std::to_string(-nd) + ", " + std::to_string(nd) +
                                              "); use None (nullopt) for arguments that are "
                                              "not mapped"));
    dims[i] = ax < 0 ? ax + nd : ax;
    int64_t n = args[i].shape()[dims[i]];
    sizes += "\n  argument " + std::to_string(i) + " of type " + args[i].aval().str() +
             " has axis " + std::to_string(dims[i]) + " of size " + std::to_string(n);
    if (!size)
      size = n;
    else if (*size != n)
      inconsistent = true;
  }
  if (inconsistent)
    throw ValueError(op_message(
        "vmap",
        "got inconsistent sizes for array axes to be mapped:" + sizes +
            (axis_size ? "\n  axis_size is " + std::to_string(*axis_size) : std::string())));
  if (!size)
    throw ValueError(op_message("vmap",
                                "must have at least one non-None value in in_axes, or "
                                "pass axis_size to say how many times to map"));
  if (*size < 0) throw ValueError(op_message("vmap", "axis_size must be non-negative"));

  auto bt = std::make_shared<trace::BatchTrace>(current_trace(), *size, axis_name);
  trace::TraceLifetime life(bt.get());
  std::vector<Array> xs;
  for (size_t i = 0; i < args.size(); ++i) xs.push_back(bt->make(args[i], dims[i]));
  std::vector<Array> outs;
  {
    TraceScope scope(bt.get());
    // A named axis is in scope (axis_env()) while the mapped function runs, as in JAX.
    std::optional<AxisEnvScope> env;
    if (!axis_name.empty()) env.emplace(AxisEntry{axis_name, *size});
    outs = f(xs);
  }
  std::vector<std::optional<int64_t>> out_axes = out_axes_for(outs.size());
  if (out_axes.size() != outs.size())
    throw_internal("vmap", "out_axes_for returned the wrong number of axes");
  std::vector<Array> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    auto [v, d] = bt->split(outs[i], "vmap");
    if (!out_axes[i]) {
      if (d >= 0)
        throw ValueError(op_message(
            "vmap", "output " + std::to_string(i) +
                        " has out_axes None but is mapped over the "
                        "vmapped axis (its per-example type is " +
                        outs[i].aval().str() +
                        "); give it an integer out_axes, or make it independent of the mapped "
                        "inputs"));
      result.push_back(v);
      continue;
    }
    int64_t rank = v.ndim() + (d >= 0 ? 0 : 1);
    int64_t ax = *out_axes[i];
    if (ax < -rank || ax >= rank)
      throw ValueError(op_message("vmap", "out_axes specification " + std::to_string(ax) +
                                              " for output " + std::to_string(i) +
                                              " of per-example type " + outs[i].aval().str() +
                                              " is out of range [" + std::to_string(-rank) + ", " +
                                              std::to_string(rank) + ")"));
    if (ax < 0) ax += rank;
    if (d >= 0) {
      result.push_back(trace::moveaxis(v, d, ax));
    } else {
      Shape shape = v.shape();
      shape.insert(shape.begin() + ax, *size);
      std::vector<int64_t> bdims;
      for (int64_t k = 0; k < rank; ++k)
        if (k != ax) bdims.push_back(k);
      result.push_back(lax::broadcast_in_dim(v, shape, bdims));
    }
  }
  return result;
}

}  // namespace tessera::flat
