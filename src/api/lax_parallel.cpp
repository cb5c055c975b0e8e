// jax.lax's collectives (tessera/lax_parallel.h): psum/pmax/pmin/all_gather bind their
// primitives (src/prims/collectives.cpp); pmean, psum_scatter and ppermute are composites of them
// and axis_index, which is this member's position: an iota batched along the vmap that binds the
// name (so it takes no primitive: JAX's axis_index_p is likewise resolved by the trace of its
// axis).
#include "tessera/lax_parallel.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/primitive.h"
#include "trace/batch_trace.h"

namespace tessera::lax {

namespace {

const Primitive& prim_named(const char* name) { return *find_primitive(name); }

Array reduce(const char* name, const Array& x, const std::vector<std::string>& axes) {
  if (!x.defined()) throw ValueError(op_message(name, "the operand is an undefined Array"));
  if (axes.empty()) return x;
  std::vector<ParamValue> items(axes.begin(), axes.end());
  return tessera::bind(prim_named(name), {x},
                       Params{{"axes", make_tuple_param(std::move(items))}})[0];
}

// A rank-0 (or rank-1 from a vector) constant.
Array int32_const(const std::vector<int32_t>& v, const Shape& shape) {
  return array_from_host(Aval{shape, DType::kInt32, false}, v.data());
}
Array scalar_of(double v, DType d) {
  return lax::convert_element_type(array_from_host(Aval{{}, DType::kFloat64, false}, &v), d);
}

}  // namespace

int64_t axis_size(const std::string& axis_name) {
  const AxisEntry* e = find_axis(axis_name);
  if (e == nullptr)
    throw NameError(op_message("axis_size", "unbound axis name: " + axis_name +
                                                "; call it inside a function mapped over that "
                                                "axis (vmap(..., axis_name=...))"));
  return e->size;
}

Array psum(const Array& x, const std::vector<std::string>& axes) { return reduce("psum", x, axes); }
Array psum(const Array& x, const std::string& a) { return psum(x, std::vector<std::string>{a}); }
Array pmax(const Array& x, const std::vector<std::string>& axes) { return reduce("pmax", x, axes); }
Array pmax(const Array& x, const std::string& a) { return pmax(x, std::vector<std::string>{a}); }
Array pmin(const Array& x, const std::vector<std::string>& axes) { return reduce("pmin", x, axes); }
Array pmin(const Array& x, const std::string& a) { return pmin(x, std::vector<std::string>{a}); }

Array pmean(const Array& x, const std::vector<std::string>& axes) {
  int64_t n = 1;
  for (const std::string& a : axes) n *= axis_size(a);
  Array s = psum(x, axes);
  if (!is_floating(s.dtype()))
    s = lax::convert_element_type(s, x64_enabled() ? DType::kFloat64 : DType::kFloat32);
  return lax::div(
      s, lax::broadcast_in_dim(scalar_of(static_cast<double>(n), s.dtype()), s.shape(), {}));
}
Array pmean(const Array& x, const std::string& a) { return pmean(x, std::vector<std::string>{a}); }

Array all_gather(const Array& x, const std::string& axis_name, int64_t axis, bool tiled) {
  if (!x.defined()) throw ValueError(op_message("all_gather", "the operand is an undefined Array"));
  const int64_t n = axis_size(axis_name);
  const int64_t r = x.ndim() + (tiled ? 0 : 1);
  if (axis < -r || axis >= r)
    throw ValueError(op_message("all_gather", "axis " + std::to_string(axis) +
                                                  " is out of bounds for the result's rank " +
                                                  std::to_string(r)));
  if (axis < 0) axis += r;
  return tessera::bind(prim_named("all_gather"), {x},
                       Params{{"all_gather_dimension", axis},
                              {"axis_name", axis_name},
                              {"axis_size", n},
                              {"tiled", tiled}})[0];
}

Array axis_index(const std::string& axis_name) {
  trace::BatchTrace* bt = trace::find_batch_trace(axis_name);
  if (bt == nullptr) {
    axis_size(axis_name);  // NameError when unbound
    throw NotImplementedError(op_message(
        "axis_index", "axis " + axis_name +
                          " is not bound by a vmap on this trace; only vmap(axis_name=...) binds "
                          "named axes today"));
  }
  Array io;
  {
    TraceScope scope(bt->parent());
    io = lax::iota(DType::kInt32, bt->axis_size());
  }
  return bt->make(io, 0);
}

Array psum_scatter(const Array& x, const std::string& axis_name, int64_t dim, bool tiled) {
  const int64_t n = axis_size(axis_name);
  if (dim < 0) dim += x.ndim();
  if (dim < 0 || dim >= x.ndim())
    throw ValueError(op_message("psum_scatter",
                                "scatter_dimension is out of bounds for an "
                                "operand of shape " +
                                    shape_str(x.shape())));
  const int64_t d = x.shape()[dim];
  if (tiled ? d % n != 0 : d != n)
    throw ValueError(
        op_message("psum_scatter", "the scatter dimension of " + shape_str(x.shape()) +
                                       " must be " + (tiled ? "a multiple of" : "equal to") +
                                       " the axis size " + std::to_string(n) + " of " + axis_name));
  Array s = psum(x, axis_name);
  Array i = axis_index(axis_name);
  if (!tiled) return lax::dynamic_index_in_dim(s, i, dim, false);
  const int64_t block = d / n;
  Array start = lax::mul(i, int32_const({static_cast<int32_t>(block)}, {}));
  return lax::dynamic_slice_in_dim(s, start, block, dim);
}

Array ppermute(const Array& x, const std::string& axis_name,
               const std::vector<std::pair<int64_t, int64_t>>& perm) {
  const int64_t n = axis_size(axis_name);
  std::vector<int32_t> src_of(static_cast<size_t>(n), -1);
  std::vector<bool> seen_src(static_cast<size_t>(n), false);
  for (auto [s, d] : perm) {
    if (s < 0 || s >= n || d < 0 || d >= n)
      throw ValueError(
          op_message("ppermute", "perm pair (" + std::to_string(s) + ", " + std::to_string(d) +
                                     ") is out of range for axis size " + std::to_string(n)));
    if (seen_src[s] || src_of[d] >= 0)
      throw ValueError(op_message("ppermute",
                                  "ppermute sources and destinations must be "
                                  "unique, got perm with a repeated member"));
    seen_src[s] = true;
    src_of[d] = static_cast<int32_t>(s);
  }
  Array g = all_gather(x, axis_name);  // [n, ...]
  Array srcs = int32_const(src_of, {n});
  Array i = axis_index(axis_name);
  Array src = lax::dynamic_index_in_dim(srcs, i, 0, false);
  Array zero = int32_const({0}, {});
  Array val = lax::dynamic_index_in_dim(g, lax::max(src, zero), 0, false);
  Array has = lax::ge(src, zero);
  Array zeros = lax::broadcast_in_dim(scalar_of(0.0, x.dtype()), x.shape(), {});
  return lax::select_n(lax::broadcast_in_dim(has, x.shape(), {}), {zeros, val});
}

}  // namespace tessera::lax
