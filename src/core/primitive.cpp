// The registry, the trace context and bind.
#include "tessera/primitive.h"

#include <array>
#include <atomic>
#include <map>
#include <mutex>

#include "core/array_errors.h"

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
std::atomic<uint64_t> g_next_tag{1};
std::atomic<int64_t> g_eval_count{0};
std::atomic<int64_t> g_fixups{0};

EvalTrace& eval_trace() {
  static EvalTrace* t = new EvalTrace;
  return *t;
}
thread_local Trace* t_current = nullptr;
thread_local const char* t_op_name = nullptr;

}  // namespace

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

const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::kBool:
      return "a bool";
    case ParamKind::kInt:
      return "an integer";
    case ParamKind::kFloat:
      return "a float";
    case ParamKind::kDType:
      return "a dtype";
    case ParamKind::kInts:
      return "a tuple of integers";
    case ParamKind::kString:
      return "a string";
    case ParamKind::kJaxpr:
      return "a jaxpr";
    case ParamKind::kOpaque:
      return "an opaque object (a callable)";
    case ParamKind::kJaxprList:
      return "a tuple of jaxprs";
    case ParamKind::kOptionalDType:
      return "a dtype or None";
    case ParamKind::kAny:
      return "any value";
    case ParamKind::kTuple:
      return "a tuple";
    case ParamKind::kEnum:
      return "an enum value";
    case ParamKind::kRecord:
      return "a record";
  }
  return "?";
}

namespace {

bool param_matches(const ParamSpec& spec, const ParamValue& v) {
  switch (spec.kind) {
    case ParamKind::kBool:
      return std::holds_alternative<bool>(v);
    case ParamKind::kInt:
      return std::holds_alternative<int64_t>(v);
    case ParamKind::kFloat:
      return std::holds_alternative<double>(v);
    case ParamKind::kDType:
      return std::holds_alternative<DType>(v);
    case ParamKind::kInts:
      return std::holds_alternative<std::vector<int64_t>>(v);
    case ParamKind::kString:
      return std::holds_alternative<std::string>(v);
    case ParamKind::kJaxpr: {
      auto* j = std::get_if<std::shared_ptr<const Jaxpr>>(&v);
      return j && *j;
    }
    case ParamKind::kOpaque: {
      auto* o = std::get_if<std::shared_ptr<const OpaqueParam>>(&v);
      return o && *o;
    }
    case ParamKind::kJaxprList: {
      auto* l = std::get_if<JaxprList>(&v);
      if (!l) return false;
      for (const auto& j : *l)
        if (!j) return false;
      return true;
    }
    case ParamKind::kOptionalDType:
    case ParamKind::kAny:
      return true;
    case ParamKind::kTuple: {
      auto* t = std::get_if<std::shared_ptr<const ParamTuple>>(&v);
      return t && *t;
    }
    case ParamKind::kEnum: {
      auto* e = std::get_if<ParamEnum>(&v);
      return e && e->def == spec.enum_def;
    }
    case ParamKind::kRecord: {
      auto* r = std::get_if<std::shared_ptr<const ParamRecord>>(&v);
      return r && *r && (*r)->def == spec.record_def;
    }
  }
  return false;
}

// "a record of type DotDimensionNumbers", for messages.
std::string spec_kind_str(const ParamSpec& ps) {
  if (ps.kind == ParamKind::kEnum && ps.enum_def)
    return std::string(param_kind_name(ps.kind)) + " of type " + ps.enum_def->name;
  if (ps.kind == ParamKind::kRecord && ps.record_def)
    return std::string(param_kind_name(ps.kind)) + " of type " + ps.record_def->name;
  return param_kind_name(ps.kind);
}

std::string arity_str(const Signature& s) {
  if (s.min_args == s.max_args) return "exactly " + std::to_string(s.min_args);
  if (s.max_args == Signature::kVariadic) return "at least " + std::to_string(s.min_args);
  return "between " + std::to_string(s.min_args) + " and " + std::to_string(s.max_args);
}

[[noreturn]] void bad_params(const Primitive& p, const Params& params, const std::string& what) {
  std::string expected;
  for (const ParamSpec& ps : p.signature.params) {
    if (!expected.empty()) expected += ", ";
    expected += std::string(ps.name) + (ps.required ? "" : " (optional)");
  }
  throw TypeError(op_message(p.name(), what + "; " + p.name() + " takes the params {" + expected +
                                           "}, got {" + params.str() + "}"));
}

}  // namespace

void check_signature(const Primitive& p, size_t nargs, const Params& params) {
  const Signature& sig = p.signature;
  if (!sig.declared()) return;
  if (nargs < static_cast<size_t>(sig.min_args) || nargs > static_cast<size_t>(sig.max_args)) {
    throw TypeError(op_message(p.name(), p.name() + " takes " + arity_str(sig) + " operand" +
                                             (sig.max_args == 1 ? "" : "s") + ", got " +
                                             std::to_string(nargs)));
  }
  if (sig.params.empty() && params.empty()) return;
  size_t found = 0;
  for (const ParamSpec& ps : sig.params) {
    const ParamValue* v = nullptr;
    for (const auto& kv : params.items()) {
      if (kv.first == ps.name) {
        v = &kv.second;
        break;
      }
    }
    if (!v) {
      if (ps.required)
        bad_params(p, params, "missing required param '" + std::string(ps.name) + "'");
      continue;
    }
    ++found;
    if (!param_matches(ps, *v)) {
      bad_params(p, params,
                 "param '" + std::string(ps.name) + "' must be " + spec_kind_str(ps) + ", got " +
                     param_value_str(*v));
    }
  }
  if (found != params.size() && !sig.open_params) {
    for (const auto& kv : params.items()) {
      bool known = false;
      for (const ParamSpec& ps : sig.params) known |= kv.first == ps.name;
      if (!known) bad_params(p, params, "unknown param '" + kv.first + "'");
    }
  }
}

namespace {

// The rule and the checks of its result (abstract_eval without the signature check, which bind
// has already made on the eager path).
std::vector<Aval> run_abstract_rule(const Primitive& p, std::span<const Aval> in,
                                    const Params& params) {
  if (!p.abstract_eval) {
    throw_internal("bind", "primitive '" + p.name() + "' has no abstract-eval rule");
  }
  std::vector<Aval> outs = p.abstract_eval(in, params);
  if (!p.multiple_results() && outs.size() != 1) {
    throw_internal("abstract eval", "primitive '" + p.name() + "' computed " +
                                        std::to_string(outs.size()) +
                                        " result types where one was expected");
  }
  for (const Aval& a : outs) check_shape(p.name(), a.shape, itemsize(a.dtype));
  return outs;
}

}  // namespace

std::vector<Aval> abstract_eval(const Primitive& p, std::span<const Aval> in,
                                const Params& params) {
  check_signature(p, in.size(), params);
  return run_abstract_rule(p, in, params);
}

Trace::Trace(Trace* parent) : tag_(g_next_tag.fetch_add(1)), parent_(parent) {}

Trace* current_trace() { return t_current ? t_current : &eval_trace(); }

TraceScope::TraceScope(Trace* t) : prev_(t_current) { t_current = t; }
TraceScope::~TraceScope() { t_current = prev_; }

const char* current_op_name() { return t_op_name ? t_op_name : "array"; }

int64_t eval_count() { return g_eval_count.load(); }
void reset_eval_count() { g_eval_count.store(0); }
int64_t placement_fixups() { return g_fixups.load(); }

// ---- The axis environment. ----
namespace {
thread_local std::vector<AxisEntry> t_axis_env;
}
std::span<const AxisEntry> axis_env() { return t_axis_env; }
const AxisEntry* find_axis(std::string_view name) {
  for (auto it = t_axis_env.rbegin(); it != t_axis_env.rend(); ++it)
    if (it->name == name) return &*it;
  return nullptr;
}
AxisEnvScope::AxisEnvScope(AxisEntry e) { t_axis_env.push_back(std::move(e)); }
AxisEnvScope::~AxisEnvScope() { t_axis_env.pop_back(); }

// ---- Placement (JAX's committed/uncommitted rule). ----
namespace {

[[noreturn]] void incompatible_devices(const Primitive& p, std::span<const Array> args, size_t i,
                                       size_t j) {
  auto arg = [&](size_t k) {
    const Device* d = args[k].device();
    return "argument " + std::to_string(k) + " (" + args[k].aval().str() + ") committed to " +
           d->str() + " (device ids [" + std::to_string(d->id()) + "] on platform " +
           d->platform() + ")";
  };
  throw ValueError(op_message(
      p.name(), "received incompatible devices: " + arg(i) + " and " + arg(j) +
                    ". Arrays committed to different devices cannot be combined; move them to "
                    "one device with device_put(x, device) first"));
}

}  // namespace

std::vector<Array> EvalTrace::process_primitive(const Primitive& p, std::span<const Array> args,
                                                const Params& params) {
  // One pass over the arguments: the checks, their avals, and placement — the device of the
  // committed arguments (all must agree), else of the first argument (uncommitted arrays live on
  // the default device), else the default device.
  // Avals on the stack for up to four arguments (most calls): no allocation for the list.
  std::array<Aval, 4> small_avals;
  std::vector<Aval> big_avals;
  if (args.size() > small_avals.size()) big_avals.resize(args.size());
  Aval* const avals_at = big_avals.empty() ? small_avals.data() : big_avals.data();
  const std::span<const Aval> avals(avals_at, args.size());
  Device* committed_dev = nullptr;
  Device* first_dev = nullptr;
  bool mixed = false;  // some argument is on another device than the first
  size_t committed_arg = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const Array& a = args[i];
    const ArrayImpl* ai = a.impl().get();
    if (!ai) {
      throw ValueError(op_message(p.name(), "argument " + std::to_string(i) +
                                                " is an empty Array handle (default-constructed)"));
    }
    if (ai->tracer) {
      throw UnexpectedTracerError(op_message(
          p.name(), "encountered a tracer (" + a.tracer()->str() +
                        ") outside the transformation that created it: it leaked out of the "
                        "function being transformed (stored in a global, a captured variable or "
                        "a side channel). Return it as an output of the function instead."));
    }
    if (ai->deleted)
      throw ValueError(op_message(
          p.name(), "argument " + std::to_string(i) + ": " + deleted_array_message(ai->aval)));
    Device* d = ai->buffer->device();
    if (i == 0) first_dev = d;
    mixed |= d != first_dev;
    if (ai->committed) {
      if (!committed_dev) {
        committed_dev = d;
        committed_arg = i;
      } else if (d != committed_dev) {
        incompatible_devices(p, args, committed_arg, i);
      }
    }
    avals_at[i] = ai->aval;
  }
  if (!p.impl) throw_internal("bind", "primitive '" + p.name() + "' has no eager rule");
  const bool committed = committed_dev != nullptr;
  ExecContext ctx{committed_dev ? committed_dev : first_dev ? first_dev : default_device()};
  // Uncommitted arguments elsewhere move to the computation's device (as JAX transfers them).
  std::vector<Array> moved;
  if (mixed) {
    moved.assign(args.begin(), args.end());
    for (Array& m : moved)
      if (m.impl()->buffer->device() != ctx.device) {
        m = device_put(m, ctx.device);
        m.impl()->committed = false;
      }
    args = moved;
  }
  // bind() checked the signature before handing the call to this trace.
  std::vector<Aval> out_avals = run_abstract_rule(p, avals, params);
  const char* prev = t_op_name;
  t_op_name = p.name().c_str();
  struct Restore {
    const char* prev;
    ~Restore() { t_op_name = prev; }
  } restore{prev};
  g_eval_count.fetch_add(1, std::memory_order_relaxed);
  std::vector<Array> outs = p.impl(ctx, args, params, out_avals);
  // The eager result has the types abstract evaluation promised. A sub-jaxpr impl can return an
  // operand whose weak flag differs from the body's declared type: it gets the promised flag.
  if (outs.size() != out_avals.size()) {
    throw_internal("bind", "primitive '" + p.name() + "' returned " + std::to_string(outs.size()) +
                               " results; abstract evaluation promised " +
                               std::to_string(out_avals.size()));
  }
  // (Single-result impls build their output from out_avals: only sub-jaxpr impls need this.)
  for (size_t i = 0; p.multiple_results() && i < outs.size(); ++i) {
    const Aval& got = outs[i].aval();
    if (got.weak_type == out_avals[i].weak_type) continue;
    if (got.dtype != out_avals[i].dtype || got.shape != out_avals[i].shape) continue;
    outs[i] = Array(out_avals[i], outs[i].buffer());
  }
  // Outputs are on ctx.device (a rule that allocated elsewhere is a bug: counted and moved, so
  // tests catch it and users still get correct placement), committed when an input was. A
  // shared handle (an input, a sub-jaxpr's constant) is replaced, never changed in place.
  for (Array& o : outs) {
    const ArrayImpl* oi = o.impl().get();
    if (!oi || oi->tracer || !oi->buffer) continue;
    if (oi->buffer->device() != ctx.device) {
      g_fixups.fetch_add(1, std::memory_order_relaxed);
      o = device_put(o, ctx.device);
    } else if (oi->committed == committed) {
      continue;
    }
    if (o.impl().use_count() != 1) o = Array(o.aval(), o.impl()->buffer);
    o.impl()->committed = committed;
  }
  return outs;
}

std::vector<Array> bind(const Primitive& p, std::span<const Array> args, const Params& params) {
  register_all();
  check_signature(p, args.size(), params);
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
