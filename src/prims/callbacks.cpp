// debug_callback, pure_callback and io_callback (callbacks.h): abstract eval from the declared
// results, eager evaluation by calling the host function (with the eval trace current, so that
// a host function may compute with tessera ops), JAX's JVP/transpose/batching rules and the
// effects of each equation.
#include "prims/callbacks.h"

#include <string>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "tessera/control_flow_flat.h"
#include "tessera/errors.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive debug_callback_p("debug_callback", /*multiple_results=*/true);
Primitive pure_callback_p("pure_callback", /*multiple_results=*/true);
Primitive io_callback_p("io_callback", /*multiple_results=*/true);

namespace {

using OpaquePtr = std::shared_ptr<const OpaqueParam>;

const HostCallback& host_of(const Params& params, const char* op) {
  const auto* h = dynamic_cast<const HostCallback*>(params.get<OpaquePtr>("callback").get());
  if (h == nullptr)
    throw TypeError(op_message(op, "param 'callback' is not the object the callback API makes"));
  return *h;
}

const std::vector<Aval>& results_of(const Params& params, const char* op) {
  const auto* r = dynamic_cast<const ResultAvals*>(params.get<OpaquePtr>("result_avals").get());
  if (r == nullptr)
    throw TypeError(
        op_message(op, "param 'result_avals' is not the object the callback API makes"));
  return r->avals;
}

// Runs the host function with the eval trace current (the callback sees concrete values and
// may bind primitives eagerly, whatever trace handed the equation to the eval trace).
std::vector<Array> call_host(const HostCallback& h, std::span<const Array> args) {
  static EvalTrace* eval = new EvalTrace;
  TraceScope scope(eval);
  return h.fn(args);
}

// A Python-style shape: "(3,)", "(2, 3)", "()".
std::string py_shape(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + (s.size() == 1 ? ",)" : ")");
}

// JAX's checks of a callback's results (emit_python_callback): count, then each shape/dtype.
// Returns the results with exactly the declared avals.
std::vector<Array> check_results(const char* op, std::vector<Array> outs,
                                 std::span<const Aval> want) {
  if (outs.size() != want.size())
    throw ValueError(op_message(
        op, "Mismatched number of outputs from callback. Expected: " + std::to_string(want.size()) +
                ", Actual: " + std::to_string(outs.size())));
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || !outs[i].is_concrete())
      throw TypeError(op_message(
          op, "the callback's return value #" + std::to_string(i) + " is not a concrete array"));
    if (outs[i].shape() != want[i].shape)
      throw ValueError(op_message(
          op, "Incorrect output shape for return value #" + std::to_string(i) + ": Expected: " +
                  py_shape(want[i].shape) + ", Actual: " + py_shape(outs[i].shape())));
    if (outs[i].dtype() != want[i].dtype)
      throw TypeError(op_message(op, "Incorrect output dtype for return value #" +
                                         std::to_string(i) +
                                         ": Expected: " + std::string(dtype_name(want[i].dtype)) +
                                         ", Actual: " + std::string(dtype_name(outs[i].dtype()))));
    if (outs[i].weak_type() != want[i].weak_type) outs[i] = Array(want[i], outs[i].buffer());
  }
  return outs;
}

std::vector<Aval> batched_avals(std::span<const Aval> avals, int64_t size) {
  std::vector<Aval> out;
  for (Aval a : avals) {
    a.shape.insert(a.shape.begin(), size);
    out.push_back(std::move(a));
  }
  return out;
}

// Member i of a batched argument (the argument itself when unbatched).
Array member(const Array& x, int64_t dim, int64_t i) {
  return dim == batching::kNotMapped ? x : lax::index_in_dim(x, i, dim, /*keepdims=*/false);
}

// Stacks per-member results (each of aval) along a new leading axis of `size`.
std::vector<Array> stack_results(const std::vector<std::vector<Array>>& per_member,
                                 std::span<const Aval> avals, int64_t size) {
  std::vector<Array> outs;
  for (size_t k = 0; k < avals.size(); ++k) {
    if (size == 0) {
      Aval a = avals[k];
      a.shape.insert(a.shape.begin(), 0);
      outs.push_back(ad::zeros_like_aval(a));
      continue;
    }
    std::vector<Array> parts;
    for (const auto& r : per_member) parts.push_back(lax::expand_dims(r[k], {0}));
    outs.push_back(parts.size() == 1 ? parts[0] : lax::concatenate(parts, 0));
  }
  return outs;
}

// Calls `p` once per batch member, in order, unrolled (debug_callback; sequential_unrolled).
batching::BatchOut batch_sequential(const Primitive& p, std::span<const Array> args,
                                    std::span<const int64_t> dims, const Params& params,
                                    std::span<const Aval> results) {
  int64_t size = batching::batch_size(args, dims);
  std::vector<std::vector<Array>> per_member;
  for (int64_t i = 0; i < size; ++i) {
    std::vector<Array> xs;
    for (size_t k = 0; k < args.size(); ++k) xs.push_back(member(args[k], dims[k], i));
    per_member.push_back(tessera::bind(p, xs, params));
  }
  std::vector<Array> outs = stack_results(per_member, results, size);
  return {std::move(outs), std::vector<int64_t>(outs.size(), 0)};
}

// JAX's lax.map over the batched arguments (vmap_method sequential; io_callback): a scan whose
// body binds `p` on one member, so one call per member, in order, and a staged loop.
batching::BatchOut batch_mapped(const Primitive& p, std::span<const Array> args,
                                std::span<const int64_t> dims, const Params& params) {
  std::vector<Array> fixed(args.size()), mapped;
  std::vector<bool> is_mapped;
  for (size_t k = 0; k < args.size(); ++k) {
    is_mapped.push_back(dims[k] != batching::kNotMapped);
    if (is_mapped.back())
      mapped.push_back(batching::move_axis(args[k], dims[k], 0));
    else
      fixed[k] = args[k];
  }
  flat::Fun body = [&p, &params, &fixed, &is_mapped](std::span<const Array> xs) {
    std::vector<Array> merged = fixed;
    size_t j = 0;
    for (size_t k = 0; k < merged.size(); ++k)
      if (is_mapped[k]) merged[k] = xs[j++];
    return tessera::bind(p, merged, params);
  };
  std::vector<Array> outs = flat::map(body, mapped);
  return {std::move(outs), std::vector<int64_t>(outs.size(), 0)};
}

// ---- debug_callback ----

// A host function's results (made wherever it made them, usually uncommitted on the default
// device) placed on the callback's device.
std::vector<Array> on_device(const ExecContext& ctx, std::vector<Array> outs) {
  for (Array& o : outs)
    if (o.is_concrete() && o.device() != ctx.device) o = device_put(o, ctx.device);
  return outs;
}

void define_debug_callback() {
  Primitive& p = debug_callback_p;
  p.abstract_eval = [](std::span<const Aval>, const Params&) { return std::vector<Aval>{}; };
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params& params,
              std::span<const Aval>) {
    call_host(host_of(params, "debug_callback"), args);
    return std::vector<Array>{};
  };
  p.effects = [](const Params& params) {
    return std::vector<Effect>{params.get<std::string>("effect") == kOrderedDebugEffect.name
                                   ? kOrderedDebugEffect
                                   : kDebugEffect};
  };
  // Binds on the primals only: the callback runs once and sees primal values. Under linearize
  // the bind touches no tangent, so it runs in the forward pass.
  p.jvp = [](std::span<const Array> primals, std::span<const Array>, const Params& params) {
    tessera::bind(debug_callback_p, primals, params);
    return ad::JvpOut{};
  };
  p.transpose = [](std::span<const Array>, std::span<const Array>, std::span<const Aval>,
                   const Params&) -> std::vector<Array> {
    throw ValueError("Transpose doesn't support debugging callbacks.");
  };
  // One call per batch member, in order (JAX unrolls it the same way).
  p.batch = [](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
               const Params& params) {
    return batch_sequential(debug_callback_p, args, dims, params, {});
  };
  register_primitive(p);
}

// ---- pure_callback ----

batching::BatchOut batch_pure_callback(const BatchAxis&, std::span<const Array> args,
                                       std::span<const int64_t> dims, const Params& params) {
  const std::vector<Aval>& results = results_of(params, "pure_callback");
  VmapMethod method = parse_vmap_method(params.get<std::string>("vmap_method"));
  int64_t size = batching::batch_size(args, dims);
  switch (method) {
    case VmapMethod::kSequential:
      return batch_mapped(pure_callback_p, args, dims, params);
    case VmapMethod::kSequentialUnrolled:
      return batch_sequential(pure_callback_p, args, dims, params, results);
    case VmapMethod::kExpandDims:
    case VmapMethod::kBroadcastAll:
    case VmapMethod::kLegacyVectorized: {
      std::vector<Array> xs;
      for (size_t k = 0; k < args.size(); ++k) {
        if (dims[k] != batching::kNotMapped)
          xs.push_back(batching::move_axis(args[k], dims[k], 0));
        else if (method == VmapMethod::kLegacyVectorized)
          xs.push_back(args[k]);
        else
          xs.push_back(
              lax::broadcast(args[k], {method == VmapMethod::kBroadcastAll ? size : int64_t{1}}));
      }
      const auto& h = host_of(params, "pure_callback");
      Params p = pure_callback_params(h.fn, h.name, batched_avals(results, size), method);
      std::vector<Array> outs = tessera::bind(pure_callback_p, xs, p);
      return {std::move(outs), std::vector<int64_t>(results.size(), 0)};
    }
    case VmapMethod::kUnspecified:
      break;
  }
  throw NotImplementedError(
      "vmap is only supported for the pure_callback primitive when vmap_method is one of "
      "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
      "'legacy_vectorized'. Got vmap_method=None.");
}

void define_pure_callback() {
  Primitive& p = pure_callback_p;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    return results_of(params, "pure_callback");
  };
  p.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params& params,
              std::span<const Aval> out) {
    return on_device(ctx, check_results("pure_callback",
                                        call_host(host_of(params, "pure_callback"), args), out));
  };
  p.jvp = [](std::span<const Array>, std::span<const Array>, const Params&) -> ad::JvpOut {
    throw ValueError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while "
        "taking gradients.");
  };
  p.transpose = [](std::span<const Array>, std::span<const Array>, std::span<const Aval>,
                   const Params&) -> std::vector<Array> {
    throw ValueError(
        "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use callbacks "
        "while taking gradients.");
  };
  p.batch = batch_pure_callback;
  register_primitive(p);
}

// ---- io_callback ----

void define_io_callback() {
  Primitive& p = io_callback_p;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    return results_of(params, "io_callback");
  };
  p.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params& params,
              std::span<const Aval> out) {
    return on_device(
        ctx, check_results("io_callback", call_host(host_of(params, "io_callback"), args), out));
  };
  p.effects = [](const Params& params) {
    return std::vector<Effect>{params.get_bool("ordered") ? kOrderedIOEffect : kIOEffect};
  };
  p.jvp = [](std::span<const Array>, std::span<const Array>, const Params&) -> ad::JvpOut {
    throw ValueError("IO callbacks do not support JVP.");
  };
  p.transpose = [](std::span<const Array>, std::span<const Array>, std::span<const Aval>,
                   const Params&) -> std::vector<Array> {
    throw ValueError("IO callbacks do not support transpose.");
  };
  p.batch = [](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
               const Params& params) {
    if (params.get_bool("ordered")) throw ValueError("Cannot `vmap` ordered IO callback.");
    return batch_mapped(io_callback_p, args, dims, params);
  };
  register_primitive(p);
}

OpaquePtr host_param(HostFun fn, std::string name) {
  auto h = std::make_shared<HostCallback>();
  h->fn = std::move(fn);
  h->name = std::move(name);
  return h;
}

OpaquePtr results_param(std::vector<Aval> avals) {
  auto r = std::make_shared<ResultAvals>();
  for (Aval& a : avals) a.weak_type = false;
  r->avals = std::move(avals);
  return r;
}

}  // namespace

std::string ResultAvals::str() const {
  std::string s = "(";
  for (size_t i = 0; i < avals.size(); ++i) {
    if (i) s += ", ";
    s += "ShapedArray(";
    s += dtype_name(avals[i].dtype);
    s += "[";
    for (size_t d = 0; d < avals[i].shape.size(); ++d) {
      if (d) s += ",";
      s += std::to_string(avals[i].shape[d]);
    }
    s += "])";
  }
  return s + (avals.size() == 1 ? ",)" : ")");
}

Params debug_callback_params(HostFun fn, std::string name, bool ordered) {
  return Params{
      {"callback", host_param(std::move(fn), std::move(name))},
      {"effect", (ordered ? kOrderedDebugEffect : kDebugEffect).name},
  };
}

Params pure_callback_params(HostFun fn, std::string name, std::vector<Aval> result_avals,
                            VmapMethod method) {
  return Params{
      {"callback", host_param(std::move(fn), std::move(name))},
      {"result_avals", results_param(std::move(result_avals))},
      {"sharding", std::string("None")},
      {"vmap_method", std::string(vmap_method_name(method))},
  };
}

Params io_callback_params(HostFun fn, std::string name, std::vector<Aval> result_avals,
                          bool ordered) {
  return Params{
      {"callback", host_param(std::move(fn), std::move(name))},
      {"ordered", ordered},
      {"result_avals", results_param(std::move(result_avals))},
      {"sharding", std::string("None")},
  };
}

void register_callbacks() {
  for (Primitive* p : {&debug_callback_p, &pure_callback_p, &io_callback_p})
    p->kind = PrimitiveKind::kEffectful;
  // Any number of operands passed to the host function; sharding is carried for printing only.
  debug_callback_p.signature =
      Signature::at_least(0, {{"callback", ParamKind::kOpaque}, {"effect", ParamKind::kString}});
  pure_callback_p.signature = Signature::at_least(0, {{"callback", ParamKind::kOpaque},
                                                      {"result_avals", ParamKind::kOpaque},
                                                      {"sharding", ParamKind::kString, false},
                                                      {"vmap_method", ParamKind::kString}});
  io_callback_p.signature = Signature::at_least(0, {{"callback", ParamKind::kOpaque},
                                                    {"ordered", ParamKind::kBool},
                                                    {"result_avals", ParamKind::kOpaque},
                                                    {"sharding", ParamKind::kString, false}});
  define_debug_callback();
  define_pure_callback();
  define_io_callback();
}

}  // namespace tessera::prims
