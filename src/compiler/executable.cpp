// The thunk executor and its compile pipeline (executable.h).
#include "compiler/executable.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ir/passes/dce.h"
#include "tessera/errors.h"
#include "tessera/param_types.h"

namespace tessera::compiler {

namespace {

std::mutex g_calls_mu;
std::vector<const Primitive*>& call_primitives() {
  static std::vector<const Primitive*> v;
  return v;
}

// "%3" (built by appending: g++ 12 warns falsely on `"%" + std::to_string(b)`).
std::string buffer_str(int32_t b) {
  if (b < 0) return "_";
  std::string s = "%";
  s += std::to_string(b);
  return s;
}

std::string operand_str(const Operand& o) {
  if (o.buffer >= 0) return buffer_str(o.buffer);
  return Literal(o.constant).value_str() + ":" + o.constant.aval().str();
}

}  // namespace

void register_call_primitive(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_calls_mu);
  auto& v = call_primitives();
  if (std::find(v.begin(), v.end(), &p) == v.end()) v.push_back(&p);
}

bool is_call_primitive(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_calls_mu);
  const auto& v = call_primitives();
  return std::find(v.begin(), v.end(), &p) != v.end();
}

// ---------------------------------------------------------------- passes

namespace {

// Appends the equations of `body` applied to `args` to `out`, renaming every binder (a body may
// be inlined at several call sites); returns the atoms of its results.
std::vector<Atom> splice(const Jaxpr& body, std::span<const Atom> args,
                         std::vector<JaxprEqn>& out) {
  std::unordered_map<uint64_t, Atom> env;
  for (size_t i = 0; i < body.invars.size(); ++i) env.emplace(body.invars[i].id(), args[i]);
  auto read = [&](const Atom& a) -> Atom {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = env.find(v->id());
      if (it == env.end())
        throw_internal("compiler/inline",
                       "a body reads a var it does not define (" + v->aval().str() + ")");
      return it->second;
    }
    return a;
  };
  for (const JaxprEqn& e : body.eqns) {
    if (is_call_primitive(*e.primitive)) {
      std::vector<Atom> ins;
      for (const Atom& a : e.invars) ins.push_back(read(a));
      const Jaxpr& inner = *e.params.get<std::shared_ptr<const Jaxpr>>("jaxpr");
      std::vector<Atom> res = splice(inner, ins, out);
      for (size_t i = 0; i < e.outvars.size(); ++i)
        if (!e.outvars[i].is_dropped()) env.emplace(e.outvars[i].id(), res[i]);
      continue;
    }
    JaxprEqn ne = e;
    for (Atom& a : ne.invars) a = read(a);
    for (Var& v : ne.outvars) {
      Var fresh = v.is_dropped() ? Var::dropped(v.aval()) : Var(v.aval());
      if (!v.is_dropped()) env.emplace(v.id(), fresh);
      v = fresh;
    }
    out.push_back(std::move(ne));
  }
  std::vector<Atom> res;
  for (const Atom& a : body.outvars) res.push_back(read(a));
  return res;
}

}  // namespace

std::shared_ptr<const Jaxpr> inline_calls(const Jaxpr& j) {
  Jaxpr out;
  out.constvars = j.constvars;
  out.invars = j.invars;
  out.effects = j.effects;
  std::vector<Atom> args;
  for (const Var& v : j.constvars) args.push_back(v);
  for (const Var& v : j.invars) args.push_back(v);
  // The outer binders keep their names: splice maps them to themselves.
  Jaxpr whole = j;
  whole.invars.insert(whole.invars.begin(), j.constvars.begin(), j.constvars.end());
  whole.constvars.clear();
  out.outvars = splice(whole, args, out.eqns);
  return intern(std::move(out));
}

std::shared_ptr<const Jaxpr> fold_constants(const Jaxpr& j) {
  Jaxpr out = j;
  out.eqns.clear();
  out.cached_hash = 0;
  std::unordered_map<uint64_t, Atom> folded;
  auto read = [&](const Atom& a) -> Atom {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = folded.find(v->id());
      if (it != folded.end()) return it->second;
    }
    return a;
  };
  for (const JaxprEqn& e0 : j.eqns) {
    JaxprEqn e = e0;
    for (Atom& a : e.invars) a = read(a);
    bool foldable = e.effects.empty() && primitive_effects(*e.primitive).empty() &&
                    e.primitive->impl && !e.invars.empty() && !e.outvars.empty();
    for (const Atom& a : e.invars) foldable = foldable && !is_var(a);
    for (const Var& v : e.outvars) foldable = foldable && v.aval().ndim() == 0;
    if (foldable) {
      std::vector<Array> args;
      for (const Atom& a : e.invars) args.push_back(std::get<Literal>(a).value());
      std::vector<Aval> avals;
      for (const Var& v : e.outvars) avals.push_back(v.aval());
      ExecContext ctx{default_device()};
      std::vector<Array> r = e.primitive->impl(ctx, args, e.params, avals);
      if (r.size() == e.outvars.size()) {
        for (size_t i = 0; i < r.size(); ++i)
          folded.emplace(e.outvars[i].id(), Literal(Array(avals[i], r[i].buffer())));
        continue;
      }
    }
    out.eqns.push_back(std::move(e));
  }
  for (Atom& a : out.outvars) a = read(a);
  return intern(std::move(out));
}

std::shared_ptr<const Jaxpr> optimize(const Jaxpr& j) {
  std::shared_ptr<const Jaxpr> p = fold_constants(*inline_calls(j));
  return ir::dce(*p, std::vector<bool>(p->outvars.size(), true)).first;
}

// ---------------------------------------------------------------- cost analysis

CostAnalysis cost_analysis(const Jaxpr& j) {
  CostAnalysis c;
  auto elems = [](const Aval& a) { return static_cast<double>(a.size()); };
  for (const JaxprEqn& e : j.eqns) {
    double in_elems = 0, out_elems = 0;
    for (const Atom& a : e.invars) {
      in_elems += elems(atom_aval(a));
      c.bytes_accessed += static_cast<double>(atom_aval(a).nbytes());
    }
    for (const Var& v : e.outvars) {
      out_elems += elems(v.aval());
      c.bytes_accessed += static_cast<double>(v.aval().nbytes());
    }
    if (e.params.has("jaxpr")) {
      if (const auto* body = std::get_if<std::shared_ptr<const Jaxpr>>(&e.params.at("jaxpr"))) {
        CostAnalysis b = cost_analysis(**body);
        double times = 1;
        if (e.params.has("length"))
          if (const auto* n = std::get_if<int64_t>(&e.params.at("length")))
            times = static_cast<double>(*n);
        c.flops += b.flops * times;
        c.bytes_accessed += b.bytes_accessed * times;
        continue;
      }
    }
    switch (e.primitive->kind) {
      case PrimitiveKind::kContraction: {
        double k = 1;
        if (e.params.has("dimension_numbers") && !e.invars.empty()) {
          const DotDimensionNumbers d = DotDimensionNumbers::from_param(
              e.params.get_record("dimension_numbers", kDotDimensionNumbersDef));
          const Shape& lhs = atom_aval(e.invars[0]).shape;
          for (int64_t ax : d.lhs_contracting)
            if (ax >= 0 && ax < static_cast<int64_t>(lhs.size())) k *= static_cast<double>(lhs[ax]);
        }
        c.flops += 2 * out_elems * k;
        break;
      }
      case PrimitiveKind::kReduction:
        c.flops += in_elems;
        break;
      default:
        c.flops += out_elems;
    }
  }
  return c;
}

// ---------------------------------------------------------------- thunks

EagerThunk::EagerThunk(const Primitive& p, Params params, std::vector<Operand> in,
                       std::vector<int32_t> out, std::vector<Aval> out_avals)
    : prim_(&p),
      params_(std::move(params)),
      in_(std::move(in)),
      out_(std::move(out)),
      out_avals_(std::move(out_avals)) {}

void EagerThunk::execute(const ExecContext& ctx, std::vector<Array>& buffers) const {
  std::vector<Array> args;
  args.reserve(in_.size());
  for (const Operand& o : in_) args.push_back(o.buffer >= 0 ? buffers[o.buffer] : o.constant);
  std::vector<Array> outs = prim_->impl(ctx, args, params_, out_avals_);
  if (outs.size() != out_.size())
    throw_internal("compiler/executable", "'" + prim_->name() + "' returned " +
                                              std::to_string(outs.size()) + " results, expected " +
                                              std::to_string(out_.size()));
  for (size_t i = 0; i < outs.size(); ++i) {
    if (out_[i] < 0) continue;
    Array& r = outs[i];
    // A sub-jaxpr impl may return an operand whose weak flag differs from the promised type.
    if (r.aval().weak_type != out_avals_[i].weak_type) r = Array(out_avals_[i], r.buffer());
    buffers[out_[i]] = std::move(r);
  }
}

std::string EagerThunk::text() const {
  // Appends only: g++ 12 warns falsely (-Wrestrict) on `"literal" + std::string&&`.
  std::string s;
  for (size_t i = 0; i < out_.size(); ++i) {
    if (i) s += ' ';
    s += buffer_str(out_[i]);
    s += ':';
    s += out_avals_[i].str();
  }
  s += " = eager ";
  s += prim_->name();
  if (!params_.empty()) {
    std::vector<std::string> kvs;
    for (const auto& [k, v] : params_.items()) kvs.push_back(k + "=" + param_value_str(v));
    std::sort(kvs.begin(), kvs.end());
    s += '[';
    for (size_t i = 0; i < kvs.size(); ++i) {
      if (i) s += ' ';
      s += kvs[i];
    }
    s += ']';
  }
  for (const Operand& o : in_) {
    s += ' ';
    s += operand_str(o);
  }
  return s;
}

// ---------------------------------------------------------------- executables

std::shared_ptr<const Executable> compile(const Jaxpr& j) {
  if (!j.constvars.empty())
    throw_internal("compiler/compile", "the program has constvars; hoist them to invars first");
  auto exe = std::make_shared<Executable>();
  exe->program_ = optimize(j);
  const Jaxpr& p = *exe->program_;
  std::unordered_map<uint64_t, int32_t> buffer_of;
  auto new_buffer = [&](const Var& v) {
    const int32_t b = exe->num_buffers_++;
    buffer_of.emplace(v.id(), b);
    return b;
  };
  auto operand = [&](const Atom& a) {
    Operand o;
    if (const Var* v = std::get_if<Var>(&a))
      o.buffer = buffer_of.at(v->id());
    else
      o.constant = std::get<Literal>(a).value();
    return o;
  };
  // Last thunk reading each var; outputs are never released.
  const size_t kNever = p.eqns.size();
  std::unordered_map<uint64_t, size_t> last;
  for (size_t k = 0; k < p.eqns.size(); ++k)
    for (const Atom& a : p.eqns[k].invars)
      if (const Var* v = std::get_if<Var>(&a)) last[v->id()] = k;
  for (const Atom& a : p.outvars)
    if (const Var* v = std::get_if<Var>(&a)) last[v->id()] = kNever;
  for (const Var& v : p.invars) {
    exe->in_avals_.push_back(v.aval());
    exe->in_buffers_.push_back(last.count(v.id()) ? new_buffer(v) : -1);
  }
  exe->release_after_.resize(p.eqns.size());
  for (size_t k = 0; k < p.eqns.size(); ++k) {
    const JaxprEqn& e = p.eqns[k];
    std::vector<Operand> in;
    for (const Atom& a : e.invars) in.push_back(operand(a));
    std::vector<int32_t> out;
    std::vector<Aval> out_avals;
    for (const Var& v : e.outvars) {
      out_avals.push_back(v.aval());
      out.push_back(!v.is_dropped() && last.count(v.id()) ? new_buffer(v) : -1);
    }
    for (const Atom& a : e.invars)
      if (const Var* v = std::get_if<Var>(&a)) {
        const int32_t b = buffer_of.at(v->id());
        auto& rel = exe->release_after_[k];
        if (last.at(v->id()) == k && std::find(rel.begin(), rel.end(), b) == rel.end())
          rel.push_back(b);
      }
    if (!e.primitive->impl)
      throw TypeError(op_message(e.primitive->name(),
                                 "has no eager implementation, so jit cannot run it on the CPU"));
    exe->thunks_.push_back(std::make_unique<EagerThunk>(*e.primitive, e.params, std::move(in),
                                                        std::move(out), std::move(out_avals)));
  }
  for (const Atom& a : p.outvars) exe->outs_.push_back(operand(a));
  return exe;
}

std::vector<Array> Executable::execute(const ExecContext& ctx, std::span<const Array> args) const {
  if (args.size() != in_buffers_.size())
    throw_internal("compiler/executable", "called with " + std::to_string(args.size()) +
                                              " arguments, the program takes " +
                                              std::to_string(in_buffers_.size()));
  std::vector<Array> buffers(static_cast<size_t>(num_buffers_));
  for (size_t i = 0; i < args.size(); ++i)
    if (in_buffers_[i] >= 0) buffers[in_buffers_[i]] = args[i];
  for (size_t k = 0; k < thunks_.size(); ++k) {
    thunks_[k]->execute(ctx, buffers);
    for (int32_t b : release_after_[k]) buffers[b] = Array();
  }
  std::vector<Array> outs;
  outs.reserve(outs_.size());
  for (const Operand& o : outs_) outs.push_back(o.buffer >= 0 ? buffers[o.buffer] : o.constant);
  return outs;
}

std::string Executable::text() const {
  std::string s = "executable (";
  s += std::to_string(num_buffers_);
  s += " buffers, ";
  s += std::to_string(thunks_.size());
  s += " thunks) {\n  in";
  for (size_t i = 0; i < in_buffers_.size(); ++i) {
    s += ' ';
    s += buffer_str(in_buffers_[i]);
    s += ':';
    s += in_avals_[i].str();
  }
  s += '\n';
  for (size_t k = 0; k < thunks_.size(); ++k) {
    s += "  ";
    s += thunks_[k]->text();
    if (!release_after_[k].empty()) {
      s += "  ; release";
      for (int32_t b : release_after_[k]) {
        s += ' ';
        s += buffer_str(b);
      }
    }
    s += '\n';
  }
  s += "  out";
  for (const Operand& o : outs_) {
    s += ' ';
    s += operand_str(o);
  }
  s += "\n}";
  return s;
}

}  // namespace tessera::compiler
