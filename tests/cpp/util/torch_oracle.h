// The PyTorch oracle harness: reference values from torch autograd and functorch (Debian's
// torch 1.13 under /usr/bin/python3) for tests of composed transformations. A test file
// registers every case it needs up front (a reference name understood by
// tests/oracle/torch_oracle.py, JSON params, the input arrays); the first request for a
// reference writes all inputs as .npy to a temp dir and runs ONE python process for the whole
// batch; each test then compares Tessera's results with the references of its case.
//
//   TorchOracle& oracle() {
//     static TorchOracle o("composition", [](TorchOracle& t) {
//       t.add("hess/f64", "hessian_tanh", {W, x});   // inputs drawn once, here
//     });
//     return o;
//   }
//   TEST(Composition, Hessian) {
//     TESSERA_REQUIRE_TORCH();
//     auto& in = oracle().inputs("hess/f64");
//     EXPECT_TRUE(all_close("hessian", hessian(f)(in[1]), oracle().refs("hess/f64")[0], ...));
//   }
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/tessera.h"

namespace tessera::testing {

// True when /usr/bin/python3 can import torch and functorch, and the oracle script exists
// (checked once).
bool torch_available();
#define TESSERA_REQUIRE_TORCH()                                                          \
  do {                                                                                   \
    if (!::tessera::testing::torch_available())                                          \
      GTEST_SKIP() << "/usr/bin/python3 with torch and functorch is not available (the " \
                      "torch oracle)";                                                   \
  } while (0)

class TorchOracle {
 public:
  // `init` registers the cases with add(); it runs once, on the first inputs()/refs() call.
  TorchOracle(std::string family, std::function<void(TorchOracle&)> init);
  ~TorchOracle();
  TorchOracle(const TorchOracle&) = delete;
  TorchOracle& operator=(const TorchOracle&) = delete;

  // Registers case `key` (unique): `op` names a reference in torch_oracle.py, which computes
  // in the inputs' dtype. Only float32/float64/int inputs (what .npy and torch share).
  void add(const std::string& key, const std::string& op, std::vector<Array> inputs,
           std::string params = "{}");

  // The inputs of case `key`, and the oracle's outputs for it. The first call of either runs
  // the batch; a failure of the oracle (or an unknown key) throws std::runtime_error with
  // the script's message, which gtest reports in the calling test.
  const std::vector<Array>& inputs(const std::string& key);
  const std::vector<Array>& refs(const std::string& key);

 private:
  struct Case {
    std::string op, params;
    std::vector<Array> inputs, refs;
    std::string error;
  };
  void ensure_registered();
  void ensure_run();
  void run_in(const std::string& dir);  // writes the inputs, runs python, reads the outputs
  Case& find(const std::string& key);

  std::string family_;
  std::function<void(TorchOracle&)> init_;
  bool registered_ = false, ran_ = false;
  std::string run_error_;
  std::vector<std::string> order_;
  std::map<std::string, Case> cases_;
};

// gtest predicate: `got` and `want` have the same shape and |got - want| <= atol + rtol*|want|
// elementwise (NaN == NaN). The failure message names `what`, the first bad index, the worst
// element and the seed; every call prints one line with the max abs/rel errors, so runs show
// how much margin each comparison has.
::testing::AssertionResult all_close(const std::string& what, const Array& got, const Array& want,
                                     double rtol, double atol);

}  // namespace tessera::testing
