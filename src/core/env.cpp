// Environment-variable parsing (env.h): strict, with messages that show the accepted forms.
#include "core/env.h"

#include <cctype>
#include <cstdlib>
#include <limits>
#include <string>

#include "tessera/errors.h"

namespace tessera {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

[[noreturn]] void bad(std::string_view var, std::string_view value, std::string_view why,
                      std::string_view forms) {
  throw ValueError(op_message(var, "invalid value '" + std::string(value) + "' (" +
                                       std::string(why) + "); expected " + std::string(forms)));
}

constexpr std::string_view kBytesForms =
    "a byte count such as 1073741824, 4G, 512MiB or 1.5GB (units K, M, G, T are powers of "
    "1024, case-insensitive; 0 means no limit)";

// The value of var, or nullopt when unset or empty.
std::optional<std::string_view> read(const char* var) {
  const char* v = std::getenv(var);
  if (v == nullptr || trim(v).empty()) return std::nullopt;
  return std::string_view(v);
}

}  // namespace

int64_t parse_bytes(std::string_view var, std::string_view value) {
  std::string_view s = trim(value);
  size_t i = 0;
  __int128 whole = 0;
  const __int128 kMax = std::numeric_limits<int64_t>::max();
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    whole = whole * 10 + (s[i++] - '0');
    if (whole > kMax) bad(var, value, "it overflows a 64-bit byte count", kBytesForms);
  }
  size_t int_digits = i;
  __int128 frac = 0, frac_scale = 1;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      if (frac_scale < __int128{1000000000000000000}) {  // further digits cannot matter
        frac = frac * 10 + (s[i] - '0');
        frac_scale *= 10;
      }
    }
    if (frac_scale == 1 && int_digits == 0) bad(var, value, "no digits", kBytesForms);
  }
  if (int_digits == 0 && frac_scale == 1) {
    bad(var, value, s.empty() || s[0] != '-' ? "not a number" : "negative", kBytesForms);
  }
  std::string unit = lower(trim(s.substr(i)));
  __int128 mult = 1;
  if (!unit.empty()) {
    size_t k = std::string_view("kmgt").find(unit[0]);
    std::string rest = unit.substr(k == std::string_view::npos ? 0 : 1);
    if (k != std::string_view::npos) mult = __int128{1} << (10 * (k + 1));
    if (!(rest.empty() || rest == "b" || (k != std::string_view::npos && rest == "ib")))
      bad(var, value, "unknown unit '" + std::string(s.substr(i)) + "'", kBytesForms);
  }
  if (frac_scale > 1 && mult == 1) bad(var, value, "fractional bytes", kBytesForms);
  __int128 total = whole * mult + frac * mult / frac_scale;
  if (total > kMax) bad(var, value, "it overflows a 64-bit byte count", kBytesForms);
  return static_cast<int64_t>(total);
}

int64_t parse_int(std::string_view var, std::string_view value, int64_t lo, int64_t hi) {
  std::string forms = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  std::string_view s = trim(value);
  bool neg = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) bad(var, value, "not a number", forms);
  __int128 v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) bad(var, value, "not an integer", forms);
    v = v * 10 + (c - '0');
    if (v > (__int128{1} << 64)) bad(var, value, "out of range", forms);
  }
  if (neg) v = -v;
  if (v < lo || v > hi) bad(var, value, "out of range", forms);
  return static_cast<int64_t>(v);
}

bool parse_bool(std::string_view var, std::string_view value) {
  std::string s = lower(trim(value));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  bad(var, value, "not a boolean", "one of 1, true, yes, on, 0, false, no, off");
}

std::optional<int64_t> env_bytes(const char* var) {
  auto v = read(var);
  if (!v) return std::nullopt;
  return parse_bytes(var, *v);
}

std::optional<int64_t> env_int(const char* var, int64_t lo, int64_t hi) {
  auto v = read(var);
  if (!v) return std::nullopt;
  return parse_int(var, *v, lo, hi);
}

std::optional<bool> env_bool(const char* var) {
  auto v = read(var);
  if (!v) return std::nullopt;
  return parse_bool(var, *v);
}

}  // namespace tessera
