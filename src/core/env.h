// Typed reads of TESSERA_* environment variables. Unset or empty variables give nullopt; any
// other value that does not parse, or is out of range, throws ValueError naming the variable,
// the value and the accepted forms (a typo must not silently mean "default").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

// A byte count: plain bytes ("1073741824") or a decimal number with a unit K, M, G or T
// (powers of 1024), optionally followed by "iB" or "B", case-insensitive ("4G", "512MiB",
// "1.5gb"); fractional bytes round down. Negative values and values over INT64_MAX throw.
std::optional<int64_t> env_bytes(const char* var);
// A decimal integer in [lo, hi].
std::optional<int64_t> env_int(const char* var, int64_t lo, int64_t hi);
// A boolean: 1/true/yes/on or 0/false/no/off, case-insensitive.
std::optional<bool> env_bool(const char* var);

// The parsers behind the three readers, for values that do not come from the environment;
// `var` names the setting in error messages.
int64_t parse_bytes(std::string_view var, std::string_view value);
int64_t parse_int(std::string_view var, std::string_view value, int64_t lo, int64_t hi);
bool parse_bool(std::string_view var, std::string_view value);

}  // namespace tessera
