// value_and_grad, jacfwd and jacrev over flat argument lists.
#include <string>

#include "prims/ad_util.h"
#include "tessera/lax.h"
#include "tessera/transforms_flat.h"

namespace tessera::flat {

namespace {

void check_float_inputs(std::string_view op, std::span<const Array> args, bool allow_int) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined())
      throw ValueError(op_message(op, "argument leaf " + std::to_string(i) +
                                          " is an empty Array handle (default-constructed)"));
    if (prims::ad::has_tangent(args[i].dtype()) || allow_int) continue;
    throw TypeError(op_message(
        op, std::string(op) +
                " requires real-valued inputs (input dtype that is a sub-dtype of "
                "floating), but got " +
                std::string(dtype_name(args[i].dtype())) + " (argument leaf " + std::to_string(i) +
                ", " + args[i].aval().str() +
                "). If you want to use Boolean- or integer-valued inputs, use vjp or set "
                "allow_int"));
  }
}

// x + v (x itself when v is 0, so that staged programs show no needless add).
Array add_int(const Array& x, int64_t v) {
  if (v == 0) return x;
  return lax::add(x, prims::ad::scalar_const(static_cast<double>(v), DType::kInt32));
}

// Rows [off, off + size) of x (shape (n, ...)), exactly (a select and a sum of zeros, so inf
// and NaN entries stay where they are). lax.slice arrives with the full primitive set; this
// costs n * size * rest, small next to the n evaluations that made x.
Array take_rows(const Array& x, int64_t off, int64_t size) {
  int64_t n = x.shape()[0];
  if (off == 0 && size == n) return x;
  Shape rest(x.shape().begin() + 1, x.shape().end());
  int64_t r = 1;
  for (int64_t v : rest) r *= v;
  Array x2 = lax::reshape(x, Shape{n, 1, r});
  Array rows = lax::broadcasted_iota(DType::kInt32, {n, size, 1}, 0);
  Array cols = add_int(lax::broadcasted_iota(DType::kInt32, {n, size, 1}, 1), off);
  Array hit = lax::broadcast_in_dim(lax::eq(rows, cols), {n, size, r}, {0, 1, 2});
  Array xb = lax::broadcast_in_dim(x2, {n, size, r}, {0, 1, 2});
  Array zero = lax::broadcast(prims::ad::scalar_const(0.0, x.dtype()), {n, size, r});
  Array picked = lax::reduce_sum(lax::select_n(hit, {zero, xb}), {0});
  Shape s{size};
  s.insert(s.end(), rest.begin(), rest.end());
  return lax::reshape(picked, s);
}

// One (n, *shape_j) block of the identity per leaf j: the basis vectors of leaf j's entries.
std::vector<Array> basis_blocks(int64_t n, std::span<const Aval> avals) {
  std::vector<Array> out;
  int64_t off = 0;
  for (const Aval& a : avals) {
    Array rows = lax::broadcasted_iota(DType::kInt32, {n, a.size()}, 0);
    Array cols = add_int(lax::broadcasted_iota(DType::kInt32, {n, a.size()}, 1), off);
    Shape s{n};
    s.insert(s.end(), a.shape.begin(), a.shape.end());
    out.push_back(lax::reshape(lax::convert_element_type(lax::eq(rows, cols), a.dtype), s));
    off += a.size();
  }
  return out;
}

// (k, *a) -> (*a, *b) where the k axis is b flattened: moves the leading axis to the back.
Array lead_to_back(const Array& x, const Shape& a, const Shape& b) {
  std::vector<int64_t> perm;
  for (int64_t i = 1; i < x.ndim(); ++i) perm.push_back(i);
  perm.push_back(0);
  Array t = x.ndim() > 1 ? lax::transpose(x, perm) : x;
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return lax::reshape(t, s);
}

DType common_float(std::span<const Aval> avals, std::string_view op) {
  DType d = DType::kFloat32;
  bool first = true;
  for (const Aval& a : avals) {
    if (!prims::ad::has_tangent(a.dtype))
      throw TypeError(op_message(op, std::string(op) +
                                         " requires real-valued inputs and "
                                         "outputs (floating dtypes), got " +
                                         a.str()));
    if (first)
      d = a.dtype, first = false;
    else if (d != a.dtype)
      d = promote_types(d, a.dtype);
  }
  return d;
}

}  // namespace

ValueAndGrad value_and_grad(const Fun& f, std::span<const Array> args, bool allow_int,
                            std::string_view op) {
  check_float_inputs(op, args, allow_int);
  Linearized lin = linearize(f, args);
  const std::vector<Array>& outs = lin.outs();
  if (outs.empty())
    throw TypeError(op_message(
        op, "the function returned no outputs; " + std::string(op) + " needs a scalar loss"));
  const Array& loss = outs[0];
  if (loss.ndim() != 0)
    throw TypeError(op_message(op,
                               "gradient only defined for scalar-output functions. Output "
                               "had shape: " +
                                   shape_str(loss.shape()) +
                                   "; reduce it (e.g. sum or mean) or use vjp/jacrev"));
  if (!prims::ad::has_tangent(loss.dtype()))
    throw TypeError(op_message(op, std::string(op) +
                                       " requires real-valued outputs (output "
                                       "dtype that is a sub-dtype of floating), "
                                       "but got " +
                                       std::string(dtype_name(loss.dtype()))));
  std::vector<Array> cts(outs.size());
  cts[0] = prims::ad::scalar_const(1.0, loss.dtype());
  // full_like(loss, 1): weakly typed when the loss is (a function of Python/C++ scalars).
  if (loss.weak_type()) cts[0] = Array(Aval{{}, loss.dtype(), true}, cts[0].buffer());
  ValueAndGrad r;
  r.grads = lin.vjp(cts);
  r.outs = outs;
  return r;
}

std::vector<Array> jacfwd(const Fun& f, std::span<const Array> args, std::vector<Array>* outs_p,
                          const CountFn& num_aux_fn) {
  std::vector<Aval> in_avals;
  for (const Array& a : args) in_avals.push_back(a.aval());
  common_float(in_avals, "jacfwd");
  int64_t n = 0;
  for (const Aval& a : in_avals) n += a.size();
  std::vector<Array> blocks = basis_blocks(n, in_avals);
  std::vector<Array> primal_outs;
  // vmap over the basis: example k pushes forward the k-th basis vector.
  Fun pushfwd = [&](std::span<const Array> ts) {
    auto [o, t] = jvp(f, args, ts);
    primal_outs = o;  // independent of the tangents: unbatched values of the enclosing trace
    const size_t num_aux = num_aux_fn ? num_aux_fn() : 0;
    if (num_aux > t.size()) throw_internal("jacfwd", "more auxiliary outputs than outputs");
    t.resize(t.size() - num_aux);  // auxiliary outputs are not differentiated
    return t;
  };
  std::vector<std::optional<int64_t>> in_axes(blocks.size(), 0);
  std::vector<Array> jt = vmap(
      pushfwd, blocks, in_axes, [](size_t k) { return std::vector<std::optional<int64_t>>(k, 0); },
      n);
  std::vector<Array> result;
  for (size_t i = 0; i < jt.size(); ++i) {
    Shape out_shape(jt[i].shape().begin() + 1, jt[i].shape().end());
    common_float(std::span<const Aval>(&primal_outs[i].aval(), 1), "jacfwd");
    int64_t off = 0;
    for (const Aval& a : in_avals) {
      result.push_back(lead_to_back(take_rows(jt[i], off, a.size()), out_shape, a.shape));
      off += a.size();
    }
  }
  if (outs_p) *outs_p = primal_outs;
  return result;
}

std::vector<Array> jacrev(const Fun& f, std::span<const Array> args, std::vector<Array>* outs_p,
                          const CountFn& num_aux_fn) {
  std::vector<Aval> in_avals;
  for (const Array& a : args) in_avals.push_back(a.aval());
  common_float(in_avals, "jacrev");
  Linearized lin = linearize(f, args);
  const size_t num_aux = num_aux_fn ? num_aux_fn() : 0;
  if (num_aux > lin.outs().size()) throw_internal("jacrev", "more auxiliary outputs than outputs");
  const size_t n_main = lin.outs().size() - num_aux;
  std::vector<Aval> out_avals;  // of the differentiated outputs
  for (size_t i = 0; i < n_main; ++i) out_avals.push_back(lin.outs()[i].aval());
  common_float(out_avals, "jacrev");
  int64_t m = 0;
  for (const Aval& a : out_avals) m += a.size();
  std::vector<Array> blocks = basis_blocks(m, out_avals);
  Fun pullback = [&](std::span<const Array> cts) {
    std::vector<Array> all(cts.begin(), cts.end());
    all.resize(lin.outs().size());  // auxiliary outputs: zero cotangents
    return lin.vjp(all);
  };
  std::vector<std::optional<int64_t>> in_axes(blocks.size(), 0);
  std::vector<Array> jt = vmap(
      pullback, blocks, in_axes, [](size_t k) { return std::vector<std::optional<int64_t>>(k, 0); },
      m);
  // jt[j]: (m, *in_shape_j); rows of output i -> (*out_shape_i, *in_shape_j).
  std::vector<Array> result;
  int64_t off = 0;
  for (const Aval& oa : out_avals) {
    for (size_t j = 0; j < in_avals.size(); ++j) {
      Array rows = take_rows(jt[j], off, oa.size());
      Shape s = oa.shape;
      s.insert(s.end(), in_avals[j].shape.begin(), in_avals[j].shape.end());
      result.push_back(lax::reshape(rows, s));
    }
    off += oa.size();
  }
  if (outs_p) *outs_p = lin.outs();
  return result;
}

}  // namespace tessera::flat
