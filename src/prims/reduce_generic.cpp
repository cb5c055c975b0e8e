// The generic `reduce` primitive (lax.reduce_p): reduce(*operands, *init_values, *consts)
// {computation, dimensions}, multiple results. `computation` is a jaxpr traced on rank-0
// values: (accumulators..., values...) -> accumulators..., one per operand, associative. The
// values it closes over that are not scalar literals are its constvars; their values travel as
// the trailing operands (so traced values may be closed over, and every rule sees them).
//
// All rules share one composite: the operands as rows [n, M], the body applied to whole slices
// (vmapped over the flattened rows) pairwise, in order (reduce_tree.h), then the init values
// folded in once, on the left. The eager kernel runs it at the eval trace (about 2 log2(n) body
// evaluations on slices), the JVP rule is its jvp (JAX's _reduce_jvp: the body's jvp through
// the same tree), and vmap binds `reduce` again with shifted dimensions, or maps the composite
// when init values or constants are batched.
#include <algorithm>
#include <set>
#include <string>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/prims.h"
#include "prims/reduce_tree.h"
#include "tessera/jaxpr.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

Primitive reduce("reduce", true);

namespace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

const Jaxpr& body_of(const Params& p) {
  const JaxprPtr& j = p.get<JaxprPtr>("computation");
  if (!j) throw_internal("prims/reduce", "reduce has a null computation");
  return *j;
}

// Number of reduced operands: the args are n operands, n init values and the body's consts.
int64_t num_operands(const Jaxpr& body, size_t nargs) {
  const size_t k = body.constvars.size();
  if (nargs < k + 2 || (nargs - k) % 2 != 0)
    throw TypeError(op_message(
        "reduce",
        "expects operands and init values in equal numbers (at least one of each) "
        "followed by the computation's " +
            std::to_string(k) + " constants, got " + std::to_string(nargs) + " arguments"));
  return static_cast<int64_t>((nargs - k) / 2);
}

std::string avals_str(std::span<const Aval> avs) {
  std::string s;
  for (const Aval& a : avs) s += (s.empty() ? "" : ", ") + a.str();
  return "(" + s + ")";
}

Shape out_shape(const Shape& in, const std::vector<int64_t>& dims) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(in[d]);
  return out;
}

std::vector<Aval> reduce_abstract(std::span<const Aval> in, const Params& p) {
  const Jaxpr& body = body_of(p);
  const auto& dims = p.get_ints("dimensions");
  const int64_t n = num_operands(body, in.size());
  const auto ops = in.subspan(0, n), inits = in.subspan(n, n), consts = in.subspan(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    if (is_extended(ops[i].dtype))
      throw TypeError(op_message(
          "reduce", "does not accept operands of dtype " + std::string(dtype_name(ops[i].dtype))));
    if (ops[i].shape != ops[0].shape)
      throw ValueError(op_message(
          "reduce", "reduce operands must have the same shape, got " + avals_str(ops) + "."));
    if (inits[i].ndim() != 0)
      throw ValueError(op_message("reduce", "reduce found non-scalar initial value: " +
                                                avals_str(inits) + "; init values are rank 0."));
    if (inits[i].dtype != ops[i].dtype)
      throw TypeError(
          op_message("reduce",
                     "operand dtypes should match corresponding initial value dtypes, got "
                     "operands=" +
                         avals_str(ops) + " and initial_values=" + avals_str(inits) + "."));
  }
  std::set<int64_t> seen(dims.begin(), dims.end());
  if (seen.size() != dims.size())
    throw ValueError(op_message(
        "reduce", "duplicate value in 'dimensions' of reduction: " + shape_str(dims) + "."));
  for (int64_t d : dims)
    if (d < 0 || d >= ops[0].ndim())
      throw IndexError(op_message("reduce", "reduction dimensions " + shape_str(dims) +
                                                " contain out-of-bounds indices for " +
                                                ops[0].str() + "; they must be in [0, " +
                                                std::to_string(ops[0].ndim()) + ")."));
  // The body: (accumulators, values) of the operands' dtypes -> accumulators.
  bool ok = body.invars.size() == static_cast<size_t>(2 * n) &&
            body.outvars.size() == static_cast<size_t>(n);
  for (int64_t i = 0; ok && i < n; ++i) {
    const Aval& a = body.invars[i].aval();
    const Aval& b = body.invars[n + i].aval();
    const Aval& o = atom_aval(body.outvars[i]);
    ok = a.ndim() == 0 && b.ndim() == 0 && o.ndim() == 0 && a.dtype == ops[i].dtype &&
         b.dtype == ops[i].dtype && o.dtype == ops[i].dtype;
  }
  if (!ok) {
    std::vector<Aval> bin, bout;
    for (const Var& v : body.invars) bin.push_back(v.aval());
    for (const Atom& a : body.outvars) bout.push_back(atom_aval(a));
    throw TypeError(
        op_message("reduce",
                   "the computation must map (accumulators, values), rank-0 values of the "
                   "operands' dtypes " +
                       avals_str(ops) + ", to accumulators of the same types; it takes " +
                       avals_str(bin) + " and returns " + avals_str(bout) + "."));
  }
  for (size_t c = 0; c < consts.size(); ++c)
    if (!(consts[c].shape == body.constvars[c].aval().shape &&
          consts[c].dtype == body.constvars[c].aval().dtype))
      throw TypeError(op_message(
          "reduce", "constant " + std::to_string(c) + " of the computation is " + consts[c].str() +
                        " but the computation expects " + body.constvars[c].aval().str() + "."));
  std::vector<Aval> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(Aval{out_shape(ops[i].shape, dims), ops[i].dtype, ops[i].weak_type});
  return out;
}

// The body applied elementwise to whole slices: lhs[i], rhs[i] are [k, M]; flattened and
// vmapped once.
reduce_tree::Combine body_combine(const Jaxpr& body, std::vector<Array> consts) {
  return [&body, consts = std::move(consts)](const std::vector<Array>& lhs,
                                             const std::vector<Array>& rhs) {
    const Shape shape = lhs[0].shape();
    const int64_t size = shape[0] * shape[1];
    std::vector<Array> args;
    for (const Array& a : lhs) args.push_back(lax::reshape(a, {size}));
    for (const Array& a : rhs) args.push_back(lax::reshape(a, {size}));
    std::vector<Array> outs =
        trace::batch_fun([&](std::span<const Array> xs) { return eval_jaxpr(body, consts, xs); },
                         args, std::vector<int64_t>(args.size(), 0), size);
    for (Array& o : outs) o = lax::reshape(o, shape);
    return outs;
  };
}

// The reduction as lax ops. args: n operands, n init values, the body's consts.
std::vector<Array> reduce_composite(const Jaxpr& body, std::span<const Array> args,
                                    const std::vector<int64_t>& dims) {
  const int64_t n = num_operands(body, args.size());
  const auto ops = args.subspan(0, n), inits = args.subspan(n, n);
  std::vector<Array> consts(args.begin() + 2 * n, args.end());
  const Shape oshape = out_shape(ops[0].shape(), dims);
  int64_t rows = 1, cols = 1;
  for (int64_t d : dims) rows *= ops[0].shape()[d];
  for (int64_t s : oshape) cols *= s;
  std::vector<Array> outs;
  if (rows == 0 || cols == 0) {  // nothing to combine: the init values
    for (int64_t i = 0; i < n; ++i) outs.push_back(lax::broadcast_in_dim(inits[i], oshape, {}));
    return outs;
  }
  const reduce_tree::Combine f = body_combine(body, std::move(consts));
  std::vector<Array> xs, acc;
  for (int64_t i = 0; i < n; ++i) {
    xs.push_back(reduce_tree::to_rows(ops[i], dims));
    acc.push_back(lax::broadcast_in_dim(inits[i], {1, cols}, {}));
  }
  std::vector<Array> r = f(acc, reduce_tree::reduce_rows(std::move(xs), f));
  for (Array& o : r) outs.push_back(lax::reshape(o, oshape));
  return outs;
}

std::vector<Array> reduce_impl(const ExecContext&, std::span<const Array> args, const Params& p,
                               std::span<const Aval> out_avals) {
  Trace* bottom = current_trace();
  while (bottom->parent() != nullptr) bottom = bottom->parent();
  TraceScope scope(bottom);
  std::vector<Array> outs = reduce_composite(body_of(p), args, p.get_ints("dimensions"));
  for (size_t i = 0; i < outs.size(); ++i)  // the declared types (weak flags)
    if (!(outs[i].aval() == out_avals[i])) outs[i] = Array(out_avals[i], outs[i].buffer());
  return outs;
}

// JAX's _reduce_jvp: the jvp of the composite, i.e. the body's jvp through the same tree. (JAX
// requires zero tangents for the init values; here they are folded in like the primals.)
std::pair<std::vector<Array>, std::vector<Array>> reduce_jvp(std::span<const Array> primals,
                                                             std::span<const Array> tangents,
                                                             const Params& p) {
  const Jaxpr& body = body_of(p);
  const auto& dims = p.get_ints("dimensions");
  auto [outs, touts] =
      trace::jvp_fun([&](std::span<const Array> xs) { return reduce_composite(body, xs, dims); },
                     primals, tangents);
  for (size_t i = 0; i < outs.size(); ++i)
    if (!ad::has_tangent(outs[i].dtype())) touts[i] = Array();
  return {std::move(outs), std::move(touts)};
}

batching::BatchOut reduce_batch(const BatchAxis&, std::span<const Array> args,
                                std::span<const int64_t> bdims, const Params& p) {
  const Jaxpr& body = body_of(p);
  const auto& dims = p.get_ints("dimensions");
  const int64_t n = num_operands(body, args.size());
  const bool others = std::any_of(bdims.begin() + n, bdims.end(),
                                  [](int64_t d) { return d != batching::kNotMapped; });
  if (others) {
    // Batched init values or constants: map the composite (the batched init values are
    // broadcast over the kept dims and folded in by the body).
    std::vector<Array> outs = trace::batch_fun(
        [&](std::span<const Array> xs) { return reduce_composite(body, xs, dims); }, args, bdims,
        batching::batch_size(args, bdims));
    return {outs, std::vector<int64_t>(outs.size(), 0)};
  }
  // Only operands batched: all get the batch axis where the first batched one has it.
  const int64_t size = batching::batch_size(args, bdims);
  int64_t b = 0;
  for (int64_t i = 0; i < n; ++i)
    if (bdims[i] != batching::kNotMapped) {
      b = bdims[i];
      break;
    }
  std::vector<Array> xs(args.begin(), args.end());
  for (int64_t i = 0; i < n; ++i) xs[i] = batching::batch_at(args[i], bdims[i], size, b);
  int64_t before = 0;
  for (int64_t d : dims) before += d < b ? 1 : 0;
  Params np = p;
  np.set("dimensions", batching::shift_dims(dims, b));
  std::vector<Array> outs = tessera::bind(reduce, xs, np);
  return {outs, std::vector<int64_t>(outs.size(), b - before)};
}

}  // namespace

void register_reduce_generic() {
  reduce.kind = PrimitiveKind::kReduction;
  // n operands then n init values; the abstract-eval rule checks that the count is even.
  reduce.signature = Signature::at_least(
      2, {{"computation", ParamKind::kJaxpr}, {"dimensions", ParamKind::kInts}});
  reduce.abstract_eval = reduce_abstract;
  reduce.impl = reduce_impl;
  reduce.jvp = reduce_jvp;
  reduce.batch = reduce_batch;
  register_primitive(reduce);
}

}  // namespace tessera::prims
