// Loop fusion (fusion.h): grouping, then each group's kernel built by composing index maps.
#include "compiler/fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/index_map.h"
#include "tessera/errors.h"

namespace tessera::compiler {

namespace {

bool plain_dtype(DType t) {
  return !is_extended(t) && t != DType::kFloat16 && t != DType::kBFloat16;
}

bool transcendental(const scalar::Program& p) {
  for (const scalar::Instr& in : p.instrs)
    if ((in.op >= scalar::Op::kRsqrt && in.op <= scalar::Op::kNextAfter) ||
        in.op == scalar::Op::kExtern)
      return true;
  return false;
}

std::vector<Aval> in_avals(const JaxprEqn& e) {
  std::vector<Aval> v;
  v.reserve(e.invars.size());
  for (const Atom& a : e.invars) v.push_back(atom_aval(a));
  return v;
}

std::vector<kir::Affine> identity_point(const Shape& s) {
  std::vector<kir::Affine> p;
  for (size_t d = 0; d < s.size(); ++d) p.push_back(kir::Affine::dim(d, s.size()));
  return p;
}

// The point of an operand broadcast NumPy-style to a result whose point is `point`: its
// dimensions align with the result's last ones; a size-1 dimension is read at 0.
std::vector<kir::Affine> broadcast_point(const std::vector<kir::Affine>& point, const Shape& s) {
  std::vector<kir::Affine> p;
  if (s.empty()) return p;
  const size_t rank = point.empty() ? 0 : point[0].coeff.size();
  const size_t lead = point.size() - s.size();
  for (size_t k = 0; k < s.size(); ++k)
    p.push_back(s[k] == 1 ? kir::Affine::constant(0, rank) : point[lead + k]);
  return p;
}

// Thrown while building a body: equation `eqn` cannot be computed inside the kernel.
struct CannotCompose {
  size_t eqn;
};

// Builds one group's kernel. The body is built twice by the same walk: first to collect the
// loads and index values (the builder needs its inputs up front), then to emit the program.
class KernelBuilder {
 public:
  KernelBuilder(const Jaxpr& j, const std::unordered_map<uint64_t, size_t>& producer,
                const std::vector<int32_t>& group_of, int32_t group)
      : j_(j), producer_(producer), group_of_(group_of), group_(group) {}

  FusionGroup build(std::vector<size_t> members) {
    const JaxprEqn& root = j_.eqns[members.back()];
    const Var& out = root.outvars[0];
    dims_ = out.aval().shape;
    walk(out);  // collect
    std::vector<DType> types;
    for (const kir::Load& l : loads_)
      types.push_back(inputs_[static_cast<size_t>(l.param)].aval().dtype);
    for (size_t k = 0; k < indices_.size(); ++k) types.push_back(DType::kInt64);
    scalar::Builder b(types);
    builder_ = &b;
    memo_.clear();
    const scalar::Value r = walk(out);
    FusionGroup g;
    g.members = std::move(members);
    g.kernel.name = "fusion." + std::to_string(group_);
    g.kernel.dims = dims_;
    for (const Var& v : inputs_) g.kernel.inputs.push_back({v.aval().dtype, v.aval().shape});
    g.kernel.outputs.push_back({out.aval().dtype, out.aval().shape});
    g.kernel.loads = loads_;
    g.kernel.indices = indices_;
    g.kernel.body = std::move(b).finish({&r, 1});
    g.kernel.verify();
    g.kernel = g.kernel.collapsed();
    g.kernel.verify();
    g.inputs = inputs_;
    return g;
  }

 private:
  scalar::Value walk(const Var& root) { return at(Atom(root), identity_point(dims_)); }

  bool collecting() const { return builder_ == nullptr; }

  static std::string key(uint64_t id, std::span<const kir::Affine> point) {
    std::string k = std::to_string(id);
    for (const kir::Affine& a : point) {
      k += '|';
      k += a.str();
    }
    return k;
  }

  int32_t param_of(const Var& v) {
    for (size_t k = 0; k < inputs_.size(); ++k)
      if (inputs_[k] == v) return static_cast<int32_t>(k);
    inputs_.push_back(v);
    return static_cast<int32_t>(inputs_.size() - 1);
  }

  // A form over the kernel's dimensions (a point of a rank-0 value has no forms to take the
  // rank from: its offset is a constant).
  kir::Affine over_dims(kir::Affine a) const {
    if (a.coeff.empty()) a.coeff.assign(dims_.size(), 0);
    return a;
  }

  // The body input of a load (collect: registers it).
  scalar::Value load(const Var& v, const kir::Affine& index) {
    kir::Load l{param_of(v), over_dims(index)};
    size_t k = 0;
    while (k < loads_.size() && !(loads_[k] == l)) ++k;
    if (k == loads_.size()) {
      if (!collecting())
        throw_internal("compiler/fusion", "a load appeared only in the emitting walk");
      loads_.push_back(l);
    }
    return collecting() ? scalar::Value{0, v.aval().dtype} : builder_->input(static_cast<int>(k));
  }

  scalar::Value index_value(const kir::Affine& a) {
    kir::IndexValue iv{over_dims(a)};
    size_t k = 0;
    while (k < indices_.size() && !(indices_[k] == iv)) ++k;
    if (k == indices_.size()) {
      if (!collecting())
        throw_internal("compiler/fusion", "an index value appeared only in the emitting walk");
      indices_.push_back(iv);
    }
    return collecting() ? scalar::Value{0, DType::kInt64}
                        : builder_->input(static_cast<int>(loads_.size() + k));
  }

  bool member(const Var& v) const {
    auto it = producer_.find(v.id());
    return it != producer_.end() && group_of_[it->second] == group_;
  }

  scalar::Value at(const Atom& a, std::vector<kir::Affine> point) {
    if (const Literal* lit = std::get_if<Literal>(&a)) {
      const DType t = lit->aval().dtype;
      if (collecting()) return {0, t};
      const scalar::ScalarValue v = kir::read_element(lit->value().raw_data("jit"), t, 0);
      return builder_->constant_bits(v.bits, t);
    }
    const Var& v = std::get<Var>(a);
    if (!member(v)) return load(v, linear_offset(point, v.aval().shape));
    const std::string k = key(v.id(), point);
    if (auto it = memo_.find(k); it != memo_.end()) return it->second;
    const size_t m = producer_.at(v.id());
    const scalar::Value r = eqn_at(m, point);
    memo_.emplace(k, r);
    return r;
  }

  scalar::Value eqn_at(size_t m, const std::vector<kir::Affine>& point) {
    const JaxprEqn& e = j_.eqns[m];
    const std::vector<Aval> ins = in_avals(e);
    const Aval& out = e.outvars[0].aval();
    if (e.primitive->kind == PrimitiveKind::kElementwise) {
      std::vector<scalar::Value> args;
      for (size_t i = 0; i < e.invars.size(); ++i)
        args.push_back(at(e.invars[i], broadcast_point(point, ins[i].shape)));
      if (collecting()) return {0, out.dtype};
      return splice(scalar_program(*e.primitive, ins, e.params), args);
    }
    const std::optional<IndexMapResult> r =
        (*index_map_rule(*e.primitive))(ins, out, e.params, point);
    if (!r) throw CannotCompose{m};
    switch (r->kind) {
      case IndexMapResult::Kind::kOperand:
        return at(e.invars[0], r->point);
      case IndexMapResult::Kind::kLinear: {
        const Var& x = std::get<Var>(e.invars[0]);
        if (!member(x)) return load(x, r->value);
        std::optional<std::vector<kir::Affine>> p =
            delinearize(over_dims(r->value), x.aval().shape, dims_);
        if (!p) throw CannotCompose{producer_.at(x.id())};
        return at(e.invars[0], *p);
      }
      case IndexMapResult::Kind::kIndex: {
        const scalar::Value i = index_value(r->value);
        if (collecting()) return {0, out.dtype};
        return out.dtype == DType::kInt64 ? i : builder_->convert(i, out.dtype);
      }
    }
    throw_internal("compiler/fusion", "unknown index-map result");
  }

  // Emits program p's instructions with its inputs bound to args.
  scalar::Value splice(const scalar::Program& p, std::span<const scalar::Value> args) {
    scalar::Builder& b = *builder_;
    std::vector<scalar::Value> val(p.instrs.size());
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      const scalar::Instr& in = p.instrs[i];
      std::vector<scalar::Value> ops;
      const int n = in.op == scalar::Op::kExtern
                        ? scalar::fn_arity(static_cast<scalar::Fn>(in.index))
                        : scalar::op_arity(in.op);
      for (int k = 0; k < n; ++k) ops.push_back(val[static_cast<size_t>(in.args[k])]);
      switch (in.op) {
        case scalar::Op::kInput:
          val[i] = args[static_cast<size_t>(in.index)];
          break;
        case scalar::Op::kConst:
          val[i] = b.constant_bits(in.literal, in.type);
          break;
        case scalar::Op::kExtern:
          val[i] = b.call(static_cast<scalar::Fn>(in.index), ops);
          break;
        default:
          val[i] = b.op(in.op, ops, in.type);
      }
    }
    return val[static_cast<size_t>(p.outputs.at(0))];
  }

  const Jaxpr& j_;
  const std::unordered_map<uint64_t, size_t>& producer_;
  const std::vector<int32_t>& group_of_;
  int32_t group_;
  Shape dims_;
  scalar::Builder* builder_ = nullptr;
  std::vector<Var> inputs_;
  std::vector<kir::Load> loads_;
  std::vector<kir::IndexValue> indices_;
  std::unordered_map<std::string, scalar::Value> memo_;
};

}  // namespace

bool fusible(const JaxprEqn& e) {
  if (!e.effects.empty() || e.outvars.size() != 1) return false;
  const Primitive& p = *e.primitive;
  const bool elementwise = p.kind == PrimitiveKind::kElementwise && p.scalar.rule;
  const bool index_map = p.kind == PrimitiveKind::kIndexMap && index_map_rule(p) != nullptr;
  if (!elementwise && !index_map) return false;
  const Shape& out = e.outvars[0].aval().shape;
  if (!plain_dtype(e.outvars[0].aval().dtype)) return false;
  // Elementwise: one value per point, the operands broadcast NumPy-style (right-aligned, size-1
  // dimensions stretched) to exactly the output — not bigger (bitcast_convert_type to a
  // narrower type adds a dimension, which is no elementwise map of points).
  Shape bshape;
  for (const Atom& a : e.invars) {
    const Aval& av = atom_aval(a);
    if (!plain_dtype(av.dtype)) return false;
    if (!elementwise) continue;
    if (av.shape.size() > bshape.size())
      bshape.insert(bshape.begin(), av.shape.size() - bshape.size(), 1);
    const size_t lead = bshape.size() - av.shape.size();
    for (size_t k = 0; k < av.shape.size(); ++k) {
      int64_t& d = bshape[lead + k];
      if (d == 1)
        d = av.shape[k];
      else if (av.shape[k] != 1 && av.shape[k] != d)
        return false;
    }
  }
  if (elementwise && bshape != out) return false;
  if (index_map) {
    if (e.invars.size() > 1) return false;  // dynamic starts, several operands: not yet
    const std::vector<Aval> ins = in_avals(e);
    const Aval& out = e.outvars[0].aval();
    if (!(*index_map_rule(p))(ins, out, e.params, identity_point(out.shape))) return false;
  }
  return true;
}

FusionPlan plan_fusion(const Jaxpr& j) {
  const size_t n = j.eqns.size();
  std::unordered_map<uint64_t, size_t> producer;
  std::unordered_map<uint64_t, std::vector<size_t>> readers;
  std::unordered_set<uint64_t> outputs;
  std::vector<char> can(n, 0), expensive(n, 0);
  for (size_t k = 0; k < n; ++k) {
    const JaxprEqn& e = j.eqns[k];
    for (const Var& v : e.outvars) producer[v.id()] = k;
    for (const Atom& a : e.invars)
      if (const Var* v = std::get_if<Var>(&a)) readers[v->id()].push_back(k);
    can[k] = fusible(e);
    if (can[k] && e.primitive->kind == PrimitiveKind::kElementwise)
      expensive[k] = transcendental(scalar_program(*e.primitive, in_avals(e), e.params));
  }
  for (const Atom& a : j.outvars)
    if (const Var* v = std::get_if<Var>(&a)) outputs.insert(v->id());

  std::set<size_t> forced_roots;
  for (;;) {
    std::vector<int32_t> group_of(n, -1);
    std::vector<std::vector<size_t>> members;
    std::vector<int64_t> root_points;
    for (size_t k = n; k-- > 0;) {
      if (!can[k]) continue;
      const Var& v = j.eqns[k].outvars[0];
      int32_t g = -1;
      const auto rd = readers.find(v.id());
      if (!forced_roots.count(k) && !outputs.count(v.id()) && rd != readers.end()) {
        g = group_of[rd->second.front()];
        for (size_t u : rd->second)
          if (group_of[u] != g) g = -1;
        if (g >= 0 && expensive[k] && root_points[static_cast<size_t>(g)] > v.aval().size()) g = -1;
      }
      if (g < 0) {
        g = static_cast<int32_t>(members.size());
        members.emplace_back();
        root_points.push_back(v.aval().size());
      }
      group_of[k] = g;
      members[static_cast<size_t>(g)].push_back(k);
    }
    // Keep the groups worth a kernel, renumbered in program order.
    FusionPlan plan;
    plan.group_of.assign(n, -1);
    std::vector<std::vector<size_t>> kept;
    for (size_t k = 0; k < n; ++k) {
      if (group_of[k] < 0) continue;
      auto& ms = members[static_cast<size_t>(group_of[k])];
      if (ms.empty() || ms.front() != k)
        continue;  // visit each group at its root (members are
                   // pushed root first)
      bool elementwise = false;
      for (size_t m : ms) elementwise |= j.eqns[m].primitive->kind == PrimitiveKind::kElementwise;
      if (ms.size() < 2 || !elementwise) continue;
      std::vector<size_t> sorted(ms.rbegin(), ms.rend());
      for (size_t m : sorted) plan.group_of[m] = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(sorted));
    }
    // Groups are numbered by root order: sort by root.
    std::vector<size_t> order(kept.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return kept[a].back() < kept[b].back(); });
    std::vector<int32_t> renumber(kept.size());
    for (size_t i = 0; i < order.size(); ++i) renumber[order[i]] = static_cast<int32_t>(i);
    for (int32_t& g : plan.group_of)
      if (g >= 0) g = renumber[static_cast<size_t>(g)];
    try {
      for (size_t i = 0; i < order.size(); ++i) {
        KernelBuilder kb(j, producer, plan.group_of, static_cast<int32_t>(i));
        plan.groups.push_back(kb.build(kept[order[i]]));
      }
      return plan;
    } catch (const CannotCompose& c) {
      if (!forced_roots.insert(c.eqn).second)
        throw_internal("compiler/fusion", "equation " + std::to_string(c.eqn) +
                                              " cannot be composed even as a group root");
    }
  }
}

}  // namespace tessera::compiler
