// Compiled CPU kernels: a kir::Kernel lowered by llvm_codegen.h, optimized at O2 for the host
// CPU (its features, AVX-512 where present) and linked into the process by LLVM ORC's LLJIT.
//
// One LLVM module per kernel, cached by the kernel's signature text (kernel_ir.h: identical text
// is an identical kernel), so programs that share a kernel share its code; a kernel's code is
// removed from the JIT (its ResourceTracker) when the last CpuKernel referring to it goes. The
// runtime functions compiled code calls (scalar_runtime.h) are defined in the JIT as absolute
// symbols, so nothing depends on how libtessera was loaded.
//
// run() splits the iteration space over the runtime's thread pool in fixed chunks of
// kElementwiseGrain points (a reduction kernel: of outer points, about that many points each):
// the points are independent, so the bits never depend on the thread count. This header includes no
// LLVM header.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "compiler/kernel_ir.h"

namespace tessera::compiler::cpu {

class CpuKernel {
 public:
  using Entry = void (*)(void* const* buffers, int64_t begin, int64_t end);
  struct Code;  // the JIT's record (llvm_jit.cpp)

  explicit CpuKernel(std::shared_ptr<Code> code);
  // buffers: the kernel's inputs then its outputs (host memory, sized as the kernel says);
  // num_points: the kernel's num_outer() (for a map kernel, all its points).
  void run(std::span<void* const> buffers, int64_t num_points) const;
  Entry entry() const;
  double compile_ms() const;  // optimization + code generation of its module
  // The optimized module's LLVM IR and the host assembly, when compiled with KernelText asking
  // for them (empty otherwise).
  const std::string& llvm_ir() const;
  const std::string& assembly() const;

 private:
  std::shared_ptr<Code> code_;
};

// What compile_kernel keeps beside the code (for Compiled.as_text and TESSERA_KERNEL_TEXT).
struct KernelText {
  bool llvm_ir = false;
  bool assembly = false;
};

// The compiled kernel (from the cache when an identical kernel was compiled and is alive, and
// kept the text asked for). InternalError when LLVM rejects it (a lowering bug: it names the
// kernel).
std::shared_ptr<const CpuKernel> compile_kernel(const kir::Kernel& k, KernelText text = {});

struct JitStats {
  int64_t compiled = 0;    // modules compiled
  int64_t cache_hits = 0;  // compile_kernel calls answered from the cache
  double compile_ms = 0;   // total time in compilation
};
JitStats jit_stats();

// The target the JIT compiles for: "<cpu> <features>" (e.g. "sapphirerapids +avx512f,...").
std::string jit_target();

}  // namespace tessera::compiler::cpu
