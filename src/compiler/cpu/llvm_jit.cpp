// The LLJIT instance, the O2 pipeline and the kernel cache (llvm_jit.h).
#include "compiler/cpu/llvm_jit.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/cpu/llvm_codegen.h"
#include "compiler/scalar_runtime.h"
#include "runtime/thread_pool.h"
#include "tessera/errors.h"

namespace tessera::compiler::cpu {

namespace {

constexpr const char* kLayer = "compiler/cpu/llvm_jit";

[[noreturn]] void fail(const std::string& what, llvm::Error e) {
  throw_internal(kLayer, what + ": " + llvm::toString(std::move(e)));
}

template <class T>
T take(llvm::Expected<T> v, const std::string& what) {
  if (!v) fail(what, v.takeError());
  return std::move(*v);
}

struct Jit {
  std::mutex mu;  // guards everything below; kernels are lowered and compiled outside it
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> tm;  // the target's description (features, layout)
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  // Target machines for compiling outside the lock: one per concurrent compilation (LLVM's
  // are not shared between threads), reused; owned here (never destroyed, like the JIT).
  std::vector<std::unique_ptr<llvm::TargetMachine>> idle_tms;
  bool avx512 = false;
  std::unordered_map<std::string, std::weak_ptr<CpuKernel::Code>> cache;
  JitStats stats;
  int64_t next_id = 0;
};

Jit& jit() {
  // Never destroyed: compiled code may be released during exit.
  static Jit* j = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto* J = new Jit;
    llvm::orc::JITTargetMachineBuilder jtmb =
        take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host CPU");
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    // What LLJIT sets on its own copy when it links with JITLink (x86-64 ELF): our copy makes
    // the target machines that compile outside the lock, and a JIT target machine otherwise
    // defaults to the large code model (every constant's address loaded with a movabs).
    jtmb.setCodeModel(llvm::CodeModel::Small);
    jtmb.setRelocationModel(llvm::Reloc::PIC_);
    jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;  // fma only where written
    J->tm = take(jtmb.createTargetMachine(), "creating the target machine");
    J->jtmb = jtmb;
    J->avx512 = J->tm->getTargetFeatureString().contains("+avx512f");
    J->lljit = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(),
                    "creating the JIT");
    llvm::orc::JITDylib& jd = J->lljit->getMainJITDylib();
    llvm::orc::SymbolMap syms;
    for (const RuntimeFn& f : runtime_functions())
      syms[J->lljit->mangleAndIntern(f.symbol)] = llvm::orc::ExecutorSymbolDef(
          llvm::orc::ExecutorAddr::fromPtr(f.address),
          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
    if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(syms))))
      fail("defining the runtime functions", std::move(e));
    // memset/memcpy and libm, should the code generator emit them.
    jd.addGenerator(take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                             J->lljit->getDataLayout().getGlobalPrefix()),
                         "searching the process's symbols"));
    return J;
  }();
  return *j;
}

void optimize(llvm::Module& m, llvm::TargetMachine* tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
}

// A target machine for one compilation, returned to the pool by the destructor.
class BorrowedTm {
 public:
  explicit BorrowedTm(Jit& J) : J_(J) {
    std::lock_guard<std::mutex> lock(J.mu);
    if (!J.idle_tms.empty()) {
      tm_ = std::move(J.idle_tms.back());
      J.idle_tms.pop_back();
    } else {
      tm_ = take(J.jtmb->createTargetMachine(), "creating a target machine");
    }
  }
  ~BorrowedTm() {
    std::lock_guard<std::mutex> lock(J_.mu);
    J_.idle_tms.push_back(std::move(tm_));
  }
  BorrowedTm(const BorrowedTm&) = delete;
  BorrowedTm& operator=(const BorrowedTm&) = delete;
  llvm::TargetMachine* get() const { return tm_.get(); }

 private:
  Jit& J_;
  std::unique_ptr<llvm::TargetMachine> tm_;
};

}  // namespace

struct CpuKernel::Code {
  Entry entry = nullptr;
  double ms = 0;
  int64_t grain = runtime::kElementwiseGrain;  // entry points (outer points) per chunk
  bool columns = false;                        // a column kernel: column_grain at run time
  std::string llvm_ir, assembly;               // kept when asked for (KernelText)
  llvm::orc::ResourceTrackerSP tracker;
  ~Code() {
    if (tracker) llvm::consumeError(tracker->remove());
  }
};

CpuKernel::CpuKernel(std::shared_ptr<Code> code) : code_(std::move(code)) {}

CpuKernel::Entry CpuKernel::entry() const { return code_->entry; }
double CpuKernel::compile_ms() const { return code_->ms; }
const std::string& CpuKernel::llvm_ir() const { return code_->llvm_ir; }
const std::string& CpuKernel::assembly() const { return code_->assembly; }

void CpuKernel::run(std::span<void* const> buffers, int64_t num_points) const {
  const Entry e = code_->entry;
  void* const* b = buffers.data();
  const int64_t grain =
      code_->columns ? column_grain(num_points, runtime::num_threads()) : code_->grain;
  runtime::parallel_for(num_points, grain, [e, b](int64_t lo, int64_t hi) { e(b, lo, hi); });
}

std::shared_ptr<const CpuKernel> compile_kernel(const kir::Kernel& k, KernelText text) {
  k.verify();
  Jit& J = jit();
  const std::string key = k.signature_text();
  // The cached kernel for key when it has the text asked for (call with J.mu held).
  auto cached = [&]() -> std::shared_ptr<CpuKernel::Code> {
    auto it = J.cache.find(key);
    if (it == J.cache.end()) return nullptr;
    std::shared_ptr<CpuKernel::Code> c = it->second.lock();
    if (c && (!text.llvm_ir || !c->llvm_ir.empty()) && (!text.assembly || !c->assembly.empty()))
      return c;
    return nullptr;
  };
  std::string name;
  {
    std::lock_guard<std::mutex> lock(J.mu);
    if (std::shared_ptr<CpuKernel::Code> c = cached()) {
      ++J.stats.cache_hits;
      return std::make_shared<const CpuKernel>(std::move(c));
    }
    name = "tessera_kernel_" + std::to_string(J.next_id++);
  }
  // Lowering, optimization and code generation to an object need no lock (each compilation has
  // its own context and target machine), so several kernels compile at once; linking does.
  const auto t0 = std::chrono::steady_clock::now();
  auto code = std::make_shared<CpuKernel::Code>();
  llvm::SmallVector<char, 0> object;
  {
    BorrowedTm btm(J);
    llvm::TargetMachine* tm = btm.get();
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = emit_kernel(k, name, ctx);
    m->setDataLayout(tm->createDataLayout());
    m->setTargetTriple(tm->getTargetTriple().str());
    for (llvm::Function& f : *m) {
      if (f.isDeclaration()) continue;
      f.addFnAttr("target-cpu", tm->getTargetCPU());
      f.addFnAttr("target-features", tm->getTargetFeatureString());
      if (J.avx512) f.addFnAttr("prefer-vector-width", "512");
    }
    optimize(*m, tm);
    if (text.llvm_ir) {
      llvm::raw_string_ostream os(code->llvm_ir);
      m->print(os, nullptr);
    }
    if (text.assembly) {
      std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m);
      llvm::SmallString<0> buf;
      llvm::raw_svector_ostream os(buf);
      llvm::legacy::PassManager pm;
      if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
        throw_internal(kLayer, "the target cannot print assembly");
      pm.run(*copy);
      code->assembly = std::string(buf.str());
    }
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      throw_internal(kLayer, "the target cannot emit object code");
    pm.run(*m);
  }
  code->grain = entry_grain(k);
  code->columns = k.columns > 0;
  std::lock_guard<std::mutex> lock(J.mu);
  // Another thread may have compiled the same kernel meanwhile: share its code.
  if (std::shared_ptr<CpuKernel::Code> c = cached()) {
    ++J.stats.cache_hits;
    return std::make_shared<const CpuKernel>(std::move(c));
  }
  code->tracker = J.lljit->getMainJITDylib().createResourceTracker();
  if (llvm::Error e = J.lljit->addObjectFile(
          code->tracker, llvm::MemoryBuffer::getMemBufferCopy(
                             llvm::StringRef(object.data(), object.size()), name)))
    fail("adding kernel " + k.name, std::move(e));
  const llvm::orc::ExecutorAddr addr = take(J.lljit->lookup(name), "linking kernel " + k.name);
  code->entry = addr.toPtr<CpuKernel::Entry>();
  code->ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++J.stats.compiled;
  J.stats.compile_ms += code->ms;
  // Drop expired entries now and then so the table does not grow with dead kernels.
  if (J.cache.size() > 256)
    std::erase_if(J.cache, [](const auto& kv) { return kv.second.expired(); });
  J.cache[key] = code;
  return std::make_shared<const CpuKernel>(std::move(code));
}

JitStats jit_stats() {
  Jit& J = jit();
  std::lock_guard<std::mutex> lock(J.mu);
  return J.stats;
}

std::string jit_target() {
  Jit& J = jit();
  std::string s = J.tm->getTargetCPU().str();
  s += ' ';
  s += J.tm->getTargetFeatureString().str();
  return s;
}

}  // namespace tessera::compiler::cpu
