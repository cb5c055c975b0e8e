// jnp's index arithmetic (unravel_index, ravel_multi_index, indices, ix_, the triangle and
// diagonal index helpers) and functional puts (put, put_along_axis, as .at[].set). Semantics:
// include/tessera/numpy_index_funcs.h.
#include <algorithm>
#include <string>
#include <vector>

#include "api/numpy_index_util.h"
#include "api/numpy_internal.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/numpy_index_funcs.h"
#include "tessera/numpy_indexing.h"

namespace tessera::numpy {

using namespace detail;

namespace {
constexpr DType kI32 = kIndexI32;
constexpr GatherScatterMode kDrop = kDropMode;
}  // namespace

// ---------------------------------------------------------------- index arithmetic

std::vector<Array> unravel_index(const ArrayLike& indices0, const Shape& shape) {
  const char* op = "unravel_index";
  const Array& idx0 = indices0.array();
  check_defined(op, idx0);
  if (!is_integer(idx0.dtype()))
    throw TypeError(op_message(op, "only int indices permitted, got " + dtype_str(idx0.dtype())));
  int64_t total = 1;
  for (int64_t s : shape) {
    if (s < 0)
      throw ValueError(op_message(op, "shape must be non-negative; got " + tuple_str(shape)));
    total *= s;
  }
  if (total == 0)
    throw ValueError(
        op_message(op, "cannot unravel index into an empty shape " + tuple_str(shape)));
  // Work in at least the default int so that idx + total and the clip bounds fit.
  const DType idt = idx0.dtype();
  const DType wdt = itemsize(idt) < itemsize(default_int_dtype()) ? default_int_dtype() : idt;
  Array idx = lax::convert_element_type(idx0, wdt);
  if (is_signed_integer(wdt)) {
    idx = lax::select_n(lax::lt(idx, iconst(0, wdt)), {idx, lax::add(idx, iconst(total, wdt))});
    idx = lax::clamp(iconst(0, wdt), idx, iconst(total - 1, wdt));
  } else {
    idx = lax::min(idx, iconst(total - 1, wdt));
  }
  std::vector<Array> out(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    out[d] = lax::convert_element_type(lax::rem(idx, iconst(shape[d], wdt)), idt);
    idx = lax::div(idx, iconst(shape[d], wdt));
  }
  return out;
}

Array ravel_multi_index(const std::vector<Array>& multi_index, const Shape& dims,
                        const std::string& mode, const std::string& order) {
  const char* op = "ravel_multi_index";
  if (multi_index.size() != dims.size())
    throw ValueError(op_message(op, "parameter multi_index must be a sequence of length " +
                                        std::to_string(dims.size()) + "; got " +
                                        std::to_string(multi_index.size())));
  if (order != "C" && order != "F")
    throw ValueError(op_message(op, "only 'C' or 'F' order is permitted; got " + py_repr(order)));
  if (dims.empty()) throw ValueError(op_message(op, "dims must be non-empty"));
  std::vector<Array> idx;
  for (const Array& i : multi_index) {
    check_defined(op, i);
    if (!is_integer(i.dtype()))
      throw TypeError(op_message(op, "only int indices permitted, got " + dtype_str(i.dtype())));
    idx.push_back(i);
  }
  if (mode == "raise") {
    for (size_t k = 0; k < idx.size(); ++k) {
      const Array* hp = concrete_of(idx[k]);
      if (!hp)
        throw ConcretizationError(
            op_message(op,
                       "The error occurred because ravel_multi_index was jit-compiled with "
                       "mode='raise'. Use mode='wrap' or mode='clip' instead. (Index " +
                           std::to_string(k) + " is the traced " + idx[k].aval().str() + ".)"));
      const Array& host = *hp;
      const char* p = static_cast<const char*>(host.raw_data());
      for (int64_t e = 0; e < host.size(); ++e) {
        const double v = load_as_double(host.dtype(), p + e * itemsize(host.dtype()));
        if (v < 0 || v >= static_cast<double>(dims[k]))
          throw ValueError(op_message(op, "invalid entry in coordinates array"));
      }
    }
  } else if (mode == "clip") {
    for (size_t k = 0; k < idx.size(); ++k) idx[k] = clip(idx[k], 0, dims[k] - 1);
  } else if (mode == "wrap") {
    for (size_t k = 0; k < idx.size(); ++k) idx[k] = remainder(idx[k], dims[k]);
  } else {
    throw ValueError(
        op_message(op, "invalid mode=" + py_repr(mode) + ". Expected 'raise', 'wrap' or 'clip'"));
  }
  const int64_t nd = static_cast<int64_t>(dims.size());
  Array out;
  for (int64_t j = 0; j < nd; ++j) {
    const int64_t k = order == "C" ? j : nd - 1 - j;
    out = j == 0 ? idx[k] : add(multiply(out, dims[k]), idx[k]);
  }
  return out;
}

Array indices(const Shape& dimensions, std::optional<DType> dtype) {
  const DType dt = canonicalize_dtype(dtype.value_or(default_int_dtype()));
  const int64_t n = static_cast<int64_t>(dimensions.size());
  if (n == 0) return filled(0, dt, {0});
  std::vector<Array> grids;
  for (int64_t k = 0; k < n; ++k) grids.push_back(lax::broadcasted_iota(dt, dimensions, k));
  return stack(grids, 0);
}

std::vector<Array> indices_sparse(const Shape& dimensions, std::optional<DType> dtype) {
  const DType dt = canonicalize_dtype(dtype.value_or(default_int_dtype()));
  const size_t n = dimensions.size();
  std::vector<Array> out;
  for (size_t k = 0; k < n; ++k) {
    Shape s(n, 1);
    s[k] = dimensions[k];
    out.push_back(lax::reshape(lax::iota(dt, dimensions[k]), s));
  }
  return out;
}

std::vector<Array> ix_(const std::vector<Array>& args) {
  const char* op = "ix_";
  const size_t n = args.size();
  std::vector<Array> out;
  for (size_t k = 0; k < n; ++k) {
    const Array& a = args[k];
    check_defined(op, a);
    if (a.ndim() != 1)
      throw ValueError(op_message(
          op,
          "Arguments to jax.numpy.ix_ must be 1-dimensional, got shape " + tuple_str(a.shape())));
    if (is_bool(a.dtype()))
      throw NotImplementedError(
          op_message(op, "Boolean arguments to jax.numpy.ix_ are not implemented"));
    Shape s(n, 1);
    s[k] = a.shape()[0];
    out.push_back(lax::reshape(a, s));
  }
  return out;
}

namespace {
// The (row, col) pairs of an (n, m) matrix with col - row <= k (lower) or >= k (upper),
// row-major.
std::vector<Array> triangle_indices(const char* op, int64_t n, int64_t k, std::optional<int64_t> m,
                                    bool lower) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0)
    throw ValueError(op_message(op, "n and m must be non-negative, got " + std::to_string(n) +
                                        " and " + std::to_string(cols)));
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (lower ? j - i <= k : j - i >= k) {
        r.push_back(i);
        c.push_back(j);
      }
  const int64_t len = static_cast<int64_t>(r.size());
  return {numpy::array(r, {len}), numpy::array(c, {len})};
}

const Shape& matrix_shape(const char* op, const Array& arr) {
  check_defined(op, arr);
  if (arr.ndim() != 2)
    throw ValueError(
        op_message(op, "Only 2-D inputs are accepted; got shape " + tuple_str(arr.shape())));
  return arr.shape();
}
}  // namespace

std::vector<Array> tril_indices(int64_t n, int64_t k, std::optional<int64_t> m) {
  return triangle_indices("tril_indices", n, k, m, true);
}
std::vector<Array> triu_indices(int64_t n, int64_t k, std::optional<int64_t> m) {
  return triangle_indices("triu_indices", n, k, m, false);
}
std::vector<Array> tril_indices_from(const Array& arr, int64_t k) {
  const Shape& s = matrix_shape("tril_indices_from", arr);
  return triangle_indices("tril_indices_from", s[0], k, s[1], true);
}
std::vector<Array> triu_indices_from(const Array& arr, int64_t k) {
  const Shape& s = matrix_shape("triu_indices_from", arr);
  return triangle_indices("triu_indices_from", s[0], k, s[1], false);
}

std::vector<Array> diag_indices(int64_t n, int64_t ndim) {
  if (n < 0 || ndim < 0)
    throw ValueError(op_message("diag_indices", "n and ndim must be non-negative, got " +
                                                    std::to_string(n) + " and " +
                                                    std::to_string(ndim)));
  return std::vector<Array>(static_cast<size_t>(ndim), lax::iota(default_int_dtype(), n));
}

std::vector<Array> diag_indices_from(const Array& arr) {
  const char* op = "diag_indices_from";
  check_defined(op, arr);
  const Shape& s = arr.shape();
  if (s.size() < 2 || std::any_of(s.begin(), s.end(), [&](int64_t d) { return d != s[0]; }))
    throw ValueError(op_message(op,
                                "All dimensions of input must be of equal length; got "
                                "shape " +
                                    tuple_str(s)));
  return diag_indices(s[0], arr.ndim());
}

// ---------------------------------------------------------------- functional puts

Array put(const ArrayLike& a0, const ArrayLike& ind0, const ArrayLike& v0,
          const std::optional<std::string>& mode, bool inplace) {
  const char* op = "put";
  if (inplace)
    throw ValueError(op_message(op,
                                "jax.numpy.put cannot modify arrays in-place, because JAX "
                                "arrays are immutable. Pass inplace=False to instead return "
                                "an updated array."));
  const Array& a = a0.array();
  check_defined(op, a);
  check_defined(op, ind0.array());
  check_defined(op, v0.array());
  Array ind = flat1(ind0.array());
  Array v = flat1(v0.array());
  if (!is_integer(ind.dtype()))
    throw TypeError(
        op_message(op, "ind must have an integer dtype; got " + dtype_str(ind.dtype())));
  if (v.size() == 0 || ind.size() == 0) return a;
  if (v.shape()[0] != ind.shape()[0])  // NumPy repeats v to ind's length
    v = index_get(v, {remainder(lax::iota(kI32, ind.shape()[0]), v.shape()[0])});
  IndexOptions opt;
  const std::string md = mode.value_or("fill");
  if (md == "fill" || md == "drop") {
    opt.mode = kDrop;
  } else if (md == "clip") {
    opt.mode = GatherScatterMode::kClip;
  } else if (md == "wrap") {
    ind = remainder(ind, a.size());
  } else if (md == "raise") {
    throw NotImplementedError(op_message(op, "The 'raise' mode to jnp.put is not supported."));
  } else {
    throw ValueError(op_message(op, "mode=" + py_repr(md) +
                                        " not understood. Must be None, 'fill', 'clip', 'wrap' "
                                        "or 'raise'"));
  }
  if (a.size() == 0) return a;
  return lax::reshape(at(flat1(a), {ind}).set(convert(op, v, a.dtype()), opt), a.shape());
}

Array put_along_axis(const ArrayLike& arr0, const ArrayLike& indices0, const ArrayLike& values,
                     std::optional<int64_t> axis, bool inplace,
                     const std::optional<std::string>& mode) {
  const char* op = "put_along_axis";
  if (inplace)
    throw ValueError(op_message(op,
                                "jax.numpy.put_along_axis cannot modify arrays in-place, "
                                "because JAX arrays are immutable. Pass inplace=False to "
                                "instead return an updated array."));
  const Array& arr = arr0.array();
  const Array& idx0 = indices0.array();
  check_defined(op, arr);
  check_defined(op, idx0);
  check_defined(op, values.array());
  if (!axis)
    return lax::reshape(
        put_along_axis(flat1(arr), flat1(idx0), flat1(values.array()), 0, false, mode),
        arr.shape());
  IndexOptions opt;
  if (mode) {
    if (*mode == "clip") {
      opt.mode = GatherScatterMode::kClip;
    } else if (*mode == "fill" || *mode == "drop") {
      opt.mode = kDrop;
    } else if (*mode == "promise_in_bounds") {
      opt.mode = GatherScatterMode::kPromiseInBounds;
    } else {
      throw ValueError(op_message(op, "mode=" + py_repr(*mode) +
                                          " not understood. Must be None, 'clip', 'fill', "
                                          "'drop' or 'promise_in_bounds'"));
    }
  }
  const int64_t nd = arr.ndim();
  const int64_t ax = canonical_axis(op, *axis, nd);
  if (idx0.ndim() != nd)
    throw ValueError(op_message(op,
                                "indices and arr must have the same number of dimensions; "
                                "got " +
                                    idx0.aval().str() + " and " + arr.aval().str()));
  Shape shape = arr.shape();
  shape[ax] = idx0.shape()[ax];
  const Array idx = broadcast_to(idx0, shape);
  std::vector<Index> key;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == ax) {
      key.push_back(idx);
    } else {
      Shape s(static_cast<size_t>(nd), 1);
      s[d] = shape[d];
      key.push_back(lax::reshape(lax::iota(kI32, shape[d]), s));
    }
  }
  const Array vals = broadcast_to(convert(op, values.array(), arr.dtype()), shape);
  return at(arr, key).set(vals, opt);
}

}  // namespace tessera::numpy
