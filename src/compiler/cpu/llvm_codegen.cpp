// The CPU lowering of the kernel IR to LLVM IR (llvm_codegen.h).
#include "compiler/cpu/llvm_codegen.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <bit>
#include <string>
#include <vector>

#include "compiler/math_expand.h"
#include "compiler/scalar_runtime.h"
#include "tessera/errors.h"

namespace tessera::compiler::cpu {

namespace {

using scalar::Op;
constexpr const char* kLayer = "compiler/cpu/llvm_codegen";

int width_of(DType t) { return t == DType::kBool ? 1 : static_cast<int>(itemsize(t) * 8); }

llvm::Type* reg_type(llvm::LLVMContext& c, DType t) {
  switch (t) {
    case DType::kFloat32:
      return llvm::Type::getFloatTy(c);
    case DType::kFloat64:
      return llvm::Type::getDoubleTy(c);
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
      : k_(k), m_(m), c_(m.getContext()), b_(c_), body_(expand_math(k.body)) {
    fallback_.assign(body_.instrs.size(), false);
    for (size_t i = 0; i < body_.instrs.size(); ++i)
      if (is_range_fallback(body_, static_cast<int32_t>(i))) {
        fallback_[i] = true;
        has_fallback_ = true;
      }
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
    emit_inner(inner, nbuf);

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
  llvm::Value* i64c(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  void emit_inner(llvm::Function* f, size_t nbuf) {
    for (size_t i = 0; i < nbuf; ++i) bufs_.push_back(f->getArg(static_cast<unsigned>(i)));
    llvm::Value* begin = f->getArg(static_cast<unsigned>(nbuf));
    llvm::Value* end = f->getArg(static_cast<unsigned>(nbuf + 1));
    fn_ = f;
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(c_, "entry", f);
    llvm::BasicBlock* outer = llvm::BasicBlock::Create(c_, "rows", f);
    llvm::BasicBlock* row = llvm::BasicBlock::Create(c_, "row", f);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "exit", f);
    b_.SetInsertPoint(entry);
    b_.CreateBr(outer);

    b_.SetInsertPoint(outer);
    llvm::PHINode* p = b_.CreatePHI(b_.getInt64Ty(), 2, "p");
    p->addIncoming(begin, entry);
    b_.CreateCondBr(b_.CreateICmpSLT(p, end), row, exit);

    b_.SetInsertPoint(row);
    const int64_t n_last = dims_.back();
    llvm::Value* q = b_.CreateUDiv(p, i64c(n_last), "rowno");
    llvm::Value* row_start = b_.CreateNSWMul(q, i64c(n_last), "row_start");
    llvm::Value* j0 = b_.CreateNSWSub(p, row_start, "j0");
    llvm::Value* rem = b_.CreateNSWSub(end, row_start);
    llvm::Value* jend =
        b_.CreateSelect(b_.CreateICmpSLT(rem, i64c(n_last)), rem, i64c(n_last), "jend");
    // The outer indices of this row, innermost first.
    std::vector<llvm::Value*> outer_idx(dims_.size() - 1);
    llvm::Value* rest = q;
    for (size_t d = dims_.size() - 1; d-- > 0;) {
      if (d == 0) {
        outer_idx[d] = rest;
      } else {
        outer_idx[d] = b_.CreateURem(rest, i64c(dims_[d]));
        rest = b_.CreateUDiv(rest, i64c(dims_[d]));
      }
    }
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

    if (has_fallback_) {
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
    llvm::Value* next = b_.CreateNSWAdd(row_start, jend, "p.next");
    p->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(outer);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
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

    std::vector<llvm::Value*> inputs;
    for (size_t l = 0; l < k_.loads.size(); ++l) {
      const kir::Load& ld = k_.loads[l];
      const DType t = k_.inputs[static_cast<size_t>(ld.param)].dtype;
      llvm::Value* idx = load_base_[l];
      if (load_step_[l] != 0) idx = b_.CreateNSWAdd(idx, b_.CreateNSWMul(j, i64c(load_step_[l])));
      llvm::Value* ptr =
          b_.CreateInBoundsGEP(mem_type(c_, t), bufs_[static_cast<size_t>(ld.param)], idx);
      llvm::Value* v = b_.CreateLoad(mem_type(c_, t), ptr);
      if (t == DType::kBool) v = b_.CreateICmpNE(v, b_.getInt8(0));
      inputs.push_back(v);
    }
    for (size_t k = 0; k < k_.indices.size(); ++k) {
      llvm::Value* v = index_base_[k];
      if (index_step_[k] != 0) v = b_.CreateNSWAdd(v, b_.CreateNSWMul(j, i64c(index_step_[k])));
      inputs.push_back(v);
    }
    std::vector<llvm::Value*> outs = emit_body(inputs, fast);
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
    b_.CreateCondBr(b_.CreateICmpSLT(jn, jend), loop, after);
    llvm::BasicBlock* last = b_.GetInsertBlock();
    b_.SetInsertPoint(after);
    if (!fast) return nullptr;
    llvm::PHINode* r = b_.CreatePHI(b_.getInt1Ty(), 2, "need.row");
    r->addIncoming(b_.getFalse(), pre);
    r->addIncoming(need_out, last);
    return r;
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
    const int w = width_of(in.type);
    const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
    return llvm::ConstantInt::get(reg_type(c_, in.type), in.literal & mask);
  }

  llvm::Value* convert(llvm::Value* x, DType from, DType to) {
    llvm::Type* tt = reg_type(c_, to);
    if (from == to) return x;
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

  std::vector<llvm::Value*> emit_body(const std::vector<llvm::Value*>& inputs, bool fast) {
    const scalar::Program& p = body_;
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
          if (fast && fallback_[i]) {
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
  scalar::Program body_;
  std::vector<bool> fallback_;
  bool has_fallback_ = false;
  size_t rank_ = 0;
  std::vector<int64_t> dims_;
  llvm::Function* fn_ = nullptr;
  std::vector<llvm::Value*> bufs_;
  std::vector<llvm::Value*> load_base_, index_base_;
  std::vector<int64_t> load_step_, index_step_;
  llvm::Value* row_start_ = nullptr;
  llvm::Value* need_ = nullptr;
};

}  // namespace

std::unique_ptr<llvm::Module> emit_kernel(const kir::Kernel& k, const std::string& name,
                                          llvm::LLVMContext& ctx) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  Emitter(k, *m).emit(name);
  return m;
}

}  // namespace tessera::compiler::cpu
