// The flag registry: definitions, validation with JAX's messages, environment variables.
#include "tessera/config.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <mutex>

#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tree/tree_internal.h"

namespace tessera::config {

namespace {

struct Flag {
  FlagInfo info;
  Value value;
  // Flags whose value lives elsewhere in the core (x64): read and written through these.
  std::function<Value()> get;
  std::function<void(const Value&)> set;
  // Extra validation after the kind's (platform names).
  std::function<void(const Value&)> check;
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string choices_repr(const std::vector<std::string>& c) {
  std::string s = "[";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? ", '" : "'") + c[i] + "'";
  return s + "]";
}

void check_platforms(const Value& v) {
  if (!std::holds_alternative<std::string>(v)) return;
  const std::string& s = std::get<std::string>(v);
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string p = lower(s.substr(start, end - start));
    if (!p.empty() && p != "cpu")
      throw ValueError("[config] jax_platforms=" + repr(v) + ": platform '" + p +
                       "' is not available; Tessera runs on CPU devices (platform 'cpu') today. "
                       "Set jax_platforms to 'cpu' or leave it unset");
    start = end + 1;
  }
}

void check_platform_name(const Value& v) {
  const std::string& s = std::get<std::string>(v);
  if (!s.empty() && lower(s) != "cpu")
    throw ValueError("[config] jax_platform_name=" + repr(v) + ": platform '" + s +
                     "' is not available; Tessera runs on CPU devices (platform 'cpu') today");
}

const char* kLater15 = "stored: takes effect with jit (issue 15)";

std::atomic<bool> g_disable_jit{false};
std::atomic<bool> g_threefry_partitionable{true};

std::vector<Flag> definitions() {
  std::vector<Flag> f;
  auto add = [&](std::string name, Kind kind, Value def, std::vector<std::string> choices,
                 std::string help, std::string effect) -> Flag& {
    f.push_back(Flag{FlagInfo{std::move(name), kind, def, std::move(choices), std::move(help),
                              std::move(effect)},
                     def,
                     {},
                     {},
                     {}});
    return f.back();
  };
  Flag& x64 = add("jax_enable_x64", Kind::kBool, false, {},
                  "Enable 64-bit types (float64, int64, ...); off, 64-bit requests become 32-bit.",
                  "in effect");
  x64.get = [] { return Value(x64_enabled()); };
  x64.set = [](const Value& v) { set_x64_enabled(std::get<bool>(v)); };
  add("jax_platforms", Kind::kOptionalString, std::monostate{}, {},
      "Comma-separated platforms to initialize, in priority order.",
      "in effect: 'cpu' is the only platform; other names are refused")
      .check = check_platforms;
  add("jax_platform_name", Kind::kString, std::string(), {},
      "Deprecated: the platform to use (prefer jax_platforms).", "in effect: '' or 'cpu'")
      .check = check_platform_name;
  add("jax_default_matmul_precision", Kind::kOptionalEnum, std::monostate{},
      {"default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "bfloat16_3x",
       "tensorfloat32_3x", "fastest"},
      "The default precision of matmul-like operations (dot_general, conv).",
      "in effect: the CPU kernels always compute at full float32 precision ('highest'), which "
      "every setting permits");
  Flag& no_jit =
      add("jax_disable_jit", Kind::kBool, false, {}, "Run jit-decorated functions op by op.",
          "in effect: jit-decorated functions run eagerly, op by op");
  // Read on every jitted call: kept in an atomic (disable_jit()), not looked up by name.
  no_jit.get = [] { return Value(g_disable_jit.load(std::memory_order_relaxed)); };
  no_jit.set = [](const Value& v) {
    g_disable_jit.store(std::get<bool>(v), std::memory_order_relaxed);
  };
  add("jax_debug_nans", Kind::kBool, false, {},
      "Raise FloatingPointError when an operation produces a NaN.", kLater15);
  add("jax_debug_infs", Kind::kBool, false, {},
      "Raise FloatingPointError when an operation produces an infinity.", kLater15);
  add("jax_numpy_rank_promotion", Kind::kEnum, std::string("allow"), {"allow", "warn", "raise"},
      "Whether NumPy-style broadcasting may add leading dimensions.",
      "stored: takes effect with the jit-era NumPy layer (issue 16)");
  add("jax_numpy_dtype_promotion", Kind::kEnum, std::string("standard"), {"standard", "strict"},
      "The dtype promotion rules: 'standard' (JAX's lattice) or 'strict' (no implicit "
      "promotion).",
      "stored: 'standard' is what Tessera implements; 'strict' takes effect with issue 16");
  Flag& partitionable = add(
      "jax_threefry_partitionable", Kind::kBool, true, {},
      "Generate random bits so that sharded generation matches unsharded.",
      "in effect: chooses jax.random's counter layout (True: JAX's default since 0.5.0); jit "
      "traces again when it changes");
  // Read by every jit cache lookup (trace_context()): an atomic, not a lookup by name.
  partitionable.get = [] { return Value(g_threefry_partitionable.load(std::memory_order_relaxed)); };
  partitionable.set = [](const Value& v) {
    g_threefry_partitionable.store(std::get<bool>(v), std::memory_order_relaxed);
  };
  add("jax_compilation_cache_dir", Kind::kOptionalString, std::monostate{}, {},
      "A directory for the persistent compilation cache.",
      "stored: takes effect with the compiler (issue 16)");
  add("jax_log_compiles", Kind::kBool, false, {}, "Log every compilation.", kLater15);
  add("jax_explain_cache_misses", Kind::kBool, false, {}, "Explain why a jit cache lookup missed.",
      kLater15);
  return f;
}

// The kind's error for a value that does not fit (JAX's messages).
[[noreturn]] void throw_kind_error(const FlagInfo& i, std::string_view value_text,
                                   std::string_view type) {
  const std::string got = std::string(value_text) + " of type " + std::string(type);
  switch (i.kind) {
    case Kind::kBool:
      throw TypeError("[config] " + i.name + " takes a bool, got " + got);
    case Kind::kEnum:
    case Kind::kOptionalEnum:
      throw ValueError("new enum value must be in " + choices_repr(i.choices) + ", got " + got +
                       ".");
    case Kind::kString:
      throw TypeError("new string config value must be of type str, got " + got + ".");
    case Kind::kOptionalString:
      break;
  }
  throw TypeError("new string config value must be None or of type str, got " + got + ".");
}

// Throws unless v fits the flag.
void validate(const Flag& f, const Value& v) {
  const FlagInfo& i = f.info;
  const auto* s = std::get_if<std::string>(&v);
  const bool none = std::holds_alternative<std::monostate>(v);
  bool ok = false;
  switch (i.kind) {
    case Kind::kBool:
      ok = std::holds_alternative<bool>(v);
      break;
    case Kind::kEnum:
    case Kind::kOptionalEnum:
      ok = (none && i.kind == Kind::kOptionalEnum) ||
           (s != nullptr && std::find(i.choices.begin(), i.choices.end(), *s) != i.choices.end());
      break;
    case Kind::kString:
      ok = s != nullptr;
      break;
    case Kind::kOptionalString:
      ok = s != nullptr || none;
      break;
  }
  // JAX formats the value with str() in the enum message, with repr() nowhere else.
  if (!ok)
    throw_kind_error(i,
                     s && (i.kind == Kind::kEnum || i.kind == Kind::kOptionalEnum) ? *s : repr(v),
                     python_type(v));
  if (f.check) f.check(v);
}

// The value of the flag's environment variable (JAX_<NAME>), or nullopt when unset.
std::optional<Value> from_env(const Flag& f) {
  const std::string var = upper(f.info.name);
  const char* raw = std::getenv(var.c_str());
  if (raw == nullptr) return std::nullopt;
  std::string s(raw);
  if (f.info.kind == Kind::kBool) {
    std::string l = lower(s);
    if (l == "y" || l == "yes" || l == "t" || l == "true" || l == "on" || l == "1") return true;
    if (l == "n" || l == "no" || l == "f" || l == "false" || l == "off" || l == "0") return false;
    throw ValueError("invalid truth value '" + l + "' for environment '" + var + "'");
  }
  if (f.info.kind == Kind::kEnum || f.info.kind == Kind::kOptionalEnum) {
    if (std::find(f.info.choices.begin(), f.info.choices.end(), s) == f.info.choices.end())
      throw ValueError("Invalid value \"" + s + "\" for JAX flag " + f.info.name);
  }
  return Value(s);
}

struct Registry {
  std::mutex mu;
  std::vector<Flag> flags;
  std::vector<FlagInfo> infos;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->flags = definitions();
    for (Flag& f : reg->flags) {
      // x64 reads its own variables (TESSERA_ENABLE_X64, then JAX_ENABLE_X64) on first use.
      if (f.info.name == "jax_enable_x64") continue;
      if (std::optional<Value> v = from_env(f)) {
        validate(f, *v);
        if (f.set)
          f.set(*v);
        else
          f.value = *v;
      }
    }
    for (const Flag& f : reg->flags) reg->infos.push_back(f.info);
    return reg;
  }();
  return *r;
}

Flag& find(Registry& r, std::string_view name) {
  for (Flag& f : r.flags)
    if (f.info.name == name) return f;
  throw ValueError("Unrecognized config option: " + std::string(name));
}

}  // namespace

const std::vector<FlagInfo>& flags() { return registry().infos; }

bool has_flag(std::string_view name) {
  for (const FlagInfo& i : flags())
    if (i.name == name) return true;
  return false;
}

const FlagInfo& info(std::string_view name) {
  for (const FlagInfo& i : flags())
    if (i.name == name) return i;
  throw ValueError("Unrecognized config option: " + std::string(name));
}

Value read(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Flag& f = find(r, name);
  return f.get ? f.get() : f.value;
}

void check(std::string_view name, const Value& value) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  validate(find(r, name), value);
}

void update(std::string_view name, const Value& value) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Flag& f = find(r, name);
  validate(f, value);
  if (f.set)
    f.set(value);
  else
    f.value = value;
}

void reject(std::string_view name, std::string_view value_text, std::string_view type) {
  throw_kind_error(info(name), value_text, type);
}

bool disable_jit() {
  registry();  // the environment's value, on first use
  return g_disable_jit.load(std::memory_order_relaxed);
}

bool threefry_partitionable() {
  registry();
  return g_threefry_partitionable.load(std::memory_order_relaxed);
}

uint32_t trace_context() {
  return (x64_enabled() ? 1u : 0u) | (threefry_partitionable() ? 2u : 0u);
}

bool read_bool(std::string_view name) {
  Value v = read(name);
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  throw TypeError("[config] " + std::string(name) + " is not a bool flag (its value is " + repr(v) +
                  ")");
}

std::optional<std::string> read_string(std::string_view name) {
  Value v = read(name);
  if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  throw TypeError("[config] " + std::string(name) + " is not a string flag (its value is " +
                  repr(v) + ")");
}

std::string repr(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "None";
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return detail::py_str_repr(std::get<std::string>(v));
}

std::string python_type(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "<class 'NoneType'>";
  if (std::holds_alternative<bool>(v)) return "<class 'bool'>";
  if (std::holds_alternative<int64_t>(v)) return "<class 'int'>";
  return "<class 'str'>";
}

ScopedFlag::ScopedFlag(std::string_view name, const Value& value)
    : name_(name), previous_(read(name)) {
  update(name_, value);
}

ScopedFlag::~ScopedFlag() {
  try {
    update(name_, previous_);
  } catch (...) {  // the previous value was valid when read; nothing sensible to do otherwise
  }
}

}  // namespace tessera::config
