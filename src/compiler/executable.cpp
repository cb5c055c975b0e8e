// The thunk executor, the thunks and compile() (executable.h); the passes are pipeline.h's.
#include "compiler/executable.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "compiler/cpu/llvm_jit.h"
#include "compiler/fusion.h"
#include "compiler/lowering.h"
#include "runtime/thread_pool.h"
#include "tessera/errors.h"
#include "tessera/param_types.h"

namespace tessera::compiler {

namespace {

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

// ---------------------------------------------------------------- cost analysis

namespace {
bool fusion_enabled();
}  // namespace

CostAnalysis cost_analysis(const Jaxpr& j) {
  CostAnalysis c;
  // Fused kernels touch memory for their inputs and outputs only.
  FusionPlan plan;
  if (fusion_enabled()) plan = plan_fusion(j);
  for (const FusionGroup& g : plan.groups) {
    KernelCost k{g.kernel.name, 0, 0};
    for (const Var& v : g.inputs) k.bytes_accessed += static_cast<double>(v.aval().nbytes());
    for (const Var& v : g.outputs) k.bytes_accessed += static_cast<double>(v.aval().nbytes());
    c.bytes_accessed += k.bytes_accessed;
    c.kernels.push_back(std::move(k));
  }
  auto elems = [](const Aval& a) { return static_cast<double>(a.size()); };
  for (size_t ei = 0; ei < j.eqns.size(); ++ei) {
    const JaxprEqn& e = j.eqns[ei];
    const int32_t group = plan.group_of.empty() ? -1 : plan.group_of[ei];
    const double flops_before = c.flops;
    double in_elems = 0, out_elems = 0;
    for (const Atom& a : e.invars) {
      in_elems += elems(atom_aval(a));
      if (group < 0) c.bytes_accessed += static_cast<double>(atom_aval(a).nbytes());
    }
    for (const Var& v : e.outvars) {
      out_elems += elems(v.aval());
      if (group < 0) c.bytes_accessed += static_cast<double>(v.aval().nbytes());
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
    if (group >= 0) c.kernels[static_cast<size_t>(group)].flops += c.flops - flops_before;
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

namespace {

// "%3:f32[] %4:f32[]" (appends only: g++ 12 warns falsely (-Wrestrict) on
// `"literal" + std::string&&`).
std::string results_str(const std::vector<int32_t>& out, const std::vector<Aval>& avals,
                        const char* sep = " ") {
  std::string s;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i) s += sep;
    s += buffer_str(out[i]);
    s += ':';
    s += avals[i].str();
  }
  return s;
}

// "[k=v ...]" sorted by key, leaving out the jaxpr-valued params when `skip_bodies`.
std::string params_str(const Params& params, bool skip_bodies) {
  std::vector<std::string> kvs;
  for (const auto& [k, v] : params.items()) {
    if (skip_bodies && (std::holds_alternative<std::shared_ptr<const Jaxpr>>(v) ||
                        std::holds_alternative<JaxprList>(v)))
      continue;
    kvs.push_back(k + "=" + param_value_str(v));
  }
  if (kvs.empty()) return {};
  std::sort(kvs.begin(), kvs.end());
  std::string s = "[";
  for (size_t i = 0; i < kvs.size(); ++i) {
    if (i) s += ' ';
    s += kvs[i];
  }
  s += ']';
  return s;
}

std::string operands_str(const std::vector<Operand>& in) {
  std::string s;
  for (const Operand& o : in) {
    s += ' ';
    s += operand_str(o);
  }
  return s;
}

// Stores a thunk's results into their buffers.
void store_results(const Primitive& p, std::vector<Array>& outs, const std::vector<int32_t>& out,
                   const std::vector<Aval>& out_avals, std::vector<Array>& buffers) {
  if (outs.size() != out.size())
    throw_internal("compiler/executable", "'" + p.name() + "' returned " +
                                              std::to_string(outs.size()) + " results, expected " +
                                              std::to_string(out.size()));
  for (size_t i = 0; i < outs.size(); ++i) {
    if (out[i] < 0) continue;
    Array& r = outs[i];
    // A sub-jaxpr impl may return an operand whose weak flag differs from the promised type.
    if (r.aval().weak_type != out_avals[i].weak_type) r = Array(out_avals[i], r.buffer());
    buffers[out[i]] = std::move(r);
  }
}

std::vector<Array> read_operands(const std::vector<Operand>& in,
                                 const std::vector<Array>& buffers) {
  std::vector<Array> args;
  args.reserve(in.size());
  for (const Operand& o : in) args.push_back(o.buffer >= 0 ? buffers[o.buffer] : o.constant);
  return args;
}

}  // namespace

void EagerThunk::execute(const ExecContext& ctx, std::vector<Array>& buffers) const {
  std::vector<Array> args = read_operands(in_, buffers);
  std::vector<Array> outs = prim_->impl(ctx, args, params_, out_avals_);
  store_results(*prim_, outs, out_, out_avals_, buffers);
}

std::string EagerThunk::text() const {
  std::string s = results_str(out_, out_avals_);
  s += " = eager ";
  s += prim_->name();
  s += params_str(params_, false);
  s += operands_str(in_);
  return s;
}

LoweredThunk::LoweredThunk(
    const JaxprEqn& eqn,
    std::function<std::vector<Array>(const ExecContext&, std::span<const Array>)> run,
    std::vector<std::pair<std::string, std::shared_ptr<const Executable>>> nested,
    std::vector<Operand> in, std::vector<int32_t> out)
    : prim_(eqn.primitive),
      params_(eqn.params),
      run_(std::move(run)),
      nested_(std::move(nested)),
      in_(std::move(in)),
      out_(std::move(out)) {
  for (const Var& v : eqn.outvars) out_avals_.push_back(v.aval());
}

void LoweredThunk::execute(const ExecContext& ctx, std::vector<Array>& buffers) const {
  std::vector<Array> args = read_operands(in_, buffers);
  std::vector<Array> outs = run_(ctx, args);
  store_results(*prim_, outs, out_, out_avals_, buffers);
}

std::string LoweredThunk::text() const {
  std::string s = results_str(out_, out_avals_);
  s += " = ";
  s += prim_->name();
  s += params_str(params_, true);
  s += operands_str(in_);
  for (const auto& [name, exe] : nested_) {
    s += "\n    ";
    s += name;
    s += ": ";
    std::string t = exe->text();
    // Indent the nested plan under its thunk.
    for (size_t pos = t.find('\n'); pos != std::string::npos; pos = t.find('\n', pos + 1))
      t.insert(pos + 1, "    ");
    s += t;
  }
  return s;
}

// ---------------------------------------------------------------- fused kernels

namespace {

// s with every line after the first indented by `pad`.
std::string indented(const std::string& s, const std::string& pad) {
  std::string r;
  for (char c : s) {
    r += c;
    if (c == '\n') r += pad;
  }
  while (!r.empty() && (r.back() == ' ' || r.back() == '\n')) r.pop_back();
  return r;
}

// Runs one fusion group's compiled kernel (compiler/cpu/llvm_jit.h) over fresh output memory.
class FusedThunk final : public Thunk {
 public:
  FusedThunk(kir::Kernel kernel, std::shared_ptr<const cpu::CpuKernel> code,
             std::vector<Operand> in, std::vector<int32_t> out, std::vector<Aval> out_avals,
             cpu::KernelText shown)
      : kernel_(std::move(kernel)),
        code_(std::move(code)),
        in_(std::move(in)),
        out_(std::move(out)),
        out_avals_(std::move(out_avals)),
        shown_(shown) {}

  void execute(const ExecContext& ctx, std::vector<Array>& buffers) const override {
    // The pointer list on the stack for small kernels; results go straight to their buffers
    // (an output nothing reads is kept alive in `unread` until the kernel ran).
    constexpr size_t kSmall = 16;
    const size_t n = in_.size() + out_.size();
    std::array<void*, kSmall> small{};
    std::vector<void*> big(n > kSmall ? n : 0);
    void** ptrs = n > kSmall ? big.data() : small.data();
    size_t k = 0;
    for (const Operand& o : in_) ptrs[k++] = const_cast<void*>(buffers[o.buffer].raw_data("jit"));
    std::vector<Array> unread;
    for (size_t o = 0; o < out_.size(); ++o) {
      Array r = empty_array(out_avals_[o], "jit", ctx.device);
      ptrs[k++] = r.buffer("jit")->data();
      if (out_[o] >= 0)
        buffers[out_[o]] = std::move(r);
      else
        unread.push_back(std::move(r));
    }
    code_->run(std::span<void* const>(ptrs, n), kernel_.num_outer());
  }

  std::string text() const override {
    std::string s = results_str(out_, out_avals_, ", ");
    s += " = fused ";
    s += kernel_.name;
    s += operands_str(in_);
    s += "\n      ";
    s += indented(kernel_.signature_text(), "      ");
    if (shown_.llvm_ir) {
      s += "\n      ; llvm ir:\n      ";
      s += indented(code_->llvm_ir(), "      ");
    }
    if (shown_.assembly) {
      s += "\n      ; assembly:\n      ";
      s += indented(code_->assembly(), "      ");
    }
    return s;
  }

 private:
  kir::Kernel kernel_;
  std::shared_ptr<const cpu::CpuKernel> code_;
  std::vector<Operand> in_;
  std::vector<int32_t> out_;
  std::vector<Aval> out_avals_;
  cpu::KernelText shown_;  // what text() adds (TESSERA_KERNEL_TEXT when compiled)
};

// TESSERA_FUSION=0 turns loop fusion off (every equation its own thunk): for comparisons.
bool fusion_enabled() {
  const char* v = std::getenv("TESSERA_FUSION");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// TESSERA_KERNEL_TEXT=llvm|asm|all (comma-separated): every fused kernel compiled keeps its
// optimized LLVM IR / host assembly, and the executable's text (Compiled.as_text) shows them.
cpu::KernelText kernel_text_wanted() {
  cpu::KernelText t;
  const char* v = std::getenv("TESSERA_KERNEL_TEXT");
  if (v == nullptr) return t;
  std::string_view rest(v);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item == "llvm" || item == "all") t.llvm_ir = true;
    if (item == "asm" || item == "all") t.assembly = true;
    if (item != "llvm" && item != "asm" && item != "all")
      throw ValueError(op_message("TESSERA_KERNEL_TEXT", "unknown item '" + std::string(item) +
                                                             "' in '" + v +
                                                             "'; accepted: llvm, asm, all "
                                                             "(comma-separated)"));
  }
  return t;
}

}  // namespace

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
  // Loop fusion: a group's equations run as one kernel at its root's position; the other
  // members get no thunk and their results no buffer.
  FusionPlan plan;
  if (fusion_enabled()) plan = plan_fusion(p);
  const cpu::KernelText text = plan.groups.empty() ? cpu::KernelText{} : kernel_text_wanted();
  // The kernels compile at once, over the runtime's pool (LLVM lowering and code generation need
  // no lock; only linking is serialized).
  std::vector<std::shared_ptr<const cpu::CpuKernel>> code(plan.groups.size());
  runtime::parallel_for(static_cast<int64_t>(code.size()), 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g)
      code[static_cast<size_t>(g)] =
          cpu::compile_kernel(plan.groups[static_cast<size_t>(g)].kernel, text);
  });
  if (plan.group_of.empty()) plan.group_of.assign(p.eqns.size(), -1);
  auto position = [&](size_t k) {
    const int32_t g = plan.group_of[k];
    return g < 0 ? k : plan.groups[static_cast<size_t>(g)].root();
  };
  // Last position reading each var; outputs are never released.
  const size_t kNever = p.eqns.size();
  std::unordered_map<uint64_t, size_t> last;
  for (size_t k = 0; k < p.eqns.size(); ++k)
    for (const Atom& a : p.eqns[k].invars)
      if (const Var* v = std::get_if<Var>(&a)) {
        size_t& l = last[v->id()];
        l = std::max(l, position(k));
      }
  for (const Atom& a : p.outvars)
    if (const Var* v = std::get_if<Var>(&a)) last[v->id()] = kNever;
  for (const Var& v : p.invars) {
    exe->in_avals_.push_back(v.aval());
    exe->in_buffers_.push_back(last.count(v.id()) ? new_buffer(v) : -1);
  }
  // The buffers a thunk at position k reads for the last time.
  auto releases = [&](size_t k, const std::vector<Atom>& reads) {
    std::vector<int32_t> rel;
    for (const Atom& a : reads)
      if (const Var* v = std::get_if<Var>(&a)) {
        const int32_t b = buffer_of.at(v->id());
        if (last.at(v->id()) == k && std::find(rel.begin(), rel.end(), b) == rel.end())
          rel.push_back(b);
      }
    return rel;
  };
  for (size_t k = 0; k < p.eqns.size(); ++k) {
    const JaxprEqn& e = p.eqns[k];
    if (const int32_t gi = plan.group_of[k]; gi >= 0) {
      const FusionGroup& g = plan.groups[static_cast<size_t>(gi)];
      if (g.root() != k) continue;
      std::vector<Operand> in;
      std::vector<Atom> reads;
      for (const Var& v : g.inputs) {
        in.push_back(operand(v));
        reads.push_back(v);
      }
      std::vector<int32_t> out;
      std::vector<Aval> out_avals;
      for (const Var& r : g.outputs) {
        out.push_back(last.count(r.id()) ? new_buffer(r) : -1);
        out_avals.push_back(r.aval());
      }
      exe->release_after_.push_back(releases(k, reads));
      exe->thunks_.push_back(std::make_unique<FusedThunk>(g.kernel, code[static_cast<size_t>(gi)],
                                                          std::move(in), std::move(out),
                                                          std::move(out_avals), text));
      continue;
    }
    std::vector<Operand> in;
    for (const Atom& a : e.invars) in.push_back(operand(a));
    std::vector<int32_t> out;
    std::vector<Aval> out_avals;
    for (const Var& v : e.outvars) {
      out_avals.push_back(v.aval());
      out.push_back(!v.is_dropped() && last.count(v.id()) ? new_buffer(v) : -1);
    }
    exe->release_after_.push_back(releases(k, e.invars));
    if (const LoweringRule* rule = lowering_rule(*e.primitive)) {
      LoweredEqn l = (*rule)(e);
      exe->thunks_.push_back(std::make_unique<LoweredThunk>(
          e, std::move(l.run), std::move(l.nested), std::move(in), std::move(out)));
      continue;
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
