// The CPU lowering of the kernel IR to LLVM IR (llvm_codegen.h).
#include "compiler/cpu/llvm_codegen.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "compiler/math_expand.h"
#include "compiler/reduce_order.h"
#include "compiler/scalar_runtime.h"
#include "compiler/value_range.h"
#include "runtime/thread_pool.h"
#include "tessera/errors.h"

namespace tessera::compiler::cpu {

namespace {

// Interleaving (map_interleave): measured on a 16M-point normal draw, 26.5 ms with LLVM's own
// choice, 17.4 with 4 vectors interleaved; short memory-bound bodies lost up to 20% when forced.
constexpr size_t kHeavyOps = 40;
constexpr int64_t kInterleaveMin = 256;
constexpr int kInterleave = 4;
// Columns a column kernel folds together (one vector loop across them per row).
constexpr int64_t kColumnBlock = 2048;

using scalar::Op;
constexpr const char* kLayer = "compiler/cpu/llvm_codegen";

int width_of(DType t) { return t == DType::kBool ? 1 : static_cast<int>(itemsize(t) * 8); }

llvm::Type* reg_type(llvm::LLVMContext& c, DType t) {
  switch (t) {
    case DType::kFloat32:
      return llvm::Type::getFloatTy(c);
    case DType::kFloat64:
      return llvm::Type::getDoubleTy(c);
    case DType::kFloat16:
    case DType::kBFloat16:
      // Their bits: a kernel only moves them and converts them to and from float32
      // (fusion.cpp admits no other arithmetic on them), the conversions written out below.
      return llvm::Type::getInt16Ty(c);
    default:
      if (is_floating(t) || is_extended(t))
        throw_internal(kLayer,
                       std::string("no register type for ") + std::string(dtype_short_name(t)));
      return llvm::Type::getIntNTy(c, static_cast<unsigned>(width_of(t)));
  }
}

// The in-memory type (bool is a byte).
llvm::Type* mem_type(llvm::LLVMContext& c, DType t) {
  return t == DType::kBool ? llvm::Type::getInt8Ty(c) : reg_type(c, t);
}

// One kernel's code: the entry function over [begin, end), the inner function it calls.
class Emitter {
 public:
  Emitter(const kir::Kernel& k, llvm::Module& m)
      : k_(k), m_(m), c_(m.getContext()), b_(c_), main_(prepare(k.body)) {
    for (const kir::Stage& st : k.stages) stage_bodies_.push_back(prepare(st.body));
    rank_ = k.dims.size();
    dims_.assign(k.dims.begin(), k.dims.end());
    if (dims_.empty()) dims_.push_back(1);  // one point
  }

  void emit(const std::string& name) {
    llvm::Type* ptr = llvm::PointerType::get(c_, 0);
    llvm::Type* i64 = b_.getInt64Ty();
    const size_t nbuf = k_.inputs.size() + k_.outputs.size();
    // The inner function: buffers as noalias pointers.
    std::vector<llvm::Type*> params(nbuf, ptr);
    params.push_back(i64);
    params.push_back(i64);
    llvm::Function* inner =
        llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                               llvm::GlobalValue::InternalLinkage, name + ".body", m_);
    for (unsigned a = 0; a < nbuf; ++a) {
      inner->addParamAttr(a, llvm::Attribute::NoAlias);
      inner->addParamAttr(a, llvm::Attribute::NoCapture);
    }
    inner->addFnAttr(llvm::Attribute::AlwaysInline);
    inner->addFnAttr(llvm::Attribute::NoUnwind);
    if (k_.stages.empty())
      emit_inner(inner, nbuf);
    else if (k_.columns > 0)
      emit_columns_inner(inner, nbuf);
    else
      emit_reduction_inner(inner, nbuf);

    // The entry: unpacks the buffer array.
    llvm::Function* entry =
        llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false),
                               llvm::GlobalValue::ExternalLinkage, name, m_);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", entry));
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < nbuf; ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
      args.push_back(b_.CreateLoad(ptr, slot));
    }
    args.push_back(entry->getArg(1));
    args.push_back(entry->getArg(2));
    b_.CreateCall(inner, args);
    b_.CreateRetVoid();

    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(m_, &os)) throw_internal(kLayer, "invalid LLVM module: " + os.str());
  }

 private:
  // A body after math expansion, with the instructions that are range fallbacks marked.
  struct Body {
    scalar::Program prog;
    std::vector<bool> fallback;
    bool has_fallback = false;
  };

  static Body prepare(const scalar::Program& p) {
    Body b{fold_decided_selects(expand_math(p)), {}, false};
    b.fallback.assign(b.prog.instrs.size(), false);
    for (size_t i = 0; i < b.prog.instrs.size(); ++i)
      if (is_range_fallback(b.prog, static_cast<int32_t>(i))) {
        b.fallback[i] = true;
        b.has_fallback = true;
      }
    return b;
  }

  llvm::Value* i64c(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  // Marks the loop whose latch is `latch` with llvm.loop.interleave.count (map_interleave).
  void interleave(llvm::BranchInst* latch) {
    if (interleave_count_ < 0) interleave_count_ = map_interleave(k_);  // once per kernel
    const int n = interleave_count_;
    if (n <= 1) return;
    llvm::Metadata* count[] = {llvm::MDString::get(c_, "llvm.loop.interleave.count"),
                               llvm::ConstantAsMetadata::get(b_.getInt32(n))};
    llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(c_, count)};
    llvm::MDNode* md = llvm::MDNode::getDistinct(c_, ops);
    md->replaceOperandWith(0, md);  // a loop ID refers to itself
    latch->setMetadata(llvm::LLVMContext::MD_loop, md);
  }

  // The row-major indices of `linear` over `dims` (the first index unbounded: divisions by
  // constants).
  std::vector<llvm::Value*> split_index(llvm::Value* linear, std::span<const int64_t> dims) {
    std::vector<llvm::Value*> idx(dims.size());
    llvm::Value* rest = linear;
    for (size_t d = dims.size(); d-- > 0;) {
      if (d == 0) {
        idx[d] = rest;
      } else {
        idx[d] = b_.CreateURem(rest, i64c(dims[d]));
        rest = b_.CreateUDiv(rest, i64c(dims[d]));
      }
    }
    return idx;
  }

  // The loop over the entry's range: `for (p = begin; p < end;)`. `prologue` runs in the
  // entry block (allocas); the builder is left in the loop's body. close_point_loop ends it.
  struct PointLoop {
    llvm::PHINode* p = nullptr;
    llvm::Value* end = nullptr;
    llvm::BasicBlock* head = nullptr;
    llvm::BasicBlock* exit = nullptr;
  };

  PointLoop open_point_loop(llvm::Function* f, size_t nbuf, const std::function<void()>& prologue) {
    for (size_t i = 0; i < nbuf; ++i) bufs_.push_back(f->getArg(static_cast<unsigned>(i)));
    llvm::Value* begin = f->getArg(static_cast<unsigned>(nbuf));
    PointLoop l;
    l.end = f->getArg(static_cast<unsigned>(nbuf + 1));
    fn_ = f;
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(c_, "entry", f);
    l.head = llvm::BasicBlock::Create(c_, "rows", f);
    llvm::BasicBlock* row = llvm::BasicBlock::Create(c_, "row", f);
    l.exit = llvm::BasicBlock::Create(c_, "exit", f);
    b_.SetInsertPoint(entry);
    prologue();
    b_.CreateBr(l.head);
    b_.SetInsertPoint(l.head);
    l.p = b_.CreatePHI(b_.getInt64Ty(), 2, "p");
    l.p->addIncoming(begin, entry);
    b_.CreateCondBr(b_.CreateICmpSLT(l.p, l.end), row, l.exit);
    b_.SetInsertPoint(row);
    return l;
  }

  void close_point_loop(const PointLoop& l, llvm::Value* next) {
    l.p->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(l.head);
    b_.SetInsertPoint(l.exit);
    b_.CreateRetVoid();
  }

  void emit_inner(llvm::Function* f, size_t nbuf) {
    const PointLoop loop = open_point_loop(f, nbuf, [] {});
    llvm::Value* p = loop.p;
    llvm::Value* end = loop.end;
    const int64_t n_last = dims_.back();
    llvm::Value* q = b_.CreateUDiv(p, i64c(n_last), "rowno");
    llvm::Value* row_start = b_.CreateNSWMul(q, i64c(n_last), "row_start");
    llvm::Value* j0 = b_.CreateNSWSub(p, row_start, "j0");
    llvm::Value* rem = b_.CreateNSWSub(end, row_start);
    llvm::Value* jend =
        b_.CreateSelect(b_.CreateICmpSLT(rem, i64c(n_last)), rem, i64c(n_last), "jend");
    // The outer indices of this row, innermost first.
    const std::vector<llvm::Value*> outer_idx =
        split_index(q, std::span<const int64_t>(dims_).first(dims_.size() - 1));
    outer_idx_ = outer_idx;
    // Base offsets (everything but the inner dimension) and inner coefficients.
    auto base_of = [&](const kir::Affine& a) {
      llvm::Value* v = i64c(a.offset);
      for (size_t d = 0; d + 1 < dims_.size() && d < a.coeff.size(); ++d)
        if (a.coeff[d] != 0)
          v = b_.CreateNSWAdd(v, b_.CreateNSWMul(outer_idx[d], i64c(a.coeff[d])));
      return v;
    };
    auto inner_coeff = [&](const kir::Affine& a) {
      return rank_ == 0 || a.coeff.size() < rank_ ? int64_t{0} : a.coeff[rank_ - 1];
    };
    load_base_.clear();
    load_step_.clear();
    for (const kir::Load& l : k_.loads) {
      load_base_.push_back(base_of(l.index));
      load_step_.push_back(inner_coeff(l.index));
    }
    index_base_.clear();
    index_step_.clear();
    for (const kir::IndexValue& iv : k_.indices) {
      index_base_.push_back(base_of(iv.value));
      index_step_.push_back(inner_coeff(iv.value));
    }
    row_start_ = row_start;

    if (main_.has_fallback) {
      // Fast loop; if some lane needed the exact fallback, the whole row again exactly.
      llvm::Value* flag = emit_loop(j0, jend, /*fast=*/true);
      llvm::BasicBlock* exact = llvm::BasicBlock::Create(c_, "row.exact", f);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "row.done", f);
      b_.CreateCondBr(flag, exact, done);
      b_.SetInsertPoint(exact);
      emit_loop(j0, jend, /*fast=*/false);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    } else {
      emit_loop(j0, jend, /*fast=*/false);
    }
    close_point_loop(loop, b_.CreateNSWAdd(row_start, jend, "p.next"));
  }

  // for (j = j0; j < jend; ++j) { loads; body; stores } — returns, in fast mode, whether any
  // point needed a fallback (an i1 valid after the loop), else null. Leaves the builder after it.
  llvm::Value* emit_loop(llvm::Value* j0, llvm::Value* jend, bool fast) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, fast ? "inner.fast" : "inner", fn_);
    llvm::BasicBlock* after = llvm::BasicBlock::Create(c_, "inner.end", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(j0, jend), loop, after);
    b_.SetInsertPoint(loop);
    llvm::PHINode* j = b_.CreatePHI(b_.getInt64Ty(), 2, "j");
    j->addIncoming(j0, pre);
    llvm::PHINode* flag = nullptr;
    if (fast) {
      flag = b_.CreatePHI(b_.getInt1Ty(), 2, "need");
      flag->addIncoming(b_.getFalse(), pre);
    }
    need_ = fast ? static_cast<llvm::Value*>(b_.getFalse()) : nullptr;

    const size_t last_dim = rank_ == 0 ? 0 : rank_ - 1;
    // A form at this point (the outer part includes the symbols' terms once they are read).
    auto form = [&](const kir::Affine& a) {
      llvm::Value* v = outer_part(a);
      const int64_t c = rank_ == 0 ? 0 : coeff_of(a, last_dim);
      return c == 0 ? v : b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(c)));
    };
    read_symbols(form);
    std::vector<llvm::Value*> inputs;
    for (size_t l = 0; l < k_.loads.size(); ++l) {
      llvm::Value* idx = load_base_[l];
      if (load_step_[l] != 0) idx = b_.CreateNSWAdd(idx, b_.CreateNSWMul(j, i64c(load_step_[l])));
      inputs.push_back(emit_load(k_.loads[l], symbol_terms(idx, k_.loads[l].index), form));
    }
    for (size_t k = 0; k < k_.indices.size(); ++k) {
      llvm::Value* v = index_base_[k];
      if (index_step_[k] != 0) v = b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(index_step_[k])));
      inputs.push_back(symbol_terms(v, k_.indices[k].value));
    }
    std::vector<llvm::Value*> outs = emit_body(main_, inputs, fast);
    llvm::Value* pos = b_.CreateNSWAdd(row_start_, j);
    for (size_t o = 0; o < outs.size(); ++o) {
      const DType t = k_.outputs[o].dtype;
      llvm::Value* v = outs[o];
      if (t == DType::kBool) v = b_.CreateZExt(v, b_.getInt8Ty());
      llvm::Value* ptr = b_.CreateInBoundsGEP(mem_type(c_, t), bufs_[k_.inputs.size() + o], pos);
      b_.CreateStore(v, ptr);
    }
    llvm::Value* jn = b_.CreateNSWAdd(j, i64c(1));
    j->addIncoming(jn, b_.GetInsertBlock());
    llvm::Value* need_out = nullptr;
    if (fast) {
      need_out = b_.CreateOr(flag, need_);
      flag->addIncoming(need_out, b_.GetInsertBlock());
    }
    llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(jn, jend), loop, after);
    interleave(latch);
    llvm::BasicBlock* last = b_.GetInsertBlock();
    b_.SetInsertPoint(after);
    if (!fast) return nullptr;
    llvm::PHINode* r = b_.CreatePHI(b_.getInt1Ty(), 2, "need.row");
    r->addIncoming(b_.getFalse(), pre);
    r->addIncoming(need_out, last);
    return r;
  }

  // ---- reduction kernels: per outer point, the stages, then the body ----
  //
  // Outer points [begin, end). A stage folds its body's values over the n inner points (row-
  // major) in the order the eager reduction kernel (prims/reductions.cpp, reduce_contig) uses,
  // so fused and eager reductions give the same bits: n < 16 in order; n below a block (8 lane
  // groups) in 8 lanes; otherwise blocks of 8 x L values into L lanes (L = 256 bytes of
  // accumulators), blocks paired as a binary counter (block b merges cttz(b + 1) times), the
  // partial block, the counter's stack folded in, a fixed tree over the lanes. Lanes are stack
  // arrays and every lane loop has no loop-carried value, so the vectorizer widens them without
  // reassociating anything. The order depends only on the kernel, never on the thread count.

  // The eager kernel's lanes: 256 bytes of accumulators, at least 8 (kLanes there); integers
  // and bool fold exactly in any order, so they take at most 64.
  static int64_t lanes_of(DType t) {
    const int64_t bytes = t == DType::kBool ? 1 : static_cast<int64_t>(itemsize(t));
    const int64_t l = reduce_order::lanes_for_bytes(bytes);
    return is_floating(t) ? l : std::min<int64_t>(l, 64);
  }

  // for (iv = lo; iv < hi; ++iv) body(iv); leaves the builder after the loop.
  void loop(llvm::Value* lo, llvm::Value* hi, const char* name,
            const std::function<void(llvm::Value*)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(c_, name, fn_);
    llvm::BasicBlock* after = llvm::BasicBlock::Create(c_, std::string(name) + ".end", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), head, after);
    b_.SetInsertPoint(head);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    iv->addIncoming(lo, pre);
    body(iv);
    llvm::Value* next = b_.CreateNSWAdd(iv, i64c(1));
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, hi), head, after);
    b_.SetInsertPoint(after);
  }

  // The same with constant bounds (no code when empty).
  void counted_loop(int64_t lo, int64_t hi, const char* name,
                    const std::function<void(llvm::Value*)>& body) {
    if (hi > lo) loop(i64c(lo), i64c(hi), name, body);
  }

  static int64_t coeff_of(const kir::Affine& a, size_t d) {
    return d < a.coeff.size() ? a.coeff[d] : 0;
  }

  // offset + the outer part of a form (the outer indices of this row), and its symbols' terms
  // once they are read.
  llvm::Value* outer_part(const kir::Affine& a) {
    llvm::Value* v = i64c(a.offset);
    for (size_t d = 0; d < outer_idx_.size(); ++d)
      if (coeff_of(a, d) != 0)
        v = b_.CreateNSWAdd(v, b_.CreateNSWMul(outer_idx_[d], i64c(coeff_of(a, d))));
    return symbol_terms(v, a);
  }

  // v + the terms of a's symbol variables (i{rank + k}).
  llvm::Value* symbol_terms(llvm::Value* v, const kir::Affine& a) {
    for (size_t s = 0; s < sym_.size(); ++s) {
      const int64_t c = coeff_of(a, k_.dims.size() + s);
      if (c != 0) v = b_.CreateNSWAdd(v, b_.CreateNSWMul(sym_[s], i64c(c)));
    }
    return v;
  }

  // The symbols' values at the current point (`form` gives their index there):
  // clamp(int64(x), lo, hi) - lo; unsigned values beyond INT64_MAX clamp as INT64_MAX does.
  void read_symbols(const std::function<llvm::Value*(const kir::Affine&)>& form) {
    sym_.clear();
    std::vector<llvm::Value*> vals;
    for (const kir::Symbol& sy : k_.symbols) {
      const DType t = k_.inputs[static_cast<size_t>(sy.param)].dtype;
      llvm::Type* mt = mem_type(c_, t);
      llvm::Value* x = b_.CreateLoad(
          mt, b_.CreateInBoundsGEP(mt, bufs_[static_cast<size_t>(sy.param)], form(sy.index)));
      const bool is_signed = is_signed_integer(t);
      x = is_signed ? b_.CreateSExtOrTrunc(x, b_.getInt64Ty())
                    : b_.CreateZExtOrTrunc(x, b_.getInt64Ty());
      if (!is_signed)
        x = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x,
                                     i64c(std::numeric_limits<int64_t>::max()));
      x = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, i64c(sy.hi));
      x = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, i64c(sy.lo));
      vals.push_back(b_.CreateNSWSub(x, i64c(sy.lo)));
    }
    sym_ = std::move(vals);
  }

  // base + the inner part of a form at inner indices iv (one per inner dimension).
  llvm::Value* at_inner(llvm::Value* base, const kir::Affine& a,
                        const std::vector<llvm::Value*>& iv) {
    llvm::Value* v = base;
    for (size_t d = 0; d < iv.size(); ++d) {
      const int64_t c = coeff_of(a, outer_idx_.size() + d);
      if (c != 0) v = b_.CreateNSWAdd(v, b_.CreateNSWMul(iv[d], i64c(c)));
    }
    return v;
  }

  // Load l at element idx; a guarded load reads only where its guards hold (`form` gives a
  // guard's value at the point), else gives zero: a branch the vectorizer turns into a masked
  // load.
  llvm::Value* emit_load(const kir::Load& l, llvm::Value* idx,
                         const std::function<llvm::Value*(const kir::Affine&)>& form) {
    const DType t = k_.inputs[static_cast<size_t>(l.param)].dtype;
    llvm::Type* mt = mem_type(c_, t);
    auto read = [&] {
      return b_.CreateLoad(mt, b_.CreateInBoundsGEP(mt, bufs_[static_cast<size_t>(l.param)], idx));
    };
    llvm::Value* v = nullptr;
    if (l.guards.empty()) {
      v = read();
    } else {
      llvm::Value* ok = b_.getTrue();
      for (const kir::Guard& g : l.guards) {
        llvm::Value* x = form(g.value);
        ok = b_.CreateAnd(
            ok, b_.CreateAnd(b_.CreateICmpSGE(x, i64c(g.lo)), b_.CreateICmpSLT(x, i64c(g.hi))));
      }
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      llvm::BasicBlock* then = llvm::BasicBlock::Create(c_, "load.guarded", fn_);
      llvm::BasicBlock* join = llvm::BasicBlock::Create(c_, "load.join", fn_);
      b_.CreateCondBr(ok, then, join);
      b_.SetInsertPoint(then);
      llvm::Value* x = read();
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      llvm::PHINode* phi = b_.CreatePHI(mt, 2);
      phi->addIncoming(x, then);
      phi->addIncoming(llvm::Constant::getNullValue(mt), pre);
      v = phi;
    }
    if (t == DType::kBool) v = b_.CreateICmpNE(v, b_.getInt8(0));
    return v;
  }

  struct Bases {
    std::vector<llvm::Value*> loads, indices;
  };

  Bases bases(const std::vector<kir::Load>& loads, const std::vector<kir::IndexValue>& indices) {
    Bases r;
    for (const kir::Load& l : loads) r.loads.push_back(outer_part(l.index));
    for (const kir::IndexValue& v : indices) r.indices.push_back(outer_part(v.value));
    return r;
  }

  std::vector<llvm::Value*> point_inputs(const std::vector<kir::Load>& loads,
                                         const std::vector<kir::IndexValue>& indices,
                                         const Bases& base, const std::vector<llvm::Value*>& iv,
                                         const std::vector<llvm::Value*>& rows, size_t n_saved = 0,
                                         llvm::Value* t = nullptr) {
    std::vector<llvm::Value*> in;
    for (size_t l = 0; l < loads.size(); ++l)
      in.push_back(emit_load(loads[l], at_inner(base.loads[l], loads[l].index, iv),
                             [&](const kir::Affine& a) { return at_inner(outer_part(a), a, iv); }));
    for (size_t k = 0; k < indices.size(); ++k)
      in.push_back(at_inner(base.indices[k], indices[k].value, iv));
    in.insert(in.end(), rows.begin(), rows.end());
    for (size_t k = 0; k < n_saved; ++k) in.push_back(load_saved(k, t));
    return in;
  }

  // Saved value k at flattened inner point t.
  llvm::Value* saved_slot(size_t k, llvm::Value* t) {
    return b_.CreateInBoundsGEP(saved_[k]->getAllocatedType(), saved_[k], {i64c(0), t});
  }
  llvm::Value* load_saved(size_t k, llvm::Value* t) {
    return from_mem(b_.CreateLoad(mem_type(c_, saved_types_[k]), saved_slot(k, t)),
                    saved_types_[k]);
  }

  // Loops over the inner dimensions but the last, calling body(iv) with the last left null.
  void inner_nest(size_t d, std::vector<llvm::Value*>& iv,
                  const std::function<void(std::vector<llvm::Value*>&)>& body) {
    if (d + 1 >= inner_dims_.size()) {
      body(iv);
      return;
    }
    counted_loop(0, inner_dims_[d], "nest", [&](llvm::Value* i) {
      iv[d] = i;
      inner_nest(d + 1, iv, body);
    });
  }

  llvm::Value* combine(const kir::Reducer& r, llvm::Value* a, llvm::Value* x) {
    const bool fl = is_floating(r.type);
    switch (r.op) {
      case Op::kAdd:
        return fl ? b_.CreateFAdd(a, x) : b_.CreateAdd(a, x);
      case Op::kMul:
        return fl ? b_.CreateFMul(a, x) : b_.CreateMul(a, x);
      case Op::kMax:
      case Op::kMin:
        return min_max(r.op, r.type, a, x);
      case Op::kAnd:
        return b_.CreateAnd(a, x);
      case Op::kOr:
        return b_.CreateOr(a, x);
      case Op::kXor:
        return b_.CreateXor(a, x);
      default:
        throw_internal(kLayer, std::string("no reducer ") + scalar::op_name(r.op));
    }
  }

  llvm::Value* identity(const kir::Reducer& r) {
    scalar::Instr in;
    in.op = Op::kConst;
    in.type = r.type;
    in.literal = r.identity().bits;
    return constant(in);
  }

  llvm::Value* to_mem(llvm::Value* v, DType t) {
    return t == DType::kBool ? b_.CreateZExt(v, b_.getInt8Ty()) : v;
  }
  llvm::Value* from_mem(llvm::Value* v, DType t) {
    return t == DType::kBool ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
  }

  // One stage at the current outer point: appends its row values to rows.
  void emit_stage(size_t s, std::vector<llvm::Value*>& rows) {
    const kir::Stage& st = k_.stages[s];
    const Body& body = stage_bodies_[s];
    const StageArrays& arr = arrays_[s];
    const size_t nr = st.reducers.size();
    const int64_t L = arr.lanes;
    auto mem = [&](size_t r) { return mem_type(c_, st.reducers[r].type); };
    auto cur = [&](size_t r, llvm::Value* l) {
      return b_.CreateInBoundsGEP(arr.cur[r]->getAllocatedType(), arr.cur[r], {i64c(0), l});
    };
    auto stack = [&](size_t r, llvm::Value* level, llvm::Value* l) {
      return b_.CreateInBoundsGEP(arr.stack[r]->getAllocatedType(), arr.stack[r],
                                  {i64c(0), level, l});
    };
    auto get = [&](size_t r, llvm::Value* ptr) {
      return from_mem(b_.CreateLoad(mem(r), ptr), st.reducers[r].type);
    };
    auto put = [&](size_t r, llvm::Value* ptr, llvm::Value* v) {
      b_.CreateStore(to_mem(v, st.reducers[r].type), ptr);
    };
    const Bases base = bases(st.loads, st.indices);
    const std::vector<llvm::Value*> rows_in = rows;
    size_t saved_in = 0;  // saved values of the stages before this one
    for (size_t q = 0; q < s; ++q) saved_in += k_.stages[q].saves;
    // The body's values at flattened inner point t.
    auto values = [&](llvm::Value* t) {
      const std::vector<llvm::Value*> iv = split_index(t, inner_dims_);
      std::vector<llvm::Value*> v = emit_body(
          body, point_inputs(st.loads, st.indices, base, iv, rows_in, saved_in, t), false);
      for (size_t k = 0; k < st.saves; ++k)
        b_.CreateStore(to_mem(v[nr + k], saved_types_[saved_in + k]), saved_slot(saved_in + k, t));
      return v;
    };
    // Lane l folds point t; set: lane l becomes point t's value.
    auto fold = [&](llvm::Value* l, llvm::Value* t, bool set) {
      const std::vector<llvm::Value*> v = values(t);
      for (size_t r = 0; r < nr; ++r)
        put(r, cur(r, l), set ? v[r] : combine(st.reducers[r], get(r, cur(r, l)), v[r]));
    };
    auto init = [&](int64_t lanes) {
      counted_loop(0, lanes, "lane.init", [&](llvm::Value* l) {
        for (size_t r = 0; r < nr; ++r) put(r, cur(r, l), identity(st.reducers[r]));
      });
    };
    // Lanes [0, lanes) as whole groups of `lanes` points from `from`, then the tail one per lane.
    auto lanes_over = [&](int64_t from, int64_t count, int64_t lanes) {
      const int64_t groups = count / lanes;
      counted_loop(0, groups, "group", [&](llvm::Value* g) {
        llvm::Value* t0 = b_.CreateNSWAdd(i64c(from), b_.CreateNSWMul(g, i64c(lanes)));
        counted_loop(0, lanes, "lane",
                     [&](llvm::Value* l) { fold(l, b_.CreateNSWAdd(t0, l), false); });
      });
      counted_loop(0, count - groups * lanes, "lane.tail", [&](llvm::Value* l) {
        fold(l, b_.CreateNSWAdd(i64c(from + groups * lanes), l), false);
      });
    };
    auto tree = [&](int64_t lanes) {
      for (int64_t w = lanes / 2; w >= 1; w /= 2)
        counted_loop(0, w, "tree", [&](llvm::Value* l) {
          llvm::Value* l2 = b_.CreateNSWAdd(l, i64c(w));
          for (size_t r = 0; r < nr; ++r)
            put(r, cur(r, l), combine(st.reducers[r], get(r, cur(r, l)), get(r, cur(r, l2))));
        });
    };
    namespace ro = reduce_order;
    const int64_t n = k_.num_inner(), block = ro::kPerLane * L;
    if (n == 1) {
      const std::vector<llvm::Value*> v = values(i64c(0));  // the value itself, as eagerly
      rows.insert(rows.end(), v.begin(), v.begin() + static_cast<std::ptrdiff_t>(nr));
      return;
    }
    if (n < ro::kShortRow) {
      init(1);
      counted_loop(0, n, "seq", [&](llvm::Value* t) { fold(i64c(0), t, false); });
    } else if (n < block) {
      init(ro::kSmallRowLanes);
      lanes_over(0, n, ro::kSmallRowLanes);
      tree(ro::kSmallRowLanes);
    } else {
      const int64_t nblocks = n / block;
      const bool prefetch = s + 1 == k_.stages.size() && s > 0;
      counted_loop(0, nblocks, "block", [&](llvm::Value* bi) {
        llvm::Value* t0 = b_.CreateNSWMul(bi, i64c(block));
        if (prefetch) prefetch_next_row(t0, block);
        counted_loop(0, L, "lane.first",
                     [&](llvm::Value* l) { fold(l, b_.CreateNSWAdd(t0, l), true); });
        counted_loop(1, 8, "block.k", [&](llvm::Value* k) {
          llvm::Value* tk = b_.CreateNSWAdd(t0, b_.CreateNSWMul(k, i64c(L)));
          counted_loop(0, L, "lane",
                       [&](llvm::Value* l) { fold(l, b_.CreateNSWAdd(tk, l), false); });
        });
        // The binary counter: popcount(b) blocks are stacked; cttz(b + 1) of them merge in.
        llvm::Value* top = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, bi);
        llvm::Value* merges = b_.CreateIntrinsic(llvm::Intrinsic::cttz, {b_.getInt64Ty()},
                                                 {b_.CreateNSWAdd(bi, i64c(1)), b_.getFalse()});
        loop(i64c(0), merges, "merge", [&](llvm::Value* i) {
          llvm::Value* level = b_.CreateNSWSub(b_.CreateNSWSub(top, i64c(1)), i);
          counted_loop(0, L, "lane.merge", [&](llvm::Value* l) {
            for (size_t r = 0; r < nr; ++r)
              put(r, cur(r, l),
                  combine(st.reducers[r], get(r, stack(r, level, l)), get(r, cur(r, l))));
          });
        });
        llvm::Value* level = b_.CreateNSWSub(top, merges);
        counted_loop(0, L, "lane.push", [&](llvm::Value* l) {
          for (size_t r = 0; r < nr; ++r) put(r, stack(r, level, l), get(r, cur(r, l)));
        });
      });
      // The partial last block, then the stacked blocks folded in from the top.
      init(L);
      lanes_over(nblocks * block, n - nblocks * block, L);
      for (int64_t level = std::popcount(static_cast<uint64_t>(nblocks)); level-- > 0;)
        counted_loop(0, L, "lane.unstack", [&](llvm::Value* l) {
          for (size_t r = 0; r < nr; ++r)
            put(r, cur(r, l),
                combine(st.reducers[r], get(r, stack(r, i64c(level), l)), get(r, cur(r, l))));
        });
      tree(L);
    }
    for (size_t r = 0; r < nr; ++r) rows.push_back(get(r, cur(r, i64c(0))));
  }

  // Overlapping the next row's reads with this row's arithmetic. A kernel of several stages
  // reads its row from memory in the first stage, then computes over it from the cache (the
  // exps of softmax, the divisions after them); the memory sits idle meanwhile and the next
  // row's first stage waits for it. So the last stage prefetches, block by block, the points
  // of the next outer point that the first stage's contiguous loads will read (into L2;
  // prefetches never fault, and a next row past the end or across an outer wrap is only a
  // wasted hint).
  void prefetch_next_row(llvm::Value* t0, int64_t points) {
    const size_t n_outer = outer_idx_.size();
    if (n_outer == 0) return;
    llvm::Function* pf =
        llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::prefetch, {b_.getPtrTy()});
    for (const kir::Load& l : k_.stages.front().loads) {
      if (!l.guards.empty()) continue;
      const int64_t delta = coeff_of(l.index, n_outer - 1);
      if (delta == 0) continue;
      int64_t stride = 1;  // the load must be base + t over the flattened inner points
      bool contiguous = true;
      for (size_t d = inner_dims_.size(); d-- > 0;) {
        if (coeff_of(l.index, n_outer + d) != stride) contiguous = false;
        stride *= inner_dims_[d];
      }
      if (!contiguous) continue;
      const DType t = k_.inputs[static_cast<size_t>(l.param)].dtype;
      const int64_t bytes = t == DType::kBool ? 1 : static_cast<int64_t>(itemsize(t));
      const int64_t per_line = std::max<int64_t>(1, 64 / bytes);
      llvm::Value* first = b_.CreateAdd(b_.CreateAdd(outer_part(l.index), i64c(delta)), t0);
      llvm::Value* base = b_.CreateGEP(mem_type(c_, t), bufs_[static_cast<size_t>(l.param)], first);
      counted_loop(0, (points + per_line - 1) / per_line, "prefetch", [&](llvm::Value* i) {
        llvm::Value* ptr = b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(i, i64c(64)));
        b_.CreateCall(pf, {ptr, b_.getInt32(0), b_.getInt32(2), b_.getInt32(1)});
      });
    }
  }

  void allocate_stage_arrays() {
    const int64_t n = k_.num_inner();
    for (const kir::Stage& st : k_.stages) {
      StageArrays a;
      a.lanes = lanes_of(st.reducers.at(0).type);
      // Counter levels: popcount of a block number below n / (8 L) is at most its bit width.
      const uint64_t levels = static_cast<uint64_t>(std::bit_width(
                                  static_cast<uint64_t>(n / (reduce_order::kPerLane * a.lanes)))) +
                              1;
      for (const kir::Reducer& r : st.reducers) {
        llvm::Type* lanes =
            llvm::ArrayType::get(mem_type(c_, r.type), static_cast<uint64_t>(a.lanes));
        a.cur.push_back(b_.CreateAlloca(lanes, nullptr, "lanes"));
        a.stack.push_back(b_.CreateAlloca(llvm::ArrayType::get(lanes, levels), nullptr, "stack"));
      }
      arrays_.push_back(std::move(a));
      const std::vector<DType> outs = st.body.output_types();
      for (size_t v = st.reducers.size(); v < outs.size(); ++v) {
        saved_types_.push_back(outs[v]);
        saved_.push_back(
            b_.CreateAlloca(llvm::ArrayType::get(mem_type(c_, outs[v]), static_cast<uint64_t>(n)),
                            nullptr, "saved"));
      }
    }
  }

  void emit_reduction_inner(llvm::Function* f, size_t nbuf) {
    const size_t n_outer = k_.dims.size() - k_.inner;
    inner_dims_.assign(k_.dims.begin() + static_cast<std::ptrdiff_t>(n_outer), k_.dims.end());
    if (inner_dims_.empty()) inner_dims_.push_back(1);  // one inner point
    const int64_t num_inner = k_.num_inner();

    // Per chunk: the stages' lanes and counter stacks, the saved rows.
    const PointLoop loop = open_point_loop(f, nbuf, [&] { allocate_stage_arrays(); });
    llvm::Value* p = loop.p;
    outer_idx_ = split_index(p, std::span<const int64_t>(k_.dims).first(n_outer));
    read_symbols([&](const kir::Affine& a) { return outer_part(a); });  // constant per row
    std::vector<llvm::Value*> rows;
    for (size_t s = 0; s < k_.stages.size(); ++s) emit_stage(s, rows);

    const Bases base = bases(k_.loads, k_.indices);
    auto store = [&](const std::vector<llvm::Value*>& outs, llvm::Value* pos) {
      for (size_t o = 0; o < outs.size(); ++o) {
        const DType t = k_.outputs[o].dtype;
        llvm::Value* ptr = b_.CreateInBoundsGEP(mem_type(c_, t), bufs_[k_.inputs.size() + o], pos);
        b_.CreateStore(to_mem(outs[o], t), ptr);
      }
    };
    std::vector<llvm::Value*> iv(inner_dims_.size(), nullptr);
    if (k_.row_outputs) {
      for (llvm::Value*& v : iv) v = i64c(0);
      store(emit_body(main_, point_inputs(k_.loads, k_.indices, base, iv, rows), false), p);
    } else {
      llvm::Value* row_start = b_.CreateNSWMul(p, i64c(num_inner), "row_start");
      inner_nest(0, iv, [&](std::vector<llvm::Value*>& ivs) {
        counted_loop(0, inner_dims_.back(), "point", [&](llvm::Value* j) {
          ivs.back() = j;
          // The point's row-major position in the row.
          llvm::Value* pos = i64c(0);
          int64_t stride = 1;
          for (size_t d = ivs.size(); d-- > 0;) {
            pos = b_.CreateNSWAdd(pos, b_.CreateNSWMul(ivs[d], i64c(stride)));
            stride *= inner_dims_[d];
          }
          store(emit_body(main_,
                          point_inputs(k_.loads, k_.indices, base, ivs, rows, saved_.size(), pos),
                          false),
                b_.CreateNSWAdd(row_start, pos));
        });
      });
    }
    close_point_loop(loop, b_.CreateNSWAdd(p, i64c(1), "p.next"));
  }

  // ---- column kernels (k.columns > 0): the eager column reduction's order ----
  //
  // The space is [outer..., inner...] with `columns` = I, standing for the reduction over R of
  // an [O, R, I] operand (kernel_ir.h). Eager (reductions.cpp, reduce_cols_wide) folds each
  // column over R rows cut into chunks of column_chunk_rows(I) rows (compiler/reduce_order.h); a
  // chunk by col_block (at most kLeafRows rows in order, else the first leaf_half(rows) rows and
  // the rest folded separately and combined, left first); the chunks' partials again by
  // col_block. That
  // order depends on R and I only, never on which columns are computed together, so the
  // lowering takes blocks of up to kColumnBlock consecutive points of the last outer dimension
  // (in one of its rows: the loads are affine along it) and runs the order as a schedule — a
  // table of events: LEAF (fold rows [r0, r0 + n) into `cur`, the first one set), PUSH (`cur`
  // onto a stack), COMBINE (`cur` = combine(pop, cur)) — each event a loop across the block's
  // columns, which vectorizes.
  enum ColumnEvent : int64_t { kLeaf = 0, kPush = 1, kCombine = 2 };

  struct ColumnSchedule {
    std::vector<int64_t> events;  // (kind, r0, n) triples
    int64_t depth = 0;            // stack levels needed
  };

  static ColumnSchedule column_schedule(int64_t R, int64_t I) {
    namespace ro = reduce_order;
    ColumnSchedule sc;
    int64_t level = 0;
    auto ev = [&](int64_t kind, int64_t r0, int64_t n) {
      sc.events.insert(sc.events.end(), {kind, r0, n});
      if (kind == kPush) sc.depth = std::max(sc.depth, ++level);
      if (kind == kCombine) --level;
    };
    std::function<void(int64_t, int64_t)> rows = [&](int64_t r0, int64_t n) {
      if (n <= ro::kLeafRows) return ev(kLeaf, r0, n);
      const int64_t half = ro::leaf_half(n);
      rows(r0, half);
      ev(kPush, 0, 0);
      rows(r0 + half, n - half);
      ev(kCombine, 0, 0);
    };
    const int64_t rchunk = ro::column_chunk_rows(I);
    const int64_t nrc = (R + rchunk - 1) / rchunk;
    auto chunk = [&](int64_t c) { rows(c * rchunk, std::min(rchunk, R - c * rchunk)); };
    std::function<void(int64_t, int64_t)> partials = [&](int64_t c0, int64_t n) {
      if (n <= ro::kLeafRows) {
        chunk(c0);
        for (int64_t c = 1; c < n; ++c) {
          ev(kPush, 0, 0);
          chunk(c0 + c);
          ev(kCombine, 0, 0);
        }
        return;
      }
      const int64_t half = ro::leaf_half(n);
      partials(c0, half);
      ev(kPush, 0, 0);
      partials(c0 + half, n - half);
      ev(kCombine, 0, 0);
    };
    if (nrc == 1)
      rows(0, R);
    else
      partials(0, nrc);
    return sc;
  }

  void emit_columns_inner(llvm::Function* f, size_t nbuf) {
    const size_t n_outer = k_.dims.size() - k_.inner;
    inner_dims_.assign(k_.dims.begin() + static_cast<std::ptrdiff_t>(n_outer), k_.dims.end());
    if (inner_dims_.empty()) inner_dims_.push_back(1);
    const int64_t D = k_.dims[n_outer - 1];  // the last outer dimension: across columns
    const kir::Stage& st = k_.stages.front();
    const Body& body = stage_bodies_.front();
    const size_t nr = st.reducers.size();
    const ColumnSchedule sc = column_schedule(k_.num_inner(), k_.columns);
    const int64_t W = std::min(kColumnBlock, D);

    std::vector<llvm::AllocaInst*> cur(nr), stack(nr);
    llvm::AllocaInst* top = nullptr;
    const PointLoop pl = open_point_loop(f, nbuf, [&] {
      for (size_t r = 0; r < nr; ++r) {
        llvm::Type* t = mem_type(c_, st.reducers[r].type);
        cur[r] = b_.CreateAlloca(llvm::ArrayType::get(t, static_cast<uint64_t>(W)), nullptr, "cur");
        stack[r] = b_.CreateAlloca(
            llvm::ArrayType::get(t, static_cast<uint64_t>(W * std::max<int64_t>(1, sc.depth))),
            nullptr, "stack");
      }
      top = b_.CreateAlloca(b_.getInt64Ty(), nullptr, "top");
    });
    llvm::Value* p = pl.p;
    llvm::Value* q = b_.CreateUDiv(p, i64c(D), "colrow");
    llvm::Value* row_start = b_.CreateNSWMul(q, i64c(D), "row_start");
    llvm::Value* j0 = b_.CreateNSWSub(p, row_start, "j0");
    llvm::Value* lim = b_.CreateNSWSub(pl.end, row_start);
    lim = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, lim, i64c(D));
    llvm::Value* jend = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, lim,
                                                 b_.CreateNSWAdd(j0, i64c(W)), nullptr, "jend");
    // Forms at (this row of the last outer dimension, column 0): split the row's start.
    outer_idx_ = split_index(row_start, std::span<const int64_t>(k_.dims).first(n_outer));
    auto coeff_col = [&](const kir::Affine& a) { return coeff_of(a, n_outer - 1); };
    auto elem = [&](llvm::AllocaInst* arr, llvm::Value* i) {
      return b_.CreateInBoundsGEP(arr->getAllocatedType(), arr, {i64c(0), i});
    };
    // The stage's values at column j (absolute in the row) and inner point iv.
    auto stage_values = [&](llvm::Value* j, const std::vector<llvm::Value*>& iv) {
      std::vector<llvm::Value*> in;
      for (const kir::Load& l : st.loads) {
        llvm::Value* idx = at_inner(outer_part(l.index), l.index, iv);
        if (coeff_col(l.index) != 0)
          idx = b_.CreateNSWAdd(idx, b_.CreateNSWMul(j, i64c(coeff_col(l.index))));
        in.push_back(emit_load(l, idx, [&](const kir::Affine& a) {
          llvm::Value* v = at_inner(outer_part(a), a, iv);
          return coeff_of(a, n_outer - 1) != 0
                     ? b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(coeff_of(a, n_outer - 1))))
                     : v;
        }));
      }
      for (const kir::IndexValue& iv2 : st.indices) {
        llvm::Value* v = at_inner(outer_part(iv2.value), iv2.value, iv);
        if (coeff_col(iv2.value) != 0)
          v = b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(coeff_col(iv2.value))));
        in.push_back(v);
      }
      return emit_body(body, in, false);
    };
    // for (j = j0; j < jend; ++j) fn(j, j - j0)
    auto across = [&](const char* name, const std::function<void(llvm::Value*, llvm::Value*)>& fn) {
      loop(j0, jend, name, [&](llvm::Value* j) { fn(j, b_.CreateNSWSub(j, j0)); });
    };
    auto slot = [&](size_t r, llvm::Value* level, llvm::Value* jj) {
      return elem(stack[r], b_.CreateNSWAdd(b_.CreateNSWMul(level, i64c(W)), jj));
    };

    // The schedule as a constant table, walked by a loop with a switch.
    const int64_t n_ev = static_cast<int64_t>(sc.events.size() / 3);
    llvm::ArrayType* table_t =
        llvm::ArrayType::get(b_.getInt64Ty(), static_cast<uint64_t>(sc.events.size()));
    std::vector<llvm::Constant*> vals;
    for (int64_t e : sc.events) vals.push_back(b_.getInt64(static_cast<uint64_t>(e)));
    auto* table = new llvm::GlobalVariable(m_, table_t, true, llvm::GlobalValue::PrivateLinkage,
                                           llvm::ConstantArray::get(table_t, vals), "schedule");
    b_.CreateStore(i64c(0), top);
    loop(i64c(0), i64c(n_ev), "event", [&](llvm::Value* e) {
      auto field = [&](int64_t k) {
        llvm::Value* i = b_.CreateNSWAdd(b_.CreateNSWMul(e, i64c(3)), i64c(k));
        return b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(table_t, table, {i64c(0), i}));
      };
      llvm::Value* kind = field(0);
      llvm::Value* r0 = field(1);
      llvm::Value* n = field(2);
      llvm::BasicBlock* leaf = llvm::BasicBlock::Create(c_, "ev.leaf", fn_);
      llvm::BasicBlock* push = llvm::BasicBlock::Create(c_, "ev.push", fn_);
      llvm::BasicBlock* comb = llvm::BasicBlock::Create(c_, "ev.combine", fn_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "ev.done", fn_);
      llvm::SwitchInst* sw = b_.CreateSwitch(kind, comb, 2);
      sw->addCase(b_.getInt64(kLeaf), leaf);
      sw->addCase(b_.getInt64(kPush), push);
      // LEAF: the first row sets, the others fold in order.
      b_.SetInsertPoint(leaf);
      {
        std::vector<llvm::Value*> iv = split_index(r0, inner_dims_);
        across("leaf.first", [&](llvm::Value* j, llvm::Value* jj) {
          const std::vector<llvm::Value*> v = stage_values(j, iv);
          for (size_t r = 0; r < nr; ++r)
            b_.CreateStore(to_mem(v[r], st.reducers[r].type), elem(cur[r], jj));
        });
        loop(b_.CreateNSWAdd(r0, i64c(1)), b_.CreateNSWAdd(r0, n), "leaf.row",
             [&](llvm::Value* row) {
               const std::vector<llvm::Value*> ivr = split_index(row, inner_dims_);
               across("leaf.fold", [&](llvm::Value* j, llvm::Value* jj) {
                 const std::vector<llvm::Value*> v = stage_values(j, ivr);
                 for (size_t r = 0; r < nr; ++r) {
                   const DType t = st.reducers[r].type;
                   llvm::Value* ptr = elem(cur[r], jj);
                   llvm::Value* a = from_mem(b_.CreateLoad(mem_type(c_, t), ptr), t);
                   b_.CreateStore(to_mem(combine(st.reducers[r], a, v[r]), t), ptr);
                 }
               });
             });
      }
      b_.CreateBr(done);
      // PUSH
      b_.SetInsertPoint(push);
      {
        llvm::Value* level = b_.CreateLoad(b_.getInt64Ty(), top);
        across("push", [&](llvm::Value*, llvm::Value* jj) {
          for (size_t r = 0; r < nr; ++r) {
            llvm::Type* t = mem_type(c_, st.reducers[r].type);
            b_.CreateStore(b_.CreateLoad(t, elem(cur[r], jj)), slot(r, level, jj));
          }
        });
        b_.CreateStore(b_.CreateNSWAdd(level, i64c(1)), top);
      }
      b_.CreateBr(done);
      // COMBINE: cur = combine(pop, cur)
      b_.SetInsertPoint(comb);
      {
        llvm::Value* level = b_.CreateNSWSub(b_.CreateLoad(b_.getInt64Ty(), top), i64c(1));
        b_.CreateStore(level, top);
        across("combine", [&](llvm::Value*, llvm::Value* jj) {
          for (size_t r = 0; r < nr; ++r) {
            const DType t = st.reducers[r].type;
            llvm::Type* mt = mem_type(c_, t);
            llvm::Value* left = from_mem(b_.CreateLoad(mt, slot(r, level, jj)), t);
            llvm::Value* ptr = elem(cur[r], jj);
            llvm::Value* right = from_mem(b_.CreateLoad(mt, ptr), t);
            b_.CreateStore(to_mem(combine(st.reducers[r], left, right), t), ptr);
          }
        });
      }
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    });
    // The body once per column (row_outputs), with the column's row values.
    const Bases base = bases(k_.loads, k_.indices);
    across("column.out", [&](llvm::Value* j, llvm::Value* jj) {
      std::vector<llvm::Value*> zero(inner_dims_.size(), i64c(0));
      std::vector<llvm::Value*> in;
      for (size_t l = 0; l < k_.loads.size(); ++l) {
        const kir::Affine& a = k_.loads[l].index;
        llvm::Value* idx = base.loads[l];
        if (coeff_col(a) != 0) idx = b_.CreateNSWAdd(idx, b_.CreateNSWMul(j, i64c(coeff_col(a))));
        in.push_back(emit_load(k_.loads[l], idx, [&](const kir::Affine& g) {
          llvm::Value* v = outer_part(g);
          return coeff_of(g, n_outer - 1) != 0
                     ? b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(coeff_of(g, n_outer - 1))))
                     : v;
        }));
      }
      for (size_t k = 0; k < k_.indices.size(); ++k) {
        const kir::Affine& a = k_.indices[k].value;
        llvm::Value* v = base.indices[k];
        if (coeff_col(a) != 0) v = b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(coeff_col(a))));
        in.push_back(v);
      }
      for (size_t r = 0; r < nr; ++r) {
        const DType t = st.reducers[r].type;
        in.push_back(from_mem(b_.CreateLoad(mem_type(c_, t), elem(cur[r], jj)), t));
      }
      const std::vector<llvm::Value*> outs = emit_body(main_, in, false);
      llvm::Value* pos = b_.CreateNSWAdd(row_start, j);
      for (size_t o = 0; o < outs.size(); ++o) {
        const DType t = k_.outputs[o].dtype;
        b_.CreateStore(to_mem(outs[o], t),
                       b_.CreateInBoundsGEP(mem_type(c_, t), bufs_[k_.inputs.size() + o], pos));
      }
    });
    close_point_loop(pl, b_.CreateNSWAdd(row_start, jend, "p.next"));
  }

  // ---- the scalar body ----

  llvm::Function* runtime_decl(const RuntimeFn& f) {
    llvm::Type* t = reg_type(c_, f.type);
    std::vector<llvm::Type*> ps(static_cast<size_t>(f.arity), t);
    llvm::FunctionCallee callee =
        m_.getOrInsertFunction(f.symbol, llvm::FunctionType::get(t, ps, false));
    auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
    fn->setDoesNotAccessMemory();
    fn->setDoesNotThrow();
    fn->addFnAttr(llvm::Attribute::WillReturn);
    return fn;
  }

  llvm::Value* call_runtime(Op op, DType t, std::span<llvm::Value* const> a) {
    const RuntimeFn* f = runtime_function(op, t);
    if (f == nullptr)
      throw_internal(kLayer, std::string("no code for ") + scalar::op_name(op) + " at " +
                                 std::string(dtype_short_name(t)));
    return b_.CreateCall(runtime_decl(*f),
                         llvm::ArrayRef<llvm::Value*>(a.data(), static_cast<size_t>(f->arity)));
  }

  llvm::Value* constant(const scalar::Instr& in) {
    if (in.type == DType::kFloat64)
      return llvm::ConstantFP::get(b_.getDoubleTy(), std::bit_cast<double>(in.literal));
    if (in.type == DType::kFloat32)
      return llvm::ConstantFP::get(
          b_.getFloatTy(),
          static_cast<double>(static_cast<float>(std::bit_cast<double>(in.literal))));
    if (in.type == DType::kFloat16 || in.type == DType::kBFloat16) {
      const double v = std::bit_cast<double>(in.literal);
      return b_.getInt16(in.type == DType::kFloat16 ? double_to_half_bits(v)
                                                    : double_to_bfloat16_bits(v));
    }
    const int w = width_of(in.type);
    const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
    return llvm::ConstantInt::get(reg_type(c_, in.type), in.literal & mask);
  }

  // float32 <-> float16/bfloat16 with the eager kernels' bits (core/dtype.cpp): float16 through
  // LLVM's half (F16C's vcvtps2ph/vcvtph2ps: round to nearest even, NaNs quieted keeping the top
  // payload bits — what float_to_half_bits does); bfloat16 on the bits: widening is a shift,
  // narrowing rounds the low 16 bits to nearest even and quiets a NaN by setting bit 6.
  llvm::Value* from_16bit(llvm::Value* x, DType from) {
    if (from == DType::kFloat16)
      return b_.CreateFPExt(b_.CreateBitCast(x, b_.getHalfTy()), b_.getFloatTy());
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(x, b_.getInt32Ty()), 16), b_.getFloatTy());
  }
  llvm::Value* to_16bit(llvm::Value* x, DType to) {
    if (to == DType::kFloat16)
      return b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getInt16Ty());
    llvm::Value* u = b_.CreateBitCast(x, b_.getInt32Ty());
    llvm::Value* nan =
        b_.CreateICmpUGT(b_.CreateAnd(u, b_.getInt32(0x7fffffffu)), b_.getInt32(0x7f800000u));
    llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(u, 16), b_.getInt32(1));
    llvm::Value* rounded =
        b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(u, b_.getInt32(0x7fffu)), odd), 16);
    llvm::Value* quiet = b_.CreateOr(b_.CreateLShr(u, 16), b_.getInt32(0x40u));
    return b_.CreateTrunc(b_.CreateSelect(nan, quiet, rounded), b_.getInt16Ty());
  }

  llvm::Value* convert(llvm::Value* x, DType from, DType to) {
    llvm::Type* tt = reg_type(c_, to);
    if (from == to) return x;
    const bool from16 = from == DType::kFloat16 || from == DType::kBFloat16;
    const bool to16 = to == DType::kFloat16 || to == DType::kBFloat16;
    if (from16 || to16) {
      // fusion.cpp admits only float32 <-> 16-bit conversions (sixteen_bit_ok).
      if (from16 && to == DType::kFloat32) return from_16bit(x, from);
      if (to16 && from == DType::kFloat32) return to_16bit(x, to);
      throw_internal(kLayer, std::string("a conversion from ") +
                                 std::string(dtype_short_name(from)) + " to " +
                                 std::string(dtype_short_name(to)));
    }
    if (to == DType::kBool) {
      if (is_floating(from)) return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
      return b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    }
    if (is_floating(to)) {
      if (is_floating(from)) return b_.CreateFPCast(x, tt);
      if (is_signed_integer(from)) return b_.CreateSIToFP(x, tt);
      return b_.CreateUIToFP(x, tt);  // unsigned, bool
    }
    // to an integer
    if (is_floating(from))
      return b_.CreateIntrinsic(
          is_signed_integer(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
          {tt, x->getType()}, {x});
    const int wf = width_of(from), wt = width_of(to);
    if (wt < wf) return b_.CreateTrunc(x, tt);
    if (wt == wf) return x;
    return is_signed_integer(from) ? b_.CreateSExt(x, tt) : b_.CreateZExt(x, tt);
  }

  llvm::Value* int_div_rem(Op op, DType t, llvm::Value* x, llvm::Value* y) {
    llvm::Type* ty = x->getType();
    llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
    llvm::Value* one = llvm::ConstantInt::get(ty, 1);
    llvm::Value* y0 = b_.CreateICmpEQ(y, zero);
    if (is_signed_integer(t)) {
      const int w = width_of(t);
      llvm::Value* min =
          llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(static_cast<unsigned>(w)));
      llvm::Value* ovf = b_.CreateAnd(b_.CreateICmpEQ(x, min),
                                      b_.CreateICmpEQ(y, llvm::ConstantInt::getSigned(ty, -1)));
      llvm::Value* bad = b_.CreateOr(y0, ovf);
      llvm::Value* ys = b_.CreateSelect(bad, one, y);
      if (op == Op::kDiv) {
        llvm::Value* q = b_.CreateSDiv(x, ys);
        return b_.CreateSelect(y0, llvm::ConstantInt::getSigned(ty, -1),
                               b_.CreateSelect(ovf, x, q));
      }
      llvm::Value* r = b_.CreateSRem(x, ys);
      return b_.CreateSelect(y0, x, b_.CreateSelect(ovf, zero, r));
    }
    llvm::Value* ys = b_.CreateSelect(y0, one, y);
    if (op == Op::kDiv)
      return b_.CreateSelect(y0, llvm::ConstantInt::getAllOnesValue(ty), b_.CreateUDiv(x, ys));
    return b_.CreateSelect(y0, x, b_.CreateURem(x, ys));
  }

  llvm::Value* shift(Op op, DType t, llvm::Value* x, llvm::Value* y) {
    llvm::Type* ty = x->getType();
    const int w = width_of(t);
    llvm::Value* in_range =
        b_.CreateICmpULT(y, llvm::ConstantInt::get(ty, static_cast<uint64_t>(w)));
    llvm::Value* amt = b_.CreateAnd(y, llvm::ConstantInt::get(ty, static_cast<uint64_t>(w - 1)));
    switch (op) {
      case Op::kShl:
        return b_.CreateSelect(in_range, b_.CreateShl(x, amt), llvm::ConstantInt::get(ty, 0));
      case Op::kShrLogical:
        return b_.CreateSelect(in_range, b_.CreateLShr(x, amt), llvm::ConstantInt::get(ty, 0));
      default:
        return b_.CreateSelect(
            in_range, b_.CreateAShr(x, amt),
            b_.CreateAShr(x, llvm::ConstantInt::get(ty, static_cast<uint64_t>(w - 1))));
    }
  }

  llvm::Value* min_max(Op op, DType t, llvm::Value* x, llvm::Value* y) {
    if (is_floating(t)) {
      llvm::Value* first = op == Op::kMax ? b_.CreateFCmpOGT(x, y) : b_.CreateFCmpOLT(x, y);
      llvm::Value* r = b_.CreateSelect(first, x, y);
      llvm::Value* nan = b_.CreateFCmpUNO(x, y);
      return b_.CreateSelect(nan, llvm::ConstantFP::getQNaN(x->getType()), r);
    }
    llvm::Value* first;
    if (is_signed_integer(t))
      first = op == Op::kMax ? b_.CreateICmpSGT(x, y) : b_.CreateICmpSLT(x, y);
    else
      first = op == Op::kMax ? b_.CreateICmpUGT(x, y) : b_.CreateICmpULT(x, y);
    return b_.CreateSelect(first, x, y);
  }

  llvm::Value* compare(Op op, DType t, llvm::Value* x, llvm::Value* y) {
    if (is_floating(t)) {
      switch (op) {
        case Op::kEq:
          return b_.CreateFCmpOEQ(x, y);
        case Op::kNe:
          return b_.CreateFCmpUNE(x, y);
        case Op::kLt:
          return b_.CreateFCmpOLT(x, y);
        case Op::kLe:
          return b_.CreateFCmpOLE(x, y);
        case Op::kGt:
          return b_.CreateFCmpOGT(x, y);
        default:
          return b_.CreateFCmpOGE(x, y);
      }
    }
    const bool s = is_signed_integer(t);
    switch (op) {
      case Op::kEq:
        return b_.CreateICmpEQ(x, y);
      case Op::kNe:
        return b_.CreateICmpNE(x, y);
      case Op::kLt:
        return s ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
      case Op::kLe:
        return s ? b_.CreateICmpSLE(x, y) : b_.CreateICmpULE(x, y);
      case Op::kGt:
        return s ? b_.CreateICmpSGT(x, y) : b_.CreateICmpUGT(x, y);
      default:
        return s ? b_.CreateICmpSGE(x, y) : b_.CreateICmpUGE(x, y);
    }
  }

  std::vector<llvm::Value*> emit_body(const Body& body, const std::vector<llvm::Value*>& inputs,
                                      bool fast) {
    const scalar::Program& p = body.prog;
    const std::vector<bool>& fallback = body.fallback;
    std::vector<llvm::Value*> v(p.instrs.size(), nullptr);
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      const scalar::Instr& in = p.instrs[i];
      llvm::Value* a[3] = {nullptr, nullptr, nullptr};
      DType at[3] = {in.type, in.type, in.type};
      for (int k = 0; k < 3; ++k)
        if (in.args[k] >= 0) {
          a[k] = v[static_cast<size_t>(in.args[k])];
          at[k] = p.instrs[static_cast<size_t>(in.args[k])].type;
        }
      const DType t = in.type;
      const bool fl = is_floating(t);
      switch (in.op) {
        case Op::kInput:
          v[i] = inputs.at(static_cast<size_t>(in.index));
          break;
        case Op::kConst:
          v[i] = constant(in);
          break;
        case Op::kConvert:
          v[i] = convert(a[0], at[0], t);
          break;
        case Op::kBitcast:
          v[i] =
              a[0]->getType() == reg_type(c_, t) ? a[0] : b_.CreateBitCast(a[0], reg_type(c_, t));
          break;
        case Op::kNeg:
          v[i] = fl ? b_.CreateFNeg(a[0]) : b_.CreateNeg(a[0]);
          break;
        case Op::kAbs:
          if (fl)
            v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]);
          else if (is_signed_integer(t))
            v[i] =
                b_.CreateSelect(b_.CreateICmpSLT(a[0], llvm::ConstantInt::get(a[0]->getType(), 0)),
                                b_.CreateNeg(a[0]), a[0]);
          else
            v[i] = a[0];
          break;
        case Op::kAdd:
          v[i] = fl ? b_.CreateFAdd(a[0], a[1]) : b_.CreateAdd(a[0], a[1]);
          break;
        case Op::kSub:
          v[i] = fl ? b_.CreateFSub(a[0], a[1]) : b_.CreateSub(a[0], a[1]);
          break;
        case Op::kMul:
          v[i] = fl ? b_.CreateFMul(a[0], a[1]) : b_.CreateMul(a[0], a[1]);
          break;
        case Op::kDiv:
          v[i] = fl ? b_.CreateFDiv(a[0], a[1]) : int_div_rem(Op::kDiv, t, a[0], a[1]);
          break;
        case Op::kRem:
          v[i] = fl ? call_runtime(Op::kRem, t, a) : int_div_rem(Op::kRem, t, a[0], a[1]);
          break;
        case Op::kFma:
          v[i] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, {a[0], a[1], a[2]});
          break;
        case Op::kMax:
        case Op::kMin:
          v[i] = min_max(in.op, t, a[0], a[1]);
          break;
        case Op::kCopySign:
          v[i] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, a[0], a[1]);
          break;
        case Op::kFloor:
          v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a[0]);
          break;
        case Op::kCeil:
          v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a[0]);
          break;
        case Op::kRoundEven:
          v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a[0]);
          break;
        case Op::kRoundAway:
          v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::round, a[0]);
          break;
        case Op::kSqrt:
          v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
          break;
        case Op::kRsqrt:
        case Op::kCbrt:
        case Op::kExp:
        case Op::kExp2:
        case Op::kExpm1:
        case Op::kLog:
        case Op::kLog1p:
        case Op::kSin:
        case Op::kCos:
        case Op::kTan:
        case Op::kTanh:
        case Op::kAtan2:
        case Op::kPow:
        case Op::kNextAfter:
          v[i] = call_runtime(in.op, t, a);
          break;
        case Op::kEq:
        case Op::kNe:
        case Op::kLt:
        case Op::kLe:
        case Op::kGt:
        case Op::kGe:
          v[i] = compare(in.op, at[0], a[0], a[1]);
          break;
        case Op::kNot:
          v[i] = b_.CreateNot(a[0]);
          break;
        case Op::kAnd:
          v[i] = b_.CreateAnd(a[0], a[1]);
          break;
        case Op::kOr:
          v[i] = b_.CreateOr(a[0], a[1]);
          break;
        case Op::kXor:
          v[i] = b_.CreateXor(a[0], a[1]);
          break;
        case Op::kShl:
        case Op::kShrLogical:
        case Op::kShrArith:
          v[i] = shift(in.op, t, a[0], a[1]);
          break;
        case Op::kPopcnt:
          v[i] = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, a[0]);
          break;
        case Op::kClz:
          v[i] =
              b_.CreateIntrinsic(llvm::Intrinsic::ctlz, {a[0]->getType()}, {a[0], b_.getFalse()});
          break;
        case Op::kSelect:
          if (fast && fallback[i]) {
            // The fast path; remember whether this point needed the fallback.
            need_ = b_.CreateOr(need_, b_.CreateNot(a[0]));
            v[i] = a[1];
          } else {
            v[i] = b_.CreateSelect(a[0], a[1], a[2]);
          }
          break;
        case Op::kExtern: {
          const RuntimeFn* f = runtime_extern(static_cast<scalar::Fn>(in.index));
          if (f == nullptr) throw_internal(kLayer, "an extern without a runtime function");
          v[i] = b_.CreateCall(runtime_decl(*f),
                               llvm::ArrayRef<llvm::Value*>(a, static_cast<size_t>(f->arity)));
          break;
        }
      }
    }
    std::vector<llvm::Value*> outs;
    for (int32_t o : p.outputs) outs.push_back(v[static_cast<size_t>(o)]);
    return outs;
  }

  const kir::Kernel& k_;
  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  Body main_;
  std::vector<Body> stage_bodies_;
  size_t rank_ = 0;
  std::vector<int64_t> dims_;
  llvm::Function* fn_ = nullptr;
  std::vector<llvm::Value*> bufs_;
  std::vector<llvm::Value*> load_base_, index_base_;
  std::vector<int64_t> load_step_, index_step_;
  llvm::Value* row_start_ = nullptr;
  llvm::Value* need_ = nullptr;
  // Reduction kernels.
  std::vector<llvm::Value*> outer_idx_;
  std::vector<llvm::Value*> sym_;  // the symbols' values at the current point
  std::vector<int64_t> inner_dims_;
  struct StageArrays {
    int64_t lanes = 8;
    std::vector<llvm::AllocaInst*> cur, stack;  // per reducer: [lanes], [levels][lanes]
  };
  std::vector<StageArrays> arrays_;       // per stage
  std::vector<llvm::AllocaInst*> saved_;  // per saved value: [inner points]
  std::vector<DType> saved_types_;
  int interleave_count_ = -1;  // map_interleave(k_), once computed
};

}  // namespace

int map_interleave(const kir::Kernel& k) {
  if (!k.stages.empty() || k.dims.empty() || k.dims.back() < kInterleaveMin) return 1;
  // Narrow elements in memory (bool, 8- and 16-bit) make the vectorizer pick a wider factor
  // (several vectors of 32-bit work per iteration already): interleaving more spilled
  // registers (bernoulli_16M 7.1 -> 9.2 ms).
  for (const kir::BufferType& b : k.outputs)
    if (b.dtype == DType::kBool || itemsize(b.dtype) < 4) return 1;
  for (const kir::Load& l : k.loads) {
    const DType t = k.inputs[static_cast<size_t>(l.param)].dtype;
    if (t == DType::kBool || itemsize(t) < 4) return 1;
  }
  size_t ops = 0;
  for (const scalar::Instr& in : expand_math(k.body).instrs)
    ops += in.op != scalar::Op::kInput && in.op != scalar::Op::kConst;
  return ops >= kHeavyOps ? kInterleave : 1;
}

int64_t entry_grain(const kir::Kernel& k) {
  constexpr int64_t kGrain = runtime::kElementwiseGrain;
  if (k.stages.empty()) return kGrain;
  const int64_t per = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, k.num_inner()));
  return k.columns == 0 ? per : kColumnBlock;
}

int64_t column_grain(int64_t num_points, int threads) {
  const int64_t share = (num_points + std::max(threads, 1) - 1) / std::max(threads, 1);
  return std::clamp<int64_t>((share + 15) / 16 * 16, std::min<int64_t>(256, kColumnBlock),
                             kColumnBlock);
}

std::unique_ptr<llvm::Module> emit_kernel(const kir::Kernel& k, const std::string& name,
                                          llvm::LLVMContext& ctx) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  Emitter(k, *m).emit(name);
  return m;
}

}  // namespace tessera::compiler::cpu
