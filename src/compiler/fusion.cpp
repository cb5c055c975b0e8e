// Loop fusion (fusion.h): grouping, then each group's kernel built by composing index maps.
#include "compiler/fusion.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/index_map.h"
#include "compiler/reduce_order.h"
#include "compiler/reduce_rule.h"
#include "core/env.h"
#include "tessera/errors.h"

namespace tessera::compiler {

namespace {

bool plain_dtype(DType t) {
  return !is_extended(t) && t != DType::kFloat16 && t != DType::kBFloat16;
}

bool half_dtype(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// Whether a scalar program touches 16-bit floats only by converting them to float32 and float32
// results back (and by constants): what scalar_program's driver makes of every elementwise
// primitive without raw 16-bit access — the eager kernels' "computed in float32, rounded once per
// op". Kernels move 16-bit values as bits and a backend needs only those two conversions.
bool sixteen_bit_ok(const scalar::Program& p) {
  for (const scalar::Instr& in : p.instrs) {
    if (in.op == scalar::Op::kInput || in.op == scalar::Op::kConst) continue;
    const int n = in.op == scalar::Op::kExtern ? scalar::fn_arity(static_cast<scalar::Fn>(in.index))
                                               : scalar::op_arity(in.op);
    bool half_operand = false;
    for (int k = 0; k < n; ++k)
      half_operand |= half_dtype(p.instrs[static_cast<size_t>(in.args[k])].type);
    if (!half_operand && !half_dtype(in.type)) continue;
    if (in.op != scalar::Op::kConvert) return false;
    const DType from = p.instrs[static_cast<size_t>(in.args[0])].type;
    if (!(half_dtype(from) && in.type == DType::kFloat32) &&
        !(from == DType::kFloat32 && half_dtype(in.type)))
      return false;
  }
  return true;
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

// A fusible reduction and the space its kernel iterates over: the operand's kept dimensions in
// order (the result's), then its reduced ones in order. The eager kernel (reductions.cpp) drops
// size-1 dimensions, merges neighbours of the same kind and reduces one group at a time; a
// fused kernel must give its bits, so only what eager does in one pass fuses: one reduced
// group — trailing (a row reduction: the stage's order) or followed by kept dimensions of
// total size I (a column reduction, `columns` = I: the lowering's column order; eager's
// narrow-column path, I < 32 with R >= 2 * (256 / I), does not fuse).
struct FusedReduction {
  ReductionInfo info;
  Shape space;
  std::vector<size_t> space_of;  // operand dimension d is space dimension space_of[d]
  size_t outer = 0;
  int64_t columns = 0;
  bool permuted() const {
    for (size_t d = 0; d < space_of.size(); ++d)
      if (space_of[d] != d) return true;
    return false;
  }
  bool same_space(const FusedReduction& o) const {
    return space == o.space && space_of == o.space_of && outer == o.outer && columns == o.columns;
  }
};

// Longer reductions stay eager: up to this length the eager kernel folds a row in one piece
// (reduce_contig), in the order a stage reproduces (cpu/llvm_codegen.h); beyond, it splits
// rows into chunks over threads. Column reductions keep the same bound (the lowering's schedule
// grows with it).
constexpr int64_t kMaxFusedReduction = reduce_order::kRowChunk;

std::optional<FusedReduction> fusible_reduction(const JaxprEqn& e) {
  const Primitive& p = *e.primitive;
  if (p.kind != PrimitiveKind::kReduction || e.invars.size() != 1) return std::nullopt;
  const ReductionRule* rule = reduction_rule(p);
  if (rule == nullptr) return std::nullopt;
  const std::vector<Aval> ins = in_avals(e);
  std::optional<ReductionInfo> info = (*rule)(ins, e.outvars[0].aval(), e.params);
  if (!info || info->axes.empty()) return std::nullopt;
  const Shape& x = ins[0].shape;
  const int64_t r = static_cast<int64_t>(x.size());
  std::vector<char> red(x.size(), 0);
  for (int64_t& a : info->axes) {
    if (a < 0) a += r;
    if (a < 0 || a >= r) return std::nullopt;
    red[static_cast<size_t>(a)] = 1;
  }
  std::sort(info->axes.begin(), info->axes.end());
  // Eager's groups: size-1 dimensions dropped, neighbours of one kind merged.
  std::vector<std::pair<int64_t, bool>> groups;
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    if (!groups.empty() && groups.back().second == static_cast<bool>(red[d]))
      groups.back().first *= x[d];
    else
      groups.emplace_back(x[d], red[d] != 0);
  }
  int64_t reduced_groups = 0, R = 1, I = 1;
  for (const auto& [size, reduced] : groups) {
    if (reduced) {
      ++reduced_groups;
      R *= size;
    } else if (reduced_groups > 0) {
      I *= size;
    }
  }
  if (reduced_groups > 1 || R > kMaxFusedReduction) return std::nullopt;
  FusedReduction f;
  if (I > 1) {
    if (reduce_order::narrow_column_path(R, I)) return std::nullopt;  // stays eager
    f.columns = I;
  }
  f.space_of.assign(x.size(), 0);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t d = 0; d < x.size(); ++d)
      if (static_cast<bool>(red[d]) == (pass == 1)) {
        f.space_of[d] = f.space.size();
        f.space.push_back(x[d]);
      }
  f.outer = x.size() - info->axes.size();
  const Shape outer(f.space.begin(), f.space.begin() + static_cast<std::ptrdiff_t>(f.outer));
  if (outer != e.outvars[0].aval().shape) return std::nullopt;
  f.info = std::move(*info);
  return f;
}

// Whether a value of shape s, read in a space of shape `space`, is constant along the space's
// trailing dimensions (s without its trailing unit dimensions is a prefix of the space): then
// the code generator computes it once per row (it is invariant in the inner loop), so an
// expensive value may join although the space has more points than it has elements.
bool row_prefix(const Shape& s, const Shape& space) {
  size_t n = s.size();
  while (n > 0 && s[n - 1] == 1) --n;
  if (n >= space.size()) return false;
  for (size_t d = 0; d < n; ++d)
    if (s[d] != space[d]) return false;
  return true;
}

// Emits program p's instructions into b with its inputs bound to args; returns its outputs.
std::vector<scalar::Value> splice_program(scalar::Builder& b, const scalar::Program& p,
                                          std::span<const scalar::Value> args) {
  std::vector<scalar::Value> val(p.instrs.size());
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const scalar::Instr& in = p.instrs[i];
    std::vector<scalar::Value> ops;
    const int n = in.op == scalar::Op::kExtern ? scalar::fn_arity(static_cast<scalar::Fn>(in.index))
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
  std::vector<scalar::Value> out;
  for (int32_t o : p.outputs) out.push_back(val[static_cast<size_t>(o)]);
  return out;
}

// Thrown while building a body: equation `eqn` cannot be computed inside the kernel.
struct CannotCompose {
  size_t eqn;
};

// Thrown by a build whose space came from a reduction its root does not read.
struct UnreachedReduction {};

// Every form of k over its extended space (dims, then symbols): symbols found along the way
// leave earlier forms shorter (a missing coefficient is 0).
void pad_forms(kir::Kernel& k) {
  const size_t rank = k.dims.size() + k.symbols.size();
  auto pad = [rank](kir::Affine& a) { a.coeff.resize(rank, 0); };
  auto pad_loads = [&](std::vector<kir::Load>& ls) {
    for (kir::Load& l : ls) {
      pad(l.index);
      for (kir::Guard& g : l.guards) pad(g.value);
    }
  };
  pad_loads(k.loads);
  for (kir::IndexValue& iv : k.indices) pad(iv.value);
  for (kir::Stage& st : k.stages) {
    pad_loads(st.loads);
    for (kir::IndexValue& iv : st.indices) pad(iv.value);
  }
}

// Builds one group's kernel. Each body (the kernel's, each stage's) is built twice by the same
// walk: first to collect the loads and index values (the builder needs its inputs up front) —
// which builds the stages of the reductions it reaches — then to emit the program.
class KernelBuilder {
 public:
  KernelBuilder(const Jaxpr& j, const std::unordered_map<uint64_t, size_t>& producer,
                const std::vector<int32_t>& group_of, int32_t group,
                bool reductions_set_space = true)
      : j_(j),
        producer_(producer),
        group_of_(group_of),
        group_(group),
        reductions_set_space_(reductions_set_space) {}

  // `extras`: members' results read outside the group too (a later equation, the program's
  // outputs), stored beside the root's result at every point of a map space equal to theirs.
  FusionGroup build(std::vector<size_t> members, const std::vector<size_t>& extras = {}) {
    const JaxprEqn& root = j_.eqns[members.back()];
    const Var& out = root.outvars[0];
    std::vector<kir::Affine> root_point;
    // The space: a reduction root's (else the first reduction's) result dimensions, then the
    // ones it folds; a reduction that folds another space is split off by CannotCompose.
    std::vector<size_t> order{members.back()};
    order.insert(order.end(), members.begin(), members.end() - 1);
    for (size_t m : order) {
      if (!reductions_set_space_) break;
      std::optional<FusedReduction> fr = fusible_reduction(j_.eqns[m]);
      if (!fr) continue;
      const Shape& x = atom_aval(j_.eqns[m].invars[0]).shape;
      const Shape& r = j_.eqns[m].outvars[0].aval().shape;
      dims_ = fr->space;
      outer_ = fr->outer;
      if (out.aval().shape == r) {
        row_outputs_ = true;
        for (size_t d = 0; d < outer_; ++d) root_point.push_back(kir::Affine::dim(d, dims_.size()));
      } else if (out.aval().shape == x && !fr->permuted()) {
        root_point = identity_point(x);
      } else {
        // Outputs are stored in the space's row-major order: a permuted space (a column
        // reduction, size-1 dimensions moved) stores row values only.
        throw CannotCompose{m};
      }
      space_ = std::move(fr);
      space_eqn_ = m;
      break;
    }
    if (outer_ == SIZE_MAX) {
      dims_ = out.aval().shape;
      outer_ = dims_.size();
      root_point = identity_point(dims_);
    }
    Phase final_phase;
    final_phase.sees_saved = !row_outputs_;
    for (size_t m : extras)
      if (row_outputs_ || j_.eqns[m].outvars[0].aval().shape != dims_) throw CannotCompose{m};
    scalar::Program body = phase(final_phase, [&] {
      std::vector<scalar::Value> r;
      for (size_t m : extras) r.push_back(at(Atom(j_.eqns[m].outvars[0]), identity_point(dims_)));
      r.push_back(at(Atom(out), root_point));
      return r;
    });
    FusionGroup g;
    g.members = std::move(members);
    kir::Kernel& k = g.kernel;
    k.name = "fusion." + std::to_string(group_);
    k.dims = dims_;
    k.inner = dims_.size() - outer_;
    k.row_outputs = row_outputs_;
    k.columns = space_ ? space_->columns : 0;
    k.stages = std::move(stages_);
    for (const Var& v : inputs_) k.inputs.push_back({v.aval().dtype, v.aval().shape});
    for (size_t m : extras) {
      const Aval& a = j_.eqns[m].outvars[0].aval();
      k.outputs.push_back({a.dtype, a.shape});
    }
    k.outputs.push_back({out.aval().dtype, out.aval().shape});
    k.loads = std::move(final_phase.loads);
    k.indices = std::move(final_phase.indices);
    k.body = std::move(body);
    k.symbols = symbols_;
    pad_forms(k);
    // The space came from a reduction the root never reached (an operand an index map ignores:
    // the start of a full-size dynamic_slice): build again over the root's space.
    if (k.inner > 0 && k.stages.empty()) throw UnreachedReduction{};
    // What a column kernel's lowering takes (kernel_ir.h); the checks above keep to it, and
    // anything they miss makes the reduction a root (then eager), never an ill-formed kernel.
    if (k.columns > 0 &&
        (k.stages.size() != 1 || k.stages[0].saves != 0 || !k.symbols.empty() || !k.row_outputs))
      throw CannotCompose{space_eqn_};
    k.verify();
    g.inputs = inputs_;
    for (size_t m : extras) g.outputs.push_back(j_.eqns[m].outvars[0]);
    g.outputs.push_back(out);
    return g;
  }

 private:
  // One body being built: its loads and index values, values computed at a point.
  struct Phase {
    std::vector<kir::Load> loads;
    std::vector<kir::IndexValue> indices;
    std::unordered_map<std::string, scalar::Value> memo;
    scalar::Builder* builder = nullptr;  // null while collecting
    bool stage = false;                  // a stage's body: may save values for later bodies
    bool sees_saved = true;              // runs per inner point (reads saved values)
    std::vector<std::pair<std::string, scalar::Value>> saves;  // (key, value) it saves
  };

  // Builds one body by running `walk` twice (collect, emit) with `ph` current.
  scalar::Program phase(Phase& ph, const std::function<std::vector<scalar::Value>()>& walk) {
    Phase* saved = ph_;
    ph_ = &ph;
    std::vector<kir::Guard> outer_guards = std::move(guards_);
    std::vector<size_t> outer_owners = std::move(guard_owner_);
    guards_.clear();
    guard_owner_.clear();
    walk();  // collect: fixes the loads, index values and the stages it needs
    std::vector<DType> types;
    for (const kir::Load& l : ph.loads)
      types.push_back(inputs_[static_cast<size_t>(l.param)].aval().dtype);
    for (size_t k = 0; k < ph.indices.size(); ++k) types.push_back(DType::kInt64);
    types.insert(types.end(), row_types_.begin(), row_types_.end());
    rows_visible_.push_back(row_types_.size());
    const size_t n_saved = ph.sees_saved ? saved_types_.size() : 0;
    types.insert(types.end(), saved_types_.begin(),
                 saved_types_.begin() + static_cast<std::ptrdiff_t>(n_saved));
    saved_visible_.push_back(n_saved);
    scalar::Builder b(types);
    ph.builder = &b;
    ph.memo.clear();
    std::vector<scalar::Value> r = walk();
    for (const auto& kv : ph.saves) r.push_back(kv.second);
    scalar::Program p = std::move(b).finish(r);
    ph.builder = nullptr;
    rows_visible_.pop_back();
    saved_visible_.pop_back();
    ph_ = saved;
    guards_ = std::move(outer_guards);
    guard_owner_ = std::move(outer_owners);
    return p;
  }

  bool collecting() const { return ph_->builder == nullptr; }

  static std::string key(uint64_t id, std::span<const kir::Affine> point) {
    std::string k = std::to_string(id);
    for (const kir::Affine& a : point) {
      k += '|';
      k += a.str();
    }
    return k;
  }

  // The key of a value computed under the current guards (its loads are guarded).
  std::string guarded_key(uint64_t id, std::span<const kir::Affine> point) const {
    std::string k = key(id, point);
    for (const kir::Guard& g : guards_) {
      k += " if ";
      k += g.str();
    }
    return k;
  }

  int32_t param_of(const Var& v) {
    for (size_t k = 0; k < inputs_.size(); ++k)
      if (inputs_[k] == v) return static_cast<int32_t>(k);
    inputs_.push_back(v);
    return static_cast<int32_t>(inputs_.size() - 1);
  }

  // The position of `item` in `list`, appended by the collecting walk (the emitting walk finds
  // everything the collecting walk registered).
  template <class T>
  size_t registered(std::vector<T>& list, const T& item, const char* what) {
    size_t k = 0;
    while (k < list.size() && !(list[k] == item)) ++k;
    if (k == list.size()) {
      if (!collecting())
        throw_internal("compiler/fusion",
                       std::string(what) + " appeared only in the emitting walk");
      list.push_back(item);
    }
    return k;
  }

  // A form over the kernel's dimensions (a point of a rank-0 value has no forms to take the
  // rank from: its offset is a constant).
  kir::Affine over_dims(kir::Affine a) const {
    if (a.coeff.empty()) a.coeff.assign(dims_.size(), 0);
    return a;
  }

  // The body input of a load (collect: registers it).
  scalar::Value load(const Var& v, const kir::Affine& index) {
    kir::Load l{param_of(v), over_dims(index), guards_};
    if (!guards_.empty()) {
      // Guards on several dimensions do not narrow the range the verifier proves: such a piece
      // is computed by a kernel of its own.
      const auto range = l.index_range(ext_dims());
      if (range && (range->first < 0 || range->second >= v.aval().size()))
        throw CannotCompose{guard_owner_.back()};
    }
    const size_t k = registered(ph_->loads, l, "a load");
    return collecting() ? scalar::Value{0, v.aval().dtype}
                        : ph_->builder->input(static_cast<int>(k));
  }

  scalar::Value index_value(const kir::Affine& a) {
    kir::IndexValue iv{over_dims(a)};
    const size_t k = registered(ph_->indices, iv, "an index value");
    return collecting() ? scalar::Value{0, DType::kInt64}
                        : ph_->builder->input(static_cast<int>(ph_->loads.size() + k));
  }

  // Whether two forms take the same value at every point of the space (a unit dimension's
  // coefficient does not matter: NumPy-style broadcasting reads it at 0).
  bool same_over_space(const kir::Affine& a, const kir::Affine& b) const {
    if (a.offset != b.offset) return false;
    const std::vector<int64_t> ext = ext_dims();
    auto c = [](const kir::Affine& f, size_t d) { return d < f.coeff.size() ? f.coeff[d] : 0; };
    for (size_t d = 0; d < ext.size(); ++d)
      if (ext[d] != 1 && c(a, d) != c(b, d)) return false;
    return true;
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
      return ph_->builder->constant_bits(v.bits, t);
    }
    const Var& v = std::get<Var>(a);
    if (!member(v)) return load(v, linear_offset(point, v.aval().shape));
    const std::string k = guarded_key(v.id(), point);
    if (auto it = ph_->memo.find(k); it != ph_->memo.end()) return it->second;
    // A value an earlier stage saved at this point.
    if (auto it = saved_of_.find(k); it != saved_of_.end() && ph_->sees_saved &&
                                     (collecting() || it->second < saved_visible_.back())) {
      if (collecting()) return {0, v.aval().dtype};
      const scalar::Value r = ph_->builder->input(static_cast<int>(
          ph_->loads.size() + ph_->indices.size() + rows_visible_.back() + it->second));
      ph_->memo.emplace(k, r);
      return r;
    }
    const size_t m = producer_.at(v.id());
    const scalar::Value r = eqn_at(m, point, v.id());
    ph_->memo.emplace(k, r);
    return r;
  }

  // A reduction member read at `point`: its row value, the stage computing it built on first
  // use. It must be read at the outer point itself and fold exactly the kernel's inner
  // dimensions.
  scalar::Value reduction_at(size_t m, const FusedReduction& fr,
                             const std::vector<kir::Affine>& point) {
    const JaxprEqn& e = j_.eqns[m];
    const Var& res = e.outvars[0];
    const ReductionInfo& info = fr.info;
    bool ok = space_ && fr.same_space(*space_) && res.aval().shape.size() == outer_ &&
              point.size() == outer_;
    for (size_t d = 0; ok && d < outer_; ++d)
      ok = same_over_space(over_dims(point[d]), kir::Affine::dim(d, dims_.size()));
    if (!ok) throw CannotCompose{m};
    auto it = row_of_.find(res.id());
    if (it == row_of_.end()) {
      if (!collecting())
        throw_internal("compiler/fusion", "a reduction appeared only in the emitting walk");
      std::vector<kir::Affine> x_point;
      for (size_t d : fr.space_of) x_point.push_back(kir::Affine::dim(d, dims_.size()));
      Phase st;
      st.stage = true;
      scalar::Program body =
          phase(st, [&] { return std::vector<scalar::Value>{at(e.invars[0], x_point)}; });
      const DType t = res.aval().dtype;
      // A column kernel folds one stage (its lowering's schedule): a second reduction (a
      // variance's mean, built first as it is read inside) is split off — the one that did not
      // set the space.
      if (space_->columns > 0 && !stages_.empty())
        throw CannotCompose{m == space_eqn_ ? stage_eqns_.front() : m};
      stage_eqns_.push_back(m);
      stages_.push_back(kir::Stage{std::move(st.loads),
                                   std::move(st.indices),
                                   std::move(body),
                                   {kir::Reducer{info.op, t}},
                                   st.saves.size()});
      for (const auto& [key, value] : st.saves) {
        saved_of_.emplace(key, saved_types_.size());
        saved_types_.push_back(value.type);
      }
      it = row_of_.emplace(res.id(), row_types_.size()).first;
      row_types_.push_back(res.aval().dtype);
    }
    if (collecting()) return {0, res.aval().dtype};
    if (it->second >= rows_visible_.back())
      throw_internal("compiler/fusion", "a row value read before its stage");
    return ph_->builder->input(
        static_cast<int>(ph_->loads.size() + ph_->indices.size() + it->second));
  }

  // Equation m's result `id` at `point` (a multi-result elementwise equation computes all its
  // results there once: the others are memoized beside it).
  scalar::Value eqn_at(size_t m, const std::vector<kir::Affine>& point, uint64_t id) {
    const JaxprEqn& e = j_.eqns[m];
    const std::vector<Aval> ins = in_avals(e);
    size_t which = 0;
    while (which + 1 < e.outvars.size() && e.outvars[which].id() != id) ++which;
    const Aval& out = e.outvars[which].aval();
    if (e.primitive->kind == PrimitiveKind::kReduction) {
      const std::optional<FusedReduction> fr = fusible_reduction(e);
      if (!fr) throw CannotCompose{m};
      return reduction_at(m, *fr, point);
    }
    if (e.primitive->kind == PrimitiveKind::kElementwise) {
      std::vector<scalar::Value> args;
      for (size_t i = 0; i < e.invars.size(); ++i)
        args.push_back(at(e.invars[i], broadcast_point(point, ins[i].shape)));
      if (collecting()) return {0, out.dtype};
      const scalar::Program prog = scalar_program(*e.primitive, ins, e.params);
      if (e.outvars.size() > 1) {
        const std::vector<scalar::Value> rs = splice_program(*ph_->builder, prog, args);
        for (size_t i = 0; i < rs.size(); ++i)
          if (i != which) ph_->memo.emplace(guarded_key(e.outvars[i].id(), point), rs[i]);
        return rs.at(which);
      }
      const scalar::Value r = splice(prog, args);
      // An expensive value at the point itself, in a stage of a kernel whose body runs per
      // point: saved for the later bodies (softmax's exp is computed once).
      if (ph_->stage && !row_outputs_ && guards_.empty() && transcendental(prog)) {
        const std::string k = key(e.outvars[0].id(), point);
        if (k == key(e.outvars[0].id(), identity_point(dims_)) && !saved_of_.count(k))
          ph_->saves.emplace_back(k, r);
      }
      return r;
    }
    const std::optional<IndexMapResult> r = (*index_map_rule(*e.primitive))(
        ins, out, e.params, point,
        [&](size_t operand, std::span<const kir::Affine> at, int64_t lo, int64_t hi) {
          return dynamic_term(m, operand, at, lo, hi);
        });
    if (!r) throw CannotCompose{m};
    switch (r->kind) {
      case IndexMapResult::Kind::kOperand:
        return at(e.invars[0], r->point);
      case IndexMapResult::Kind::kLinear: {
        const Var& x = std::get<Var>(e.invars[0]);
        if (!member(x)) return load(x, r->value);
        std::optional<std::vector<kir::Affine>> p =
            delinearize(over_dims(r->value), x.aval().shape, ext_dims());
        if (!p) throw CannotCompose{producer_.at(x.id())};
        return at(e.invars[0], *p);
      }
      case IndexMapResult::Kind::kIndex: {
        const scalar::Value i = index_value(r->value);
        if (collecting()) return {0, out.dtype};
        return out.dtype == DType::kInt64 ? i : ph_->builder->convert(i, out.dtype);
      }
      case IndexMapResult::Kind::kSelect:
        return select_at(m, r->pieces);
    }
    throw_internal("compiler/fusion", "unknown index-map result");
  }

  // clamp(operand's element at `at`, lo, hi) as a form: a constant for a literal, else a symbol
  // of the kernel (the operand read from memory: a computed one is split off to be
  // materialized). A symbol is read per point, before any guard, so its element must be a
  // function of the iteration indices alone (not of other symbols), inside the operand over the
  // whole space, and constant along a reduction kernel's inner dimensions; otherwise equation m
  // is computed by a kernel of its own.
  kir::Affine dynamic_term(size_t m, size_t operand, std::span<const kir::Affine> at, int64_t lo,
                           int64_t hi) {
    const Atom& a = j_.eqns[m].invars[operand];
    const Shape& shape = atom_aval(a).shape;
    if (at.size() != shape.size())
      throw_internal("compiler/fusion", "a dynamic value's point has the wrong rank");
    kir::Affine index = over_dims(linear_offset(at, shape));
    for (size_t d = dims_.size(); d < index.coeff.size(); ++d)
      if (index.coeff[d] != 0) throw CannotCompose{m};
    index.coeff.resize(dims_.size(), 0);
    if (const Literal* lit = std::get_if<Literal>(&a)) {
      if (!index.is_constant()) throw CannotCompose{m};
      const Aval& av = lit->aval();
      const scalar::ScalarValue v =
          kir::read_element(lit->value().raw_data("jit"), av.dtype, index.offset);
      return kir::Affine::constant(kir::Symbol::clamp(v, lo, hi), dims_.size());
    }
    const Var& v = std::get<Var>(a);
    if (member(v)) throw CannotCompose{producer_.at(v.id())};
    for (size_t d = outer_; d < dims_.size(); ++d)
      if (index.coeff[d] != 0) throw CannotCompose{m};
    if (shape_size(dims_) > 0 &&
        (index.min_over(dims_) < 0 || index.max_over(dims_) >= shape_size(shape)))
      throw CannotCompose{m};
    // A column kernel's loads are affine across its block of columns: no symbols there.
    if (space_ && space_->columns > 0) throw CannotCompose{m};
    const kir::Symbol sy{param_of(v), std::move(index), lo, hi};
    const size_t k = registered(symbols_, sy, "a symbol");
    kir::Affine t = kir::Affine::constant(lo, dims_.size() + k + 1);
    t.coeff[dims_.size() + k] = 1;
    return t;
  }

  // The iteration dimensions, then each symbol's extent.
  std::vector<int64_t> ext_dims() const {
    std::vector<int64_t> d(dims_.begin(), dims_.end());
    for (const kir::Symbol& sy : symbols_) d.push_back(sy.extent());
    return d;
  }

  // The first piece whose guards hold: each piece computed with its loads guarded (guards that
  // hold everywhere dropped, pieces that hold nowhere skipped), then a chain of selects on the
  // guards' conditions, from index values.
  scalar::Value select_at(size_t m, const std::vector<IndexMapPiece>& pieces) {
    const JaxprEqn& e = j_.eqns[m];
    const DType t = e.outvars[0].aval().dtype;
    std::vector<std::pair<std::vector<kir::Guard>, scalar::Value>> taken;
    const std::vector<int64_t> ext = ext_dims();  // the rule added its symbols already
    for (const IndexMapPiece& piece : pieces) {
      std::vector<kir::Guard> gs;
      bool never = false;
      for (kir::Guard g : piece.guards) {
        g.value = over_dims(g.value);
        const int64_t mn = g.value.min_over(ext), mx = g.value.max_over(ext);
        if (mx < g.lo || mn >= g.hi) never = true;
        if (mn < g.lo || mx >= g.hi) gs.push_back(std::move(g));
      }
      if (never) continue;
      const size_t depth = guards_.size();
      guards_.insert(guards_.end(), gs.begin(), gs.end());
      guard_owner_.insert(guard_owner_.end(), gs.size(), m);
      scalar::Value v{0, t};
      if (!piece.constant)
        v = at(e.invars[piece.operand], piece.point);
      else if (!collecting())
        v = ph_->builder->constant_bits(piece.constant->bits, t);
      guards_.resize(depth);
      guard_owner_.resize(depth);
      for (const kir::Guard& g : gs) index_value(g.value);  // the conditions' inputs
      taken.emplace_back(std::move(gs), v);
      if (taken.back().first.empty()) break;  // holds everywhere: later pieces are never read
    }
    if (taken.empty()) throw CannotCompose{m};  // no piece: the rule said something impossible
    if (collecting()) return {0, t};
    scalar::Builder& b = *ph_->builder;
    scalar::Value r = taken.back().second;
    for (size_t k = taken.size() - 1; k-- > 0;) {
      scalar::Value c{};
      bool first = true;
      for (const kir::Guard& g : taken[k].first) {
        const scalar::Value i = index_value(g.value);
        const scalar::Value ok =
            b.bit_and(b.ge(i, b.constant_bits(static_cast<uint64_t>(g.lo), DType::kInt64)),
                      b.lt(i, b.constant_bits(static_cast<uint64_t>(g.hi), DType::kInt64)));
        c = first ? ok : b.bit_and(c, ok);
        first = false;
      }
      r = b.select(c, taken[k].second, r);
    }
    return r;
  }

  // Emits program p's instructions with its inputs bound to args; its first output.
  scalar::Value splice(const scalar::Program& p, std::span<const scalar::Value> args) {
    return splice_program(*ph_->builder, p, args).at(0);
  }

  const Jaxpr& j_;
  const std::unordered_map<uint64_t, size_t>& producer_;
  const std::vector<int32_t>& group_of_;
  int32_t group_;
  bool reductions_set_space_;
  Shape dims_;
  size_t outer_ = SIZE_MAX;  // parallel dimensions of dims_
  bool row_outputs_ = false;
  std::optional<FusedReduction> space_;  // the reduction whose space this kernel iterates
  size_t space_eqn_ = SIZE_MAX;          // its equation
  std::vector<size_t> stage_eqns_;       // the reduction equation of each stage
  Phase* ph_ = nullptr;
  std::vector<Var> inputs_;
  std::vector<kir::Stage> stages_;
  std::unordered_map<uint64_t, size_t> row_of_;  // reduction result -> its row value
  std::vector<DType> row_types_;
  std::vector<size_t> rows_visible_;  // per body being emitted: row values it may read
  std::unordered_map<std::string, size_t> saved_of_;  // value at a point -> its saved value
  std::vector<DType> saved_types_;
  std::vector<size_t> saved_visible_;  // per body being emitted: saved values it may read
  std::vector<kir::Symbol> symbols_;   // the kernel's dynamic indices
  std::vector<kir::Guard> guards_;     // the guards every load made now carries
  std::vector<size_t> guard_owner_;    // per guard: the equation whose pieces it is from
};

// ---- sibling multi-output fusion ----

// One kernel computing both a's and b's outputs (a's first): the same iteration space; inputs,
// loads and index values shared where equal; b's stages after a's, reading a's row values too.
kir::Kernel merge_kernels(const kir::Kernel& a, const std::vector<Var>& a_in, const kir::Kernel& b,
                          const std::vector<Var>& b_in, std::vector<Var>& inputs) {
  kir::Kernel k = a;
  if (a.stages.empty()) {  // a map kernel takes b's reduction dimensions
    k.inner = b.inner;
    k.row_outputs = b.row_outputs;
  }
  inputs = a_in;
  std::vector<int32_t> param(b_in.size());
  for (size_t i = 0; i < b_in.size(); ++i) {
    auto it = std::find(inputs.begin(), inputs.end(), b_in[i]);
    if (it == inputs.end()) {
      inputs.push_back(b_in[i]);
      k.inputs.push_back(b.inputs[i]);
      it = inputs.end() - 1;
    }
    param[i] = static_cast<int32_t>(it - inputs.begin());
  }
  // b's symbols map onto a's (equal ones shared): its forms' symbol variables renumbered.
  const size_t rank = a.dims.size();
  std::vector<size_t> sym_map;
  for (kir::Symbol sy : b.symbols) {
    sy.param = param[static_cast<size_t>(sy.param)];
    auto it = std::find(k.symbols.begin(), k.symbols.end(), sy);
    if (it == k.symbols.end()) it = k.symbols.insert(k.symbols.end(), sy);
    sym_map.push_back(static_cast<size_t>(it - k.symbols.begin()));
  }
  auto b_form = [&](const kir::Affine& f) {
    kir::Affine r = kir::Affine::constant(f.offset, rank + k.symbols.size());
    for (size_t d = 0; d < f.coeff.size(); ++d)
      r.coeff[d < rank ? d : rank + sym_map[d - rank]] += f.coeff[d];
    return r;
  };
  const size_t a_rows = a.num_row_values(), a_saved = a.num_saved();
  std::vector<DType> a_row_types, a_saved_types;
  for (const kir::Stage& st : a.stages) {
    for (const kir::Reducer& r : st.reducers) a_row_types.push_back(r.type);
    const std::vector<DType> outs = st.body.output_types();
    a_saved_types.insert(a_saved_types.end(),
                         outs.begin() + static_cast<std::ptrdiff_t>(st.reducers.size()),
                         outs.end());
  }
  // A body of b's (its loads remapped) re-emitted over (loads, indices, a's rows, b's rows,
  // then — when it reads saved values — a's saved values, b's), after a's body when `base` is
  // given (the final body): into out's loads, indices, body.
  auto rebuild = [&](const std::vector<kir::Load>& base_loads,
                     const std::vector<kir::IndexValue>& base_idx, const scalar::Program* base,
                     const std::vector<kir::Load>& loads, const std::vector<kir::IndexValue>& idx,
                     const scalar::Program& body, size_t b_rows, size_t b_saved, bool with_saved,
                     kir::Stage& out) {
    out.loads = base_loads;
    out.indices = base_idx;
    std::vector<size_t> lmap, imap;
    for (const kir::Load& l : loads) {
      kir::Load m = l;
      m.param = param[static_cast<size_t>(l.param)];
      m.index = b_form(l.index);
      for (kir::Guard& g : m.guards) g.value = b_form(g.value);
      auto it = std::find(out.loads.begin(), out.loads.end(), m);
      if (it == out.loads.end()) it = out.loads.insert(out.loads.end(), m);
      lmap.push_back(static_cast<size_t>(it - out.loads.begin()));
    }
    for (const kir::IndexValue& v0 : idx) {
      const kir::IndexValue v{b_form(v0.value)};
      auto it = std::find(out.indices.begin(), out.indices.end(), v);
      if (it == out.indices.end()) it = out.indices.insert(out.indices.end(), v);
      imap.push_back(static_cast<size_t>(it - out.indices.begin()));
    }
    std::vector<DType> types;
    for (const kir::Load& l : out.loads)
      types.push_back(k.inputs[static_cast<size_t>(l.param)].dtype);
    types.insert(types.end(), out.indices.size(), DType::kInt64);
    // Every body sees all of a's row values, then b's (a stage of b: those before it).
    std::vector<DType> rows = a_row_types;
    for (size_t r = 0; r < b_rows; ++r) rows.push_back(body.inputs[loads.size() + idx.size() + r]);
    const size_t first_row = types.size();
    types.insert(types.end(), rows.begin(), rows.end());
    const size_t first_saved = types.size();
    if (with_saved) {
      types.insert(types.end(), a_saved_types.begin(), a_saved_types.end());
      for (size_t v = 0; v < b_saved; ++v)
        types.push_back(body.inputs[loads.size() + idx.size() + b_rows + v]);
    }
    scalar::Builder bl(types);
    std::vector<scalar::Value> outs;
    if (base != nullptr) {  // a's body: its loads and indices are the first ones, then a's rows
      std::vector<scalar::Value> args;
      for (size_t i = 0; i < base_loads.size(); ++i) args.push_back(bl.input(static_cast<int>(i)));
      for (size_t i = 0; i < base_idx.size(); ++i)
        args.push_back(bl.input(static_cast<int>(out.loads.size() + i)));
      for (size_t r = 0; r < a_rows; ++r) args.push_back(bl.input(static_cast<int>(first_row + r)));
      if (with_saved)
        for (size_t v = 0; v < a_saved; ++v)
          args.push_back(bl.input(static_cast<int>(first_saved + v)));
      outs = splice_program(bl, *base, args);
    }
    std::vector<scalar::Value> args;
    for (size_t m : lmap) args.push_back(bl.input(static_cast<int>(m)));
    for (size_t m : imap) args.push_back(bl.input(static_cast<int>(out.loads.size() + m)));
    for (size_t r = 0; r < b_rows; ++r)
      args.push_back(bl.input(static_cast<int>(first_row + a_rows + r)));
    if (with_saved)
      for (size_t v = 0; v < b_saved; ++v)
        args.push_back(bl.input(static_cast<int>(first_saved + a_saved + v)));
    const std::vector<scalar::Value> bo = splice_program(bl, body, args);
    outs.insert(outs.end(), bo.begin(), bo.end());
    out.body = std::move(bl).finish(outs);
  };
  size_t b_rows = 0, b_saved = 0;
  for (const kir::Stage& st : b.stages) {
    kir::Stage ns;
    rebuild({}, {}, nullptr, st.loads, st.indices, st.body, b_rows, b_saved, true, ns);
    ns.reducers = st.reducers;
    ns.saves = st.saves;
    b_rows += st.reducers.size();
    b_saved += st.saves;
    k.stages.push_back(std::move(ns));
  }
  kir::Stage fin;
  rebuild(a.loads, a.indices, &a.body, b.loads, b.indices, b.body, b_rows, b_saved, !k.row_outputs,
          fin);
  k.loads = std::move(fin.loads);
  k.indices = std::move(fin.indices);
  k.body = std::move(fin.body);
  k.outputs.insert(k.outputs.end(), b.outputs.begin(), b.outputs.end());
  pad_forms(k);
  k.verify();
  return k;
}

// Whether every symbol of k is constant along the last `inner` dimensions.
bool row_constant_symbols(const kir::Kernel& k, size_t inner) {
  for (const kir::Symbol& sy : k.symbols)
    for (size_t d = k.dims.size() - inner; d < sy.index.coeff.size(); ++d)
      if (sy.index.coeff[d] != 0) return false;
  return true;
}

// Groups over the same iteration space (lone elementwise equations too) that read a common
// input and do not depend on each other become one kernel with several outputs (each input read
// once for all), placed at the later root — when nothing outside reads the earlier group's outputs
// before that.
void merge_siblings(const Jaxpr& j, FusionPlan& plan) {
  const size_t n = j.eqns.size();
  if (plan.groups.size() < 2 || plan.groups.size() > 256) return;
  std::unordered_map<uint64_t, size_t> producer;
  for (size_t k = 0; k < n; ++k)
    for (const Var& v : j.eqns[k].outvars) producer[v.id()] = k;
  auto position = [&](size_t k) {
    const int32_t g = plan.group_of[k];
    return g < 0 ? k : plan.groups[static_cast<size_t>(g)].root();
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t ai = 0; ai < plan.groups.size() && !changed; ++ai) {
      for (size_t bi = ai + 1; bi < plan.groups.size() && !changed; ++bi) {
        FusionGroup& A = plan.groups[ai];
        FusionGroup& B = plan.groups[bi];
        const kir::Kernel &ka = A.kernel, &kb = B.kernel;
        // The same space: equal kernels, or a map kernel beside a reduction kernel whose body
        // runs at every point.
        const bool same = ka.inner == kb.inner && ka.row_outputs == kb.row_outputs;
        const bool map_beside =
            (ka.stages.empty() && !kb.row_outputs) || (kb.stages.empty() && !ka.row_outputs);
        if (ka.dims != kb.dims || !(same || map_beside)) continue;
        if (ka.columns > 0 || kb.columns > 0) continue;  // one stage per column kernel
        // A map kernel's symbols are read per point; beside a reduction they must be constant
        // along its inner dimensions (read once per row).
        if (!same && !(ka.stages.empty() ? row_constant_symbols(ka, kb.inner)
                                         : row_constant_symbols(kb, ka.inner)))
          continue;
        bool share = false;
        for (const Var& v : B.inputs)
          share |= std::find(A.inputs.begin(), A.inputs.end(), v) != A.inputs.end();
        if (!share) continue;
        const size_t a_root = A.root(), b_root = B.root();
        if (b_root < a_root) continue;
        // Everything that depends on A's outputs, in program order.
        std::vector<char> dep(n, 0);
        std::unordered_set<uint64_t> a_out;
        for (const Var& v : A.outputs) a_out.insert(v.id());
        bool ok = true;
        for (size_t k = a_root + 1; k < n && ok; ++k) {
          for (const Atom& at : j.eqns[k].invars)
            if (const Var* v = std::get_if<Var>(&at)) {
              const bool from_a = a_out.count(v->id()) > 0;
              auto p = producer.find(v->id());
              if (from_a || (p != producer.end() && dep[p->second])) dep[k] = 1;
              // A reader of A's outputs outside A must run after the merged kernel.
              if (from_a && plan.group_of[k] != static_cast<int32_t>(ai) && position(k) <= b_root)
                ok = false;
            }
          if (dep[k] && plan.group_of[k] == static_cast<int32_t>(bi)) ok = false;
        }
        if (!ok) continue;
        FusionGroup m;
        m.kernel = merge_kernels(ka, A.inputs, kb, B.inputs, m.inputs);
        m.members = A.members;
        m.members.insert(m.members.end(), B.members.begin(), B.members.end());
        std::sort(m.members.begin(), m.members.end());
        m.outputs = A.outputs;
        m.outputs.insert(m.outputs.end(), B.outputs.begin(), B.outputs.end());
        plan.groups[bi] = std::move(m);
        plan.groups.erase(plan.groups.begin() + static_cast<std::ptrdiff_t>(ai));
        plan.group_of.assign(n, -1);
        for (size_t g = 0; g < plan.groups.size(); ++g)
          for (size_t mm : plan.groups[g].members) plan.group_of[mm] = static_cast<int32_t>(g);
        changed = true;
      }
    }
  }
}

}  // namespace

bool fusible(const JaxprEqn& e) {
  if (!e.effects.empty() || e.outvars.empty()) return false;
  const Primitive& p = *e.primitive;
  const bool elementwise = p.kind == PrimitiveKind::kElementwise && p.scalar.rule;
  // Several results: elementwise only, all of one shape (each a value at the same point); such an
  // equation joins its readers' group but never roots one (plan_fusion).
  if (e.outvars.size() > 1) {
    if (!elementwise) return false;
    for (const Var& v : e.outvars)
      if (v.aval().shape != e.outvars[0].aval().shape || !plain_dtype(v.aval().dtype)) return false;
  }
  const bool index_map = p.kind == PrimitiveKind::kIndexMap && index_map_rule(p) != nullptr;
  if (p.kind == PrimitiveKind::kReduction)
    return plain_dtype(e.outvars[0].aval().dtype) && plain_dtype(atom_aval(e.invars.at(0)).dtype) &&
           fusible_reduction(e).has_value();
  if (!elementwise && !index_map) return false;
  const Shape& out = e.outvars[0].aval().shape;
  // 16-bit floats: index maps move them; elementwise equations convert them (sixteen_bit_ok).
  bool half = false;
  for (const Var& v : e.outvars) {
    if (is_extended(v.aval().dtype)) return false;
    half |= half_dtype(v.aval().dtype);
  }
  // Elementwise: one value per point, the operands broadcast NumPy-style (right-aligned, size-1
  // dimensions stretched) to exactly the output — not bigger (bitcast_convert_type to a
  // narrower type adds a dimension, which is no elementwise map of points).
  Shape bshape;
  for (const Atom& a : e.invars) {
    const Aval& av = atom_aval(a);
    if (is_extended(av.dtype)) return false;
    half |= half_dtype(av.dtype);
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
  if (elementwise && half && !sixteen_bit_ok(scalar_program(p, in_avals(e), e.params)))
    return false;
  if (index_map) {
    const std::vector<Aval> ins = in_avals(e);
    const Aval& out = e.outvars[0].aval();
    const std::optional<IndexMapResult> r =
        (*index_map_rule(p))(ins, out, e.params, identity_point(out.shape),
                             [&](size_t, std::span<const kir::Affine>, int64_t lo, int64_t) {
                               return kir::Affine::constant(lo, out.shape.size());
                             });
    if (!r) return false;
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

  // TESSERA_FUSION_MULTI_OUTPUT=0: a value read outside its consumers' group ends the group (for
  // comparisons).
  const bool multi_output_off = env_int("TESSERA_FUSION_MULTI_OUTPUT", 0, 1).value_or(1) == 0;
  std::set<size_t> forced_roots;
  for (;;) {
    std::vector<int32_t> group_of(n, -1);
    std::vector<std::vector<size_t>> members;
    std::vector<int64_t> root_points;
    std::vector<Shape> space;  // per group: the shape its kernel iterates over
    for (size_t k = n; k-- > 0;) {
      if (!can[k]) continue;
      const Var& v = j.eqns[k].outvars[0];
      int32_t g = -1;
      const auto rd = readers.find(v.id());
      if (!forced_roots.count(k) && rd != readers.end()) {
        // The group of its readers; or, producer-consumer multi-output, the group of one reader
        // with the value as an extra output, when its shape is that group's space and every
        // other reader (and the program's outputs) comes after that group's root — so the
        // kernel runs before them and no cycle between kernels can form.
        for (size_t c = 0; c < rd->second.size() && g < 0; ++c) {
          const int32_t cand = group_of[rd->second[c]];
          if (cand < 0) continue;
          const size_t root = members[static_cast<size_t>(cand)].front();
          bool all_in = !outputs.count(v.id()), ok = true;
          for (size_t u : rd->second)
            if (group_of[u] != cand) {
              all_in = false;
              ok = ok && u > root;
            }
          if (!all_in &&
              (!ok || multi_output_off || v.aval().shape != space[static_cast<size_t>(cand)]))
            continue;
          g = cand;
        }
        if (g >= 0 && expensive[k] && root_points[static_cast<size_t>(g)] > v.aval().size() &&
            !row_prefix(v.aval().shape, space[static_cast<size_t>(g)]))
          g = -1;
      }
      if (j.eqns[k].outvars.size() > 1) {
        // Only inside one group that reads every result and no result is a program output.
        bool all_in = g >= 0;
        for (const Var& o : j.eqns[k].outvars) {
          if (!all_in) break;
          all_in = !outputs.count(o.id());
          if (auto ro = readers.find(o.id()); ro != readers.end())
            for (size_t u : ro->second) all_in = all_in && group_of[u] == g;
        }
        if (!all_in) continue;
      }
      if (g < 0) {
        g = static_cast<int32_t>(members.size());
        members.emplace_back();
        root_points.push_back(v.aval().size());
        space.push_back(v.aval().shape);
      }
      group_of[k] = g;
      members[static_cast<size_t>(g)].push_back(k);
      // A reduction's group computes at every point of its operand.
      if (j.eqns[k].primitive->kind == PrimitiveKind::kReduction)
        root_points[static_cast<size_t>(g)] =
            std::max(root_points[static_cast<size_t>(g)], atom_aval(j.eqns[k].invars[0]).size());
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
      // A lone elementwise equation is kept for now: it may merge with a sibling below.
      if (!elementwise) continue;
      std::vector<size_t> sorted(ms.rbegin(), ms.rend());
      for (size_t m : sorted) plan.group_of[m] = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(sorted));
    }
    // Per kept group: its members whose results are read outside it (extra outputs).
    std::vector<std::vector<size_t>> extras(kept.size());
    for (size_t gi = 0; gi < kept.size(); ++gi)
      for (size_t m : kept[gi]) {
        if (m == kept[gi].back()) continue;
        const Var& v = j.eqns[m].outvars[0];
        bool outside = outputs.count(v.id()) > 0;
        if (auto rd = readers.find(v.id()); rd != readers.end())
          for (size_t u : rd->second) outside |= plan.group_of[u] != static_cast<int32_t>(gi);
        if (outside) extras[gi].push_back(m);
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
        const int32_t gi = static_cast<int32_t>(i);
        try {
          KernelBuilder kb(j, producer, plan.group_of, gi);
          plan.groups.push_back(kb.build(kept[order[i]], extras[order[i]]));
        } catch (const UnreachedReduction&) {
          KernelBuilder kb(j, producer, plan.group_of, gi, /*reductions_set_space=*/false);
          plan.groups.push_back(kb.build(kept[order[i]], extras[order[i]]));
        }
      }
      merge_siblings(j, plan);
      // What is still one equation runs as its eager kernel.
      std::erase_if(plan.groups, [](const FusionGroup& g) { return g.members.size() < 2; });
      plan.group_of.assign(n, -1);
      for (size_t g = 0; g < plan.groups.size(); ++g)
        for (size_t m : plan.groups[g].members) plan.group_of[m] = static_cast<int32_t>(g);
      for (size_t i = 0; i < plan.groups.size(); ++i) {
        kir::Kernel& k = plan.groups[i].kernel;
        k.name = "fusion." + std::to_string(i);
        k = k.collapsed();
        k.verify();
      }
      return plan;
    } catch (const CannotCompose& c) {
      // First as a group root; an equation that cannot be composed even as a root (a guarded
      // load whose bounds the verifier cannot prove through its consumers' index maps) runs as
      // its eager kernel. Each retry removes an option, so this ends.
      if (!forced_roots.insert(c.eqn).second) {
        if (!can[c.eqn])
          throw_internal("compiler/fusion",
                         "equation " + std::to_string(c.eqn) + " cannot be composed even unfused");
        can[c.eqn] = 0;
      }
    }
  }
}

}  // namespace tessera::compiler
