// The TESSERA_* environment parsers (core/env.h): accepted byte/int/bool forms, and a
// ValueError naming the variable and the value for garbage, negatives, overflow and range.
#include "core/env.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "tessera/errors.h"

namespace tessera {
namespace {

constexpr const char* kVar = "TESSERA_TEST_ENV_VALUE";

// Sets kVar for a scope (nullptr: unset) and unsets it after.
class EnvScope {
 public:
  explicit EnvScope(const char* value) {
    if (value)
      setenv(kVar, value, 1);
    else
      unsetenv(kVar);
  }
  ~EnvScope() { unsetenv(kVar); }
};

// The ValueError message of env_bytes for value (empty when none was thrown).
template <class F>
std::string error_of(const char* value, F f) {
  EnvScope s(value);
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

constexpr int64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024;

TEST(EnvBytes, PlainAndUnits) {
  struct Case {
    const char* text;
    int64_t want;
  };
  const Case cases[] = {
      {"0", 0},
      {"1073741824", kGi},
      {"4G", 4 * kGi},
      {"4g", 4 * kGi},
      {"4GB", 4 * kGi},
      {"4GiB", 4 * kGi},
      {"4gib", 4 * kGi},
      {"512MiB", 512 * kMi},
      {"512m", 512 * kMi},
      {"1.5G", kGi + kGi / 2},
      {"0.5k", 512},
      {"1.1K", 1126},  // 1126.4 bytes round down
      {"2T", 2 * kTi},
      {"  8K ", 8 * kKi},
      {"8 KiB", 8 * kKi},
      {"100B", 100},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
  };
  for (const Case& c : cases) {
    EnvScope s(c.text);
    EXPECT_EQ(env_bytes(kVar), std::optional<int64_t>(c.want)) << c.text;
  }
}

TEST(EnvBytes, UnsetOrEmptyIsNullopt) {
  {
    EnvScope s(nullptr);
    EXPECT_EQ(env_bytes(kVar), std::nullopt);
  }
  EnvScope s("");
  EXPECT_EQ(env_bytes(kVar), std::nullopt);
}

TEST(EnvBytes, GarbageThrowsNamingVariableValueAndForms) {
  const char* bad[] = {"abc",
                       "-1",
                       "-4G",
                       "4X",
                       "4Gi",
                       "G",
                       "1.5",
                       "4GBB",
                       "4 G B",
                       ".",
                       "1e9",
                       "0x10",
                       "iB",
                       "5PiB",
                       "4G4",
                       "--1",
                       "9223372036854775808",
                       "8388608T",
                       "99999999999999999999999"};
  for (const char* v : bad) {
    std::string msg = error_of(v, [] { env_bytes(kVar); });
    ASSERT_FALSE(msg.empty()) << v << " was accepted";
    EXPECT_EQ(msg.rfind(std::string("[") + kVar + "]", 0), 0u) << msg;
    EXPECT_NE(msg.find(std::string("'") + v + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("512MiB"), std::string::npos) << msg;
  }
}

TEST(EnvInt, RangeAndGarbage) {
  {
    EnvScope s("8");
    EXPECT_EQ(env_int(kVar, 1, 1024), std::optional<int64_t>(8));
  }
  {
    EnvScope s(" -3 ");
    EXPECT_EQ(env_int(kVar, -5, 5), std::optional<int64_t>(-3));
  }
  {
    EnvScope s(nullptr);
    EXPECT_EQ(env_int(kVar, 1, 2), std::nullopt);
  }
  for (const char* v : {"0", "1025", "abc", "4x", "1.5", "", "-", "+", "99999999999999999999"}) {
    if (*v == '\0') continue;  // empty is unset
    std::string msg = error_of(v, [] { env_int(kVar, 1, 1024); });
    ASSERT_FALSE(msg.empty()) << v << " was accepted";
    EXPECT_NE(msg.find(kVar), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1, 1024]"), std::string::npos) << msg;
  }
}

TEST(EnvBool, AcceptedAndGarbage) {
  for (const char* v : {"1", "true", "TRUE", "yes", "On"}) {
    EnvScope s(v);
    EXPECT_EQ(env_bool(kVar), std::optional<bool>(true)) << v;
  }
  for (const char* v : {"0", "false", "No", "off"}) {
    EnvScope s(v);
    EXPECT_EQ(env_bool(kVar), std::optional<bool>(false)) << v;
  }
  for (const char* v : {"2", "maybe", "tru"}) {
    std::string msg = error_of(v, [] { env_bool(kVar); });
    ASSERT_FALSE(msg.empty()) << v << " was accepted";
    EXPECT_NE(msg.find("false"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tessera
