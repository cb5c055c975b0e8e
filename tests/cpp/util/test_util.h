// Shared test helpers: seeded random inputs (the seed is printed), host copies and closeness.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/thread_pool.h"
#include "tessera/tessera.h"

namespace tessera::testing {

// Sets the pool's thread count for a scope and restores it when the test ends.
struct Threads {
  explicit Threads(int n) : saved(runtime::num_threads()) { runtime::set_num_threads(n); }
  ~Threads() { runtime::set_num_threads(saved); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
  int saved;
};

// Dtype lists for sweeps.
inline constexpr DType kAllDTypes[] = {
    DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,  DType::kInt64,
    DType::kUInt8,    DType::kUInt16,  DType::kUInt32, DType::kUInt64, DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64};
inline constexpr DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                         DType::kFloat64};
inline constexpr DType kIntDTypes[] = {DType::kInt8,   DType::kInt16, DType::kInt32,
                                       DType::kInt64,  DType::kUInt8, DType::kUInt16,
                                       DType::kUInt32, DType::kUInt64};

// The seed for this process: TESSERA_TEST_SEED or time-based; printed once to stderr.
uint64_t test_seed();
std::mt19937_64& rng();

// Random values of dtype with shape: floats uniform in [lo, hi); ints uniform in a small range
// that fits the dtype; bools fair coin.
Array random_array(const Shape& shape, DType dtype, double lo = -2.0, double hi = 2.0);
// All elements converted to double (any numeric dtype).
std::vector<double> to_doubles(const Array& a);
// Max |a-b| <= atol + rtol*|b| elementwise, NaNs equal when both NaN; returns a message on
// failure ("" on success) naming the first bad index.
std::string compare(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                    double atol);

}  // namespace tessera::testing

// Expects `stmt` to throw ExcType whose message contains `substr`.
#define EXPECT_ERROR(ExcType, stmt, substr)                                 \
  do {                                                                      \
    std::string msg_;                                                       \
    try {                                                                   \
      stmt;                                                                 \
      msg_ = "<no error>";                                                  \
    } catch (const ExcType& e) {                                            \
      msg_ = e.what();                                                      \
    }                                                                       \
    EXPECT_NE(msg_.find(substr), std::string::npos) << "message: " << msg_; \
  } while (0)
