// Advanced indexing and functional updates (tessera/numpy_indexing.h): an index expression
// becomes one gather (reads) or one scatter (updates), as JAX's _index_to_gather.
//
// Every operand dim the expression touches is one of: a window (a unit-step slice or an
// untouched dim: its elements are the gather's offset dims, with a constant start), a
// collapsed dim with a start per point (an integer, an integer array, or a slice of another
// step, which becomes `start + step * iota` along its own point axis). The points are the
// advanced indices' broadcast shape B (placed where the advanced indices stand when they are
// adjacent, else first, as NumPy) and one axis per strided slice, in output order. Newaxis
// dims are added by a reshape after the gather (and removed from the updates before a
// scatter).
#include <algorithm>
#include <string>

#include "api/numpy_internal.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"
#include "tessera/lax_gather.h"
#include "tessera/numpy.h"
#include "tessera/numpy_indexing.h"

namespace tessera::numpy {

using namespace detail;

namespace {

struct Entry {
  enum Kind { kNew, kInt, kSlice, kArray } kind;
  int64_t i = 0;
  Slice s;
  Array a;
  int64_t pos = 0;  // its position in the index expression (an ellipsis counts as one)
};

struct Indexer {
  Array indices;  // (points..., K)
  GatherDimensionNumbers dn;
  std::vector<int64_t> slice_sizes;
  Shape gather_shape, out_shape;
};

// A rank-0 constant of like's dtype (lax's binary ops broadcast rank-0 operands).
Array full_as(const Array& like, double v) { return numpy::scalar(v, like.dtype()); }

bool is_advanced_array(const Array& a) { return a.ndim() > 0 || is_bool(a.dtype()); }

// A concrete mask's nonzero() as one int32 array per mask dim.
std::vector<Array> mask_indices(const char* op, const Array& m) {
  const Array* v = m.is_tracer() ? m.tracer()->concrete_value() : &m;
  if (!v || m.ndim() == 0)
    throw IndexError(op_message(
        op, m.ndim() == 0
                ? "a rank-0 boolean index (x[True]) is not supported by Tessera yet; use "
                  "x[None] or x[None][:0]"
                : "Array boolean indices must be concrete; got " + m.aval().str() +
                      " (NonConcreteBooleanIndexError). Under jit or vmap use where(mask, x, "
                      "0), or jnp.nonzero(mask, size=...) for a static number of indices"));
  const Shape& s = m.shape();
  for (int64_t n : s)
    if (n > INT32_MAX)
      throw IndexError(op_message(op, "a boolean mask dimension of " + std::to_string(n) +
                                          " elements does not fit int32 indices; index with "
                                          "integer arrays instead"));
  // Two passes over fixed chunks (the same result for any thread count): count each chunk's
  // true elements, then write each chunk's flat positions from its offset, branch-free. Then
  // the flat positions become one coordinate array per mask dim.
  const bool* p = static_cast<const bool*>(v->raw_data());
  const int64_t n = m.size();
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<int64_t> offsets(static_cast<size_t>(chunks) + 1, 0);
  runtime::parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t k = 0;
      for (int64_t f = c * kChunk, e = std::min(n, f + kChunk); f < e; ++f) k += p[f] ? 1 : 0;
      offsets[static_cast<size_t>(c) + 1] = k;
    }
  });
  for (int64_t c = 0; c < chunks; ++c) offsets[c + 1] += offsets[c];
  const int64_t count = offsets[static_cast<size_t>(chunks)];
  const size_t nd = s.size();
  // A rank-1 mask's positions are its coordinates (int32: its dim was checked above); other
  // masks keep int64 flat positions until they are split into coordinates.
  std::vector<int64_t> flat(nd == 1 ? 0 : static_cast<size_t>(count));
  Array first = empty_array(Aval{{count}, DType::kInt32, false}, op);
  int32_t* out0 = static_cast<int32_t*>(first.buffer()->data());
  runtime::parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      // Every element stores its position at the chunk's next slot, and only a true one
      // advances it; the stores stay inside the chunk's own slots [k, kend).
      int64_t k = offsets[static_cast<size_t>(c)];
      const int64_t kend = offsets[static_cast<size_t>(c) + 1];
      const int64_t e = std::min(n, (c + 1) * kChunk);
      if (nd == 1) {
        for (int64_t f = c * kChunk; f < e; ++f) {
          if (k < kend) out0[k] = static_cast<int32_t>(f);
          k += p[f] ? 1 : 0;
        }
      } else {
        for (int64_t f = c * kChunk; f < e; ++f) {
          if (k < kend) flat[static_cast<size_t>(k)] = f;
          k += p[f] ? 1 : 0;
        }
      }
    }
  });
  if (nd == 1) return {first};
  std::vector<Array> r;
  int64_t stride = n;
  for (size_t d = 0; d < nd; ++d) {
    Array coord = d == 0 ? first : empty_array(Aval{{count}, DType::kInt32, false}, op);
    int32_t* o = static_cast<int32_t*>(coord.buffer()->data());
    const int64_t dim = s[d];
    stride = dim == 0 ? 0 : stride / dim;
    runtime::parallel_for(count, runtime::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        o[i] = static_cast<int32_t>(flat[static_cast<size_t>(i)] / stride % dim);
    });
    r.push_back(std::move(coord));
  }
  return r;
}

// An index array wrapped (negative counts from the end) and converted to `to`, keeping
// out-of-bounds values out of bounds.
Array normalize_index(const Array& a, int64_t n, DType to) {
  Array i = a;
  const DType d = i.dtype();
  if (is_signed_integer(d)) {
    Array neg = lax::lt(i, full_as(i, 0.0));
    i = lax::select_n(neg, {i, lax::add(i, full_as(i, static_cast<double>(n)))});
  }
  if (d == to) return i;
  if (itemsize(d) >= itemsize(to) || (is_unsigned_integer(d) && itemsize(d) * 2 > itemsize(to))) {
    // Narrowing could wrap an out-of-bounds value into range: clamp to [-1, n] first.
    const double lo = is_signed_integer(d) ? -1.0 : 0.0;
    i = lax::clamp(full_as(i, lo), i, full_as(i, static_cast<double>(n)));
  }
  return lax::convert_element_type(i, to);
}

Indexer make_indexer(const char* op, const Array& x, const std::vector<Index>& idx,
                     bool strict_ints) {
  check_defined(op, x);
  // Entries, with masks expanded into integer arrays and the ellipsis into full slices.
  std::vector<Entry> es;
  int64_t consumed = 0, ellipses = 0;
  for (const Index& ix : idx) {
    const auto& v = ix.value();
    if (std::holds_alternative<Ellipsis>(v)) {
      ++ellipses;
    } else if (const Array* a = std::get_if<Array>(&v)) {
      check_defined(op, *a);
      consumed += is_bool(a->dtype()) ? std::max<int64_t>(a->ndim(), 1) : 1;
    } else if (!std::holds_alternative<NewAxis>(v)) {
      ++consumed;
    }
  }
  const int64_t nd = x.ndim();
  if (ellipses > 1)
    throw IndexError(op_message(op, "an index can only have a single ellipsis ('...')"));
  if (consumed > nd)
    throw IndexError(op_message(op, "too many indices for array: array is " + std::to_string(nd) +
                                        "-dimensional, but " + std::to_string(consumed) +
                                        " were indexed"));
  for (size_t p = 0; p < idx.size(); ++p) {
    const auto& v = idx[p].value();
    const size_t first_new = es.size();
    if (std::holds_alternative<NewAxis>(v)) {
      es.push_back({Entry::kNew, 0, {}, {}});
    } else if (std::holds_alternative<Ellipsis>(v)) {
      for (int64_t k = 0; k < nd - consumed; ++k) es.push_back({Entry::kSlice, 0, {}, {}});
    } else if (const int64_t* i = std::get_if<int64_t>(&v)) {
      es.push_back({Entry::kInt, *i, {}, {}});
    } else if (const Slice* s = std::get_if<Slice>(&v)) {
      es.push_back({Entry::kSlice, 0, *s, {}});
    } else {
      const Array& a = std::get<Array>(v);
      if (is_bool(a.dtype())) {
        int64_t at = 0;  // the operand dim the mask starts at
        for (const Entry& e : es) at += e.kind == Entry::kNew ? 0 : 1;
        for (int64_t k = 0; k < a.ndim(); ++k)
          if (at + k >= nd || a.shape()[k] != x.shape()[at + k])
            throw IndexError(op_message(
                op, "boolean index did not match indexed array along dimension " +
                        std::to_string(at + k) + "; dimension is " +
                        (at + k < nd ? std::to_string(x.shape()[at + k]) : std::string("absent")) +
                        " but corresponding boolean dimension is " + std::to_string(a.shape()[k]) +
                        " (mask " + a.aval().str() + ", array " + x.aval().str() + ")"));
        for (Array& m : mask_indices(op, a)) es.push_back({Entry::kArray, 0, {}, m});
      } else {
        if (!is_integer(a.dtype()))
          throw IndexError(op_message(
              op, "indexers must have an integer or boolean type; got " + a.aval().str()));
        es.push_back({Entry::kArray, 0, {}, a});
      }
    }
    for (size_t k = first_new; k < es.size(); ++k) es[k].pos = static_cast<int64_t>(p);
  }
  bool advanced = false;
  for (const Entry& e : es)
    advanced = advanced || (e.kind == Entry::kArray && is_advanced_array(e.a));
  // With advanced indices present, integers and rank-0 arrays are advanced too (NumPy).
  Shape B;
  int64_t first_adv = -1, last_adv = -1, n_adv = 0;  // over positions in the expression
  std::vector<bool> adv_pos(idx.size(), false);
  for (size_t k = 0; k < es.size(); ++k) {
    Entry& e = es[k];
    if (!advanced || (e.kind != Entry::kInt && e.kind != Entry::kArray)) continue;
    if (e.kind == Entry::kInt) e = {Entry::kArray, 0, {}, numpy::scalar(e.i, DType::kInt32), e.pos};
    B = broadcast_shapes(B, e.a.shape(), op);
    adv_pos[e.pos] = true;
  }
  for (size_t p = 0; p < adv_pos.size(); ++p) {
    if (!adv_pos[p]) continue;
    if (first_adv < 0) first_adv = static_cast<int64_t>(p);
    last_adv = static_cast<int64_t>(p);
    ++n_adv;
  }
  // NumPy: adjacent when no other index (an ellipsis or newaxis included) stands between.
  const bool adjacent = n_adv > 0 && last_adv - first_adv + 1 == n_adv;

  // The index dtype: int64 when some dim or index needs it (x64 only), else int32.
  DType it = DType::kInt32;
  for (int64_t n : x.shape())
    if (n > INT32_MAX && x64_enabled()) it = DType::kInt64;
  for (const Entry& e : es)
    if (e.kind == Entry::kArray && itemsize(e.a.dtype()) == 8 && x64_enabled()) it = DType::kInt64;

  Indexer ix;
  ix.slice_sizes.assign(static_cast<size_t>(nd), 1);
  // Output items: window (operand dim), point (size), newaxis.
  struct Item {
    enum Kind { kWindow, kPoint, kNew } kind;
    int64_t v;
  };
  std::vector<Item> items;
  struct Comp {
    int64_t dim;
    Array value;         // rank 0 (constant or dynamic), or B-shaped, or 1-d along `axis`
    int64_t axis = -1;   // item index of a strided slice's point axis
    bool block = false;  // broadcast into the advanced block
  };
  std::vector<Comp> comps;
  int64_t block_item = -1;  // item index where the advanced block starts
  if (n_adv > 0 && !adjacent) {
    block_item = 0;
    for (int64_t n : B) items.push_back({Item::kPoint, n});
  }
  int64_t d = 0;
  for (size_t k = 0; k < es.size(); ++k) {
    const Entry& e = es[k];
    if (e.kind == Entry::kNew) {
      items.push_back({Item::kNew, 1});
      continue;
    }
    const int64_t n = x.shape()[d];
    if (e.kind == Entry::kInt) {
      const int64_t at = e.i < 0 ? e.i + n : e.i;
      if (strict_ints && (at < 0 || at >= n))
        throw IndexError(op_message(op, "index " + std::to_string(e.i) +
                                            " is out of bounds for axis " + std::to_string(d) +
                                            " with size " + std::to_string(n)));
      ix.dn.collapsed_slice_dims.push_back(d);
      comps.push_back({d, numpy::scalar(static_cast<double>(std::clamp<int64_t>(at, -1, n)), it)});
    } else if (e.kind == Entry::kSlice) {
      const auto [start, step, count] = slice_range(op, e.s, n);
      if (step == 1) {
        ix.slice_sizes[d] = count;
        items.push_back({Item::kWindow, d});
        if (start != 0 && count > 0)
          comps.push_back({d, numpy::scalar(static_cast<double>(start), it)});
      } else {
        ix.dn.collapsed_slice_dims.push_back(d);
        Array io = lax::iota(it, count);
        io = lax::add(lax::mul(io, numpy::scalar(static_cast<double>(step), it)),
                      numpy::scalar(static_cast<double>(start), it));
        comps.push_back({d, io, static_cast<int64_t>(items.size())});
        items.push_back({Item::kPoint, count});
      }
    } else {
      ix.dn.collapsed_slice_dims.push_back(d);
      Array v = normalize_index(e.a, n, it);
      if (advanced) {
        if (block_item < 0) {
          block_item = static_cast<int64_t>(items.size());
          for (int64_t b : B) items.push_back({Item::kPoint, b});
        }
        comps.push_back({d, v, -1, true});
      } else {
        comps.push_back({d, v});  // a rank-0 dynamic index
      }
    }
    ++d;
  }
  for (; d < nd; ++d) {
    ix.slice_sizes[d] = x.shape()[d];
    items.push_back({Item::kWindow, d});
  }
  std::sort(ix.dn.collapsed_slice_dims.begin(), ix.dn.collapsed_slice_dims.end());

  // Points, offset dims and shapes.
  Shape P;
  std::vector<int64_t> point_of_item(items.size(), -1);
  int64_t g = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    const Item& it2 = items[k];
    if (it2.kind == Item::kNew) {
      ix.out_shape.push_back(1);
      continue;
    }
    if (it2.kind == Item::kWindow) {
      ix.dn.offset_dims.push_back(g);
      ix.gather_shape.push_back(ix.slice_sizes[it2.v]);
      ix.out_shape.push_back(ix.slice_sizes[it2.v]);
    } else {
      point_of_item[k] = static_cast<int64_t>(P.size());
      P.push_back(it2.v);
      ix.gather_shape.push_back(it2.v);
      ix.out_shape.push_back(it2.v);
    }
    ++g;
  }
  std::vector<Array> cols;
  for (const Comp& c : comps) {
    ix.dn.start_index_map.push_back(c.dim);
    Array v = c.value;
    if (c.block) {
      if (v.shape() != B) v = numpy::broadcast_to(v, B);
      std::vector<int64_t> dims;
      bool identity = B.size() == P.size();
      for (size_t j = 0; j < B.size(); ++j) {
        dims.push_back(point_of_item[block_item + j]);
        identity = identity && dims.back() == static_cast<int64_t>(j);
      }
      if (!identity) v = lax::broadcast_in_dim(v, P, dims);
    } else if (c.axis >= 0) {
      if (P.size() != 1) v = lax::broadcast_in_dim(v, P, {point_of_item[c.axis]});
    } else {
      v = lax::broadcast_in_dim(v, P, {});
    }
    Shape s1 = P;
    s1.push_back(1);
    cols.push_back(lax::reshape(v, s1));
  }
  if (cols.empty()) {
    Shape s0 = P;
    s0.push_back(0);
    ix.indices = lax::broadcast_in_dim(numpy::scalar(0.0, it), s0, {});
  } else {
    ix.indices =
        cols.size() == 1 ? cols[0] : lax::concatenate(cols, static_cast<int64_t>(P.size()));
  }
  return ix;
}

GatherScatterMode read_mode(const IndexOptions& o) {
  return o.mode.value_or(GatherScatterMode::kPromiseInBounds);
}

Array gather_with(const Array& x, const Indexer& ix, const IndexOptions& o) {
  lax::GatherOptions g;
  g.indices_are_sorted = o.indices_are_sorted;
  g.unique_indices = o.unique_indices;
  g.mode = read_mode(o);
  g.fill_value = o.fill_value;
  if (o.fill_value && !o.mode)
    g.mode = GatherScatterMode::kFillOrDrop;  // JAX: fill_value implies "fill"
  for (size_t d = 0; d < ix.slice_sizes.size(); ++d) {
    if (ix.slice_sizes[d] <= x.shape()[d]) continue;
    // An index into an axis of size 0: no element can be read. An empty selection (x[mask]
    // of an empty x, an empty index array) is empty, as NumPy's; anything else is JAX's error.
    if (shape_size(ix.out_shape) != 0)
      throw IndexError(op_message(
          "getitem", "index is out of bounds for axis " + std::to_string(d) + " with size 0"));
    return lax::broadcast_in_dim(full_as(x, 0.0), ix.out_shape, {});
  }
  Array y = lax::gather(x, ix.indices, ix.dn, ix.slice_sizes, g);
  return ix.out_shape == ix.gather_shape ? y : lax::reshape(y, ix.out_shape);
}

}  // namespace

namespace detail {

SliceRange slice_range(const char* op, const Slice& s, int64_t n) {
  const int64_t st = s.step.value_or(1);
  if (st == 0) throw ValueError(op_message(op, "slice step cannot be zero"));
  auto norm = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    return std::clamp(*v < 0 ? *v + n : *v, lo, hi);
  };
  int64_t b, e;
  if (st > 0) {
    b = norm(s.start, 0, 0, n);
    e = norm(s.stop, n, 0, n);
  } else {
    b = norm(s.start, n - 1, -1, n - 1);
    e = norm(s.stop, -1, -1, n - 1);
  }
  int64_t c = 0;
  if (st > 0 && e > b) c = (e - b + st - 1) / st;
  if (st < 0 && b > e) c = (b - e + (-st) - 1) / (-st);
  return {b, st, c};
}

bool has_advanced_index(const std::vector<Index>& idx) {
  for (const Index& i : idx)
    if (const Array* a = std::get_if<Array>(&i.value()); a && a->defined() && is_advanced_array(*a))
      return true;
  return false;
}

Array advanced_getitem(const Array& x, const std::vector<Index>& idx) {
  return gather_with(x, make_indexer("getitem", x, idx, true), {});
}

}  // namespace detail

Array index_get(const Array& x, const std::vector<Index>& idx, const IndexOptions& o) {
  if (!o.mode && !o.fill_value && !detail::has_advanced_index(idx)) return getitem(x, idx);
  return gather_with(x, make_indexer("at.get", x, idx, false), o);
}

Array index_update(const Array& x, const std::vector<Index>& idx, const Array& values,
                   IndexUpdate op, const IndexOptions& o) {
  const char* name = "at.update";
  check_defined(name, values);
  const Indexer ix = make_indexer(name, x, idx, false);
  Array v = values;
  if (v.dtype() != x.dtype()) v = lax::convert_element_type(v, x.dtype());
  v = numpy::broadcast_to(v, ix.out_shape);
  if (ix.out_shape != ix.gather_shape) v = lax::reshape(v, ix.gather_shape);
  lax::ScatterOptions s;
  s.indices_are_sorted = o.indices_are_sorted;
  s.unique_indices = o.unique_indices;
  s.mode = o.mode.value_or(GatherScatterMode::kFillOrDrop);
  const ScatterDimensionNumbers dn{
      ix.dn.offset_dims, ix.dn.collapsed_slice_dims, ix.dn.start_index_map, {}, {}};
  switch (op) {
    case IndexUpdate::kSet:
      return lax::scatter(x, ix.indices, v, dn, s);
    case IndexUpdate::kAdd:
      return lax::scatter_add(x, ix.indices, v, dn, s);
    case IndexUpdate::kSubtract:
      return lax::scatter_sub(x, ix.indices, v, dn, s);
    case IndexUpdate::kMultiply:
      return lax::scatter_mul(x, ix.indices, v, dn, s);
    case IndexUpdate::kMin:
      return lax::scatter_min(x, ix.indices, v, dn, s);
    case IndexUpdate::kMax:
      return lax::scatter_max(x, ix.indices, v, dn, s);
    case IndexUpdate::kDivide:
    case IndexUpdate::kPower: {
      // JAX's: x / (the product of the values at each index), x ** (...).
      Array ones = lax::broadcast_in_dim(numpy::scalar(1.0, x.dtype()), x.shape(), {});
      Array prod = lax::scatter_mul(ones, ix.indices, v, dn, s);
      return op == IndexUpdate::kDivide ? numpy::divide(x, prod) : numpy::power(x, prod);
    }
  }
  throw InternalError("internal error in at.update: unknown update");
}

Array take(const Array& a, const Array& indices, std::optional<int64_t> axis,
           const IndexOptions& o) {
  check_defined("take", a);
  Array x = axis ? a : lax::reshape(a, {a.size()});
  const int64_t ax = axis ? *axis : 0;
  if (ax < -x.ndim() || ax >= x.ndim())
    throw ValueError(op_message("take", "axis " + std::to_string(ax) +
                                            " is out of bounds for array of dimension " +
                                            std::to_string(x.ndim())));
  const int64_t a0 = ax < 0 ? ax + x.ndim() : ax;
  std::vector<Index> idx;
  for (int64_t d = 0; d < a0; ++d) idx.push_back(Slice());
  // A rank-0 index takes one element (no axis), as NumPy.
  idx.push_back(indices.ndim() == 0 ? lax::reshape(indices, {1}) : indices);
  IndexOptions opt = o;
  if (!opt.mode) opt.mode = GatherScatterMode::kFillOrDrop;  // jnp.take's default "fill"
  Array r = gather_with(x, make_indexer("take", x, idx, false), opt);
  if (indices.ndim() == 0) r = lax::squeeze(r, {a0});
  return r;
}

Array take_along_axis(const Array& arr, const Array& indices, std::optional<int64_t> axis,
                      const IndexOptions& o) {
  check_defined("take_along_axis", arr);
  check_defined("take_along_axis", indices);
  Array x = axis ? arr : lax::reshape(arr, {arr.size()});
  Array ind = axis ? indices : lax::reshape(indices, {indices.size()});
  if (ind.ndim() != x.ndim())
    throw ValueError(op_message("take_along_axis",
                                "indices and arr must have the same number of dimensions; got " +
                                    ind.aval().str() + " and " + x.aval().str()));
  const int64_t nd = x.ndim();
  const int64_t ax0 = axis ? *axis : 0;
  if (ax0 < -nd || ax0 >= nd)
    throw ValueError(op_message("take_along_axis", "axis " + std::to_string(ax0) +
                                                       " is out of bounds for array of dimension " +
                                                       std::to_string(nd)));
  const int64_t ax = ax0 < 0 ? ax0 + nd : ax0;
  // Every other dim indexed by a broadcasting iota: x[i0, ..., ind, ..., in].
  Shape xa = x.shape(), ia = ind.shape();
  xa[ax] = ia[ax] = 1;  // every dim but the axis broadcasts
  Shape bs = broadcast_shapes(xa, ia, "take_along_axis");
  bs[ax] = ind.shape()[ax];
  std::vector<Index> idx;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == ax) {
      idx.push_back(numpy::broadcast_to(ind, bs));
    } else {
      Shape s(static_cast<size_t>(nd), 1);
      s[d] = bs[d];
      idx.push_back(lax::reshape(lax::iota(DType::kInt32, bs[d]), s));
    }
  }
  IndexOptions opt = o;
  if (!opt.mode) opt.mode = GatherScatterMode::kFillOrDrop;
  Shape xs = x.shape();
  for (int64_t d = 0; d < nd; ++d)
    if (d != ax && xs[d] == 1 && bs[d] != 1) {
      xs[d] = bs[d];
    }
  Array xb = xs == x.shape() ? x : numpy::broadcast_to(x, xs);
  return gather_with(xb, make_indexer("take_along_axis", xb, idx, false), opt);
}

}  // namespace tessera::numpy
