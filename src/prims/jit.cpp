// `jit` (jit.h): registration, abstract eval, the eager impl on cached executables, and the
// rules, each of which binds `jit` again on a body transformed by the jaxpr-transformation layer
// (trace/jaxpr_transforms.h): JVP (jvp_jaxpr), linearize (linearize_jaxpr: the known part and the
// linear part are each one jit equation), transpose (transpose_jaxpr), batching (batch_jaxpr),
// DCE (unused outputs, and unused operands unless keep_unused), effects (the body's).
#include "prims/jit.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include "compiler/executable.h"
#include "ir/print_rules.h"
#include "prims/call_rules.h"
#include "tessera/errors.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::prims {

Primitive jit_p("jit", /*multiple_results=*/true);

namespace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

std::atomic<int64_t> g_compiles{0};

const Jaxpr& body_of(const Params& params) { return *params.get<JaxprPtr>("jaxpr"); }

// One executable per interned body (interning makes pointer identity structural identity); the
// map keeps the bodies alive.
std::shared_ptr<const compiler::Executable> executable_for(const JaxprPtr& body) {
  static std::mutex mu;
  static std::unordered_map<const Jaxpr*,
                            std::pair<JaxprPtr, std::shared_ptr<const compiler::Executable>>>
      cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(body.get());
    if (it != cache.end()) return it->second.second;
  }
  std::shared_ptr<const compiler::Executable> exe = compiler::compile(*body);
  g_compiles.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(body.get(), std::make_pair(body, exe)).first->second.second;
}

std::string derived_name(const char* what, const Params& params) {
  return std::string(what) + "(" + params.get<std::string>("name") + ")";
}

JitCallOptions derived(const Params& params, const char* what) {
  JitCallOptions o = jit_options_of(params);
  o.name = derived_name(what, params);
  o.donated.clear();  // a transformed call's operands are new values
  return o;
}

std::vector<Aval> jit_abstract_eval(std::span<const Aval> in, const Params& params) {
  const Jaxpr& j = body_of(params);
  check_call_operands("jit", "the jaxpr of ", params.get<std::string>("name"), j, in);
  if (params.has("donated_invars") &&
      params.get<std::vector<int64_t>>("donated_invars").size() != in.size())
    throw TypeError(op_message(
        "jit", "donated_invars needs one flag per operand (" + std::to_string(in.size()) + ")"));
  return trace::out_avals(j);
}

// Binds jit on a transformed body, named what(f).
Rebind rebind(const Params& params, const char* what) {
  JitCallOptions o = derived(params, what);
  return
      [o](JaxprPtr body, std::span<const Array> ops) { return bind_jit(std::move(body), ops, o); };
}

std::vector<Array> jit_impl(const ExecContext& ctx, std::span<const Array> args,
                            const Params& params, std::span<const Aval>) {
  return executable_for(params.get<JaxprPtr>("jaxpr"))->execute(ctx, args);
}

std::pair<std::vector<Array>, std::vector<Array>> jit_jvp(std::span<const Array> primals,
                                                          std::span<const Array> tangents,
                                                          const Params& params) {
  return call_jvp(body_of(params), primals, tangents, rebind(params, "jvp"));
}

std::pair<std::vector<Array>, std::vector<Array>> jit_linearize(std::span<const Array> primals,
                                                                std::span<const Array> tangents,
                                                                const Params& params) {
  const Jaxpr& body = body_of(params);
  const size_t m = body.outvars.size();
  std::vector<bool> nz = trace::nonzero_mask(primals, tangents);
  trace::LinearizedJaxpr l = trace::linearize_jaxpr(body, nz, std::vector<bool>(m, false));
  // The known part runs on primals now (one jit call); the linear part, which reads the
  // residuals and the tangents, is staged as another.
  JitCallOptions ko = jit_options_of(params);
  ko.donated.clear();
  std::vector<Array> kout = bind_jit(l.known, trace::concat({l.known_consts, primals}), ko);
  std::vector<Array> outs(kout.begin(), kout.begin() + static_cast<std::ptrdiff_t>(m));
  std::vector<Array> tan_outs(m);
  if (!l.lin->outvars.empty()) {
    std::vector<Array> ops = l.lin_consts;
    ops.insert(ops.end(), kout.begin() + static_cast<std::ptrdiff_t>(m), kout.end());
    for (size_t i = 0; i < tangents.size(); ++i)
      if (nz[i]) ops.push_back(tangents[i]);
    std::vector<Array> t = bind_jit(l.lin, ops, derived(params, "lin"));
    size_t k = 0;
    for (size_t i = 0; i < m; ++i)
      if (l.out_nonzero[i]) tan_outs[i] = t[k++];
  }
  return {std::move(outs), std::move(tan_outs)};
}

std::vector<Array> jit_transpose(std::span<const Array> cts, std::span<const Array> args,
                                 std::span<const Aval>, const Params& params) {
  return call_transpose(body_of(params), cts, args, rebind(params, "transpose"));
}

std::pair<std::vector<Array>, std::vector<int64_t>> jit_batch(const BatchAxis&,
                                                              std::span<const Array> args,
                                                              std::span<const int64_t> dims,
                                                              const Params& params) {
  return call_batch(body_of(params), args, dims, rebind(params, "vmap"));
}

// JAX's dce rule of jit: unused outputs go, and the operands the pruned body no longer reads
// (unless keep_unused); the donation flags follow their operands.
std::pair<std::vector<bool>, std::optional<JaxprEqn>> jit_dce(const std::vector<bool>& used,
                                                              const JaxprEqn& eqn) {
  const JitCallOptions o = jit_options_of(eqn.params);
  return call_dce(used, eqn, o.keep_unused, [&o](JaxprPtr body, const std::vector<bool>& used_in) {
    JitCallOptions no = o;
    no.donated.clear();
    if (!o.donated.empty())
      for (size_t i = 0; i < used_in.size(); ++i)
        if (used_in[i]) no.donated.push_back(o.donated[i]);
    return jit_params(std::move(body), no);
  });
}

}  // namespace

Params jit_params(std::shared_ptr<const Jaxpr> jaxpr, const JitCallOptions& o) {
  Params p{{"jaxpr", std::move(jaxpr)}, {"name", o.name}};
  if (std::find(o.donated.begin(), o.donated.end(), true) != o.donated.end()) {
    std::vector<int64_t> flags(o.donated.begin(), o.donated.end());
    p.set("donated_invars", std::move(flags));
  }
  if (o.inline_call) p.set("inline", true);
  if (o.keep_unused) p.set("keep_unused", true);
  return p;
}

JitCallOptions jit_options_of(const Params& params) {
  JitCallOptions o;
  o.name = params.get<std::string>("name");
  if (params.has("donated_invars"))
    for (int64_t f : params.get<std::vector<int64_t>>("donated_invars"))
      o.donated.push_back(f != 0);
  o.inline_call = params.has("inline") && params.get_bool("inline");
  o.keep_unused = params.has("keep_unused") && params.get_bool("keep_unused");
  return o;
}

std::vector<Array> bind_jit(std::shared_ptr<const Jaxpr> body, std::span<const Array> operands,
                            const JitCallOptions& options) {
  return tessera::bind(jit_p, operands, jit_params(std::move(body), options));
}

int64_t jit_compile_count() { return g_compiles.load(); }

void register_jit() {
  Primitive& p = jit_p;
  p.kind = PrimitiveKind::kControlFlow;
  p.signature = Signature::at_least(0, {{"jaxpr", ParamKind::kJaxpr},
                                        {"name", ParamKind::kString},
                                        {"donated_invars", ParamKind::kInts, false},
                                        {"inline", ParamKind::kBool, false},
                                        {"keep_unused", ParamKind::kBool, false},
                                        {"in_shardings", ParamKind::kOpaque, false},
                                        {"out_shardings", ParamKind::kOpaque, false},
                                        {"ctx_mesh", ParamKind::kOpaque, false}});
  p.abstract_eval = jit_abstract_eval;
  p.impl = jit_impl;
  p.jvp = jit_jvp;
  p.linearize = jit_linearize;
  p.transpose = jit_transpose;
  p.batch = jit_batch;
  p.dce = jit_dce;
  p.effects = [](const Params& params) { return body_of(params).effects; };
  register_primitive(p);
  compiler::register_call_primitive(p);
  ir::set_param_print_order(p, {"name", "jaxpr"});
}

}  // namespace tessera::prims
