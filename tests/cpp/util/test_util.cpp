#include "util/test_util.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace tessera::testing {

uint64_t test_seed() {
  static const uint64_t seed = [] {
    uint64_t s;
    if (const char* env = std::getenv("TESSERA_TEST_SEED")) {
      s = std::strtoull(env, nullptr, 10);
    } else {
      s = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    std::cerr << "[tessera tests] TESSERA_TEST_SEED=" << s << "\n";
    return s;
  }();
  return seed;
}

std::mt19937_64& rng() {
  static std::mt19937_64 gen(test_seed());
  return gen;
}

Array random_array(const Shape& shape, DType dtype, double lo, double hi) {
  const int64_t n = shape_size(shape);
  std::vector<double> vals(static_cast<size_t>(n));
  if (is_floating(dtype)) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& v : vals) v = d(rng());
  } else if (is_bool(dtype)) {
    std::bernoulli_distribution d(0.5);
    for (auto& v : vals) v = d(rng()) ? 1.0 : 0.0;
  } else {
    int64_t a = is_unsigned_integer(dtype) ? 0 : -50, b = 50;
    std::uniform_int_distribution<int64_t> d(a, b);
    for (auto& v : vals) v = static_cast<double>(d(rng()));
  }
  Array out = empty_array(Aval{shape, dtype, false}, "random_array");
  auto* p = static_cast<char*>(out.buffer()->data());
  for (int64_t i = 0; i < n; ++i) store_from_double(dtype, p + i * itemsize(dtype), vals[i]);
  return out;
}

std::vector<double> to_doubles(const Array& a) {
  std::vector<double> out(static_cast<size_t>(a.size()));
  const auto* p = static_cast<const char*>(a.raw_data());
  for (int64_t i = 0; i < a.size(); ++i)
    out[i] = load_as_double(a.dtype(), p + i * itemsize(a.dtype()));
  return out;
}

std::string compare(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                    double atol) {
  if (got.size() != want.size()) {
    return "size mismatch: got " + std::to_string(got.size()) + " want " +
           std::to_string(want.size());
  }
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    if (std::isnan(g) && std::isnan(w)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << i << ": got " << g << " want " << w;
      return os.str();
    }
  }
  return "";
}

}  // namespace tessera::testing
