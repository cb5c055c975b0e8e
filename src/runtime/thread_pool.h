// The runtime's one thread pool. Idle workers block (no spinning), so BLAS and other pools
// never lose cycles to us. Work is split into fixed-size chunks whose boundaries depend only on
// the problem size, never on the thread count, so results are bitwise identical for any
// number of threads.
#pragma once

#include <cstdint>
#include <functional>

namespace tessera::runtime {

// Number of threads that execute work (workers + the calling thread). TESSERA_NUM_THREADS
// overrides; default: hardware concurrency.
int num_threads();
// Changes the number of threads (joins and restarts the workers). For tests and benchmarks.
void set_num_threads(int n);

// Runs fn(chunk_begin, chunk_end) over [0, n) in chunks of `grain` elements (the last one
// shorter). Runs inline when n <= grain or when called from inside a pool task (no nested
// parallelism). Exceptions in chunks are rethrown in the caller (the first one).
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Elements per chunk for elementwise kernels: large enough that waking a worker (~5 us) pays.
inline constexpr int64_t kElementwiseGrain = 1 << 16;

// True while the calling thread is executing a parallel_for chunk.
bool in_parallel_region();

}  // namespace tessera::runtime
