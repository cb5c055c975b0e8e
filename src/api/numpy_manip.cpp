// tessera::numpy array manipulation (numpy_manip.h): composites of lax's structural primitives
// (reshape, transpose, broadcast_in_dim, slice, rev, concatenate, pad, squeeze), following
// jax.numpy's definitions and errors.
#include <algorithm>
#include <numeric>
#include <string>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

using namespace detail;

namespace {

int64_t axis_of(const char* op, int64_t axis, int64_t ndim) {
  return normalize_axis(op, axis, ndim);
}

Array zeros_of(const Shape& s, DType d) {
  return lax::broadcast_in_dim(numpy::scalar(0.0, d), s, {});
}

}  // namespace

// ---------------------------------------------------------------- axes

Array swapaxes(const Array& x, int64_t axis1, int64_t axis2) {
  const char* op = "swapaxes";
  check_defined(op, x);
  const int64_t a = axis_of(op, axis1, x.ndim()), b = axis_of(op, axis2, x.ndim());
  std::vector<int64_t> perm(static_cast<size_t>(x.ndim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a], perm[b]);
  return a == b ? x : lax::transpose(x, perm);
}

Array moveaxis(const Array& x, const std::vector<int64_t>& source,
               const std::vector<int64_t>& destination) {
  const char* op = "moveaxis";
  check_defined(op, x);
  if (source.size() != destination.size())
    throw ValueError(op_message(
        op, "Inconsistent number of elements: " + std::to_string(source.size()) + " vs " +
                std::to_string(destination.size()) + "; give one destination per source axis"));
  const int64_t n = x.ndim();
  std::vector<int64_t> src, dst;
  for (int64_t s : source) src.push_back(axis_of(op, s, n));
  for (int64_t d : destination) dst.push_back(axis_of(op, d, n));
  auto dup = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) != v.end();
  };
  if (dup(src) || dup(dst))
    throw ValueError(op_message(op, "repeated axis in source " + tuple_str(source) +
                                        " or destination " + tuple_str(destination)));
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < n; ++i)
    if (std::find(src.begin(), src.end(), i) == src.end()) rest.push_back(i);
  std::vector<int64_t> perm(static_cast<size_t>(n), -1);
  for (size_t k = 0; k < src.size(); ++k) perm[dst[k]] = src[k];
  size_t r = 0;
  for (int64_t i = 0; i < n; ++i)
    if (perm[i] < 0) perm[i] = rest[r++];
  return transpose(x, perm);
}

Array moveaxis(const Array& x, int64_t source, int64_t destination) {
  return moveaxis(x, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

Array squeeze(const Array& x, std::optional<std::vector<int64_t>> axis) {
  const char* op = "squeeze";
  check_defined(op, x);
  std::vector<int64_t> dims;
  if (!axis) {
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (x.shape()[i] == 1) dims.push_back(i);
  } else {
    for (int64_t a : *axis) {
      const int64_t d = axis_of(op, a, x.ndim());
      if (x.shape()[d] != 1)
        throw ValueError(op_message(op,
                                    "cannot select an axis to squeeze out which has size "
                                    "not equal to one: axis " +
                                        std::to_string(a) + " of shape " + shape_str(x.shape())));
      dims.push_back(d);
    }
  }
  if (dims.empty()) return x;
  return lax::squeeze(x, dims);
}
Array squeeze(const Array& x, int64_t axis) { return squeeze(x, std::vector<int64_t>{axis}); }

Array expand_dims(const Array& x, const std::vector<int64_t>& axis) {
  check_defined("expand_dims", x);
  return lax::expand_dims(x, axis);
}
Array expand_dims(const Array& x, int64_t axis) {
  return expand_dims(x, std::vector<int64_t>{axis});
}

Array ravel(const Array& x) {
  check_defined("ravel", x);
  return reshape(x, {x.size()});
}

Array atleast_1d(const Array& x) { return x.ndim() >= 1 ? x : reshape(x, {1}); }
Array atleast_2d(const Array& x) {
  if (x.ndim() >= 2) return x;
  return reshape(x, {1, x.ndim() == 1 ? x.shape()[0] : 1});
}
Array atleast_3d(const Array& x) {
  if (x.ndim() >= 3) return x;
  if (x.ndim() == 0) return reshape(x, {1, 1, 1});
  if (x.ndim() == 1) return reshape(x, {1, x.shape()[0], 1});
  return reshape(x, {x.shape()[0], x.shape()[1], 1});
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& xs) {
  const char* op = "broadcast_arrays";
  Shape s;
  for (const Array& x : xs) {
    check_defined(op, x);
    s = broadcast_shape(op, s, x.shape());
  }
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(broadcast_to_shape(x, s));
  return out;
}

// ---------------------------------------------------------------- joining

Array concatenate(const std::vector<Array>& xs, int64_t axis) {
  const char* op = "concatenate";
  if (xs.empty()) throw ValueError(op_message(op, "need at least one array to concatenate"));
  for (const Array& x : xs) check_defined(op, x);
  if (xs[0].ndim() == 0)
    throw ValueError(op_message(op,
                                "zero-dimensional arrays cannot be concatenated; use "
                                "stack, or reshape them to rank 1"));
  for (const Array& x : xs)
    if (x.ndim() != xs[0].ndim())
      throw ValueError(op_message(op,
                                  "all the input arrays must have the same number of "
                                  "dimensions, got shapes " +
                                      shape_str(xs[0].shape()) + " and " + shape_str(x.shape())));
  const int64_t ax = axis_of(op, axis, xs[0].ndim());
  std::vector<Array> p = promote(op, xs);
  for (Array& a : p) a = convert(op, a, TypedDType{p[0].dtype(), false});
  return lax::concatenate(p, ax);
}

Array concatenate_flat(const std::vector<Array>& xs) {
  std::vector<Array> flat;
  for (const Array& x : xs) flat.push_back(ravel(x));
  return concatenate(flat, 0);
}

Array stack(const std::vector<Array>& xs, int64_t axis) {
  const char* op = "stack";
  if (xs.empty()) throw ValueError(op_message(op, "need at least one array to stack"));
  for (const Array& x : xs) {
    check_defined(op, x);
    if (x.shape() != xs[0].shape())
      throw ValueError(op_message(op, "all input arrays must have the same shape, got " +
                                          shape_str(xs[0].shape()) + " and " +
                                          shape_str(x.shape())));
  }
  const int64_t ax = axis_of(op, axis, xs[0].ndim() + 1);
  std::vector<Array> e;
  for (const Array& x : xs) e.push_back(lax::expand_dims(x, {ax}));
  return concatenate(e, ax);
}

Array hstack(const std::vector<Array>& xs) {
  std::vector<Array> a;
  for (const Array& x : xs) a.push_back(atleast_1d(x));
  return concatenate(a, a.empty() || a[0].ndim() == 1 ? 0 : 1);
}
Array vstack(const std::vector<Array>& xs) {
  std::vector<Array> a;
  for (const Array& x : xs) a.push_back(atleast_2d(x));
  return concatenate(a, 0);
}
Array dstack(const std::vector<Array>& xs) {
  std::vector<Array> a;
  for (const Array& x : xs) a.push_back(atleast_3d(x));
  return concatenate(a, 2);
}
Array column_stack(const std::vector<Array>& xs) {
  std::vector<Array> a;
  for (const Array& x : xs) a.push_back(x.ndim() < 2 ? reshape(x, {x.size(), 1}) : x);
  return concatenate(a, 1);
}

// ---------------------------------------------------------------- splitting

std::vector<Array> split(const Array& x, const std::vector<int64_t>& indices, int64_t axis) {
  const char* op = "split";
  check_defined(op, x);
  if (x.ndim() == 0) throw ValueError(op_message(op, "cannot split a rank-0 array"));
  const int64_t ax = axis_of(op, axis, x.ndim());
  const int64_t n = x.shape()[ax];
  std::vector<Array> out;
  int64_t prev = 0;
  auto clampi = [n](int64_t i) { return std::clamp(i < 0 ? i + n : i, int64_t{0}, n); };
  for (size_t k = 0; k <= indices.size(); ++k) {
    const int64_t end = k < indices.size() ? clampi(indices[k]) : n;
    const int64_t start = std::min(prev, n);
    out.push_back(lax::slice_in_dim(x, start, std::max(start, end), 1, ax));
    prev = std::max(prev, end);
  }
  return out;
}

std::vector<Array> split(const Array& x, int64_t sections, int64_t axis) {
  const char* op = "split";
  check_defined(op, x);
  if (x.ndim() == 0) throw ValueError(op_message(op, "cannot split a rank-0 array"));
  const int64_t ax = axis_of(op, axis, x.ndim());
  const int64_t n = x.shape()[ax];
  if (sections <= 0 || n % sections != 0)
    throw ValueError(op_message(op, "array split does not result in an equal division: axis " +
                                        std::to_string(ax) + " of size " + std::to_string(n) +
                                        " into " + std::to_string(sections) +
                                        " sections; use array_split for unequal parts"));
  std::vector<int64_t> idx;
  for (int64_t k = 1; k < sections; ++k) idx.push_back(k * (n / sections));
  return split(x, idx, ax);
}

std::vector<Array> array_split(const Array& x, int64_t sections, int64_t axis) {
  const char* op = "array_split";
  check_defined(op, x);
  if (sections <= 0)
    throw ValueError(
        op_message(op, "number sections must be larger than 0, got " + std::to_string(sections)));
  const int64_t ax = axis_of(op, axis, x.ndim());
  const int64_t n = x.shape()[ax];
  // NumPy: the first n % sections parts get one extra element.
  const int64_t base = n / sections, extra = n % sections;
  std::vector<int64_t> idx;
  int64_t at = 0;
  for (int64_t k = 0; k + 1 < sections; ++k) {
    at += base + (k < extra ? 1 : 0);
    idx.push_back(at);
  }
  return split(x, idx, ax);
}

std::vector<Array> hsplit(const Array& x, int64_t sections) {
  return split(x, sections, x.ndim() == 1 ? 0 : 1);
}
std::vector<Array> vsplit(const Array& x, int64_t sections) { return split(x, sections, 0); }

// ---------------------------------------------------------------- repetition

Array tile(const Array& x, const std::vector<int64_t>& reps) {
  const char* op = "tile";
  check_defined(op, x);
  for (int64_t r : reps)
    if (r < 0)
      throw ValueError(op_message(op, "negative repetition count in reps " + tuple_str(reps)));
  const size_t nd = std::max(reps.size(), static_cast<size_t>(x.ndim()));
  std::vector<int64_t> r(nd - reps.size(), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  Shape xs(nd - static_cast<size_t>(x.ndim()), 1);
  xs.insert(xs.end(), x.shape().begin(), x.shape().end());
  // Broadcast to [r0, x0, r1, x1, ...] then merge each pair.
  Shape big, out;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < nd; ++i) {
    big.push_back(r[i]);
    big.push_back(xs[i]);
    dims.push_back(static_cast<int64_t>(2 * i + 1));
    out.push_back(r[i] * xs[i]);
  }
  return lax::reshape(lax::broadcast_in_dim(reshape(x, xs), big, dims), out);
}

Array repeat(const Array& x, int64_t repeats, std::optional<int64_t> axis) {
  const char* op = "repeat";
  check_defined(op, x);
  if (repeats < 0)
    throw ValueError(
        op_message(op, "repeats may not contain negative values, got " + std::to_string(repeats)));
  if (!axis) return repeat(ravel(x), repeats, int64_t{0});
  const int64_t ax = axis_of(op, *axis, x.ndim());
  // Broadcast a new axis of size `repeats` right after `ax`, then merge the two.
  Shape big, out = x.shape();
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    dims.push_back(static_cast<int64_t>(big.size()));
    big.push_back(x.shape()[i]);
    if (i == ax) big.push_back(repeats);
  }
  out[ax] *= repeats;
  return lax::reshape(lax::broadcast_in_dim(x, big, dims), out);
}

Array repeat(const Array& x, const std::vector<int64_t>& repeats, std::optional<int64_t> axis) {
  const char* op = "repeat";
  check_defined(op, x);
  if (repeats.size() == 1) return repeat(x, repeats[0], axis);
  if (!axis) return repeat(ravel(x), repeats, int64_t{0});
  const int64_t ax = axis_of(op, *axis, x.ndim());
  const int64_t n = x.shape()[ax];
  if (static_cast<int64_t>(repeats.size()) != n)
    throw ValueError(op_message(op, "repeats has " + std::to_string(repeats.size()) +
                                        " entries but axis " + std::to_string(ax) + " has size " +
                                        std::to_string(n) +
                                        "; give one count, or one per element"));
  std::vector<Array> parts;
  for (int64_t i = 0; i < n; ++i) {
    if (repeats[i] < 0) throw ValueError(op_message(op, "repeats may not contain negative values"));
    if (repeats[i] == 0) continue;
    parts.push_back(repeat(lax::slice_in_dim(x, i, i + 1, 1, ax), repeats[i], ax));
  }
  if (parts.empty()) {
    Shape s = x.shape();
    s[ax] = 0;
    return zeros_of(s, x.dtype());
  }
  return lax::concatenate(parts, ax);
}

// ---------------------------------------------------------------- flipping and rolling

Array flip(const Array& x, std::optional<std::vector<int64_t>> axis) {
  const char* op = "flip";
  check_defined(op, x);
  std::vector<int64_t> dims = normalize_axes(op, axis, x.ndim());
  if (dims.empty()) return x;
  return lax::rev(x, dims);
}
Array flip(const Array& x, int64_t axis) { return flip(x, std::vector<int64_t>{axis}); }
Array fliplr(const Array& x) {
  if (x.ndim() < 2)
    throw ValueError(
        op_message("fliplr", "requires an array of rank >= 2, got shape " + shape_str(x.shape())));
  return flip(x, 1);
}
Array flipud(const Array& x) {
  if (x.ndim() < 1)
    throw ValueError(op_message("flipud", "requires an array of rank >= 1, got a scalar"));
  return flip(x, 0);
}

namespace {
Array roll_axis(const Array& x, int64_t shift, int64_t ax) {
  const int64_t n = x.shape()[ax];
  if (n == 0) return x;
  const int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return lax::concatenate(
      {lax::slice_in_dim(x, n - s, n, 1, ax), lax::slice_in_dim(x, 0, n - s, 1, ax)}, ax);
}
}  // namespace

Array roll(const Array& x, int64_t shift, std::optional<int64_t> axis) {
  const char* op = "roll";
  check_defined(op, x);
  if (!axis) return reshape(roll(ravel(x), shift, int64_t{0}), x.shape());
  return roll_axis(x, shift, axis_of(op, *axis, x.ndim()));
}

Array roll(const Array& x, const std::vector<int64_t>& shift, const std::vector<int64_t>& axis) {
  const char* op = "roll";
  check_defined(op, x);
  if (shift.size() != axis.size() && shift.size() != 1)
    throw ValueError(op_message(op, "shift and axis must have the same length, got " +
                                        tuple_str(shift) + " and " + tuple_str(axis)));
  Array r = x;
  for (size_t k = 0; k < axis.size(); ++k)
    r = roll_axis(r, shift.size() == 1 ? shift[0] : shift[k], axis_of(op, axis[k], x.ndim()));
  return r;
}

Array rot90(const Array& x, int64_t k, std::pair<int64_t, int64_t> axes) {
  const char* op = "rot90";
  check_defined(op, x);
  if (x.ndim() < 2)
    throw ValueError(
        op_message(op, "requires an array of rank >= 2, got shape " + shape_str(x.shape())));
  const int64_t a = axis_of(op, axes.first, x.ndim()), b = axis_of(op, axes.second, x.ndim());
  if (a == b) throw ValueError(op_message(op, "axes must be different"));
  k = ((k % 4) + 4) % 4;
  if (k == 0) return x;
  if (k == 2) return lax::rev(x, {a, b});
  if (k == 1) return swapaxes(lax::rev(x, {b}), a, b);
  return lax::rev(swapaxes(x, a, b), {b});
}

// ---------------------------------------------------------------- diagonals and triangles

Array diagonal(const Array& x, int64_t offset, int64_t axis1, int64_t axis2) {
  const char* op = "diagonal";
  check_defined(op, x);
  if (x.ndim() < 2)
    throw ValueError(
        op_message(op, "requires an array of rank >= 2, got shape " + shape_str(x.shape())));
  const int64_t a = axis_of(op, axis1, x.ndim()), b = axis_of(op, axis2, x.ndim());
  if (a == b) throw ValueError(op_message(op, "axis1 and axis2 cannot be the same"));
  // Move the two axes last, flatten them, and take every (m+1)-th element from the start of
  // the diagonal: a strided slice (its transpose is a pad, so gradients stay cheap).
  Array y = moveaxis(x, std::vector<int64_t>{a, b}, std::vector<int64_t>{-2, -1});
  const int64_t n = y.shape()[y.ndim() - 2], m = y.shape()[y.ndim() - 1];
  const int64_t len = offset >= 0 ? std::max<int64_t>(0, std::min(n, m - offset))
                                  : std::max<int64_t>(0, std::min(n + offset, m));
  Shape batch(y.shape().begin(), y.shape().end() - 2);
  Shape flat = batch;
  flat.push_back(n * m);
  Array f = lax::reshape(y, flat);
  if (len == 0) {
    Shape s = batch;
    s.push_back(0);
    return zeros_of(s, x.dtype());
  }
  const int64_t start = offset >= 0 ? offset : -offset * m;
  return lax::slice_in_dim(f, start, start + (len - 1) * (m + 1) + 1, m + 1,
                           static_cast<int64_t>(batch.size()));
}

Array trace(const Array& x, int64_t offset, int64_t axis1, int64_t axis2,
            std::optional<DType> dtype) {
  return sum(diagonal(x, offset, axis1, axis2), std::vector<int64_t>{-1}, false, dtype);
}

namespace {
// mask[i, j] = j - i >= k (upper) or <= k (lower), of shape (n, m).
Array tri_mask(int64_t n, int64_t m, int64_t k, bool lower) {
  const Array i = lax::broadcasted_iota(DType::kInt32, {n, m}, 0);
  const Array j = lax::broadcasted_iota(DType::kInt32, {n, m}, 1);
  const Array d = lax::sub(j, i);
  const Array kk = numpy::scalar(static_cast<double>(k), DType::kInt32);
  return lower ? lax::le(d, kk) : lax::ge(d, kk);
}

Array triangle(const char* op, const Array& x, int64_t k, bool lower) {
  check_defined(op, x);
  if (x.ndim() < 2)
    throw ValueError(op_message(op,
                                "requires an array of rank >= 2 (the last two axes are the "
                                "matrix), got shape " +
                                    shape_str(x.shape())));
  const int64_t n = x.shape()[x.ndim() - 2], m = x.shape()[x.ndim() - 1];
  Array mask = tri_mask(n, m, k, lower);
  Shape batch_mask_shape(static_cast<size_t>(x.ndim() - 2), 1);
  batch_mask_shape.push_back(n);
  batch_mask_shape.push_back(m);
  mask = broadcast_to_shape(lax::reshape(mask, batch_mask_shape), x.shape());
  return lax::select_n(mask, {zeros_of(x.shape(), x.dtype()), x});
}
}  // namespace

Array tril(const Array& x, int64_t k) { return triangle("tril", x, k, true); }
Array triu(const Array& x, int64_t k) { return triangle("triu", x, k, false); }

Array tri(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  const int64_t mm = m ? *m : n;
  return lax::convert_element_type(tri_mask(n, mm, k, true), dtype);
}

Array diag(const Array& v, int64_t k) {
  const char* op = "diag";
  check_defined(op, v);
  if (v.ndim() == 2) return diagonal(v, k, 0, 1);
  if (v.ndim() != 1)
    throw ValueError(op_message(op, "input must be 1- or 2-d, got shape " + shape_str(v.shape())));
  const int64_t n = v.shape()[0], big = n + (k >= 0 ? k : -k);
  // Element (i, i + k) = v[i] (k >= 0) or (j - k, j) = v[j] (k < 0): pad v to the matrix size,
  // broadcast it along rows or columns, and keep the k-th diagonal.
  Array padded = lax::pad(v, numpy::scalar(0.0, v.dtype()), {{0, big - n, 0}});
  Array full = k >= 0 ? lax::broadcast_in_dim(padded, {big, big}, {0})
                      : lax::broadcast_in_dim(padded, {big, big}, {1});
  const Array i = lax::broadcasted_iota(DType::kInt32, {big, big}, 0);
  const Array j = lax::broadcasted_iota(DType::kInt32, {big, big}, 1);
  const Array on = lax::eq(lax::sub(j, i), numpy::scalar(static_cast<double>(k), DType::kInt32));
  return lax::select_n(on, {zeros_of({big, big}, v.dtype()), full});
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing,
                            bool sparse) {
  const char* op = "meshgrid";
  if (indexing != "xy" && indexing != "ij")
    throw ValueError(
        op_message(op, "Valid values for indexing are 'xy' and 'ij', got '" + indexing + "'"));
  std::vector<Array> flat;
  for (const Array& x : xs) {
    check_defined(op, x);
    flat.push_back(ravel(x));
  }
  const size_t n = flat.size();
  Shape shape;
  for (const Array& f : flat) shape.push_back(f.size());
  if (indexing == "xy" && n >= 2) std::swap(shape[0], shape[1]);
  std::vector<Array> out;
  for (size_t i = 0; i < n; ++i) {
    size_t pos = i;
    if (indexing == "xy" && n >= 2 && i < 2) pos = 1 - i;
    if (sparse) {
      Shape s(n, 1);
      s[pos] = flat[i].size();
      out.push_back(lax::reshape(flat[i], s));
    } else {
      out.push_back(lax::broadcast_in_dim(flat[i], shape, {static_cast<int64_t>(pos)}));
    }
  }
  return out;
}

}  // namespace tessera::numpy
