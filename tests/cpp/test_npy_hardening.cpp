// .npy hardening: every size the header declares is checked (dims that overflow, negative dims,
// rank above kMaxRank, header lengths beyond the file, short payloads), malformed headers raise
// typed errors naming the file, the in-memory and the file reader agree, and saves keep the
// target's mode and owner, follow symlinks like np.save and leave nothing behind when they fail.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "io/npy.h"
#include "tessera/io.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/temp_dir.h"
#include "util/test_util.h"

namespace fs = std::filesystem;
using namespace tessera;
using tessera::testing::oracle_array;

namespace {

using tessera::testing::read_bytes;
using tessera::testing::write_bytes;
struct TempDir : tessera::testing::TempDir {
  TempDir() : tessera::testing::TempDir("tessera_npyh") {}
};

std::string bytes_of(const Array& a) {
  return a.nbytes() ? std::string(static_cast<const char*>(a.raw_data()), a.nbytes()) : "";
}
mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A .npy file with header dict `dict` (padded to 64 bytes) and payload `data`.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1,
                     int minor = 0) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  const int len_bytes = major == 1 ? 2 : 4;
  for (int b = 0; b < len_bytes; ++b) out += static_cast<char>((h.size() >> (8 * b)) & 0xff);
  return out + h + data;
}
std::string dict(const std::string& descr, const std::string& shape,
                 const std::string& fortran = "False") {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}
std::string ones_shape(int rank) {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) s += "1,";
  return s + ")";
}

Array load_mem(const std::string& bytes, const std::string& name) {
  return io::load_npy_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, name);
}

// What a load did: "ok" or the error's type and message.
struct Outcome {
  std::string kind, message;
  Array array;
};
template <class F>
Outcome outcome(F&& f) {
  try {
    return {"ok", "", f()};
  } catch (const InternalError& e) {
    return {"InternalError", e.what(), {}};
  } catch (const IndexError& e) {
    return {"IndexError", e.what(), {}};
  } catch (const ValueError& e) {
    return {"ValueError", e.what(), {}};
  } catch (const TypeError& e) {
    return {"TypeError", e.what(), {}};
  } catch (const std::exception& e) {
    return {"other", e.what(), {}};
  }
}

// Loads `bytes` from memory and from a file; both must give `kind` with the same message, which
// starts with "[load_npy] ", names the file and holds every one of `substrings`.
Outcome check_load(const TempDir& dir, const std::string& name, const std::string& bytes,
                   const std::string& kind, const std::vector<std::string>& substrings = {}) {
  const std::string path = dir.file(name + ".npy");
  write_bytes(path, bytes);
  Outcome mem = outcome([&] { return load_mem(bytes, path); });
  Outcome file = outcome([&] { return io::load_npy(path); });
  EXPECT_EQ(mem.kind, kind) << name << ": " << mem.message;
  EXPECT_EQ(file.kind, mem.kind) << name;
  EXPECT_EQ(file.message, mem.message) << name;
  if (kind != "ok") {
    EXPECT_EQ(mem.message.rfind("[load_npy] ", 0), 0u) << mem.message;
    EXPECT_NE(mem.message.find(path), std::string::npos) << mem.message;
    for (auto& s : substrings) EXPECT_NE(mem.message.find(s), std::string::npos) << mem.message;
  } else if (mem.array.defined() && file.array.defined()) {
    EXPECT_EQ(bytes_of(mem.array), bytes_of(file.array)) << name;
  }
  EXPECT_EQ(read_bytes(path), bytes) << "a load must not modify the file";
  return mem;
}

}  // namespace

TEST(NpyHardening, HeaderSizesAreChecked) {
  TempDir dir;
  const std::string z12(12, '\0');
  // Dims whose product overflows int64, or whose byte count passes 2^62.
  check_load(dir, "ovf", npy_file(dict("'<f4'", "(4611686018427387904, 4)"), ""), "ValueError",
             {"(4611686018427387904, 4)", "overflows int64"});
  check_load(dir, "bytes_ovf", npy_file(dict("'<f8'", "(9223372036854775807,)"), ""), "ValueError",
             {"too large", "2^62"});
  check_load(dir, "ovf3", npy_file(dict("'<f4'", "(3037000500, 3037000500, 3037000500)"), ""),
             "ValueError", {"overflows int64"});
  // An integer literal beyond int64.
  check_load(dir, "literal", npy_file(dict("'<f4'", "(99999999999999999999999,)"), ""),
             "ValueError", {"99999999999999999999999", "overflows int64"});
  check_load(dir, "literal_edge", npy_file(dict("'<f4'", "(9223372036854775808,)"), ""),
             "ValueError", {"overflows int64"});
  // Negative dims (np.load has no check and misreads (-3,) as (3,); we refuse them).
  check_load(dir, "neg", npy_file(dict("'<f4'", "(-3,)"), z12), "ValueError",
             {"negative dimensions", "(-3,)"});
  check_load(dir, "neg0", npy_file(dict("'<f4'", "(-1, 0)"), ""), "ValueError", {"negative"});
  // Rank: 64 is the limit; 65 and 20,000 are refused (no deep recursion when printing).
  Outcome r64 = check_load(dir, "rank64", npy_file(dict("'|u1'", ones_shape(64)), "\x07"), "ok");
  ASSERT_TRUE(r64.array.defined());
  EXPECT_EQ(r64.array.ndim(), 64);
  EXPECT_EQ(r64.array.str(), std::string(64, '[') + "7" + std::string(64, ']'));
  check_load(dir, "rank65", npy_file(dict("'|u1'", ones_shape(65)), "\x07"), "ValueError",
             {"more than 64 dimensions"});
  check_load(dir, "rank20000", npy_file(dict("'|u1'", ones_shape(20000)), "\x07", 2), "ValueError",
             {"more than 64 dimensions"});
  // Zero elements do not excuse the other dims (NumPy's np.load raises "array is too big" too:
  // strides stay bounded); modest dims with a zero load as an empty, printable array.
  check_load(dir, "zero_huge",
             npy_file(dict("'<f8'", "(4611686018427387904, 4611686018427387904, 0)"), ""),
             "ValueError", {"too large"});
  Outcome e =
      check_load(dir, "zero_big", npy_file(dict("'<f8'", "(1048576, 1048576, 0)"), ""), "ok");
  ASSERT_TRUE(e.array.defined());
  EXPECT_EQ(e.array.size(), 0);
  EXPECT_EQ(e.array.str(), "[]");
  // Header length fields: beyond the file, absurdly large, cut off.
  const std::string good = npy_file(dict("'<f4'", "(3,)"), z12);
  std::string beyond = good;
  beyond[8] = '\xff';
  beyond[9] = '\x7f';
  check_load(dir, "hlen_beyond", beyond, "ValueError", {"32767 bytes", "truncated"});
  std::string huge = npy_file(dict("'<f4'", "(3,)"), z12, 2);
  huge.replace(8, 4, "\xff\xff\xff\xff");
  check_load(dir, "hlen_huge", huge, "ValueError", {"4294967295", "implausibly large"});
  check_load(dir, "hlen_cut", good.substr(0, 9), "ValueError", {"length field is truncated"});
  check_load(dir, "header_cut", good.substr(0, 40), "ValueError", {"truncated"});
  check_load(dir, "v2_hlen_cut", npy_file(dict("'<f4'", "(3,)"), z12, 2).substr(0, 11),
             "ValueError", {"length field is truncated"});
}

// NumPy 1.24 on this machine: np.load raises ValueError on short data ("cannot reshape array
// of size 2 into shape (3,)") and ignores bytes after the data, from files and BytesIO alike.
TEST(NpyHardening, PayloadSizeFollowsNumPy) {
  TempDir dir;
  std::string data;
  for (int i = 0; i < 6; ++i) {
    const float v = 0.5f * static_cast<float>(i) - 1.0f;
    data.append(reinterpret_cast<const char*>(&v), 4);
  }
  const std::string good = npy_file(dict("'<f4'", "(2, 3)"), data);
  check_load(dir, "short1", good.substr(0, good.size() - 1), "ValueError",
             {"data is truncated", "24 bytes", "only 23"});
  check_load(dir, "short_all", good.substr(0, good.size() - 24), "ValueError", {"only 0"});
  check_load(dir, "scalar_no_data", npy_file(dict("'<f8'", "()"), ""), "ValueError",
             {"8 bytes", "only 0"});
  Outcome longer = check_load(dir, "longer", good + "trailing garbage", "ok");
  ASSERT_TRUE(longer.array.defined());
  EXPECT_EQ(longer.array.shape(), (Shape{2, 3}));
  EXPECT_EQ(bytes_of(longer.array), data);
  Outcome empty = check_load(dir, "empty_no_data", npy_file(dict("'<f4'", "(0, 5)"), ""), "ok");
  EXPECT_EQ(empty.array.shape(), (Shape{0, 5}));
}

TEST(NpyHardening, MalformedHeadersRaiseTypedErrors) {
  TempDir dir;
  const std::string z12(12, '\0');
  struct Case {
    std::string name, bytes, kind;
    std::vector<std::string> substrings;
  };
  const std::string good = npy_file(dict("'<f4'", "(3,)"), z12);
  std::vector<Case> cases = {
      // Magic and versions: NumPy reads exactly 1.0, 2.0 and 3.0.
      {"empty", "", "ValueError", {"magic"}},
      {"magic", "\x93NUMPZ" + good.substr(6), "ValueError", {"magic"}},
      {"magic_short", good.substr(0, 7), "ValueError", {"magic"}},
      {"v1_1", npy_file(dict("'<f4'", "(3,)"), z12, 1, 1), "ValueError", {"version 1.1"}},
      {"v4", npy_file(dict("'<f4'", "(3,)"), z12, 4), "ValueError", {"version 4.0"}},
      {"v0", npy_file(dict("'<f4'", "(3,)"), z12, 0), "ValueError", {"version 0.0"}},
      {"v255", npy_file(dict("'<f4'", "(3,)"), z12, 255), "ValueError", {"version 255.0"}},
      // Descriptors: unknown to NumPy -> ValueError (np.load's "not a valid dtype descriptor");
      // NumPy dtypes Tessera lacks -> TypeError.
      {"descr_zz", npy_file(dict("'zz'", "(3,)"), z12), "ValueError", {"'zz'"}},
      {"descr_empty", npy_file(dict("''", "(3,)"), z12), "ValueError", {"valid dtype"}},
      {"descr_i16", npy_file(dict("'<i16'", "(3,)"), z12), "ValueError", {"'<i16'"}},
      {"descr_num", npy_file(dict("4", "(3,)"), z12), "ValueError", {"quoted string"}},
      {"descr_struct", npy_file(dict("[('a', '<i4')]", "(3,)"), z12), "ValueError", {"structured"}},
      {"descr_c8", npy_file(dict("'<c8'", "(3,)"), z12), "TypeError", {"complex"}},
      {"descr_U", npy_file(dict("'<U1'", "(3,)"), z12), "TypeError", {"string"}},
      {"descr_M8", npy_file(dict("'<M8[s]'", "(3,)"), z12), "TypeError", {"datetime"}},
      {"descr_f16", npy_file(dict("'<f16'", "(3,)"), z12), "TypeError", {"long double"}},
      {"descr_latin1", npy_file(dict("'<f4\xe9'", "(3,)"), z12), "ValueError", {"<f4\\xe9"}},
      {"descr_unterminated", npy_file("{'descr': '<f4", z12), "ValueError", {"unterminated"}},
      // fortran_order must be a bool.
      {"fo_int", npy_file(dict("'<f4'", "(3,)", "0"), z12), "ValueError", {"True or False"}},
      {"fo_str", npy_file(dict("'<f4'", "(3,)", "'False'"), z12), "ValueError", {"True or False"}},
      {"fo_junk", npy_file(dict("'<f4'", "(3,)", "Tru"), z12), "ValueError", {"True or False"}},
      {"fo_suffix", npy_file(dict("'<f4'", "(3,)", "Truely"), z12), "ValueError", {"expected ','"}},
      // Shapes.
      {"shape_int", npy_file(dict("'<f4'", "3"), z12), "ValueError", {"expected '('"}},
      {"shape_nested", npy_file(dict("'<f4'", "((3,),)"), z12), "ValueError", {"integers"}},
      {"shape_float", npy_file(dict("'<f4'", "(3.0,)"), z12), "ValueError", {"expected ','"}},
      {"shape_open",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,", z12),
       "ValueError",
       {"tuple of integers"}},
      // Dict structure.
      {"extra_key",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", z12),
       "ValueError",
       {"unexpected key 'x'"}},
      {"missing", npy_file("{'descr': '<f4', 'shape': (3,)}", z12), "ValueError", {"lacks"}},
      {"no_brace", npy_file("'descr': '<f4'", z12), "ValueError", {"expected '{'"}},
      {"after_dict",
       npy_file(dict("'<f4'", "(3,)") + " x", z12),
       "ValueError",
       {"unexpected text after"}},
      {"nul", npy_file(dict("'<f4'", "(3,)") + std::string(1, '\0'), z12), "ValueError", {"\\x00"}},
      {"key_binary", npy_file("{'\x01\xff': 1}", z12), "ValueError", {"'\\x01\\xff'"}},
      // Version 3.0 headers are UTF-8.
      {"v3_bad_utf8", npy_file(dict("'<f4\xff'", "(3,)"), z12, 3), "ValueError", {"UTF-8"}},
      {"v3_utf8_descr",
       npy_file(dict("'<f4\xc3\xa9'", "(3,)"), z12, 3),
       "ValueError",
       {"valid dtype"}},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    Outcome o = check_load(dir, c.name, c.bytes, c.kind, c.substrings);
    // Header bytes are quoted escaped: messages are printable ASCII (the paths here are too).
    for (char ch : o.message) EXPECT_TRUE(ch >= 32 && ch < 127) << c.name << ": " << o.message;
  }
}

TEST(NpyHardening, AcceptsWhatNumPyWrites) {
  TempDir dir;
  std::string one_i4("\x01\x00\x00\x00", 4), three_i4 = one_i4 + one_i4 + one_i4;
  // Versions 2.0 and 3.0, '=' and missing byte orders, one-letter codes and names.
  for (int major : {1, 2, 3}) {
    Outcome o = check_load(dir, "v" + std::to_string(major),
                           npy_file(dict("'<i4'", "(3,)"), three_i4, major), "ok");
    EXPECT_EQ(o.array.dtype(), DType::kInt32);
  }
  for (const char* d : {"'=i4'", "'i4'", "'|i4'", "'i'", "'int32'", "\"<i4\""}) {
    Outcome o = check_load(dir, "descr", npy_file(dict(d, "(3,)"), three_i4), "ok");
    EXPECT_EQ(o.array.dtype(), DType::kInt32) << d;
  }
  // A repeated key takes its last value, as np.load's literal_eval does.
  Outcome dup = check_load(
      dir, "dup",
      npy_file("{'descr': '<f4', 'descr': '<i4', 'fortran_order': True, 'fortran_order': False, "
               "'shape': (3,)}",
               three_i4),
      "ok");
  EXPECT_EQ(dup.array.dtype(), DType::kInt32);
  EXPECT_EQ(bytes_of(dup.array), three_i4);
  // Python 2 long literals, no padding, no trailing newline, tabs.
  Outcome longs = check_load(dir, "long",
                             npy_file("{'descr':'<i2',\t'fortran_order':False,'shape':(2L, 1L)}",
                                      std::string("\x05\x00\x06\x00", 4)),
                             "ok");
  EXPECT_EQ(longs.array.shape(), (Shape{2, 1}));
  // Big-endian multi-byte data is swapped; '>b1' is a byte and is not.
  Outcome be = check_load(
      dir, "be", npy_file(dict("'>i2'", "(2,)"), std::string("\x01\x02\x00\x03", 4)), "ok");
  EXPECT_EQ(bytes_of(be.array), std::string("\x02\x01\x03\x00", 4));
  Outcome b1 =
      check_load(dir, "b1", npy_file(dict("'>b1'", "(3,)"), std::string("\x00\x02\x01", 3)), "ok");
  EXPECT_EQ(bytes_of(b1.array), std::string("\x00\x01\x01", 3));  // nonzero bytes are True
}

// fortran_order True: the payload is column-major; the result is the row-major array. The
// expected element is computed from the column-major offset formula directly.
TEST(NpyHardening, FortranOrderIsTransposed) {
  TempDir dir;
  std::mt19937 gen(tessera::testing::test_seed());
  for (const Shape& s : std::vector<Shape>{{2, 3}, {3, 1, 4}, {2, 3, 2, 2}, {5}, {}, {0, 3}}) {
    int64_t n = 1;
    for (auto d : s) n *= d;
    std::vector<int16_t> fdata(static_cast<size_t>(n));
    for (auto& v : fdata) v = static_cast<int16_t>(gen() % 30000);
    std::string shape = "(";
    for (auto d : s) shape += std::to_string(d) + ",";
    shape += ")";
    const std::string raw(reinterpret_cast<const char*>(fdata.data()), fdata.size() * 2);
    Outcome o = check_load(dir, "f", npy_file(dict("'<i2'", shape, "True"), raw), "ok");
    ASSERT_TRUE(o.array.defined());
    ASSERT_EQ(o.array.shape(), s);
    const auto* got = static_cast<const int16_t*>(o.array.raw_data());
    std::vector<int64_t> idx(s.size(), 0);
    for (int64_t c = 0; c < n; ++c) {
      int64_t rem = c, f = 0, mult = 1;
      for (size_t k = s.size(); k-- > 0;) {
        idx[k] = rem % s[k];
        rem /= s[k];
      }
      for (size_t k = 0; k < s.size(); ++k) {
        f += idx[k] * mult;
        mult *= s[k];
      }
      ASSERT_EQ(got[c], fdata[static_cast<size_t>(f)]) << shape_str(s) << " element " << c;
    }
  }
}

// Random corruptions of valid files: both readers give the same result, and the error (if any)
// is typed (never InternalError), or the array round-trips.
TEST(NpyHardening, ReadersAgreeOnCorruptFiles) {
  TempDir dir;
  std::mt19937_64 gen(tessera::testing::test_seed());
  std::cout << "[npy hardening] seed " << tessera::testing::test_seed() << "\n";
  int ok = 0, errors = 0;
  for (int it = 0; it < 400; ++it) {
    const auto dtypes = tessera::testing::all_dtypes();
    DType d = dtypes[gen() % dtypes.size()];
    if (d == DType::kBFloat16) d = DType::kFloat32;
    Array a = oracle_array(tessera::testing::random_shape(0, 3, 3), d);
    std::string raw = io::save_npy_bytes(a);
    const size_t data_at = 10 + static_cast<unsigned char>(raw[8]) +
                           (static_cast<size_t>(static_cast<unsigned char>(raw[9])) << 8);
    const int k = 1 + static_cast<int>(gen() % 4);
    for (int j = 0; j < k; ++j) {
      switch (gen() % 4) {
        case 3:  // a payload byte (the header stays valid)
          if (raw.size() > data_at)
            raw[data_at + gen() % (raw.size() - data_at)] = static_cast<char>(gen());
          break;
        case 0:
          raw[gen() % std::min<size_t>(raw.size(), 80)] = static_cast<char>(gen());
          break;
        case 1:
          raw[gen() % std::min<size_t>(raw.size(), 80)] = "0123456789-(),:'{} L"[gen() % 20];
          break;
        default:
          raw.resize(gen() % (raw.size() + 1));
          break;
      }
      if (raw.empty()) break;
    }
    const std::string path = dir.file("x.npy");
    write_bytes(path, raw);
    Outcome o = outcome([&] { return load_mem(raw, path); });
    Outcome f = outcome([&] { return io::load_npy(path); });
    ASSERT_NE(o.kind, "InternalError") << o.message;
    ASSERT_NE(o.kind, "other") << o.message;
    ASSERT_EQ(o.kind, f.kind) << o.message << " vs " << f.message;
    if (o.kind == "ok") {
      ++ok;
      EXPECT_EQ(bytes_of(o.array), bytes_of(f.array));
      Array b = load_mem(io::save_npy_bytes(o.array), "again");
      EXPECT_EQ(bytes_of(b), bytes_of(o.array));
      EXPECT_EQ(b.shape(), o.array.shape());
      (void)o.array.str();
    } else {
      ++errors;
      EXPECT_EQ(o.message, f.message);
    }
  }
  std::cout << "[npy hardening] " << ok << " loads, " << errors << " typed errors\n";
  EXPECT_GT(errors, 100);
  EXPECT_GT(ok, 10);
}

// ---- saving ----

TEST(NpyHardening, SaveKeepsModeAndOwner) {
  TempDir dir;
  Array a = oracle_array({5}, DType::kFloat32);
  Array b = oracle_array({2, 2}, DType::kInt64);
  for (mode_t m : {0600, 0640, 0444, 0755}) {
    const std::string p = dir.file("m" + std::to_string(m) + ".npy");
    io::save_npy(p, a);
    ASSERT_EQ(::chmod(p.c_str(), m), 0);
    io::save_npy(p, b);
    EXPECT_EQ(mode_of(p), m) << std::oct << m;
    EXPECT_EQ(bytes_of(io::load_npy(p)), bytes_of(b));
  }
  // New files: 0666 & ~umask, as open() in np.save gives them.
  for (mode_t mask : {022, 077, 002}) {
    const mode_t old = ::umask(mask);
    const std::string p = dir.file("new" + std::to_string(mask) + ".npy");
    io::save_npy(p, a);
    ::umask(old);
    EXPECT_EQ(mode_of(p), 0666 & ~mask) << std::oct << mask;
  }
  // Owner and group are kept where the saver may set them (root); otherwise the save succeeds.
  const std::string p = dir.file("owned.npy");
  io::save_npy(p, a);
  if (::getuid() == 0) {
    ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
    io::save_npy(p, b);
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
  } else {
    io::save_npy(p, b);
  }
  EXPECT_EQ(bytes_of(io::load_npy(p)), bytes_of(b));
  // No temporaries stay behind.
  for (auto& e : dir.entries()) EXPECT_EQ(e.find(".tmp"), std::string::npos) << e;
}

TEST(NpyHardening, SaveFollowsSymlinks) {
  TempDir dir;
  fs::create_directory(dir.file("links"));
  fs::create_directory(dir.file("data"));
  Array a = oracle_array({3}, DType::kFloat32);
  Array b = oracle_array({2, 3}, DType::kUInt16);
  const std::string target = dir.file("data/t.npy");
  io::save_npy(target, a);
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  // A relative link in another directory, then a chain of two links.
  fs::create_symlink("../data/t.npy", dir.file("links/l1.npy"));
  fs::create_symlink("l1.npy", dir.file("links/l2.npy"));
  io::save_npy(dir.file("links/l2.npy"), b);
  EXPECT_TRUE(fs::is_symlink(dir.file("links/l1.npy")));
  EXPECT_TRUE(fs::is_symlink(dir.file("links/l2.npy")));
  EXPECT_EQ(fs::read_symlink(dir.file("links/l1.npy")).string(), "../data/t.npy");
  EXPECT_EQ(fs::read_symlink(dir.file("links/l2.npy")).string(), "l1.npy");
  EXPECT_EQ(read_bytes(target), io::save_npy_bytes(b));
  EXPECT_EQ(mode_of(target), 0640u);
  EXPECT_EQ(dir.entries("links"), (std::vector<std::string>{"l1.npy", "l2.npy"}));
  EXPECT_EQ(dir.entries("data"), (std::vector<std::string>{"t.npy"}));
  // An absolute dangling link: its target is created, the link stays.
  fs::create_symlink(dir.file("data/new.npy"), dir.file("links/dangling.npy"));
  io::save_npy(dir.file("links/dangling.npy"), a);
  EXPECT_TRUE(fs::is_symlink(dir.file("links/dangling.npy")));
  EXPECT_EQ(read_bytes(dir.file("data/new.npy")), io::save_npy_bytes(a));
  EXPECT_EQ(dir.entries("data"), (std::vector<std::string>{"new.npy", "t.npy"}));
  // A loop is an error naming the path; nothing is created.
  fs::create_symlink("loop_b.npy", dir.file("links/loop_a.npy"));
  fs::create_symlink("loop_a.npy", dir.file("links/loop_b.npy"));
  try {
    io::save_npy(dir.file("links/loop_a.npy"), a);
    ADD_FAILURE() << "a symlink loop did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("loop_a.npy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("symbolic links"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries("links"), (std::vector<std::string>{"dangling.npy", "l1.npy", "l2.npy",
                                                            "loop_a.npy", "loop_b.npy"}));
}

TEST(NpyHardening, FailedSavesChangeNothing) {
  TempDir dir;
  Array a = oracle_array({4}, DType::kFloat64);
  Array b = oracle_array({7}, DType::kInt8);
  // The path is a directory: refused before anything is written.
  fs::create_directory(dir.file("d.npy"));
  try {
    io::save_npy(dir.file("d.npy"), a);
    ADD_FAILURE() << "saving over a directory did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(dir.file("d.npy")));
  EXPECT_TRUE(fs::is_empty(dir.file("d.npy")));
  EXPECT_THROW(io::save_npy("", a), ValueError);
  // A path under a regular file.
  io::save_npy(dir.file("f.npy"), a);
  EXPECT_THROW(io::save_npy(dir.file("f.npy/x.npy"), a), ValueError);
  // A full device: the error comes from write and names the path.
  if (fs::exists("/dev/full")) {
    try {
      io::save_npy("/dev/full", a);
      ADD_FAILURE() << "saving to /dev/full did not raise";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
  }
  // An unwritable directory (as root, the save runs in a child that dropped to nobody): the
  // original stays byte for byte and no temporary is left.
  fs::create_directory(dir.file("ro"));
  const std::string keep = dir.file("ro/keep.npy");
  io::save_npy(keep, a);
  const std::string before = read_bytes(keep);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  if (::getuid() == 0) {
    ASSERT_EQ(::chmod(dir.file("ro").c_str(), 0755), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 3;
      if (::setgid(65534) == 0 && ::setuid(65534) == 0) {
        try {
          io::save_npy(keep, b);
          code = 1;
        } catch (const ValueError& e) {
          code = std::string(e.what()).find(std::strerror(EACCES)) != std::string::npos ? 0 : 2;
        } catch (...) {
          code = 4;
        }
      }
      ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: saved, 2: wrong message, 3: setuid failed, 4: type";
  } else {
    ASSERT_EQ(::chmod(dir.file("ro").c_str(), 0555), 0);
    try {
      io::save_npy(keep, b);
      ADD_FAILURE() << "saving into a read-only directory did not raise";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(keep), std::string::npos) << e.what();
    }
    ::chmod(dir.file("ro").c_str(), 0755);
  }
  EXPECT_EQ(read_bytes(keep), before);
  EXPECT_EQ(dir.entries("ro"), (std::vector<std::string>{"keep.npy"}));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"d.npy", "f.npy", "ro"}));
}

// A name at NAME_MAX (255 bytes) saves: the temporary's name does not grow past the limit.
TEST(NpyHardening, LongFileNamesSave) {
  TempDir dir;
  const std::string name = std::string(251, 'n') + ".npy";
  Array a = oracle_array({3}, DType::kInt32);
  io::save_npy(dir.file(name), a);
  EXPECT_EQ(bytes_of(io::load_npy(dir.file(name))), bytes_of(a));
  io::save_npy(dir.file(name), a);  // replacing it too
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{name}));
}

// A FIFO is refused at once instead of blocking until a writer appears.
TEST(NpyHardening, LoadRefusesNonRegularFiles) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo.npy").c_str(), 0600), 0);
  try {
    io::load_npy(dir.file("fifo.npy"));
    ADD_FAILURE() << "loading a FIFO did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::load_npy("/dev/null"), ValueError);
}

// Every file of the fuzz corpus: loads, or raises a typed error; both readers agree.
TEST(NpyHardening, FuzzCorpusRegressions) {
  TempDir dir;
  const fs::path corpus = fs::path(TESSERA_SOURCE_DIR) / "tests/fuzz/corpus/npy";
  int n = 0, ok = 0;
  for (auto& e : fs::directory_iterator(corpus)) {
    const std::string bytes = read_bytes(e.path().string());
    const std::string name = e.path().filename().string();
    Outcome o = outcome([&] { return load_mem(bytes, name); });
    ++n;
    EXPECT_NE(o.kind, "InternalError") << name << ": " << o.message;
    EXPECT_NE(o.kind, "other") << name << ": " << o.message;
    // Seeds named ok_* or after a dtype must load; bad_* must not.
    const bool bad = name.rfind("bad_", 0) == 0;
    EXPECT_EQ(o.kind == "ok", !bad) << name << ": " << o.message;
    if (o.kind == "ok") {
      ++ok;
      (void)o.array.str();
      EXPECT_EQ(bytes_of(load_mem(io::save_npy_bytes(o.array), name)), bytes_of(o.array));
    }
  }
  EXPECT_GT(n, 50);
  std::cout << "[npy corpus] " << n << " files, " << ok << " load\n";
}
