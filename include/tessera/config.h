// The configuration registry: JAX's flags by JAX's names (jax.config), with their values,
// validation errors and environment variables (the name in upper case: JAX_ENABLE_X64,
// JAX_PLATFORMS, ...), read once at first use.
//
//   tessera::config::update("jax_numpy_rank_promotion", std::string("raise"));
//   bool nans = tessera::config::read_bool("jax_debug_nans");
//
// Every flag JAX users set is accepted and stored; `FlagInfo::effect` says whether Tessera
// acts on it today or which part of the system will (a flag is never silently a no-op
// without saying so). Updates are process-wide; ScopedFlag sets a value for a scope and
// restores the previous one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tessera::config {

// None, a bool, an int or a str (as the Python values of JAX's flags).
using Value = std::variant<std::monostate, bool, int64_t, std::string>;

enum class Kind {
  kBool,            // bool; the environment accepts y/yes/t/true/on/1 and n/no/f/false/off/0
  kEnum,            // one of `choices`
  kOptionalEnum,    // None or one of `choices`
  kString,          // a str
  kOptionalString,  // None or a str
};

struct FlagInfo {
  std::string name;
  Kind kind;
  Value default_value;
  std::vector<std::string> choices;  // enum kinds
  std::string help;
  std::string effect;  // "in effect: ..." or "stored: takes effect with ..."
};

// Every flag, in registration order.
const std::vector<FlagInfo>& flags();
bool has_flag(std::string_view name);
// ValueError "Unrecognized config option: <name>" for an unknown name.
const FlagInfo& info(std::string_view name);

Value read(std::string_view name);
// Validates as JAX does (TypeError / ValueError with JAX's texts) before changing anything.
void update(std::string_view name, const Value& value);
// The validation of update alone: throws what update would, changes nothing.
void check(std::string_view name, const Value& value);

// Raises the flag's validation error for a value Value cannot hold (a Python float or
// object), described by its text and Python type: the message update would give.
[[noreturn]] void reject(std::string_view name, std::string_view value_text, std::string_view type);

// Typed reads for the core; TypeError when the flag is of another kind.
bool read_bool(std::string_view name);
std::optional<std::string> read_string(std::string_view name);  // string and enum kinds
// read_bool("jax_disable_jit") without a lookup by name (every jitted call reads it).
bool disable_jit();
// read_bool("jax_threefry_partitionable") without a lookup by name.
bool threefry_partitionable();
// The flags that change what tracing a function produces, packed (jax_enable_x64 in bit 0,
// jax_threefry_partitionable in bit 1): part of every trace cache key, as JAX's trace context.
uint32_t trace_context();

// Python's repr of a value ('raise', True, None, 3) and Python's type of it (<class 'str'>).
std::string repr(const Value& v);
std::string python_type(const Value& v);

// Sets a flag for the lifetime of the object, restoring the previous value after.
class ScopedFlag {
 public:
  ScopedFlag(std::string_view name, const Value& value);
  ~ScopedFlag();
  ScopedFlag(const ScopedFlag&) = delete;
  ScopedFlag& operator=(const ScopedFlag&) = delete;

 private:
  std::string name_;
  Value previous_;
};

}  // namespace tessera::config
