// The NumPy oracle harness: a test registers cases (an op name understood by
// tests/oracle/numpy_oracle.py, JSON params, the input arrays, and Tessera's result, computed
// on the spot), then run() writes every input as .npy to a temp dir, runs ONE
// /usr/bin/python3 process for the whole batch, reads the references back and compares:
// dtype (and weak type where JAX defines it), shape, values (exact for bool/int, per-op
// tolerances chosen by the oracle for floats, NaN == NaN, inf == inf), and that Tessera
// raises where JAX raises. Every mismatch is reported with the case name, the seed, the
// input avals, the first bad index and the inputs' values there.
//
//   OracleBatch b("lax.binary");
//   auto x = oracle_array({3, 1}, DType::kFloat32), y = oracle_array({3, 4}, DType::kFloat32);
//   b.add("add f32", "lax.add", "{}", {x, y}, [&] { return lax::add(x, y); });
//   b.run();   // ADD_FAILUREs for mismatches; prints coverage counts
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/tessera.h"

namespace tessera::testing {

// True when /usr/bin/python3 with NumPy is usable (checked once).
bool oracle_available();
#define TESSERA_REQUIRE_ORACLE()                                               \
  do {                                                                         \
    if (!::tessera::testing::oracle_available())                               \
      GTEST_SKIP() << "/usr/bin/python3 with numpy is not available (oracle)"; \
  } while (0)

// Sets 64-bit mode for a scope and restores the previous mode, also on exceptions.
class X64Scope {
 public:
  explicit X64Scope(bool on = true);
  ~X64Scope();
  X64Scope(const X64Scope&) = delete;
  X64Scope& operator=(const X64Scope&) = delete;

 private:
  bool prev_;
};

// ---- JSON text for case params ----
std::string json_str(std::string_view s);
std::string json_num(double v);
std::string json_int(int64_t v);
std::string json_bool(bool b);
std::string json_ints(const std::vector<int64_t>& v);
std::string json_nums(const std::vector<double>& v);
std::string json_obj(std::initializer_list<std::pair<std::string_view, std::string>> kv);

// ---- random inputs ----
// The dtypes of each kind (64-bit ones need x64).
const std::vector<DType>& all_dtypes();  // bool, ints, uints, floats
const std::vector<DType>& float_dtypes();
const std::vector<DType>& int_dtypes();  // signed and unsigned
bool is_64bit(DType d);

// A random shape of rank in [min_rank, max_rank] with dims in [0, max_dim]; a dim is 0 with
// probability p_zero and 1 with probability p_one.
Shape random_shape(int min_rank, int max_rank, int64_t max_dim = 4, double p_zero = 0.06,
                   double p_one = 0.2);
// A shape that broadcasts with `s` under lax's rule: rank 0, or s with some dims set to 1.
Shape lax_partner_shape(const Shape& s);
// A shape that broadcasts with `s` under NumPy's rule: a suffix of s (possibly shorter rank),
// some dims set to 1, or s with extra leading dims.
Shape numpy_partner_shape(const Shape& s);

struct ValueOpts {
  double lo = -2.0, hi = 2.0;         // the bulk of float values
  double special_rate = 0.12;         // fraction of elements drawn from the special set
  bool nan_inf = true;                // NaN, +-inf among the specials
  bool extremes = true;               // +-largest finite, +-1e4 among the specials
  bool int_full_range = true;         // ints: mix of small values and the whole range incl. min/max
  int64_t int_lo = -50, int_hi = 50;  // small ints (unsigned: max(0, int_lo))
};
// Random values of `dtype` (any numeric dtype, bool).
Array oracle_array(const Shape& shape, DType dtype, const ValueOpts& o = {});
// An array from explicit values (converted with store_from_double's rounding).
Array host_array(const std::vector<double>& values, const Shape& shape, DType dtype);

// A copy of `a` in an external buffer whose data is 16-byte aligned but not 32-byte aligned,
// as NumPy/DLPack memory may be: kernels must not assume more alignment.
Array misaligned_copy(const Array& a);

// "f32[3,4]", with "{weak}" appended for weak types.
std::string describe(const Array& a);

// ---- the batch ----
class OracleBatch {
 public:
  // `family` names the batch in reports. Random extras are bounded by a time box (seconds,
  // counted from construction; TESSERA_ORACLE_SECONDS overrides it) and a count
  // (TESSERA_ORACLE_RANDOM_CASES overrides it): see time_left().
  explicit OracleBatch(std::string family, double time_box_s = 1.5, int max_random = 250);
  ~OracleBatch();
  OracleBatch(const OracleBatch&) = delete;
  OracleBatch& operator=(const OracleBatch&) = delete;

  // Runs fn now (catching Tessera's exceptions) and records the case. x64 mode is recorded
  // as it is during the call.
  void add(std::string name, std::string op, std::string params, std::vector<Array> inputs,
           const std::function<Array()>& fn);
  // For `while (b.time_left()) add_random_case();` loops: false once the time box is over or
  // max_random cases were added since the first call.
  bool time_left();
  size_t size() const { return cases_.size(); }

  struct Summary {
    int cases = 0, compared = 0, expected_errors = 0, skipped = 0, mismatches = 0;
    std::set<std::string> ops;
    std::set<std::string> dtypes;
  };
  // Runs the oracle once for all cases and compares. Adds one gtest failure per mismatch
  // (at most `max_reports` printed in full, the rest counted) and prints a summary line.
  Summary run(int max_reports = 40);

 private:
  struct Case {
    std::string name, op, params;
    std::vector<Array> inputs;
    bool x64 = false;
    Array result;
    std::string error, error_kind;  // set when Tessera threw
  };
  std::string check_case(const Case& c, int id, const std::vector<std::string>& fields) const;

  std::string family_;
  std::vector<Case> cases_;
  std::chrono::steady_clock::time_point deadline_;
  int max_random_;
  int64_t random_base_ = -1;
  std::string dir_;
  bool keep_dir_ = false;
};

}  // namespace tessera::testing
