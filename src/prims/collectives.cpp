// Collectives over named axes (JAX's psum_p, pmax_p, pmin_p, all_gather_p): psum(x) {axes},
// pmax(x) {axes}, pmin(x) {axes}, all_gather(x) {axis_name, all_gather_dimension, axis_size,
// tiled}. Today a named axis is a vmap's (vmap(f, axis_name='i')); shard_map/pmap over devices
// will bind the same primitives with their own rules for the mesh.
//
// Semantics (JAX's): each member of the named axis contributes its value; psum gives every member
// the sum over the axis, pmax/pmin the max/min, all_gather the members' values stacked (or,
// tiled, concatenated) along all_gather_dimension. A name no enclosing transformation binds is a
// NameError ("unbound axis name") at abstract evaluation.
//
// Batching: under the vmap that binds the name, the batched operand is reduced over its batch
// dim (psum: reduce_sum; pmax/pmin: reduce_max/min; all_gather: the batch dim moved to
// all_gather_dimension) and the result is unbatched — the same for every member. Under any other
// batch trace the collective applies to each member: it is bound again on the batched value and
// keeps the batch dim. Evaluated on a value no batch trace of the axis holds, every member holds
// that same value: psum multiplies by the axis size, pmax/pmin return it, all_gather broadcasts
// it. Several axes (psum(x, ('i', 'j'))) reduce over each in turn.
// JVP: psum and all_gather are linear; pmax/pmin pass the tangent of the selected member (one
// hot at the first maximum, as JAX's argmax-style selection). Transpose: psum's is psum (the sum
// is self-adjoint over the members); all_gather's is the sum over members of the cotangent's
// slice of this member (tessera::lax::psum_scatter).
#include <algorithm>
#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/prims.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_parallel.h"

namespace tessera::prims {

Primitive psum_p("psum"), pmax_p("pmax"), pmin_p("pmin"), all_gather_p("all_gather");

namespace {

using ad::JvpOut;
using batching::BatchOut;
using batching::kNotMapped;

std::vector<std::string> axes_of(const Params& p) {
  std::vector<std::string> names;
  for (const ParamValue& v : p.get<std::shared_ptr<const ParamTuple>>("axes")->items) {
    const std::string* s = std::get_if<std::string>(&v);
    if (s == nullptr)
      throw TypeError(op_message("psum", "axes must be a tuple of axis names (strings), got " +
                                             param_value_str(v)));
    names.push_back(*s);
  }
  return names;
}

Params axes_params(const std::vector<std::string>& names) {
  std::vector<ParamValue> items(names.begin(), names.end());
  return Params{{"axes", make_tuple_param(std::move(items))}};
}

int64_t axis_size_or_throw(const std::string& name, const char* op) {
  const AxisEntry* e = find_axis(name);
  if (e == nullptr) {
    std::string have;
    for (const AxisEntry& a : axis_env()) have += (have.empty() ? "" : ", ") + a.name;
    throw NameError(op_message(
        op, "unbound axis name: " + name +
                ". The axis names bound by enclosing vmap(axis_name=...) / pmap calls are: " +
                (have.empty() ? "(none)" : have) +
                "; call the collective inside a function mapped over that axis"));
  }
  return e->size;
}

std::vector<Aval> reduce_abstract(const char* op, std::span<const Aval> in, const Params& p) {
  for (const std::string& n : axes_of(p)) axis_size_or_throw(n, op);
  if (in[0].dtype == DType::kBool || in[0].dtype == DType::kKeyThreefry)
    throw TypeError(op_message(op, std::string(op) + " does not accept dtype " +
                                       std::string(dtype_name(in[0].dtype)) +
                                       "; use a numeric array"));
  return {in[0]};
}

enum class Red { kSum, kMax, kMin };

// An array of x's shape and dtype filled with v.
Array filled(const Array& x, double v) {
  return lax::broadcast_in_dim(ad::scalar_const(v, x.dtype()), x.shape(), {});
}

Primitive& prim_of(Red r) { return r == Red::kSum ? psum_p : r == Red::kMax ? pmax_p : pmin_p; }

Array bind_red(Red r, const Array& x, const std::vector<std::string>& names) {
  if (names.empty()) return x;
  return tessera::bind(prim_of(r), {x}, axes_params(names))[0];
}

// Every member holds x: the sum is x times the axes' sizes; the max/min is x.
std::vector<Array> reduce_impl(Red r, std::span<const Array> args, const Params& p) {
  if (r != Red::kSum) return {args[0]};
  int64_t n = 1;
  for (const std::string& name : axes_of(p)) n *= axis_size_or_throw(name, "psum");
  const Array& x = args[0];
  Array y = lax::mul(x, filled(x, static_cast<double>(n)));
  if (x.weak_type() && !y.weak_type())  // the sum keeps x's weak type, as abstract eval says
    y = tessera::bind(convert_element_type, {y},
                      Params{{"new_dtype", y.dtype()}, {"weak_type", true}})[0];
  return {y};
}

BatchOut reduce_batch(Red r, const BatchAxis& axis, std::span<const Array> args,
                      std::span<const int64_t> dims, const Params& p) {
  std::vector<std::string> names = axes_of(p);
  auto it = std::find(names.begin(), names.end(), std::string(axis.name));
  if (axis.name.empty() || it == names.end())
    return {{tessera::bind(prim_of(r), args, p)[0]}, {dims[0]}};  // per member
  names.erase(it);
  const Array& x = args[0];
  Array y = r == Red::kSum   ? lax::reduce_sum(x, {dims[0]})
            : r == Red::kMax ? lax::reduce_max(x, {dims[0]})
                             : lax::reduce_min(x, {dims[0]});
  return {{bind_red(r, y, names)}, {kNotMapped}};
}

JvpOut psum_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  Array y = tessera::bind(psum_p, primals, p)[0];
  if (ad::zero_tangent(primals[0], tangents[0])) return {{y}, {Array()}};
  return {{y}, {tessera::bind(psum_p, tangents, p)[0]}};
}

std::vector<Array> psum_transpose(std::span<const Array> cts, std::span<const Array>,
                                  std::span<const Aval> avals, const Params& p) {
  if (!cts[0].defined()) return {Array()};
  return {tessera::bind(psum_p, {ad::instantiate(cts[0], avals[0])}, p)[0]};
}

// pmax/pmin: the tangent of the first member holding the extremum (a one-hot selection by the
// member index, summed over the axis).
JvpOut select_jvp(Red r, std::span<const Array> primals, std::span<const Array> tangents,
                  const Params& p) {
  const Array& x = primals[0];
  Array y = tessera::bind(prim_of(r), primals, p)[0];
  if (ad::zero_tangent(x, tangents[0])) return {{y}, {Array()}};
  const std::vector<std::string> names = axes_of(p);
  if (names.size() != 1)
    throw NotImplementedError(op_message(
        r == Red::kMax ? "pmax" : "pmin",
        "differentiation over several axes at once is not implemented; apply it per axis"));
  // hit: this member holds the extremum; first: no lower-indexed member does.
  Array hit = lax::convert_element_type(lax::eq(x, y), DType::kInt32);
  Array idx = lax::axis_index(names[0]);
  Array big = filled(hit, 2147483647.0);
  Array cand = lax::select_n(lax::ne(hit, filled(hit, 0.0)),
                             {big, lax::broadcast_in_dim(idx, hit.shape(), {})});
  Array first = bind_red(Red::kMin, cand, names);
  Array mine = lax::eq(cand, first);
  Array t = lax::select_n(mine, {filled(tangents[0], 0.0), tangents[0]});
  return {{y}, {bind_red(Red::kSum, t, names)}};
}

// ---- all_gather ----
struct GatherParams {
  std::string name;
  int64_t dim, size;
  bool tiled;
};

GatherParams gather_params(const Params& p) {
  return {p.get<std::string>("axis_name"), p.get_int("all_gather_dimension"),
          p.get_int("axis_size"), p.get_bool("tiled")};
}

Params make_gather_params(const GatherParams& g) {
  return Params{{"all_gather_dimension", g.dim},
                {"axis_name", g.name},
                {"axis_size", g.size},
                {"tiled", g.tiled}};
}

std::vector<Aval> all_gather_abstract(std::span<const Aval> in, const Params& p) {
  const GatherParams g = gather_params(p);
  const int64_t n = axis_size_or_throw(g.name, "all_gather");
  if (n != g.size)
    throw ValueError(op_message("all_gather", "axis_size " + std::to_string(g.size) +
                                                  " is not the size " + std::to_string(n) +
                                                  " of axis " + g.name));
  Shape s = in[0].shape;
  const int64_t r = static_cast<int64_t>(s.size());
  if (g.dim < 0 || g.dim > (g.tiled ? r - 1 : r))
    throw ValueError(op_message("all_gather", "all_gather_dimension " + std::to_string(g.dim) +
                                                  " is out of bounds for an operand of shape " +
                                                  shape_str(s)));
  if (g.tiled)
    s[g.dim] *= n;
  else
    s.insert(s.begin() + g.dim, n);
  return {Aval{s, in[0].dtype, in[0].weak_type}};
}

// x with the members' axis (size n, at axis `at` of x) placed at the gathered dimension.
Array place_members(const Array& x, int64_t at, const GatherParams& g) {
  Array y = batching::move_axis(x, at, g.dim);
  if (!g.tiled) return y;
  Shape s = y.shape();  // [..., n, d, ...] -> [..., n * d, ...]
  s[g.dim] *= s[g.dim + 1];
  s.erase(s.begin() + g.dim + 1);
  return lax::reshape(y, s);
}

std::vector<Array> all_gather_impl(const ExecContext&, std::span<const Array> args, const Params& p,
                                   std::span<const Aval>) {
  const GatherParams g = gather_params(p);
  const Array& x = args[0];
  Shape s = x.shape();
  s.insert(s.begin(), g.size);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.ndim(); ++d) dims.push_back(d + 1);
  return {place_members(lax::broadcast_in_dim(x, s, dims), 0, g)};
}

BatchOut all_gather_batch(const BatchAxis& axis, std::span<const Array> args,
                          std::span<const int64_t> dims, const Params& p) {
  GatherParams g = gather_params(p);
  if (axis.name != g.name) {  // per member: the batch axis first, the gathered dim after it
    Array x = batching::move_axis(args[0], dims[0], 0);
    GatherParams inner = g;
    inner.dim += 1;
    return {{tessera::bind(all_gather_p, {x}, make_gather_params(inner))[0]}, {0}};
  }
  return {{place_members(args[0], dims[0], g)}, {kNotMapped}};
}

JvpOut all_gather_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                      const Params& p) {
  Array y = tessera::bind(all_gather_p, primals, p)[0];
  if (ad::zero_tangent(primals[0], tangents[0])) return {{y}, {Array()}};
  return {{y}, {tessera::bind(all_gather_p, tangents, p)[0]}};
}

std::vector<Array> all_gather_transpose(std::span<const Array> cts, std::span<const Array>,
                                        std::span<const Aval> avals, const Params& p) {
  if (!cts[0].defined()) return {Array()};
  const GatherParams g = gather_params(p);
  (void)avals;
  return {lax::psum_scatter(cts[0], g.name, g.dim, g.tiled)};
}

}  // namespace

void register_collectives() {
  const Signature axes_sig = Signature::fixed(1, {{"axes", ParamKind::kTuple}});
  struct R {
    Primitive* p;
    Red r;
    const char* name;
  };
  for (R x : {R{&psum_p, Red::kSum, "psum"}, R{&pmax_p, Red::kMax, "pmax"},
              R{&pmin_p, Red::kMin, "pmin"}}) {
    Primitive& p = *x.p;
    const Red r = x.r;
    const char* name = x.name;
    p.kind = PrimitiveKind::kCollective;
    p.signature = axes_sig;
    p.abstract_eval = [name](std::span<const Aval> in, const Params& params) {
      return reduce_abstract(name, in, params);
    };
    p.impl = [r](const ExecContext&, std::span<const Array> args, const Params& params,
                 std::span<const Aval>) { return reduce_impl(r, args, params); };
    p.batch = [r](const BatchAxis& axis, std::span<const Array> args, std::span<const int64_t> dims,
                  const Params& params) { return reduce_batch(r, axis, args, dims, params); };
    if (r == Red::kSum) {
      p.jvp = psum_jvp;
      p.transpose = psum_transpose;
    } else {
      p.jvp = [r](std::span<const Array> primals, std::span<const Array> tangents,
                  const Params& params) { return select_jvp(r, primals, tangents, params); };
    }
    register_primitive(p);
  }
  all_gather_p.kind = PrimitiveKind::kCollective;
  all_gather_p.signature = Signature::fixed(1, {{"all_gather_dimension", ParamKind::kInt},
                                                {"axis_name", ParamKind::kString},
                                                {"axis_size", ParamKind::kInt},
                                                {"tiled", ParamKind::kBool}});
  all_gather_p.abstract_eval = all_gather_abstract;
  all_gather_p.impl = all_gather_impl;
  all_gather_p.batch = all_gather_batch;
  all_gather_p.jvp = all_gather_jvp;
  all_gather_p.transpose = all_gather_transpose;
  register_primitive(all_gather_p);
}

}  // namespace tessera::prims
