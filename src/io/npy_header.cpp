// The .npy header: "\x93NUMPY", major, minor, a little-endian header length (2 bytes in 1.0,
// 4 bytes in 2.0/3.0), then a Python dict literal {'descr', 'fortran_order', 'shape'} padded with
// spaces to a multiple of 64 bytes and ending in '\n'. Every number read from it is checked before
// it sizes anything: a corrupt header raises ValueError/TypeError naming the file, never more.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "io/file_util.h"
#include "io/npy.h"
#include "tessera/errors.h"

namespace tessera::io::npy {
namespace {

constexpr size_t kAlign = 64;  // NumPy aligns the data to 64 bytes

// Built by appends: GCC 12 flags the equivalent operator+ chain with a false -Wrestrict.
std::string quoted(std::string_view s) {
  std::string out(1, '\'');
  out += s;
  out += '\'';
  return out;
}

using detail::printable;

// Version 3.0 headers are UTF-8 (1.0 and 2.0 are latin-1, where every byte is valid).
std::optional<size_t> first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return i;
    i += n;
  }
  return std::nullopt;
}

// ---- dtype descriptors ----

struct ParsedDescr {
  DType dtype;
  bool swap;  // big-endian data on this little-endian machine
};

ParsedDescr parse_descr(std::string_view name, const std::string& descr) {
  static_assert(std::endian::native == std::endian::little, "npy assumes little-endian");
  std::string s = descr;
  char order = '|';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
    order = s[0];
    s = s.substr(1);
  }
  // Typestrings ("f4"), one-letter codes ("f", "?") and names ("float32"), as np.dtype reads them.
  static const struct {
    const char* spelling;
    DType dtype;
  } kNames[] = {
      {"b1", DType::kBool},
      {"?", DType::kBool},
      {"bool", DType::kBool},
      {"i1", DType::kInt8},
      {"b", DType::kInt8},
      {"int8", DType::kInt8},
      {"i2", DType::kInt16},
      {"h", DType::kInt16},
      {"int16", DType::kInt16},
      {"i4", DType::kInt32},
      {"i", DType::kInt32},
      {"int32", DType::kInt32},
      {"i8", DType::kInt64},
      {"q", DType::kInt64},
      {"l", DType::kInt64},
      {"int64", DType::kInt64},
      {"u1", DType::kUInt8},
      {"B", DType::kUInt8},
      {"uint8", DType::kUInt8},
      {"u2", DType::kUInt16},
      {"H", DType::kUInt16},
      {"uint16", DType::kUInt16},
      {"u4", DType::kUInt32},
      {"I", DType::kUInt32},
      {"uint32", DType::kUInt32},
      {"u8", DType::kUInt64},
      {"Q", DType::kUInt64},
      {"L", DType::kUInt64},
      {"uint64", DType::kUInt64},
      {"f2", DType::kFloat16},
      {"e", DType::kFloat16},
      {"float16", DType::kFloat16},
      {"f4", DType::kFloat32},
      {"f", DType::kFloat32},
      {"float32", DType::kFloat32},
      {"f8", DType::kFloat64},
      {"d", DType::kFloat64},
      {"float64", DType::kFloat64},
      // bfloat16 (Tessera's convention, which is JAX's and ml_dtypes'): a 2-byte void. jnp.load
      // views every 'V2' array as bfloat16 the same way.
      {"V2", DType::kBFloat16},
      {"bfloat16", DType::kBFloat16},
  };
  for (const auto& n : kNames) {
    if (s == n.spelling) return {n.dtype, order == '>' && itemsize(n.dtype) > 1};
  }
  // A dtype NumPy has but Tessera lacks is a TypeError (as JAX raises for unsupported dtypes); a
  // descriptor NumPy itself would reject is a ValueError, as np.load raises.
  const std::string shown = quoted(printable(descr));
  const char kind = s.empty() ? '\0' : s[0];
  const bool digits_follow = s.size() > 1 && std::all_of(s.begin() + 1, s.end(), [](char c) {
                               return c >= '0' && c <= '9';
                             });
  std::string why;
  if (kind == 'c' && digits_follow) why = "is complex, which Tessera does not support yet";
  if (kind == 'O' && (s.size() == 1 || digits_follow))
    why = "holds Python objects, which Tessera cannot read";
  if (kind == 'V' && digits_follow)
    why = "is a raw void type of " + s.substr(1) +
          " bytes (only 'V2', Tessera's and ml_dtypes' bfloat16, is read)";
  if ((kind == 'S' || kind == 'U' || kind == 'a') && digits_follow)
    why = "is a string dtype, which Tessera does not support";
  if ((kind == 'M' || kind == 'm') && s.size() > 1 && s[1] == '8')
    why = "is a datetime dtype, which Tessera does not support";
  if (s == "f16" || s == "g" || s == "longdouble")
    why = "is long double, which Tessera does not support (it reads float16/32/64)";
  if (!why.empty()) {
    throw TypeError(
        op_message("load_npy", quoted(name) + ": dtype descriptor " + shown + " " + why));
  }
  bad_file(name, "'descr' is not a valid dtype descriptor: " + shown);
}

// ---- a small parser for the header's Python dict literal ----

class HeaderParser {
 public:
  HeaderParser(std::string_view name, std::string_view text) : name_(name), s_(text) {}

  struct Result {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  // Keys may come in any order; a repeated key takes its last value, as in a Python dict literal
  // (np.load accepts those).
  Result parse() {
    Result r;
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      std::string key = parse_string();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') {
          fail(
              "the 'descr' is a structured dtype (a list of fields), which Tessera does not "
              "support");
        }
        r.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        r.fortran_order = parse_bool();
        have_fortran = true;
      } else if (key == "shape") {
        r.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unexpected key '" + printable(key, 40) +
             "' in the header (expected descr, fortran_order, shape)");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == '}') {
        ++i_;
        break;
      }
      fail("expected ',' or '}' at header offset " + std::to_string(i_) + " in the header \"" +
           printable(s_) + "\"");
    }
    skip_ws();
    if (i_ != s_.size()) {
      fail("unexpected text after the header dict at offset " + std::to_string(i_) + ": \"" +
           printable(s_.substr(i_), 40) + "\"");
    }
    if (!have_descr || !have_fortran || !have_shape) {
      fail("the header lacks one of the keys 'descr', 'fortran_order', 'shape': \"" +
           printable(s_) + "\"");
    }
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad_file(name_, what); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) {
      fail(std::string("expected '") + c + "' at header offset " + std::to_string(i_) +
           " in the header \"" + printable(s_) + "\"");
    }
    ++i_;
  }
  std::string parse_string() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"')
      fail("expected a quoted string at header offset " + std::to_string(i_));
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) out += s_[i_++];  // keep escapes, skip the quote
      out += s_[i_++];
    }
    if (i_ >= s_.size()) fail("unterminated string in the header");
    ++i_;
    return out;
  }
  bool parse_bool() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False, found \"" + printable(s_.substr(i_), 20) + "\"");
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        break;
      }
      const bool negative = peek() == '-';
      if (negative) ++i_;
      if (!is_digit(peek())) {
        fail("the shape must be a tuple of integers, found \"" + printable(s_.substr(i_), 20) +
             "\" at header offset " + std::to_string(i_));
      }
      const size_t start = i_;
      int64_t v = 0;
      while (is_digit(peek())) {
        const int digit = s_[i_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) {
          while (is_digit(peek())) ++i_;
          fail("the shape entry " + printable(s_.substr(start, i_ - start), 40) +
               " overflows int64");
        }
        v = v * 10 + digit;
      }
      if (peek() == 'L') ++i_;  // Python 2 long literals of old files ("3L")
      shape.push_back(negative ? -v : v);
      // Checked here so that a huge rank is refused before it is built.
      if (static_cast<int64_t>(shape.size()) > kMaxRank) {
        fail("the shape has more than " + std::to_string(kMaxRank) +
             " dimensions (NumPy's limit is " + std::to_string(kMaxRank) + ")");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape at header offset " + std::to_string(i_));
      }
    }
    return shape;
  }

  std::string_view name_;
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

void bad_file(std::string_view name, const std::string& problem) {
  throw ValueError(op_message("load_npy", quoted(name) + " is not a valid .npy file: " + problem));
}

std::string descr_of(DType d) {
  switch (d) {
    case DType::kBool:
      return "|b1";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt8:
      return "|u1";
    case DType::kUInt16:
      return "<u2";
    case DType::kUInt32:
      return "<u4";
    case DType::kUInt64:
      return "<u8";
    case DType::kFloat16:
      return "<f2";
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kBFloat16:
      return "<V2";  // see tessera/io.h: NumPy reads it as raw 2-byte voids
    default:
      break;
  }
  return "";
}

Preamble parse_preamble(std::span<const uint8_t> head, uint64_t file_size, std::string_view name) {
  if (head.size() < kMagicLen + 2 || std::memcmp(head.data(), kMagic, kMagicLen) != 0) {
    bad_file(name, "it does not start with the magic string \"\\x93NUMPY\" and a version (" +
                       std::to_string(file_size) + " bytes)");
  }
  const int major = head[kMagicLen], minor = head[kMagicLen + 1];
  // NumPy reads exactly these three versions (np.lib.format._header_size_info).
  if (!(major >= 1 && major <= 3) || minor != 0) {
    bad_file(name, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                       " is unknown (NumPy writes 1.0, 2.0 and 3.0)");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (head.size() < kMagicLen + 2 + len_bytes) {
    bad_file(name, "the header length field is truncated (" + std::to_string(file_size) +
                       " bytes in all)");
  }
  Preamble p;
  p.major = major;
  p.header_offset = kMagicLen + 2 + len_bytes;
  for (size_t b = 0; b < len_bytes; ++b) p.header_len |= size_t{head[kMagicLen + 2 + b]} << (8 * b);
  if (p.header_len > kMaxHeaderLen) {
    bad_file(name, "the header length " + std::to_string(p.header_len) +
                       " is implausibly large (valid headers are under 2 KiB)");
  }
  if (p.header_offset + p.header_len > file_size) {
    bad_file(name, "the header claims " + std::to_string(p.header_len) +
                       " bytes but the file has " + std::to_string(file_size) +
                       " bytes in all (truncated?)");
  }
  return p;
}

Header parse_header(const Preamble& pre, std::string_view text, uint64_t file_size,
                    std::string_view name) {
  if (pre.major == 3) {
    if (auto at = first_invalid_utf8(text)) {
      bad_file(name, "a version 3.0 header must be UTF-8; byte " + std::to_string(*at) +
                         " of the header is not");
    }
  }
  auto parsed = HeaderParser(name, text).parse();
  Header h;
  const ParsedDescr pd = parse_descr(name, parsed.descr);
  h.dtype = pd.dtype;
  h.swap = pd.swap;
  h.fortran_order = parsed.fortran_order;
  h.shape = std::move(parsed.shape);
  const size_t item = itemsize(h.dtype);
  try {
    check_shape("load_npy", h.shape, item);
  } catch (const ValueError& e) {
    std::string msg = e.what();
    const std::string tag = "[load_npy] ";
    if (msg.rfind(tag, 0) == 0) msg.erase(0, tag.size());
    bad_file(name, msg);
  }
  // check_shape bounds the byte count by 2^62, so this product cannot wrap.
  h.nbytes = static_cast<uint64_t>(shape_size(h.shape, "load_npy")) * item;
  h.data_offset = pre.header_offset + pre.header_len;
  const uint64_t available = file_size - h.data_offset;  // parse_preamble: data_offset <= size
  if (available < h.nbytes) {
    bad_file(name, "the data is truncated: the header says " + printable(parsed.descr) + " " +
                       shape_str(h.shape) + " (" + std::to_string(h.nbytes) + " bytes) but only " +
                       std::to_string(available) + " bytes follow the header");
  }
  return h;
}

std::string build_header(const Array& a) {
  // np.lib.format._write_array_header: the keys sorted, each "'key': repr(value), ", then "}",
  // then spaces so the first axis can grow to 21 digits in place, then padding to 64 bytes.
  std::string dict = "{'descr': '" + descr_of(a.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape().size(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(a.shape()[i]);
  }
  if (a.shape().size() == 1) dict += ",";
  dict += "), }";
  if (!a.shape().empty()) {
    constexpr size_t kGrowthAxisMaxDigits = 21;
    dict.append(kGrowthAxisMaxDigits - std::to_string(a.shape()[0]).size(), ' ');
  }
  // NumPy's _wrap_header: hlen counts the final '\n'; the padding is 64 - (prefix + hlen) % 64,
  // a full 64 spaces when already aligned. Version 1.0 unless the length overflows its 2-byte
  // field (then 2.0, as NumPy chooses; 3.0 is only for non-latin-1 field names, which Tessera's
  // dtypes never have). Rank <= kMaxRank keeps every Tessera header far below 65535 bytes.
  const size_t hlen = dict.size() + 1;
  int major = 1;
  size_t prefix = kMagicLen + 2 + 2;
  size_t padlen = kAlign - (prefix + hlen) % kAlign;
  if (hlen + padlen > 65535) {
    major = 2;
    prefix = kMagicLen + 2 + 4;
    padlen = kAlign - (prefix + hlen) % kAlign;
  }
  const size_t header_len = hlen + padlen;
  dict.append(padlen, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t b = 0; b < prefix - kMagicLen - 2; ++b)
    out += static_cast<char>((header_len >> (8 * b)) & 0xff);
  return out + dict;
}

void decode_payload(const Header& h, const char* src, char* dst) {
  const size_t item = itemsize(h.dtype);
  const int64_t count = static_cast<int64_t>(h.nbytes / item);
  if (count == 0) return;  // (dims of an empty shape may multiply past int64: no strides)
  if (!h.fortran_order || h.shape.size() < 2) {
    if (src != dst) std::memcpy(dst, src, h.nbytes);
  } else {
    // Walk the row-major result with an odometer; element (i0, i1, ...) sits at
    // i0 + s0 * (i1 + s1 * (...)) in the column-major source.
    const size_t rank = h.shape.size();
    std::vector<int64_t> idx(rank, 0), fstride(rank, 1);
    for (size_t k = 1; k < rank; ++k) fstride[k] = fstride[k - 1] * h.shape[k - 1];
    int64_t off = 0;
    for (int64_t n = 0; n < count; ++n) {
      std::memcpy(dst + n * item, src + off * item, item);
      for (size_t k = rank; k-- > 0;) {
        off += fstride[k];
        if (++idx[k] < h.shape[k]) break;
        off -= fstride[k] * h.shape[k];
        idx[k] = 0;
      }
    }
  }
  if (h.swap) {
    for (int64_t i = 0; i < count; ++i) std::reverse(dst + i * item, dst + (i + 1) * item);
  }
  if (h.dtype == DType::kBool) {
    // NumPy bools are bytes; anything nonzero is True.
    for (int64_t i = 0; i < count; ++i) dst[i] = dst[i] != 0;
  }
}

}  // namespace tessera::io::npy
