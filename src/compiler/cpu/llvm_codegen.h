// The CPU lowering of the kernel IR: one kir::Kernel becomes one LLVM module (LLVM 19's C++
// API) holding
//     void <name>(void* const* buffers, int64_t begin, int64_t end)
// which computes the points [begin, end) of the kernel's row-major iteration space; buffers are
// the kernel's inputs then its outputs. This is where CPU decisions live, none of them in the IR:
//
//  * Loop structure. The last dimension is the inner loop; the others are recovered from the
//    row number once per row (division by constants), where every load's base offset and every
//    index value's base is formed. The inner loop reads each load at base + c * j for its
//    constant coefficient c (contiguous, invariant, reversed or strided), which LLVM's loop
//    vectorizer widens to the host's vectors. Buffers are distinct allocations: an inner
//    function takes them as `noalias` arguments, so no runtime alias checks are needed.
//  * Scalar semantics are scalar_ir.h's, op by op, with no fast-math: IEEE arithmetic with no
//    contraction (`fma` is the only fused multiply-add), NaN-propagating max/min, saturating
//    float -> integer converts (llvm.fptosi.sat), integer division and shifts made total with
//    selects (x / 0 == -1, INT_MIN / -1 == INT_MIN, amounts >= the width), bool as i1 in
//    registers and one byte in memory.
//  * Math. The body is first run through expand_math (math_expand.h): float32 transcendental
//    ops become arithmetic that vectorizes; what remains calls scalar_runtime.h's functions,
//    declared pure so unused calls disappear. An expansion's large-argument fallback (sin, cos,
//    tan beyond kTrigMax) is not computed per element: each row runs a fast loop with the
//    fallback replaced by the fast path, OR-reducing "some lane needed the fallback", and only
//    a row where that is true runs again with the exact program (same bits either way).
//  * Latency and memory. Long bodies interleave several vectors (map_interleave); a reduction
//    kernel of several stages prefetches the next row's first-stage reads into L2 during its
//    last stage, so that row's memory traffic overlaps this row's arithmetic.
//
// The caller adds the module to a JIT (llvm_jit.h) after setting its target.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/kernel_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::compiler::cpu {

// How many vectors of points the inner loop of map kernel k interleaves (LLVM's
// llvm.loop.interleave.count; 1: LLVM's own choice). A long body (threefry's 20 rounds,
// erf_inv's log1p and polynomial: at least 40 operations after expand_math) is one dependency
// chain per point; LLVM's vectorizer keeps one vector of points per iteration for a loop that
// large and the core then waits on the chain's latency, so such a body over an inner dimension
// of at least 256 points runs 4 chains side by side — unless it moves elements narrower than 32
// bits (the vectorizer then already widens past one vector per iteration). Reduction kernels
// keep LLVM's choice: their lane loops already hold independent vectors.
int map_interleave(const kir::Kernel& k);

// Entry points per parallel chunk: runtime::kElementwiseGrain for a map kernel; outer points
// of about that many points for a reduction kernel; for a column kernel the widest block of
// columns the lowering folds together (long runs of each row stream best).
int64_t entry_grain(const kir::Kernel& k);
// A column kernel's chunk at run time: its widest block, narrower (down to 256 columns) when
// wide blocks would leave some of `threads` idle. The bits never depend on it (each column's
// order is the same whichever columns are folded together).
int64_t column_grain(int64_t num_points, int threads);

// The module of kernel k with its entry function called `name`. k must verify().
std::unique_ptr<llvm::Module> emit_kernel(const kir::Kernel& k, const std::string& name,
                                          llvm::LLVMContext& ctx);

}  // namespace tessera::compiler::cpu
