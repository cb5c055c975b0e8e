// flat::JitCache (tessera/jit.h): the trace cache of a jitted function and its call, which binds
// the `jit` primitive (prims/jit.h) on the staged program.
#include <algorithm>
#include <atomic>
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

// A call's signature as it arrives: no copies (what a cache hit looks up with).
// `context`: config::trace_context(), the flags that change what a trace produces.
struct KeyView {
  const TreeDef& def;
  std::span<const Array> args;
  uint32_t context = 0;
};

struct Key {
  TreeDef def;
  std::vector<Aval> avals;
  uint32_t context = 0;
};

bool same_type(const Aval& a, const Aval& b) {
  return a.dtype == b.dtype && a.weak_type == b.weak_type && a.shape == b.shape;
}

// One hash for stored keys and arriving calls (transparent: a hit copies nothing).
struct KeyHash {
  using is_transparent = void;
  template <class Avals>
  static size_t hash(const TreeDef& def, uint32_t context, size_t n, const Avals& aval_at) {
    size_t h = def.hash() * 31 + static_cast<size_t>(context);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (size_t i = 0; i < n; ++i) {
      const Aval& a = aval_at(i);
      mix(static_cast<size_t>(a.dtype) * 2 + static_cast<size_t>(a.weak_type));
      for (int64_t d : a.shape) mix(static_cast<size_t>(d));
      mix(a.shape.size());
    }
    return h;
  }
  size_t operator()(const Key& k) const {
    return hash(k.def, k.context, k.avals.size(), [&](size_t i) -> const Aval& { return k.avals[i]; });
  }
  size_t operator()(const KeyView& k) const {
    return hash(k.def, k.context, k.args.size(),
                [&](size_t i) -> const Aval& { return k.args[i].aval(); });
  }
};

struct KeyEq {
  using is_transparent = void;
  bool operator()(const Key& a, const Key& b) const {
    if (a.context != b.context || a.avals.size() != b.avals.size() || !(a.def == b.def)) return false;
    for (size_t i = 0; i < a.avals.size(); ++i)
      if (!same_type(a.avals[i], b.avals[i])) return false;
    return true;
  }
  bool operator()(const KeyView& a, const Key& b) const {
    if (a.context != b.context || a.args.size() != b.avals.size() || !(a.def == b.def)) return false;
    for (size_t i = 0; i < a.args.size(); ++i)
      if (!same_type(a.args[i].aval(), b.avals[i])) return false;
    return true;
  }
  bool operator()(const Key& a, const KeyView& b) const { return (*this)(b, a); }
};

struct Entry {
  JaxprPtr jaxpr;  // const-free: invars = the hoisted constants, then the arguments
  std::vector<Array> consts;
  TreeDef out_def;
  Params params;  // the jit equation's, without donation (built once: calls reuse it)
  // Set once bind() accepted `params`: later calls skip its signature check.
  mutable std::atomic<bool> checked{false};
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
  std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash, KeyEq> entries;
  int64_t traces = 0;

  std::shared_ptr<const Entry> lookup(const TreeDef& in_def, std::span<const Array> args,
                                      const Fun& fun, TreeDef& out_def, const DebugInfoFn& debug) {
    for (const Array& a : args)
      if (!a.defined()) throw ValueError(op_message("jit", "an argument is an empty Array handle"));
    const uint32_t context = config::trace_context();
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = entries.find(KeyView{in_def, args, context});
      if (it != entries.end()) return it->second;
    }
    Key key{in_def, {}, context};
    key.avals.reserve(args.size());
    for (const Array& a : args) key.avals.push_back(a.aval());
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
  if (config::disable_jit()) return fun(args);
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
  } else if (e->checked.load(std::memory_order_relaxed)) {
    // bind() without its signature check, which these params passed on the first call.
    outs = current_trace()->process_primitive(prims::jit_p, ops, e->params);
  } else {
    outs = tessera::bind(prims::jit_p, ops, e->params);
    e->checked.store(true, std::memory_order_relaxed);
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
