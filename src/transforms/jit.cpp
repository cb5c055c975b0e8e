// flat::JitCache (tessera/jit.h): the trace cache of a jitted function and its call, which binds
// the `jit` primitive (prims/jit.h) on the staged program.
#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "compiler/executable.h"
#include "core/array_errors.h"
#include "prims/jit.h"
#include "tessera/config.h"
#include "tessera/jit.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::flat {

namespace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

struct Key {
  TreeDef def;
  std::vector<Aval> avals;
  bool x64 = false;
  bool operator==(const Key& o) const {
    if (x64 != o.x64 || avals.size() != o.avals.size() || !(def == o.def)) return false;
    for (size_t i = 0; i < avals.size(); ++i)
      if (avals[i].shape != o.avals[i].shape || avals[i].dtype != o.avals[i].dtype ||
          avals[i].weak_type != o.avals[i].weak_type)
        return false;
    return true;
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = k.def.hash() * 31 + static_cast<size_t>(k.x64);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (const Aval& a : k.avals) {
      mix(static_cast<size_t>(a.dtype) * 2 + static_cast<size_t>(a.weak_type));
      for (int64_t d : a.shape) mix(static_cast<size_t>(d));
      mix(a.shape.size());
    }
    return h;
  }
};

struct Entry {
  JaxprPtr jaxpr;  // const-free: invars = the hoisted constants, then the arguments
  std::vector<Array> consts;
  TreeDef out_def;
  Params params;  // the jit equation's, without donation (built once: calls reuse it)
};

// The default DebugInfo of a jitted call: JitOptions::name and the arguments' key paths.
std::shared_ptr<const DebugInfo> debug_info(const JitOptions& o, const TreeDef& in_def,
                                            const DebugInfoFn& debug) {
  if (debug) return std::make_shared<const DebugInfo>(debug());
  auto d = std::make_shared<DebugInfo>();
  d->traced_for = "jit";
  d->func_src_info = o.name;
  for (const KeyPath& p : tree_leaf_paths(in_def)) d->arg_names.push_back("args" + keystr(p));
  return d;
}

bool any_tracer(std::span<const Array> xs) {
  for (const Array& x : xs)
    if (x.defined() && !x.is_concrete()) return true;
  return false;
}

}  // namespace

struct JitCache::Impl {
  JitOptions options;
  mutable std::mutex mu;
  std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> entries;
  int64_t traces = 0;

  std::shared_ptr<const Entry> lookup(const TreeDef& in_def, std::span<const Array> args,
                                      const Fun& fun, TreeDef& out_def, const DebugInfoFn& debug) {
    Key key{in_def, {}, x64_enabled()};
    key.avals.reserve(args.size());
    for (const Array& a : args) {
      if (!a.defined()) throw ValueError(op_message("jit", "an argument is an empty Array handle"));
      key.avals.push_back(a.aval());
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = entries.find(key);
      if (it != entries.end()) return it->second;
    }
    trace::Staged st = trace::stage(fun, key.avals, debug_info(options, in_def, debug));
    auto e = std::make_shared<Entry>();
    e->jaxpr = st.jaxpr;
    e->consts = std::move(st.consts);
    e->out_def = out_def;
    prims::JitCallOptions co;
    co.name = options.name;
    co.inline_call = options.inline_call;
    co.keep_unused = options.keep_unused;
    e->params = prims::jit_params(e->jaxpr, co);
    std::lock_guard<std::mutex> lock(mu);
    ++traces;
    // A program that closed over values of an enclosing transformation (tracers) is valid for
    // this call only.
    if (!any_tracer(e->consts)) entries.emplace(std::move(key), e);
    return e;
  }
};

JitCache::JitCache(JitOptions options) : impl_(std::make_shared<Impl>()) {
  impl_->options = std::move(options);
}

std::vector<Array> JitCache::call(const TreeDef& in_def, std::span<const Array> args,
                                  const Fun& fun, TreeDef& out_def, const DebugInfoFn& debug,
                                  const std::vector<bool>& donated) {
  if (config::read_bool("jax_disable_jit")) return fun(args);
  if (!donated.empty() && donated.size() != args.size())
    throw_internal("jit", "the donation mask has " + std::to_string(donated.size()) +
                              " flags for " + std::to_string(args.size()) + " arguments");
  std::shared_ptr<const Entry> e = impl_->lookup(in_def, args, fun, out_def, debug);
  out_def = e->out_def;
  std::vector<Array> with_consts;
  if (!e->consts.empty()) with_consts = trace::concat({e->consts, args});
  const std::span<const Array> ops = e->consts.empty() ? args : std::span<const Array>(with_consts);
  const JitOptions& o = impl_->options;
  if (o.inline_call && any_tracer(ops)) return eval_jaxpr(*e->jaxpr, {}, ops);
  const bool any_donated = std::find(donated.begin(), donated.end(), true) != donated.end();
  std::vector<Array> outs;
  if (any_donated) {
    prims::JitCallOptions co = prims::jit_options_of(e->params);
    co.donated.assign(e->consts.size(), false);
    co.donated.insert(co.donated.end(), donated.begin(), donated.end());
    outs = prims::bind_jit(e->jaxpr, ops, co);
  } else {
    outs = tessera::bind(prims::jit_p, ops, e->params);
  }
  if (any_donated) {
    // Only concrete arrays are deleted (a tracer's value belongs to its trace, as in JAX).
    for (size_t i = 0; i < args.size(); ++i) {
      if (!donated[i] || !args[i].is_concrete() || args[i].is_deleted()) continue;
      Array x = args[i];
      for (Array& out : outs)  // an output that is the donated array keeps its buffer
        if (out.impl() == x.impl()) out = Array(out.aval(), out.buffer("jit"));
      x.delete_buffer();
    }
  }
  return outs;
}

std::vector<bool> donation_mask(const JitOptions& options, const std::vector<TreeDef>& arg_defs) {
  if (options.donate_argnums.empty()) return {};
  const int n = static_cast<int>(arg_defs.size());
  std::vector<bool> mask;
  for (int j = 0; j < n; ++j) {
    bool d = false;
    for (int k : options.donate_argnums) d = d || k == j || k + n == j;
    mask.insert(mask.end(), static_cast<size_t>(arg_defs[j].num_leaves()), d);
  }
  return mask;
}

ClosedJaxpr JitCache::trace(const TreeDef& in_def, std::span<const Array> args, const Fun& fun,
                            TreeDef& out_def, const DebugInfoFn& debug) {
  std::shared_ptr<const Entry> e = impl_->lookup(in_def, args, fun, out_def, debug);
  out_def = e->out_def;
  Jaxpr j = *e->jaxpr;
  const auto n = static_cast<std::ptrdiff_t>(e->consts.size());
  j.constvars.assign(j.invars.begin(), j.invars.begin() + n);
  j.invars.erase(j.invars.begin(), j.invars.begin() + n);
  j.cached_hash = 0;
  return ClosedJaxpr{intern(std::move(j)), e->consts};
}

int64_t JitCache::trace_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->traces;
}

const JitOptions& JitCache::options() const { return impl_->options; }

int64_t jit_compile_count() { return prims::jit_compile_count(); }

std::map<std::string, double> cost_analysis(const ClosedJaxpr& j) {
  trace::Staged st = trace::hoist_consts(j);
  compiler::CostAnalysis c = compiler::cost_analysis(*compiler::optimize(*st.jaxpr));
  std::map<std::string, double> r{{"flops", c.flops}, {"bytes accessed", c.bytes_accessed}};
  for (const compiler::KernelCost& k : c.kernels) {
    r[k.name + " flops"] = k.flops;
    r[k.name + " bytes accessed"] = k.bytes_accessed;
  }
  return r;
}

void check_compiled_signature(const TreeDef& compiled_def, std::span<const Aval> compiled_avals,
                              const TreeDef& def, std::span<const Array> args) {
  if (!(def == compiled_def))
    throw TypeError(
        op_message("Compiled",
                   "Function compiled with input pytree does not match the input pytree it was "
                   "called with: compiled with " +
                       compiled_def.str() + ", called with " + def.str()));
  std::string diffs;
  for (size_t i = 0; i < args.size() && i < compiled_avals.size(); ++i) {
    if (!args[i].defined())
      throw ValueError(op_message("Compiled", "an argument is an empty Array handle"));
    const Aval& a = compiled_avals[i];
    const Aval& b = args[i].aval();
    if (a.shape == b.shape && a.dtype == b.dtype && a.weak_type == b.weak_type) continue;
    diffs += "\nargument ";
    diffs += std::to_string(i);
    diffs += ": compiled for ";
    diffs += shaped_array_str(a);
    diffs += ", called with ";
    diffs += shaped_array_str(b);
  }
  if (!diffs.empty())
    throw TypeError(op_message("Compiled",
                               "Argument types differ from the types for which this computation "
                               "was compiled. The mismatches are:" +
                                   diffs));
}

std::string compiled_text(const ClosedJaxpr& j) {
  trace::Staged st = trace::hoist_consts(j);
  std::shared_ptr<const compiler::Executable> exe = compiler::compile(*st.jaxpr);
  return to_string(exe->program()) + "\n" + exe->text();
}

}  // namespace tessera::flat
