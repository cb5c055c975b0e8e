// tessera::numpy shapes and linear algebra: broadcasting, reshape, transpose, matmul, dot,
// astype and result_type. Broadcasts are only materialized where lax needs equal shapes.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

// ---------------------------------------------------------------- shared helpers

namespace detail {

std::string tuple_str(const std::vector<int64_t>& v) { return shape_str(v); }

Shape broadcast_shape(const char* op, const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // Trailing alignment: missing leading dims count as 1.
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ValueError(op_message(op, "operands could not be broadcast together with shapes " +
                                          shape_str(a) + " " + shape_str(b) +
                                          "; each pair of trailing dimensions must be equal or 1"));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// x reshaped to rank n by prepending 1s (zero-copy).
Array lift_rank(const Array& x, size_t n) {
  if (static_cast<size_t>(x.ndim()) >= n) return x;
  Shape s(n - x.ndim(), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return lax::reshape(x, s);
}

}  // namespace

std::pair<Array, Array> align_ranks(const char* op, const Array& x, const Array& y) {
  broadcast_shape(op, x.shape(), y.shape());
  if (x.ndim() == y.ndim() || x.ndim() == 0 || y.ndim() == 0) return {x, y};
  const size_t n = std::max(x.ndim(), y.ndim());
  return {lift_rank(x, n), lift_rank(y, n)};
}

Array broadcast_to_shape(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  std::vector<int64_t> dims(x.ndim());
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(shape.size()) - x.ndim());
  return lax::broadcast_in_dim(x, shape, dims);
}

std::vector<int64_t> normalize_axes(const char* op, const Axes& axis, int64_t ndim) {
  std::vector<int64_t> out;
  if (!axis) {
    out.resize(ndim);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t a : *axis) out.push_back(normalize_axis(op, a, ndim));
  std::vector<int64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ValueError(
        op_message(op, "duplicate value in 'axis': " + tuple_str(*axis) + "; name each axis once"));
  return sorted;
}

}  // namespace detail

using namespace detail;

// ---------------------------------------------------------------- dtypes

Array astype(const Array& x, DType dtype) { return convert("astype", x, dtype); }

DType result_type(std::initializer_list<ArrayLike> xs) {
  if (xs.size() == 0)
    throw ValueError(op_message("result_type", "at least one array or dtype is required"));
  std::vector<TypedDType> t;
  for (const ArrayLike& x : xs) {
    check_defined("result_type", x.array());
    t.push_back(x.array().aval().typed());
  }
  return tessera::result_type(t.data(), t.size()).dtype;
}

// ---------------------------------------------------------------- broadcasting

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  return broadcast_shape(op, a, b);
}

Array broadcast_to(const Array& x, const Shape& shape) {
  const char* op = "broadcast_to";
  check_defined(op, x);
  bool ok = static_cast<int64_t>(shape.size()) >= x.ndim();
  for (int64_t d : shape) ok = ok && d >= 0;
  for (int64_t i = 0; ok && i < x.ndim(); ++i) {
    int64_t have = x.shape()[i], want = shape[shape.size() - x.ndim() + i];
    ok = have == want || have == 1;
  }
  if (!ok)
    throw ValueError(op_message(op, "cannot broadcast an array of shape " + shape_str(x.shape()) +
                                        " to shape " + shape_str(shape) +
                                        "; each trailing dimension must equal the target's or be "
                                        "1, and the target rank must not be smaller"));
  return broadcast_to_shape(x, shape);
}

// ---------------------------------------------------------------- reshape / transpose

Array reshape(const Array& x, const Shape& shape) {
  const char* op = "reshape";
  check_defined(op, x);
  Shape out = shape;
  int64_t unknown = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (unknown >= 0)
        throw ValueError(op_message(
            op, "can only specify one unknown dimension (-1), got shape " + shape_str(shape)));
      unknown = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      throw ValueError(op_message(op, "negative dimension in shape " + shape_str(shape) +
                                          "; use -1 for one inferred dimension"));
    } else {
      known *= out[i];
    }
  }
  auto fail = [&]() {
    throw ValueError(op_message(op, "cannot reshape array of shape " + shape_str(x.shape()) +
                                        " (size " + std::to_string(x.size()) + ") into shape " +
                                        shape_str(shape) +
                                        "; the sizes must match (one -1 may be inferred)"));
  };
  if (unknown >= 0) {
    if (known == 0 || x.size() % known != 0) fail();
    out[unknown] = x.size() / known;
  } else if (known != x.size()) {
    fail();
  }
  if (out == x.shape()) return x;
  return lax::reshape(x, out);
}

Array transpose(const Array& x, std::optional<std::vector<int64_t>> axes) {
  const char* op = "transpose";
  check_defined(op, x);
  const int64_t n = x.ndim();
  std::vector<int64_t> perm(n);
  if (!axes) {
    for (int64_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  } else {
    if (static_cast<int64_t>(axes->size()) != n)
      throw ValueError(op_message(op, "axes " + tuple_str(*axes) +
                                          " don't match an array of shape " + shape_str(x.shape()) +
                                          "; give a permutation of its " + std::to_string(n) +
                                          " axes"));
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      perm[i] = normalize_axis(op, (*axes)[i], n);
      if (seen[perm[i]])
        throw ValueError(op_message(op, "axes " + tuple_str(*axes) +
                                            " are not a permutation of the axes of an array of "
                                            "shape " +
                                            shape_str(x.shape()) + " (repeated axis)"));
      seen[perm[i]] = true;
    }
  }
  bool identity = true;
  for (int64_t i = 0; i < n; ++i) identity = identity && perm[i] == i;
  if (identity) return x;
  return lax::transpose(x, perm);
}

// ---------------------------------------------------------------- matmul / dot

namespace {

// The operands promoted to their common (dtype, weak) (jnp.matmul/dot keep integers integers).
std::pair<Array, Array> promote_pair(const char* op, const Array& a, const Array& b) {
  std::vector<Array> p = promote(op, {a, b});
  return {p[0], p[1]};
}

}  // namespace

Array matmul(const Array& a_in, const Array& b_in) {
  const char* op = "matmul";
  check_defined(op, a_in);
  check_defined(op, b_in);
  for (int i = 0; i < 2; ++i) {
    const Array& x = i == 0 ? a_in : b_in;
    if (x.ndim() == 0)
      throw ValueError(op_message(op, "input operand " + std::to_string(i) +
                                          " is a scalar (rank 0); matmul needs at least 1 "
                                          "dimension, use multiply for scalars"));
  }
  const Shape& as = a_in.shape();
  const Shape& bs = b_in.shape();
  const int64_t an = a_in.ndim(), bn = b_in.ndim();
  const bool a_mat = an >= 2, b_mat = bn >= 2;
  const int64_t a_k = an - 1, b_k = b_mat ? bn - 2 : 0;
  if (as[a_k] != bs[b_k])
    throw ValueError(op_message(op, "size mismatch in contracted dimension: " + shape_str(as) +
                                        " @ " + shape_str(bs) +
                                        "; the last axis of the first operand must equal the "
                                        "second-to-last (or only) axis of the second"));
  Shape a_batch(as.begin(), as.end() - (a_mat ? 2 : 1));
  Shape b_batch(bs.begin(), bs.end() - (b_mat ? 2 : 1));
  Shape out_batch = broadcast_shape(op, a_batch, b_batch);
  const int64_t nb = static_cast<int64_t>(out_batch.size());
  auto [a, b] = promote_pair(op, a_in, b_in);

  // Each output batch position is a true batch dim (both sides carry it), or a free dim of the
  // side that carries it (the other side's size-1 dim is squeezed out): nothing is materialized.
  std::vector<int64_t> a_keep, b_keep;  // batch positions kept by each side, in order
  std::vector<int64_t> lhs_batch, rhs_batch, batch_pos;
  Shape a_shape, b_shape;  // after squeezing
  const int64_t a_off = nb - static_cast<int64_t>(a_batch.size());
  const int64_t b_off = nb - static_cast<int64_t>(b_batch.size());
  for (int64_t p = 0; p < nb; ++p) {
    int64_t da = p >= a_off ? a_batch[p - a_off] : -1;  // -1: absent
    int64_t db = p >= b_off ? b_batch[p - b_off] : -1;
    bool a_has = da == out_batch[p] && !(da == 1 && db > 1);
    bool b_has = db == out_batch[p] && !(db == 1 && da > 1);
    if (a_has && b_has) {
      lhs_batch.push_back(static_cast<int64_t>(a_shape.size()));
      rhs_batch.push_back(static_cast<int64_t>(b_shape.size()));
      batch_pos.push_back(p);
    }
    if (a_has) {
      a_keep.push_back(p);
      a_shape.push_back(da);
    }
    if (b_has) {
      b_keep.push_back(p);
      b_shape.push_back(db);
    }
  }
  for (int64_t i = an - (a_mat ? 2 : 1); i < an; ++i) a_shape.push_back(as[i]);
  for (int64_t i = bn - (b_mat ? 2 : 1); i < bn; ++i) b_shape.push_back(bs[i]);
  if (a_shape != a.shape()) a = lax::reshape(a, a_shape);
  if (b_shape != b.shape()) b = lax::reshape(b, b_shape);

  lax::DotDimensionNumbers dims;
  dims.lhs_contracting = {static_cast<int64_t>(a_shape.size()) - 1};
  dims.rhs_contracting = {static_cast<int64_t>(b_shape.size()) - (b_mat ? 2 : 1)};
  dims.lhs_batch = lhs_batch;
  dims.rhs_batch = rhs_batch;
  const TypedDType out_t = a.aval().typed();
  Array out = lax::dot_general(a, b, dims, out_t.dtype);

  // dot_general's order: batch dims, lhs free (kept batch positions, then M), rhs free (kept
  // batch positions, then N). Label each with its place in NumPy's order and sort.
  std::vector<int64_t> label;
  for (int64_t p : batch_pos) label.push_back(p);
  for (int64_t p : a_keep)
    if (std::find(batch_pos.begin(), batch_pos.end(), p) == batch_pos.end()) label.push_back(p);
  if (a_mat) label.push_back(nb);
  for (int64_t p : b_keep)
    if (std::find(batch_pos.begin(), batch_pos.end(), p) == batch_pos.end()) label.push_back(p);
  if (b_mat) label.push_back(nb + 1);
  std::vector<int64_t> perm(label.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t i, int64_t j) { return label[i] < label[j]; });
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  if (!identity) out = lax::transpose(out, perm);
  return convert(op, out, out_t);
}

Array dot(const Array& a_in, const Array& b_in) {
  const char* op = "dot";
  check_defined(op, a_in);
  check_defined(op, b_in);
  if (a_in.ndim() == 0 || b_in.ndim() == 0) return multiply(a_in, b_in);
  const int64_t a_k = a_in.ndim() - 1;
  const int64_t b_k = b_in.ndim() >= 2 ? b_in.ndim() - 2 : 0;
  if (a_in.shape()[a_k] != b_in.shape()[b_k])
    throw ValueError(
        op_message(op, "shapes " + shape_str(a_in.shape()) + " and " + shape_str(b_in.shape()) +
                           " not aligned: " + std::to_string(a_in.shape()[a_k]) + " (dim " +
                           std::to_string(a_k) + ") != " + std::to_string(b_in.shape()[b_k]) +
                           " (dim " + std::to_string(b_k) + ")"));
  auto [a, b] = promote_pair(op, a_in, b_in);
  lax::DotDimensionNumbers dims;
  dims.lhs_contracting = {a_k};
  dims.rhs_contracting = {b_k};
  const TypedDType out_t = a.aval().typed();
  return convert(op, lax::dot_general(a, b, dims, out_t.dtype), out_t);
}

}  // namespace tessera::numpy
