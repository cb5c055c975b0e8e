// `checkpoint` and `name` (checkpoint.h): registration, abstract eval, impl, DCE, the `name`
// rules, the policies of tessera/checkpoint.h and the flat API (checkpoint, checkpoint_name,
// saved_residuals). The differentiation and batching rules of `checkpoint` are in
// checkpoint_pe.cpp.
#include "prims/checkpoint.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "prims/call_rules.h"
#include "prims/prims.h"
#include "tessera/errors.h"
#include "tessera/param_types.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

Primitive remat_p("checkpoint", /*multiple_results=*/true);
Primitive name_p("name");

namespace {

using OpaquePtr = std::shared_ptr<const OpaqueParam>;

// JAX's remat_dce: prune the body's unused outputs, and the operands it then no longer reads.
std::pair<std::vector<bool>, std::optional<JaxprEqn>> remat_dce(const std::vector<bool>& used,
                                                                const JaxprEqn& eqn) {
  return call_dce(used, eqn, false, [&eqn](JaxprPtr body, const std::vector<bool>&) {
    Params p = eqn.params;
    p.set("jaxpr", std::move(body));
    return p;
  });
}

void define_remat() {
  Primitive& p = remat_p;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    // The operands must be what the body takes, checked before eval_jaxpr indexes them.
    const Jaxpr& j = *params.get<JaxprPtr>("jaxpr");
    check_call_operands("checkpoint", "the body jaxpr", "", j, in);
    return trace::out_avals(j);
  };
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params& params,
              std::span<const Aval>) {
    return eval_jaxpr(*params.get<JaxprPtr>("jaxpr"), {}, args);
  };
  p.jvp = remat_jvp;
  p.linearize = remat_linearize;
  p.transpose = remat_transpose;
  p.batch = remat_batch;
  p.dce = remat_dce;
  p.effects = [](const Params& params) { return params.get<JaxprPtr>("jaxpr")->effects; };
  register_primitive(p);
}

// `name`: the identity, marking its output for the policies (JAX's name_p).
void define_name() {
  Primitive& p = name_p;
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    if (in.size() != 1)
      throw TypeError(op_message("name", "takes 1 operand, got " + std::to_string(in.size())));
    return std::vector<Aval>{in[0]};
  };
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params&,
              std::span<const Aval>) { return std::vector<Array>{args[0]}; };
  // The primal is named; the tangent passes through unnamed (as JAX's name_jvp).
  p.jvp = [](std::span<const Array> primals, std::span<const Array> tangents,
             const Params& params) {
    return std::make_pair(std::vector<Array>{bind1(name_p, {primals[0]}, params)},
                          std::vector<Array>{tangents[0]});
  };
  p.transpose = [](std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                   const Params&) { return std::vector<Array>{cts[0]}; };
  p.batch = [](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
               const Params& params) {
    return std::make_pair(std::vector<Array>{bind1(name_p, {args[0]}, params)},
                          std::vector<int64_t>{dims[0]});
  };
  register_primitive(p);
}

}  // namespace

CheckpointPolicy policy_or_default(CheckpointPolicy p) {
  static const CheckpointPolicy none = std::make_shared<RematPolicy>("None", nullptr);
  return p ? p : none;
}

CheckpointPolicy policy_of(const Params& params) {
  auto p = std::dynamic_pointer_cast<const RematPolicy>(params.get<OpaquePtr>("policy"));
  if (!p) throw TypeError(op_message("checkpoint", "param 'policy' is not a RematPolicy"));
  return p;
}

Params checkpoint_params(JaxprPtr jaxpr, bool differentiated, CheckpointPolicy policy,
                         bool prevent_cse) {
  return Params{{"jaxpr", std::move(jaxpr)},
                {"differentiated", differentiated},
                {"policy", OpaquePtr(policy_or_default(std::move(policy)))},
                {"prevent_cse", prevent_cse}};
}

void register_checkpoint() {
  remat_p.kind = PrimitiveKind::kControlFlow;
  name_p.kind = PrimitiveKind::kEffectful;
  remat_p.signature = Signature::at_least(0, {{"jaxpr", ParamKind::kJaxpr},
                                              {"differentiated", ParamKind::kBool},
                                              {"policy", ParamKind::kOpaque},
                                              {"prevent_cse", ParamKind::kBool}});
  name_p.signature = Signature::fixed(1, {{"name", ParamKind::kString}});
  define_remat();
  define_name();
}

}  // namespace tessera::prims

namespace tessera {

namespace checkpoint_policies {

namespace {
CheckpointPolicy make(std::string name, PolicyFn fn) {
  return std::make_shared<RematPolicy>(std::move(name), std::move(fn));
}
bool is_dot(const Primitive& p) { return &p == &prims::dot_general; }
const std::string* name_of(const Primitive& p, const Params& params) {
  if (&p != &prims::name_p) return nullptr;
  return &params.get<std::string>("name");
}
std::string names_str(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}
using NameSet = std::unordered_set<std::string>;
}  // namespace

CheckpointPolicy everything_saveable() {
  static const CheckpointPolicy p =
      make("everything_saveable",
           [](const Primitive&, std::span<const Aval>, const Params&) { return true; });
  return p;
}
CheckpointPolicy nothing_saveable() {
  static const CheckpointPolicy p =
      make("nothing_saveable",
           [](const Primitive&, std::span<const Aval>, const Params&) { return false; });
  return p;
}
CheckpointPolicy dots_saveable() {
  static const CheckpointPolicy p =
      make("dots_saveable",
           [](const Primitive& q, std::span<const Aval>, const Params&) { return is_dot(q); });
  return p;
}
CheckpointPolicy checkpoint_dots() { return dots_saveable(); }
CheckpointPolicy dots_with_no_batch_dims_saveable() {
  static const CheckpointPolicy p =
      make("dots_with_no_batch_dims_saveable",
           [](const Primitive& q, std::span<const Aval>, const Params& params) {
             if (!is_dot(q)) return false;
             const DotDimensionNumbers d = DotDimensionNumbers::from_param(
                 params.get_record("dimension_numbers", kDotDimensionNumbersDef));
             return d.lhs_batch.empty() && d.rhs_batch.empty();
           });
  return p;
}
CheckpointPolicy checkpoint_dots_with_no_batch_dims() { return dots_with_no_batch_dims_saveable(); }
CheckpointPolicy save_only_these_names(std::vector<std::string> names) {
  std::string label = "save_only_these_names(" + names_str(names) + ")";
  NameSet set(names.begin(), names.end());
  return make(label, [set](const Primitive& q, std::span<const Aval>, const Params& params) {
    const std::string* n = name_of(q, params);
    return n != nullptr && set.count(*n) != 0;
  });
}
CheckpointPolicy save_any_names_but_these(std::vector<std::string> names) {
  std::string label = "save_any_names_but_these(" + names_str(names) + ")";
  NameSet set(names.begin(), names.end());
  return make(label, [set](const Primitive& q, std::span<const Aval>, const Params& params) {
    const std::string* n = name_of(q, params);
    return n != nullptr && set.count(*n) == 0;
  });
}
CheckpointPolicy save_anything_except_these_names(std::vector<std::string> names) {
  std::string label = "save_anything_except_these_names(" + names_str(names) + ")";
  NameSet set(names.begin(), names.end());
  return make(label, [set](const Primitive& q, std::span<const Aval>, const Params& params) {
    const std::string* n = name_of(q, params);
    return n == nullptr || set.count(*n) == 0;
  });
}
CheckpointPolicy save_from_both_policies(CheckpointPolicy p1, CheckpointPolicy p2) {
  p1 = prims::policy_or_default(std::move(p1));
  p2 = prims::policy_or_default(std::move(p2));
  std::string label = "save_from_both_policies(" + p1->name() + ", " + p2->name() + ")";
  return make(label,
              [p1, p2](const Primitive& q, std::span<const Aval> avals, const Params& params) {
                bool a = p1->saveable(q, avals, params);
                bool b = p2->saveable(q, avals, params);
                return a || b;
              });
}
CheckpointPolicy custom(std::string name, PolicyFn fn) {
  if (!fn)
    throw ValueError(op_message("checkpoint_policies.custom", "the policy function is empty"));
  return make(std::move(name), std::move(fn));
}

}  // namespace checkpoint_policies

namespace flat {

std::vector<Array> checkpoint(const Fun& f, std::span<const Array> args,
                              const CheckpointOptions& options) {
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].defined())
      throw ValueError(op_message(
          "checkpoint",
          "argument " + std::to_string(i) + " is an empty Array handle (default-constructed)"));
  if (!f) throw TypeError(op_message("checkpoint", "the function to checkpoint is empty"));
  auto [body, consts] = trace::hoist_consts(make_jaxpr(f, args));
  std::vector<Array> operands = std::move(consts);
  operands.insert(operands.end(), args.begin(), args.end());
  return tessera::bind(
      prims::remat_p, operands,
      prims::checkpoint_params(std::move(body), false, options.policy, options.prevent_cse));
}

Array checkpoint_name(const Array& x, const std::string& name) {
  if (!x.defined())
    throw ValueError(op_message("checkpoint_name", "the value is an empty Array handle"));
  return bind1(prims::name_p, {x}, Params{{"name", name}});
}

std::vector<SavedResidual> saved_residuals(const Fun& f, std::span<const Array> args) {
  // JAX's method: stage linearize(f) and read the residuals off the outputs of that jaxpr.
  Fun g = [&f](std::span<const Array> xs) {
    Linearized l = linearize(f, xs);
    std::vector<Array> res = l.linear_jaxpr().consts;
    return res;
  };
  ClosedJaxpr c = make_jaxpr(g, args);
  const Jaxpr& j = *c.jaxpr;
  std::vector<SavedResidual> out;
  using Kind = SavedResidual::Kind;
  auto add = [&out](const Aval& aval, Kind kind, std::string name, std::string where) {
    out.push_back(SavedResidual{aval, kind, -1, std::move(name), std::move(where)});
  };
  std::unordered_set<uint64_t> res_vars;
  for (const Atom& a : j.outvars) {
    if (const auto* v = std::get_if<Var>(&a))
      res_vars.insert(v->id());
    else
      add(atom_aval(a), Kind::kLiteral, "", "from a literal");
  }
  for (const Var& v : j.constvars)
    if (res_vars.count(v.id())) add(v.aval(), Kind::kConstant, "", "from a constant");
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (res_vars.count(j.invars[i].id())) {
      add(j.invars[i].aval(), Kind::kArgument, "",
          "from the argument at flattened index " + std::to_string(i));
      out.back().arg_index = static_cast<int64_t>(i);
    }
  // A value fed to a `name` equation counts as named too (as in JAX).
  std::unordered_map<uint64_t, const JaxprEqn*> named_inputs;
  for (const JaxprEqn& e : j.eqns)
    if (e.primitive == &prims::name_p)
      for (const Atom& a : e.invars)
        if (const auto* v = std::get_if<Var>(&a)) named_inputs.emplace(v->id(), &e);
  for (const JaxprEqn& e : j.eqns)
    for (const Var& v : e.outvars) {
      if (!res_vars.count(v.id())) continue;
      const JaxprEqn* named = e.primitive == &prims::name_p ? &e : nullptr;
      if (named == nullptr)
        if (auto it = named_inputs.find(v.id()); it != named_inputs.end()) named = it->second;
      if (named != nullptr) {
        const std::string& n = named->params.get<std::string>("name");
        add(v.aval(), Kind::kNamed, n, "named '" + n + "'");
      } else {
        add(v.aval(), Kind::kOutput, e.primitive->name(), "output of " + e.primitive->name());
      }
    }
  return out;
}

}  // namespace flat

void print_saved_residuals(std::ostream& os, std::span<const SavedResidual> residuals) {
  for (const SavedResidual& r : residuals) os << r.aval.str() << " " << r.where << "\n";
}

}  // namespace tessera
