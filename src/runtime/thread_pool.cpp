#include "runtime/thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/env.h"

namespace tessera::runtime {
namespace {

thread_local bool t_in_region = false;

// A fork-join pool: one job at a time; the caller works too. Idle workers sleep on a condition
// variable, so an idle pool costs nothing to BLAS or to other processes.
class Pool {
 public:
  explicit Pool(int n) { start(n); }
  ~Pool() { stop(); }

  int size() const { return nthreads_; }

  void resize(int n) {
    std::lock_guard<std::mutex> job(job_mu_);
    stop();
    start(n);
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    const int64_t chunks = (n + grain - 1) / grain;
    std::unique_lock<std::mutex> job(job_mu_, std::try_to_lock);
    if (!job.owns_lock() || nthreads_ <= 1) {  // pool busy (another user thread) or serial
      run_inline(n, grain, fn);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      fn_ = &fn;
      n_ = n;
      grain_ = grain;
      chunks_ = chunks;
      next_.store(0);
      done_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    cv_work_.notify_all();
    work();
    std::unique_lock<std::mutex> lk(mu_);
    // Also wait for workers that woke up to leave, so no late worker can touch the next job.
    cv_done_.wait(lk, [&] { return done_ == chunks_ && active_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static void run_inline(int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
    bool prev = t_in_region;
    t_in_region = true;
    try {
      for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    } catch (...) {
      t_in_region = prev;
      throw;
    }
    t_in_region = prev;
  }

  // Claims chunks until none are left.
  void work() {
    bool prev = t_in_region;
    t_in_region = true;
    int64_t finished = 0;
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= chunks_) break;
      int64_t b = c * grain_;
      try {
        (*fn_)(b, std::min(n_, b + grain_));
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu_);
        if (!error_) error_ = std::current_exception();
      }
      ++finished;
    }
    t_in_region = prev;
    if (finished) {
      std::lock_guard<std::mutex> lk(mu_);
      done_ += finished;
      if (done_ == chunks_) cv_done_.notify_all();
    }
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_work_.wait(lk, [&] { return quit_ || (generation_ != seen && fn_ != nullptr); });
        if (quit_) return;
        seen = generation_;
        ++active_;
      }
      work();
      std::lock_guard<std::mutex> lk(mu_);
      if (--active_ == 0) cv_done_.notify_all();
    }
  }

  void start(int n) {
    nthreads_ = n < 1 ? 1 : n;
    quit_ = false;
    for (int i = 1; i < nthreads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      quit_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  int nthreads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, grain_ = 1, chunks_ = 0, done_ = 0;
  int active_ = 0;  // workers inside work() for the current job
  std::atomic<int64_t> next_{0};
  uint64_t generation_ = 0;
  bool quit_ = false;
  std::exception_ptr error_;
};

int default_threads() {
  if (auto n = env_int("TESSERA_NUM_THREADS", 1, 1024)) return static_cast<int>(*n);
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

Pool& pool() {
  // Leaked on purpose: joining threads from static destructors can deadlock at exit.
  static Pool* p = new Pool(default_threads());
  return *p;
}

}  // namespace

int num_threads() { return pool().size(); }
void set_num_threads(int n) { pool().resize(n); }
bool in_parallel_region() { return t_in_region; }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain || t_in_region) {
    bool prev = t_in_region;
    t_in_region = true;
    try {
      for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    } catch (...) {
      t_in_region = prev;
      throw;
    }
    t_in_region = prev;
    return;
  }
  pool().run(n, grain, fn);
}

}  // namespace tessera::runtime
