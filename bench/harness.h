// Benchmark harness: timing (warm-up, then the median of N repetitions on steady_clock),
// peak extra resident memory, NumPy peers run as subprocesses, and one JSON object per case
// and line on stdout (the format scripts/bench collects; see docs/performance.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::bench {

using Json = nlohmann::ordered_json;  // keeps the fields in the order they are set

// Command line shared by every suite: `bench_<name> [--reps N] [--warmup N] [--list] [CASE...]`.
struct Options {
  int reps = 7;                    // timed repetitions (the median is reported); never fewer than 7
  int warmup = 2;                  // untimed runs first
  std::vector<std::string> cases;  // empty = all
  bool list = false;
  // True when `name` was asked for (or nothing was).
  bool wants(const std::string& name) const;
};
Options parse_options(int argc, char** argv, const std::vector<std::string>& known_cases);

// n float32 values uniform in [-2, 2) from std::mt19937(seed) (NumPy peers draw the same range).
std::vector<float> uniform(int64_t n, uint32_t seed);

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int reps = 0;
};
Timing summarize(std::vector<double> samples_ms);

// Runs f() `warmup` times untimed, then `reps` times, each timed on steady_clock.
template <class F>
Timing time_median(F&& f, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> samples;
  samples.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return summarize(std::move(samples));
}

// Resident set size of this process (/proc/self/statm), in bytes.
int64_t rss_bytes();

// Peak extra resident memory over a scope: the baseline is the RSS at construction; the
// kernel's high-water mark is reset then (/proc/self/clear_refs "5") and read at the end.
// Where that reset is not allowed, the peak is the largest RSS seen by sample().
class PeakRss {
 public:
  PeakRss();
  void sample();
  double extra_mb();  // (peak - baseline) / 2^20, never negative

 private:
  int64_t baseline_ = 0;
  int64_t sampled_peak_ = 0;
  bool hwm_reset_ = false;
};

// Runs `<python> bench/peers/<script> args...` with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
// removed from its environment (they slow NumPy's BLAS here) and returns the JSON object on
// the last line of its stdout; nullopt (with a note on stderr) if it fails. The peer's stderr
// passes through. TESSERA_BENCH_PYTHON overrides the interpreter (default /usr/bin/python3).
std::optional<Json> run_python_peer(const std::string& script,
                                    const std::vector<std::string>& args);

// Runs bench/peers/numpy_peer.py for case `name` with o's reps/warm-up and adds its "peer",
// "peer_ms" and "peer_peak_mb" to r (peer "none" when it fails). show_config: the peer prints
// NumPy's BLAS configuration to stderr.
void add_numpy_peer(Json& r, const std::string& name, const Options& o, bool show_config);

// Rounds to `digits` significant digits (for readable JSON).
double round_sig(double v, int digits = 4);

// Completes a case's record and prints it as one line: adds "ratio" = peer_ms / tessera_ms
// when both are present, puts the common fields first and rounds the numbers.
void emit(Json record);

}  // namespace tessera::bench
