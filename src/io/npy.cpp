// NumPy .npy reading and writing (format versions 1.0-3.0, C order, numeric dtypes).
// The format: "\x93NUMPY", major, minor, a little-endian header length (2 bytes in 1.0,
// 4 bytes in 2.0/3.0), a Python dict literal {'descr', 'fortran_order', 'shape'} padded with
// spaces to a multiple of 64 bytes and ending in '\n', then the raw elements.
#include "tessera/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tessera/errors.h"

namespace tessera::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;               // NumPy aligns the data to 64 bytes
constexpr size_t kMaxHeaderLen = 1u << 20;  // far above any real header; guards allocation

std::string quoted(const std::string& path) { return "'" + path + "'"; }

[[noreturn]] void bad_file(const std::string& path, const std::string& problem) {
  throw ValueError(op_message("load_npy", quoted(path) + " is not a valid .npy file: " + problem));
}

// ---- dtype descriptors ----

// The descriptor NumPy writes for a dtype on a little-endian machine.
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
    default:
      break;
  }
  return "";
}

struct ParsedDescr {
  DType dtype;
  bool swap;  // big-endian data on this little-endian machine
};

ParsedDescr parse_descr(const std::string& path, const std::string& descr) {
  static_assert(std::endian::native == std::endian::little, "npy.cpp assumes little-endian");
  std::string s = descr;
  char order = '|';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
    order = s[0];
    s = s.substr(1);
  }
  std::optional<DType> d;
  if (s == "b1" || s == "?")
    d = DType::kBool;
  else if (s == "i1" || s == "b")
    d = DType::kInt8;
  else if (s == "i2")
    d = DType::kInt16;
  else if (s == "i4")
    d = DType::kInt32;
  else if (s == "i8")
    d = DType::kInt64;
  else if (s == "u1" || s == "B")
    d = DType::kUInt8;
  else if (s == "u2")
    d = DType::kUInt16;
  else if (s == "u4")
    d = DType::kUInt32;
  else if (s == "u8")
    d = DType::kUInt64;
  else if (s == "f2" || s == "e")
    d = DType::kFloat16;
  else if (s == "f4")
    d = DType::kFloat32;
  else if (s == "f8")
    d = DType::kFloat64;
  if (!d) {
    std::string why = "is not supported (Tessera reads bool, int8-64, uint8-64, float16/32/64)";
    if (!s.empty() && s[0] == 'c') why = "is complex, which Tessera does not support yet";
    if (!s.empty() && (s[0] == 'O')) why = "holds Python objects, which Tessera cannot read";
    if (!s.empty() && (s[0] == 'V'))
      why = "is a raw void type (ml_dtypes' bfloat16 is saved this way); save it as float32";
    throw TypeError(
        op_message("load_npy", quoted(path) + ": dtype descriptor '" + descr + "' " + why));
  }
  return {*d, order == '>' && itemsize(*d) > 1};
}

// ---- a tiny parser for the header's Python dict literal ----

class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

  struct Result {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

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
        fail("unexpected key '" + key + "' in the header (expected descr, fortran_order, shape)");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      fail("expected ',' or '}' at header offset " + std::to_string(i_));
    }
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the header dict");
    if (!have_descr || !have_fortran || !have_shape) {
      fail("the header lacks one of the keys 'descr', 'fortran_order', 'shape'");
    }
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad_file(path_, what); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) {
      fail(std::string("expected '") + c + "' at header offset " + std::to_string(i_) +
           " in the header \"" + printable_header() + "\"");
    }
    ++i_;
  }
  std::string printable_header() const {
    std::string out;
    for (char c : s_.substr(0, 200)) out += (c >= 32 && c < 127) ? c : '?';
    return out;
  }
  std::string parse_string() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"')
      fail("expected a quoted string at header offset " + std::to_string(i_));
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) out += s_[i_++];
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
    fail("'fortran_order' must be True or False");
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
      if (!(peek() >= '0' && peek() <= '9')) {
        fail("the shape must be a tuple of non-negative integers, found '" +
             std::string(1, peek()) + "' at header offset " + std::to_string(i_));
      }
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("a shape entry is too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      // Python long literals of old files ("3L").
      if (peek() == 'L') ++i_;
      shape.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape at header offset " + std::to_string(i_));
      }
    }
    return shape;
  }

  const std::string& path_;
  const std::string& s_;
  size_t i_ = 0;
};

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

void byteswap_inplace(char* p, int64_t n, size_t item) {
  for (int64_t i = 0; i < n; ++i) std::reverse(p + i * item, p + (i + 1) * item);
}

std::string build_header(const Array& a) {
  std::string dict = "{'descr': '" + descr_of(a.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape().size(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(a.shape()[i]);
  }
  if (a.shape().size() == 1) dict += ",";
  dict += "), }";
  // Version 1.0 has a 2-byte length; larger headers need 2.0's 4-byte length.
  int major = 1;
  size_t prefix = kMagicLen + 2 + 2;
  size_t total = prefix + dict.size() + 1;
  if (((total + kAlign - 1) / kAlign) * kAlign - prefix > 65535) {
    major = 2;
    prefix = kMagicLen + 2 + 4;
    total = prefix + dict.size() + 1;
  }
  size_t padded = ((total + kAlign - 1) / kAlign) * kAlign;
  size_t header_len = padded - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  if (major == 1) {
    out += static_cast<char>(header_len & 0xff);
    out += static_cast<char>((header_len >> 8) & 0xff);
  } else {
    for (int b = 0; b < 4; ++b) out += static_cast<char>((header_len >> (8 * b)) & 0xff);
  }
  return out + dict;
}

std::string os_error(int err) { return std::strerror(err); }

}  // namespace

void save_npy(const std::string& path, const Array& a) {
  if (!a.defined()) {
    throw ValueError(op_message("save_npy", "the Array handle is empty (default-constructed)"));
  }
  if (a.dtype() == DType::kBFloat16) {
    throw TypeError(
        op_message("save_npy", "NumPy has no bfloat16; convert to float32 first (saving " +
                                   a.aval().str() + " to " + quoted(path) + ")"));
  }
  if (descr_of(a.dtype()).empty()) {
    throw TypeError(op_message("save_npy", "dtype " + std::string(dtype_name(a.dtype())) +
                                               " has no NumPy equivalent; cannot save " +
                                               a.aval().str() + " to " + quoted(path)));
  }
  const void* data = a.raw_data("save_npy");  // raises for tracers and deleted arrays
  const std::string header = build_header(a);

  // Write a uniquely named sibling, then rename it over the target: readers see either
  // the old file or the complete new one, never a partial write.
  std::string dir = ".";
  if (auto slash = path.find_last_of('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    throw ValueError(op_message("save_npy", "cannot write " + quoted(path) + ": " +
                                                os_error(errno) + " (in directory " + quoted(dir) +
                                                ")"));
  }
  auto fail = [&](const std::string& what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw ValueError(op_message("save_npy", "cannot write " + quoted(path) + ": " + what + ": " +
                                                os_error(err) +
                                                " (nothing was written; any existing file is "
                                                "unchanged)"));
  };
  auto write_all = [&](const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("write failed", errno);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  };
  write_all(header.data(), header.size());
  write_all(static_cast<const char*>(data), a.nbytes());
  // No fsync: the rename protects readers from partial files when a save fails or the
  // process dies; durability across power loss is not promised (np.save does not either).
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw ValueError(op_message(
        "save_npy", "cannot write " + quoted(path) + ": close failed: " + os_error(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw ValueError(op_message("save_npy", "cannot write " + quoted(path) +
                                                ": rename failed: " + os_error(err) +
                                                " (any existing file is unchanged)"));
  }
}

Array load_npy(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    throw ValueError(
        op_message("load_npy", "cannot open " + quoted(path) + ": " + os_error(errno)));
  }
  struct stat st {};
  if (::fstat(::fileno(f.get()), &st) != 0) {
    throw ValueError(
        op_message("load_npy", "cannot stat " + quoted(path) + ": " + os_error(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw ValueError(op_message("load_npy", quoted(path) + " is a directory, not a .npy file"));
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);

  unsigned char pre[kMagicLen + 2];
  if (std::fread(pre, 1, sizeof(pre), f.get()) != sizeof(pre) ||
      std::memcmp(pre, kMagic, kMagicLen) != 0) {
    bad_file(path, "it does not start with the magic string \"\\x93NUMPY\" (" +
                       std::to_string(file_size) + " bytes)");
  }
  const int major = pre[kMagicLen], minor = pre[kMagicLen + 1];
  size_t len_bytes;
  if (major == 1) {
    len_bytes = 2;
  } else if (major == 2 || major == 3) {
    len_bytes = 4;
  } else {
    bad_file(path, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                       " is unknown (Tessera reads 1.0, 2.0 and 3.0)");
  }
  unsigned char lb[4] = {0, 0, 0, 0};
  if (std::fread(lb, 1, len_bytes, f.get()) != len_bytes) bad_file(path, "the header is truncated");
  size_t header_len = 0;
  for (size_t b = 0; b < len_bytes; ++b) header_len |= size_t{lb[b]} << (8 * b);
  const uint64_t data_offset = kMagicLen + 2 + len_bytes + header_len;
  if (header_len > kMaxHeaderLen) {
    bad_file(path, "the header length " + std::to_string(header_len) + " is implausibly large");
  }
  if (data_offset > file_size) {
    bad_file(path, "the header claims " + std::to_string(header_len) + " bytes but the file has " +
                       std::to_string(file_size) + " bytes in all (truncated?)");
  }
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f.get()) != header_len) {
    bad_file(path, "the header is truncated");
  }
  auto parsed = HeaderParser(path, header).parse();
  if (parsed.fortran_order) {
    throw ValueError(op_message(
        "load_npy", quoted(path) + " is stored in Fortran order, which Tessera does not read; "
                                   "save it with np.save(path, np.ascontiguousarray(x))"));
  }
  ParsedDescr pd = parse_descr(path, parsed.descr);
  const size_t item = itemsize(pd.dtype);
  uint64_t count = 1;
  for (int64_t d : parsed.shape) {
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d) / item) {
      bad_file(path, "the shape " + shape_str(parsed.shape) + " is too large");
    }
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t nbytes = count * item;
  if (file_size - data_offset < nbytes) {
    bad_file(path, "the data is truncated: the header says " + std::string(parsed.descr) + " " +
                       shape_str(parsed.shape) + " (" + std::to_string(nbytes) +
                       " bytes) but only " + std::to_string(file_size - data_offset) +
                       " bytes follow the header");
  }
  Array out = empty_array(Aval{parsed.shape, pd.dtype, false}, "load_npy");
  char* dst = static_cast<char*>(out.buffer("load_npy")->data());
  if (nbytes > 0 && std::fread(dst, 1, nbytes, f.get()) != nbytes) {
    throw ValueError(
        op_message("load_npy", "reading " + quoted(path) + " failed: " + os_error(errno)));
  }
  if (pd.swap) byteswap_inplace(dst, static_cast<int64_t>(count), item);
  if (pd.dtype == DType::kBool) {
    // NumPy bools are bytes; anything nonzero is True.
    for (uint64_t i = 0; i < count; ++i) dst[i] = dst[i] != 0;
  }
  return out;
}

}  // namespace tessera::io
