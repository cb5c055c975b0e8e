// The flag registry (tessera/config.h): JAX's names, defaults, validation messages, the x64
// flag backed by the dtype layer, and ScopedFlag. Environment variables are tested from
// Python in fresh processes (tests/python/test_config.py).
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "tessera/config.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera {
namespace {

using config::Value;

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type";
  return "";
}

TEST(Config, EveryFlagTheIssueNamesExistsWithJaxDefaults) {
  std::set<std::string> names;
  for (const config::FlagInfo& f : config::flags()) {
    names.insert(f.name);
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_TRUE(f.effect.rfind("in effect", 0) == 0 || f.effect.rfind("stored", 0) == 0)
        << f.name << ": " << f.effect;
  }
  for (const char* n :
       {"jax_enable_x64", "jax_platforms", "jax_platform_name", "jax_default_matmul_precision",
        "jax_disable_jit", "jax_debug_nans", "jax_debug_infs", "jax_numpy_rank_promotion",
        "jax_numpy_dtype_promotion", "jax_threefry_partitionable", "jax_compilation_cache_dir",
        "jax_log_compiles", "jax_explain_cache_misses"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(config::read("jax_numpy_rank_promotion"), Value(std::string("allow")));
  EXPECT_EQ(config::read("jax_numpy_dtype_promotion"), Value(std::string("standard")));
  EXPECT_EQ(config::read("jax_threefry_partitionable"), Value(true));
  EXPECT_EQ(config::read("jax_platforms"), Value(std::monostate{}));
  EXPECT_FALSE(config::read_bool("jax_debug_nans"));
  EXPECT_EQ(config::read_string("jax_compilation_cache_dir"), std::nullopt);
}

TEST(Config, UpdateValidatesWithJaxMessagesBeforeChangingAnything) {
  EXPECT_EQ(
      error_of<ValueError>([] { config::update("jax_numpy_rank_promotion", std::string("x")); }),
      "new enum value must be in ['allow', 'warn', 'raise'], got x of type <class 'str'>.");
  EXPECT_EQ(error_of<ValueError>([] { config::update("jax_numpy_rank_promotion", int64_t{3}); }),
            "new enum value must be in ['allow', 'warn', 'raise'], got 3 of type <class 'int'>.");
  EXPECT_EQ(config::read_string("jax_numpy_rank_promotion"), "allow");
  EXPECT_EQ(error_of<TypeError>([] { config::update("jax_compilation_cache_dir", true); }),
            "new string config value must be None or of type str, got True of type <class "
            "'bool'>.");
  EXPECT_EQ(error_of<TypeError>([] { config::update("jax_platform_name", std::monostate{}); }),
            "new string config value must be of type str, got None of type <class 'NoneType'>.");
  EXPECT_NE(error_of<ValueError>([] {
              config::update("jax_platforms", std::string("cpu,cuda"));
            }).find("platform 'cuda' is not available"),
            std::string::npos);
  EXPECT_EQ(error_of<ValueError>([] { config::update("jax_no_such_flag", true); }),
            "Unrecognized config option: jax_no_such_flag");
  EXPECT_EQ(error_of<ValueError>([] { config::read("jax_no_such_flag"); }),
            "Unrecognized config option: jax_no_such_flag");
  EXPECT_EQ(error_of<TypeError>([] { config::read_bool("jax_platforms"); }),
            "[config] jax_platforms is not a bool flag (its value is None)");
  config::update("jax_platforms", std::string("cpu"));
  EXPECT_EQ(config::read_string("jax_platforms"), "cpu");
  config::update("jax_platforms", std::monostate{});
}

TEST(Config, StoredFlagsRoundTripAndScopedFlagRestores) {
  config::update("jax_compilation_cache_dir", std::string("/tmp/cache it's"));
  EXPECT_EQ(config::repr(config::read("jax_compilation_cache_dir")), "\"/tmp/cache it's\"");
  config::update("jax_compilation_cache_dir", std::monostate{});
  {
    config::ScopedFlag a("jax_debug_nans", true);
    EXPECT_TRUE(config::read_bool("jax_debug_nans"));
    {
      config::ScopedFlag b("jax_debug_nans", false);
      EXPECT_FALSE(config::read_bool("jax_debug_nans"));
    }
    EXPECT_TRUE(config::read_bool("jax_debug_nans"));
  }
  EXPECT_FALSE(config::read_bool("jax_debug_nans"));
  EXPECT_THROW(config::ScopedFlag("jax_numpy_dtype_promotion", std::string("lax")), ValueError);
  EXPECT_EQ(config::read_string("jax_numpy_dtype_promotion"), "standard");
}

TEST(Config, X64FlagIsTheDtypeLayersSwitch) {
  const bool before = x64_enabled();
  config::update("jax_enable_x64", true);
  EXPECT_TRUE(x64_enabled());
  EXPECT_EQ(default_float_dtype(), DType::kFloat64);
  set_x64_enabled(false);
  EXPECT_FALSE(config::read_bool("jax_enable_x64"));
  EXPECT_EQ(canonicalize_dtype(DType::kInt64), DType::kInt32);
  set_x64_enabled(before);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Config, CheckValidatesWithoutChanging) {
  EXPECT_NO_THROW(config::check("jax_numpy_rank_promotion", Value(std::string("raise"))));
  EXPECT_EQ(config::read_string("jax_numpy_rank_promotion"), "allow");
  EXPECT_THROW(config::check("jax_numpy_rank_promotion", Value(std::string("loud"))), ValueError);
  EXPECT_THROW(config::check("jax_platforms", Value(std::string("cuda"))), ValueError);
  EXPECT_THROW(config::check("jax_no_such_flag", Value(true)), ValueError);
  EXPECT_EQ(config::read("jax_platforms"), Value(std::monostate{}));
}

}  // namespace
}  // namespace tessera
