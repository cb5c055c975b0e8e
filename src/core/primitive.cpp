// The registry, the trace context and bind.
#include "tessera/primitive.h"

#include <atomic>
#include <map>
#include <mutex>

#include "prims/callbacks.h"
#include "prims/checkpoint.h"
#include "prims/cond.h"
#include "prims/cumulative.h"
#include "prims/prims.h"
#include "prims/scan.h"
#include "prims/while_loop.h"

namespace tessera {
namespace {

std::map<std::string, Primitive*, std::less<>>& registry() {
  static auto* r = new std::map<std::string, Primitive*, std::less<>>;
  return *r;
}
std::mutex& registry_mu() {
  static std::mutex m;
  return m;
}
std::atomic<bool> g_registered{false};
std::atomic<uint64_t> g_next_tag{1};
std::atomic<int64_t> g_eval_count{0};

EvalTrace& eval_trace() {
  static EvalTrace* t = new EvalTrace;
  return *t;
}
thread_local Trace* t_current = nullptr;
thread_local const char* t_op_name = nullptr;

}  // namespace

void register_all() {
  if (g_registered.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    prims::register_elementwise_binary();
    prims::register_elementwise_unary();
    prims::register_compare();
    prims::register_select_convert();
    prims::register_shape_ops();
    prims::register_reductions();
    prims::register_dot_general();
    prims::register_elementwise_math();
    prims::register_special();
    prims::register_bitwise();
    prims::register_squeeze_rev();
    prims::register_slicing();
    prims::register_concat_pad();
    prims::register_argminmax();
    prims::register_reduce_generic();
    prims::register_ad_prims();
    prims::register_custom_derivatives();
    prims::register_scan();
    prims::register_cond();
    prims::register_while();
    prims::register_checkpoint();
    prims::register_callbacks();
    prims::register_cumulative();
    g_registered.store(true, std::memory_order_release);
  });
}

void register_primitive(Primitive& p) {
  std::lock_guard<std::mutex> lock(registry_mu());
  auto [it, inserted] = registry().emplace(p.name(), &p);
  if (!inserted && it->second != &p) {
    throw_internal("registry", "two primitives are named '" + p.name() + "'");
  }
}

Primitive* find_primitive(std::string_view name) {
  register_all();
  std::lock_guard<std::mutex> lock(registry_mu());
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> primitive_names() {
  register_all();
  std::lock_guard<std::mutex> lock(registry_mu());
  std::vector<std::string> out;
  for (const auto& kv : registry()) out.push_back(kv.first);
  return out;
}

Trace::Trace(Trace* parent) : tag_(g_next_tag.fetch_add(1)), parent_(parent) {}

Trace* current_trace() { return t_current ? t_current : &eval_trace(); }

TraceScope::TraceScope(Trace* t) : prev_(t_current) { t_current = t; }
TraceScope::~TraceScope() { t_current = prev_; }

const char* current_op_name() { return t_op_name ? t_op_name : "array"; }

int64_t eval_count() { return g_eval_count.load(); }
void reset_eval_count() { g_eval_count.store(0); }

std::vector<Array> EvalTrace::process_primitive(const Primitive& p, std::span<const Array> args,
                                                const Params& params) {
  // Avals on the stack for the common small arities.
  std::vector<Aval> avals;
  avals.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Array& a = args[i];
    if (!a.defined()) {
      throw ValueError(op_message(p.name(), "argument " + std::to_string(i) +
                                                " is an empty Array handle (default-constructed)"));
    }
    if (a.is_tracer()) {
      throw UnexpectedTracerError(op_message(
          p.name(), "encountered a tracer (" + a.tracer()->str() +
                        ") outside the transformation that created it: it leaked out of the "
                        "function being transformed (stored in a global, a captured variable or "
                        "a side channel). Return it as an output of the function instead."));
    }
    if (a.is_deleted()) {
      throw ValueError(
          op_message(p.name(), "argument " + std::to_string(i) + " (" + a.aval().str() +
                                   ") has been deleted or donated; it cannot be used"));
    }
    avals.push_back(a.aval());
  }
  if (!p.abstract_eval || !p.impl) {
    throw_internal("bind", "primitive '" + p.name() + "' has no abstract-eval or eager rule");
  }
  std::vector<Aval> out_avals = p.abstract_eval(avals, params);
  const char* prev = t_op_name;
  t_op_name = p.name().c_str();
  struct Restore {
    const char* prev;
    ~Restore() { t_op_name = prev; }
  } restore{prev};
  g_eval_count.fetch_add(1, std::memory_order_relaxed);
  return p.impl(args, params, out_avals);
}

std::vector<Array> bind(const Primitive& p, std::span<const Array> args, const Params& params) {
  register_all();
  return current_trace()->process_primitive(p, args, params);
}

Array bind1(const Primitive& p, std::span<const Array> args, const Params& params) {
  std::vector<Array> outs = bind(p, args, params);
  if (outs.size() != 1) {
    throw_internal("bind", "primitive '" + p.name() + "' returned " + std::to_string(outs.size()) +
                               " results where one was expected");
  }
  return std::move(outs[0]);
}

}  // namespace tessera
