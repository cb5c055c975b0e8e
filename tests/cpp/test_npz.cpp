// .npz I/O: round trips of every dtype (stored and deflated, 0-d, empty, large), interop with
// NumPy both ways (np.load reads ours; we read np.savez/np.savez_compressed files, big-endian
// and Fortran members included; member names and bytes equal NumPy's), every malformed-archive
// class (truncation, lying directories, overlaps, duplicates, encryption, unknown methods, CRC
// errors, zip bombs, bad members) raising a typed error that names the file and member, a
// time-boxed mutation loop, and atomic saves checked by killing the writer mid-save.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "io/npy.h"
#include "io/zip.h"
#include "tessera/io.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/temp_dir.h"
#include "util/test_util.h"

namespace fs = std::filesystem;
using namespace tessera;
using tessera::testing::describe;
using tessera::testing::oracle_array;
using tessera::testing::random_shape;
using tessera::testing::rng;

namespace {

using tessera::testing::read_bytes;
using tessera::testing::write_bytes;
struct TempDir : tessera::testing::TempDir {
  TempDir() : tessera::testing::TempDir("tessera_npz") {}
};

std::span<const uint8_t> as_span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
std::string bytes_of(const Array& a) {
  if (a.nbytes() == 0) return "";
  return std::string(static_cast<const char*>(a.raw_data()), a.nbytes());
}

// Bitwise CRC-32 (the zip polynomial), independent of zlib.
uint32_t crc32_ref(std::string_view s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char ch : s) {
    c ^= ch;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put16(std::string& s, uint64_t v) {
  for (int b = 0; b < 2; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
}
void put32(std::string& s, uint64_t v) {
  for (int b = 0; b < 4; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
}
void put64(std::string& s, uint64_t v) {
  for (int b = 0; b < 8; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
}

// Deflate made of stored blocks only (RFC 1951 BTYPE=00): a naive, independent encoder.
std::string deflate_stored(std::string_view s) {
  std::string out;
  size_t i = 0;
  do {
    const size_t n = std::min<size_t>(s.size() - i, 65535);
    out += static_cast<char>(i + n == s.size() ? 1 : 0);
    put16(out, n);
    put16(out, ~n & 0xffff);
    out.append(s.substr(i, n));
    i += n;
  } while (i < s.size());
  return out;
}

// ---- an independent archive builder whose every field can be falsified ----
struct Member {
  std::string name;
  std::string payload;  // the uncompressed bytes
  uint16_t method = 0;  // 0 stored, 8 deflated (with stored blocks), other: payload as is
  uint16_t flags = 0;
  std::optional<std::string> data;  // the archived bytes (default: payload, encoded)
  std::optional<uint32_t> crc;
  std::optional<uint64_t> csize, usize, offset;
  std::optional<std::string> local_name;
  std::optional<uint16_t> local_method;
  bool emit_local = true;  // false: only a central entry (its offset set explicitly)
};
struct Options {
  std::optional<uint64_t> count, cd_offset, cd_size;
  bool zip64_end = false;      // ZIP64 end record + locator, 0xffff/0xffffffff in the end record
  bool zip64_central = false;  // sizes and offsets of every entry in a ZIP64 extra
  std::optional<uint64_t> zip64_end_offset;
  uint16_t disk = 0;
  std::string comment;
};

std::string local_record(const Member& m, const std::string& data) {
  std::string h;
  put32(h, 0x04034b50);
  put16(h, 20);
  put16(h, m.flags);
  put16(h, m.local_method.value_or(m.method));
  put16(h, 0);
  put16(h, 0x21);
  put32(h, m.crc.value_or(crc32_ref(m.payload)));
  put32(h, m.csize.value_or(data.size()));
  put32(h, m.usize.value_or(m.payload.size()));
  const std::string name = m.local_name.value_or(m.name);
  put16(h, name.size());
  put16(h, 0);
  return h + name + data;
}

std::string encoded(const Member& m) {
  if (m.data) return *m.data;
  return m.method == 8 ? deflate_stored(m.payload) : m.payload;
}

std::string build_zip(const std::vector<Member>& ms, const Options& o = {}) {
  std::string out;
  std::vector<uint64_t> offsets;
  for (const Member& m : ms) {
    offsets.push_back(m.offset.value_or(out.size()));
    if (m.emit_local) out += local_record(m, encoded(m));
  }
  const uint64_t cd_offset = out.size();
  for (size_t i = 0; i < ms.size(); ++i) {
    const Member& m = ms[i];
    const uint64_t csize = m.csize.value_or(encoded(m).size()),
                   usize = m.usize.value_or(m.payload.size());
    std::string cd;
    put32(cd, 0x02014b50);
    put16(cd, 0x031e);
    put16(cd, 20);
    put16(cd, m.flags);
    put16(cd, m.method);
    put16(cd, 0);
    put16(cd, 0x21);
    put32(cd, m.crc.value_or(crc32_ref(m.payload)));
    std::string extra;
    if (o.zip64_central) {
      put16(extra, 1);
      put16(extra, 24);
      put64(extra, usize);
      put64(extra, csize);
      put64(extra, offsets[i]);
    }
    put32(cd, o.zip64_central ? 0xffffffffu : csize);
    put32(cd, o.zip64_central ? 0xffffffffu : usize);
    put16(cd, m.name.size());
    put16(cd, extra.size());
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, 0);
    put32(cd, o.zip64_central ? 0xffffffffu : offsets[i]);
    out += cd + m.name + extra;
  }
  const uint64_t cd_size = out.size() - cd_offset;
  const uint64_t count = o.count.value_or(ms.size());
  if (o.zip64_end) {
    const uint64_t z = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 45);
    put16(out, 45);
    put32(out, o.disk);
    put32(out, 0);
    put64(out, count);
    put64(out, count);
    put64(out, o.cd_size.value_or(cd_size));
    put64(out, o.cd_offset.value_or(cd_offset));
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, o.zip64_end_offset.value_or(z));
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, o.zip64_end ? 0 : o.disk);
  put16(out, 0);
  put16(out, o.zip64_end ? 0xffff : count);
  put16(out, o.zip64_end ? 0xffff : count);
  put32(out, o.zip64_end ? 0xffffffffu : o.cd_size.value_or(cd_size));
  put32(out, o.zip64_end ? 0xffffffffu : o.cd_offset.value_or(cd_offset));
  put16(out, o.comment.size());
  return out + o.comment;
}

Member npy_member(const std::string& key, const Array& a, uint16_t method = 0) {
  Member m;
  m.name = key + ".npy";
  m.payload = io::save_npy_bytes(a);
  m.method = method;
  return m;
}

// A version 1.0 .npy header for `dict` (no data).
std::string npy_text(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

// Loads `bytes` from a file named `name` in `dir`; expects E naming the file, the member (when
// given) and every substring.
template <class E>
void expect_npz_error(const TempDir& dir, const std::string& name, const std::string& bytes,
                      const std::string& member, const std::vector<std::string>& substrings) {
  SCOPED_TRACE(name);
  const std::string path = dir.file(name);
  write_bytes(path, bytes);
  try {
    io::load_npz(path);
    ADD_FAILURE() << "load_npz did not raise";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[load_npz] ", 0), 0u) << msg;
    EXPECT_NE(msg.find("'" + path + "'"), std::string::npos) << "should name the file: " << msg;
    if (!member.empty()) {
      EXPECT_NE(msg.find("'" + member + "'"), std::string::npos)
          << "should name the member: " << msg;
    }
    for (auto& s : substrings) EXPECT_NE(msg.find(s), std::string::npos) << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
  EXPECT_EQ(read_bytes(path), bytes) << "a failed load must leave the file untouched";
}

void expect_same(const io::NamedArrays& got, const io::NamedArrays& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.dtype(), want[i].second.dtype()) << got[i].first;
    EXPECT_EQ(got[i].second.shape(), want[i].second.shape()) << got[i].first;
    EXPECT_FALSE(got[i].second.weak_type());
    EXPECT_EQ(bytes_of(got[i].second), bytes_of(want[i].second)) << describe(want[i].second);
  }
}

// Raw member bytes of an archive, by name, through our reader (checked against Python's zipfile
// in NumPyInterop).
std::vector<std::pair<std::string, std::string>> members_of(const std::string& zip) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : io::zip::read_directory(as_span(zip), "test", "mem")) {
    io::zip::MemberReader r(as_span(zip), e, "test", "mem");
    std::string bytes(e.usize, '\0');
    r.read(bytes.data(), bytes.size());
    r.finish();
    out.emplace_back(e.name, bytes);
  }
  return out;
}

io::NamedArrays random_arrays(int n, bool big = false) {
  io::NamedArrays out;
  auto& r = rng();
  for (int i = 0; i < n; ++i) {
    const auto& dts = tessera::testing::all_dtypes();
    const DType d = dts[r() % dts.size()];
    const int kind = static_cast<int>(r() % 6);
    Shape s = kind == 0 ? Shape{} : kind == 1 ? Shape{3, 0} : random_shape(1, 4, 6);
    out.emplace_back("arr_" + std::to_string(i), oracle_array(s, d));
  }
  if (big) out.emplace_back("big", oracle_array({1 << 20}, DType::kFloat32));
  return out;
}

}  // namespace

TEST(Npz, RoundTripsEveryDtype) {
  TempDir dir;
  for (bool compressed : {false, true}) {
    io::NamedArrays arrays;
    for (DType d : tessera::testing::all_dtypes()) {
      const std::string t(dtype_name(d));
      arrays.emplace_back(t + "_0d", oracle_array({}, d));
      arrays.emplace_back(t + "_empty", oracle_array({0, 4}, d));
      arrays.emplace_back(t, oracle_array(random_shape(1, 4, 7), d));
    }
    // A large one (several deflate buffers and zlib calls) and odd keys.
    arrays.emplace_back("large", oracle_array({3, 300001}, DType::kFloat32));
    arrays.emplace_back("with space/and\xc3\xa9", oracle_array({5}, DType::kInt16));
    arrays.emplace_back("", oracle_array({2}, DType::kUInt8));
    const std::string path = dir.file(compressed ? "c.npz" : "s.npz");
    io::save_npz(path, arrays, compressed);
    expect_same(io::load_npz(path), arrays);
    const std::string mem = io::save_npz_bytes(arrays, compressed);
    expect_same(io::load_npz_bytes(as_span(mem), "mem"), arrays);
    // Members: "<key>.npy", the exact .npy bytes save_npy writes, stored or deflated.
    const auto members = members_of(read_bytes(path));
    ASSERT_EQ(members.size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      EXPECT_EQ(members[i].first, arrays[i].first + ".npy");
      EXPECT_EQ(members[i].second, io::save_npy_bytes(arrays[i].second));
    }
    for (const auto& e : io::zip::read_directory(as_span(read_bytes(path)), "t", "f"))
      EXPECT_EQ(e.method, compressed ? io::zip::kDeflated : io::zip::kStored);
    EXPECT_EQ(io::npz_get(io::load_npz(path), "large").shape(), (Shape{3, 300001}));
  }
  // An empty archive is valid (np.savez with no arrays writes one).
  io::save_npz(dir.file("empty.npz"), {});
  EXPECT_TRUE(io::load_npz(dir.file("empty.npz")).empty());
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"c.npz", "empty.npz", "s.npz"}));
}

TEST(Npz, ReadsZip64AndCommentedArchives) {
  TempDir dir;
  io::NamedArrays arrays = random_arrays(4);
  std::vector<Member> ms;
  for (size_t i = 0; i < arrays.size(); ++i)
    ms.push_back(npy_member(arrays[i].first, arrays[i].second, i % 2 ? 8 : 0));
  for (int variant = 0; variant < 4; ++variant) {
    Options o;
    o.zip64_end = variant & 1;
    o.zip64_central = variant & 2;
    o.comment = variant == 3 ? "a comment PK\x05\x06 with a fake signature" : "";
    const std::string z = build_zip(ms, o);
    expect_same(io::load_npz_bytes(as_span(z), "zip64"), arrays);
  }
}

TEST(Npz, SaveErrors) {
  TempDir dir;
  const std::string path = dir.file("x.npz");
  const io::NamedArrays twice = {{"a", oracle_array({2}, DType::kInt8)},
                                 {"a", oracle_array({2}, DType::kInt8)}};
  EXPECT_ERROR(ValueError, io::save_npz(path, twice), "the key 'a' appears twice");
  const io::NamedArrays keys = {{"k", random::key(1)}};
  EXPECT_ERROR(TypeError, io::save_npz(path, keys),
               "[save_npz] dtype key<fry> has no NumPy equivalent");
  const io::NamedArrays empty_handle = {{"e", Array()}};
  EXPECT_ERROR(ValueError, io::save_npz(path, empty_handle), "empty");
  EXPECT_ERROR(ValueError, io::save_npz(dir.file("no/such/dir.npz"), {}), "cannot write");
  EXPECT_ERROR(ValueError, io::save_npz(dir.path(), {}), "it is a directory");
  EXPECT_TRUE(dir.entries().empty()) << "failed saves leave nothing behind";
  EXPECT_ERROR(ValueError, (void)io::npz_get({}, "zz"), "'zz' is not a file in the archive");
  // An existing file survives a failed save byte for byte.
  io::save_npz(path, {{"a", oracle_array({3}, DType::kFloat32)}});
  const std::string before = read_bytes(path);
  EXPECT_THROW(io::save_npz(path, keys), TypeError);
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"x.npz"}));
}

// One Python process reads our archives (np.load, and zipfile for member names and bytes) and
// writes its own (np.savez / np.savez_compressed with little- and big-endian and Fortran-order
// members, an object array); we compare everything both ways.
TEST(Npz, NumPyInterop) {
  TESSERA_REQUIRE_ORACLE();
  TempDir dir;
  io::NamedArrays arrays = random_arrays(10);
  for (DType d : tessera::testing::all_dtypes()) {
    if (d == DType::kBFloat16) continue;  // np.savez cannot write '<V2' (no ml_dtypes here)
    arrays.emplace_back("all_" + std::string(dtype_name(d)),
                        oracle_array(random_shape(0, 3, 5), d));
  }
  arrays.erase(std::remove_if(arrays.begin(), arrays.end(),
                              [](auto& p) { return p.second.dtype() == DType::kBFloat16; }),
               arrays.end());
  arrays.emplace_back("mat", oracle_array({3, 4, 2}, DType::kFloat64));
  std::string manifest;
  for (const auto& [k, a] : arrays) {
    io::save_npy(dir.file("single_" + k + ".npy"), a);
    manifest += k + "\n";
  }
  write_bytes(dir.file("manifest.txt"), manifest);
  io::save_npz(dir.file("ours_stored.npz"), arrays, false);
  io::save_npz(dir.file("ours_deflated.npz"), arrays, true);
  const std::string script = R"PY(
import sys, os, zipfile
import numpy as np
d = sys.argv[1]
keys = open(os.path.join(d, "manifest.txt")).read().split()
singles = {k: np.load(os.path.join(d, "single_%s.npy" % k)) for k in keys}
for kind, method in [("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)]:
    path = os.path.join(d, "ours_%s.npz" % kind)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        infos = z.infolist()
        assert [i.filename for i in infos] == [k + ".npy" for k in keys], [i.filename for i in infos]
        for i in infos:
            assert i.compress_type == method, (i.filename, i.compress_type)
            with open(os.path.join(d, "zipfile_%s_%s" % (kind, i.filename)), "wb") as f:
                f.write(z.read(i))
    with np.load(path) as f:
        assert f.files == keys, f.files
        for k in keys:
            x = f[k]
            assert x.dtype == singles[k].dtype and x.shape == singles[k].shape, k
            assert x.tobytes() == singles[k].tobytes(), k
# NumPy's own archives of the same arrays, then byte-swapped and Fortran-order variants.
np.savez(os.path.join(d, "np_stored.npz"), **singles)
np.savez_compressed(os.path.join(d, "np_deflated.npz"), **singles)
np.savez(os.path.join(d, "np_be.npz"), **{k: v.astype(v.dtype.newbyteorder(">")) for k, v in singles.items()})
np.savez_compressed(os.path.join(d, "np_fortran.npz"), mat=np.asfortranarray(singles["mat"]))
for name in ["np_stored", "np_deflated"]:
    with zipfile.ZipFile(os.path.join(d, name + ".npz")) as z:
        for i in z.infolist():
            with open(os.path.join(d, "member_%s_%s" % (name, i.filename)), "wb") as f:
                f.write(z.read(i))
np.savez(os.path.join(d, "np_object.npz"), ok=np.arange(3), obj=np.array([1, "a"], dtype=object))
np.savez(os.path.join(d, "np_complex.npz"), c=np.ones(2, np.complex64))
)PY";
  write_bytes(dir.file("interop.py"), script);
  const std::string cmd = "/usr/bin/python3 " + dir.file("interop.py") + " " + dir.path() + " 2>" +
                          dir.file("stderr.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_bytes(dir.file("stderr.txt"));

  for (const auto& [k, a] : arrays) {
    const std::string npy = io::save_npy_bytes(a);
    // zipfile extracted exactly our .npy bytes from both of our archives...
    EXPECT_EQ(read_bytes(dir.file("zipfile_stored_" + k + ".npy")), npy) << k;
    EXPECT_EQ(read_bytes(dir.file("zipfile_deflated_" + k + ".npy")), npy) << k;
    // ...and NumPy's archives hold the same member names and bytes.
    EXPECT_EQ(read_bytes(dir.file("member_np_stored_" + k + ".npy")), npy) << k;
    EXPECT_EQ(read_bytes(dir.file("member_np_deflated_" + k + ".npy")), npy) << k;
  }
  for (const char* name : {"np_stored.npz", "np_deflated.npz", "np_be.npz"}) {
    SCOPED_TRACE(name);
    expect_same(io::load_npz(dir.file(name)), arrays);
  }
  // NumPy's member names and bytes, as our reader sees them, equal ours.
  const auto theirs = members_of(read_bytes(dir.file("np_deflated.npz")));
  const auto ours = members_of(read_bytes(dir.file("ours_deflated.npz")));
  EXPECT_EQ(theirs, ours);
  auto fortran = io::load_npz(dir.file("np_fortran.npz"));
  ASSERT_EQ(fortran.size(), 1u);
  EXPECT_EQ(bytes_of(fortran[0].second), bytes_of(io::npz_get(arrays, "mat")));
  expect_npz_error<TypeError>(dir, "np_object.npz", read_bytes(dir.file("np_object.npz")),
                              "obj.npy", {"Python objects"});
  expect_npz_error<TypeError>(dir, "np_complex.npz", read_bytes(dir.file("np_complex.npz")),
                              "c.npy", {"complex"});
}

TEST(Npz, MalformedArchivesRaiseTypedErrors) {
  TempDir dir;
  const Array a = oracle_array({4, 3}, DType::kFloat32);
  const Array b = oracle_array({5}, DType::kInt64);
  const Member ma = npy_member("a", a), mb = npy_member("b", b, 8);
  const std::string good = build_zip({ma, mb});
  expect_same(io::load_npz_bytes(as_span(good), "good"), {{"a", a}, {"b", b}});

  expect_npz_error<ValueError>(dir, "tiny.npz", "PK\x05\x06", "", {"fewer than a zip end record"});
  expect_npz_error<ValueError>(dir, "not_zip.npz", std::string(300, 'x'), "",
                               {"no zip end-of-central-directory record"});
  expect_npz_error<ValueError>(dir, "npy_not_npz.npz", io::save_npy_bytes(a), "",
                               {"no zip end-of-central-directory record"});
  {
    Options o;
    o.cd_offset = good.size() + 100;
    expect_npz_error<ValueError>(dir, "cd_past_end.npz", build_zip({ma, mb}, o), "",
                                 {"central directory", "lies past its end record"});
    o = {};
    o.cd_size = 1u << 30;
    expect_npz_error<ValueError>(dir, "cd_size_lies.npz", build_zip({ma, mb}, o), "",
                                 {"lies past its end record"});
    o = {};
    o.count = 7;
    expect_npz_error<ValueError>(dir, "count_too_big.npz", build_zip({ma, mb}, o), "",
                                 {"claims 7 entries"});
    o.count = 60000;
    expect_npz_error<ValueError>(dir, "count_huge.npz", build_zip({ma, mb}, o), "",
                                 {"claims 60000 entries", "holds at most"});
    o.count = 1;
    expect_npz_error<ValueError>(dir, "count_too_small.npz", build_zip({ma, mb}, o), "",
                                 {"claims 1 entries but they end"});
    o = {};
    o.disk = 1;
    expect_npz_error<ValueError>(dir, "multidisk.npz", build_zip({ma, mb}, o), "", {"multi-disk"});
    o = {};
    o.zip64_end = true;
    o.zip64_end_offset = uint64_t{1} << 40;
    expect_npz_error<ValueError>(dir, "zip64_locator_past_end.npz", build_zip({ma, mb}, o), "",
                                 {"ZIP64 end record offset"});
    o.zip64_end_offset = 3;
    expect_npz_error<ValueError>(dir, "zip64_locator_wrong.npz", build_zip({ma, mb}, o), "",
                                 {"does not point at a ZIP64 end record"});
    o = {};
    o.zip64_end = true;
    o.count = uint64_t{1} << 60;
    expect_npz_error<ValueError>(dir, "zip64_count_huge.npz", build_zip({ma, mb}, o), "",
                                 {"entries", "holds at most"});
  }
  Member m = mb;
  m.offset = uint64_t{1} << 33;
  Options z64;
  z64.zip64_central = true;
  expect_npz_error<ValueError>(dir, "local_past_end.npz", build_zip({ma, m}, z64), "b.npy",
                               {"local header offset 8589934592"});
  m = mb;
  m.offset = 1;
  expect_npz_error<ValueError>(dir, "local_misplaced.npz", build_zip({ma, m}), "b.npy",
                               {"no local header signature"});
  m = mb;
  m.csize = 1u << 31;
  expect_npz_error<ValueError>(dir, "data_past_end.npz", build_zip({ma, m}), "b.npy",
                               {"run past the member data"});
  m = ma;
  m.name = "b.npy";
  m.local_name = "b.npy";
  expect_npz_error<ValueError>(dir, "duplicate.npz", build_zip({m, mb}), "b.npy",
                               {"appears twice"});
  m = ma;
  m.name = "b";
  m.local_name = "b";
  expect_npz_error<ValueError>(dir, "duplicate_key.npz", build_zip({mb, m}), "b",
                               {"its key 'b' is also another member's"});
  m = mb;
  m.local_name = "c.npy";
  expect_npz_error<ValueError>(dir, "local_name.npz", build_zip({ma, m}), "b.npy",
                               {"the local header names it 'c.npy'"});
  m = mb;
  m.local_method = 0;
  expect_npz_error<ValueError>(dir, "local_method.npz", build_zip({ma, m}), "b.npy",
                               {"disagree with the central directory"});
  m = mb;
  m.flags = 1;
  expect_npz_error<ValueError>(dir, "encrypted.npz", build_zip({ma, m}), "b.npy", {"encrypted"});
  for (uint16_t method : {1, 9, 12, 14, 93, 99}) {
    m = mb;
    m.method = method;
    m.data = deflate_stored(m.payload);
    expect_npz_error<ValueError>(dir, "method" + std::to_string(method) + ".npz",
                                 build_zip({ma, m}), "b.npy",
                                 {"compression method " + std::to_string(method)});
  }
  m = ma;
  m.usize = ma.payload.size() + 1;
  expect_npz_error<ValueError>(dir, "stored_sizes.npz", build_zip({m, mb}), "a.npy",
                               {"sizes differ"});
  m = ma;
  m.name = "";
  m.local_name = "";
  expect_npz_error<ValueError>(dir, "empty_name.npz", build_zip({m}), "", {"empty name"});
  // Overlap: b's local record lies inside a's data.
  {
    Member inner = mb;
    Member outer;
    outer.name = "a.npy";
    outer.payload = local_record(inner, encoded(inner));
    inner.emit_local = false;
    inner.offset = 30 + outer.name.size();
    expect_npz_error<ValueError>(dir, "overlap.npz", build_zip({outer, inner}), "",
                                 {"'a.npy' and 'b.npy' overlap"});
    // The same offset twice (a "zip bomb" by shared data) is an overlap too.
    Member twin = ma;
    twin.name = "a2.npy";
    twin.local_name = "a.npy";
    twin.emit_local = false;
    twin.offset = 0;
    const std::string z = build_zip({ma, twin});
    expect_npz_error<ValueError>(dir, "shared.npz", z, "", {"local header names it"});
  }
  // CRC-32 mismatches (stored and deflated) and corrupt deflate data.
  m = ma;
  m.crc = crc32_ref(ma.payload) ^ 0x10;
  expect_npz_error<ValueError>(dir, "crc_stored.npz", build_zip({m, mb}), "a.npy",
                               {"CRC-32 mismatch"});
  m = mb;
  m.crc = crc32_ref(mb.payload) + 1;
  expect_npz_error<ValueError>(dir, "crc_deflated.npz", build_zip({ma, m}), "b.npy",
                               {"CRC-32 mismatch"});
  m = mb;
  m.data = "\x07garbage-that-is-not-deflate";
  expect_npz_error<ValueError>(dir, "bad_deflate.npz", build_zip({ma, m}), "b.npy",
                               {"corrupt deflate data"});
  m = mb;
  m.data = deflate_stored(mb.payload).substr(0, 60);
  expect_npz_error<ValueError>(dir, "truncated_deflate.npz", build_zip({ma, m}), "b.npy",
                               {"truncated"});

  // Members that are not valid .npy files name the member and the .npy problem.
  struct BadNpy {
    std::string name, payload, problem;
    bool type_error = false;
  };
  const std::vector<BadNpy> bad_npys = {
      {"text", "just some text, not an array", "does not start with the magic string"},
      {"negative", npy_text("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }"),
       "negative"},
      {"overflow",
       npy_text("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
       "too large"},
      {"huge_len", std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12), "implausibly large"},
      {"truncated", npy_text("{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }"),
       "the data is truncated"},
      {"unknown", npy_text("{'descr': '<q9', 'fortran_order': False, 'shape': (1,), }"),
       "not a valid dtype descriptor"},
      {"object", npy_text("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"),
       "Python objects", true},
  };
  for (const BadNpy& bn : bad_npys) {
    for (uint16_t method : {0, 8}) {
      Member x;
      x.name = bn.name + ".npy";
      x.payload = bn.payload;
      x.method = method;
      const std::string file = bn.name + std::to_string(method) + ".npz";
      if (bn.type_error)
        expect_npz_error<TypeError>(dir, file, build_zip({ma, x}), x.name, {bn.problem});
      else
        expect_npz_error<ValueError>(dir, file, build_zip({ma, x}), x.name, {bn.problem});
    }
  }
}

// Zip bombs: a deflated member may inflate only to what its .npy header needs (+64 KiB); a
// declared size beyond deflate's 1032:1 ratio is refused before inflating; a stream that goes on
// past its declared size is cut there. None of them allocates or inflates the bomb.
TEST(Npz, ZipBombsAreRefusedCheaply) {
  TempDir dir;
  const Array small = oracle_array({10}, DType::kUInt8);
  const std::string header = io::npy::build_header(small);
  // 8 MiB of filler that deflates well (but far below deflate's 1032:1 limit).
  std::string filler(size_t{8} << 20, '\0');
  for (size_t i = 0; i < filler.size(); i += 61) filler[i] = static_cast<char>(rng()());
  // Our writer deflates a small .npy followed by the zeros; the declared sizes are the true ones.
  auto bomb = [&](const std::vector<std::string_view>& pieces) {
    io::detail::StringSink sink;
    io::zip::Writer w(sink);
    w.add("bomb.npy", pieces, true);
    w.finish();
    return sink.out;
  };
  const std::string data = bytes_of(small);
  const std::string honest_bomb = bomb({header, data, filler});
  EXPECT_LT(honest_bomb.size(), size_t{1} << 20);
  const std::string needed = std::to_string(header.size() + data.size());
  auto t0 = std::chrono::steady_clock::now();
  expect_npz_error<ValueError>(
      dir, "trailing.npz", honest_bomb, "bomb.npy",
      {"declares " + std::to_string(header.size() + data.size() + filler.size()) +
           " bytes but its .npy header needs " + needed,
       "zip bomb"});
  // The same stream with its declared size forged down to what the header needs: inflating stops
  // after 138 bytes + 1 and the CRC check never sees the rest.
  auto entries = io::zip::read_directory(as_span(honest_bomb), "t", "f");
  ASSERT_EQ(entries.size(), 1u);
  std::vector<Member> forged(1);
  forged[0].name = "bomb.npy";
  forged[0].method = 8;
  forged[0].data = honest_bomb.substr(entries[0].data_offset, entries[0].csize);
  forged[0].payload = header + data;  // its CRC and size: what the header needs
  expect_npz_error<ValueError>(dir, "forged_small.npz", build_zip(forged), "bomb.npy",
                               {"inflates past its declared size of " + needed + " bytes"});
  // Declared far beyond the ratio deflate can reach.
  forged[0].usize = uint64_t{1} << 45;
  Options zip64;
  zip64.zip64_central = true;
  expect_npz_error<ValueError>(dir, "forged_huge.npz", build_zip(forged, zip64), "bomb.npy",
                               {"declares 35184372088832 bytes inflated from", "1032:1"});
  // A header claiming an enormous array inside a tiny member: refused by the ratio bound (before
  // the array could be allocated).
  Member huge;
  huge.name = "huge.npy";
  huge.method = 8;
  huge.payload = npy_text("{'descr': '<f8', 'fortran_order': False, 'shape': (8000000000,), }");
  huge.usize = huge.payload.size() + uint64_t{64000000000};
  expect_npz_error<ValueError>(dir, "huge_shape.npz", build_zip({huge}, zip64), "huge.npy",
                               {"1032:1"});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 2.0) << "refusing bombs must not inflate them";
}

// Every prefix of a valid archive and random byte mutations (time-boxed): a result or a typed
// error, never a crash or an untyped exception.
TEST(Npz, TruncatedAndMutatedArchivesNeverCrash) {
  io::NamedArrays arrays = random_arrays(3);
  std::vector<std::string> seeds = {io::save_npz_bytes(arrays, false),
                                    io::save_npz_bytes(arrays, true)};
  int errors = 0, loads = 0;
  auto attempt = [&](const std::string& z) {
    try {
      auto got = io::load_npz_bytes(as_span(z), "mutant");
      for (auto& [k, a] : got) (void)bytes_of(a);
      ++loads;
    } catch (const ValueError&) {
      ++errors;
    } catch (const TypeError&) {
      ++errors;
    }
  };
  for (const std::string& s : seeds) {
    for (size_t n = 0; n < s.size(); ++n) {
      const std::string prefix = s.substr(0, n);
      try {
        io::load_npz_bytes(as_span(prefix), "prefix");
        ADD_FAILURE() << "a " << n << "-byte prefix of a " << s.size() << "-byte archive loaded";
      } catch (const ValueError&) {
        ++errors;
      }
    }
  }
  auto& r = rng();
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500)) {
    std::string z = seeds[r() % seeds.size()];
    const int edits = 1 + static_cast<int>(r() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = r() % z.size();
      switch (r() % 4) {
        case 0:
          z[at] = static_cast<char>(r());
          break;
        case 1:  // a 32-bit field set to an extreme
          for (int b = 0; b < 4 && at + b < z.size(); ++b)
            z[at + b] = static_cast<char>(r() % 2 ? 0xff : 0x00);
          break;
        case 2:
          z.erase(at, 1 + r() % 16);
          break;
        default:
          z.insert(at, std::string(1 + r() % 16, static_cast<char>(r())));
          break;
      }
      if (z.empty()) z.push_back('P');
    }
    attempt(z);
  }
  std::printf("[npz mutations] %d typed errors, %d loads\n", errors, loads);
  EXPECT_GT(errors, 0);
}

// A writer killed at random moments of a save: the target is always the old archive or the
// complete new one, and the only other files are temporaries named as tessera/io.h documents.
TEST(Npz, KillingTheWriterNeverCorruptsTheTarget) {
  TempDir dir;
  const std::string target = dir.file("data.npz");
  const io::NamedArrays v1 = {{"x", oracle_array({1 << 19}, DType::kFloat32)},
                              {"y", oracle_array({7}, DType::kInt32)}};
  const io::NamedArrays v2 = {{"x", oracle_array({1 << 19}, DType::kFloat32)},
                              {"z", oracle_array({3, 3}, DType::kFloat64)}};
  io::save_npz(target, v1);
  // How long one save takes, to spread the kills over it.
  auto t0 = std::chrono::steady_clock::now();
  io::save_npz(dir.file("timing.npz"), v2, true);
  const auto save_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  fs::remove(dir.file("timing.npz"));
  const std::regex temp_name(R"(\.data\.npz\.tmp[0-9]+\.[0-9]+)");
  auto& r = rng();
  int kept_old = 0, got_new = 0, temporaries = 0;
  for (int round = 0; round < 12; ++round) {
    const io::NamedArrays& next = round % 2 ? v1 : v2;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        io::save_npz(target, next, round % 4 >= 2);
      } catch (...) {
        _exit(3);
      }
      _exit(0);
    }
    const auto delay = static_cast<long>(r() % static_cast<uint64_t>(save_us * 2 + 1));
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0) << "the child's save failed";
    }
    // The target is one of the two complete versions.
    const io::NamedArrays got = io::load_npz(target);
    const bool is_v1 = got.size() == 2 && got[1].first == "y";
    if (is_v1) {
      expect_same(got, v1);
    } else {
      expect_same(got, v2);
    }
    const bool is_next = (&next == &v1) == is_v1;
    (is_next ? got_new : kept_old)++;
    for (const std::string& name : dir.entries()) {
      if (name == "data.npz") continue;
      EXPECT_TRUE(std::regex_match(name, temp_name)) << "unexpected file " << name;
      EXPECT_FALSE(name.ends_with(".npz")) << name;
      fs::remove(dir.file(name));  // a killed writer's leftover temporary
      ++temporaries;
    }
  }
  std::printf(
      "[npz kill] 12 rounds: old kept %d, new complete %d, killed mid-write %d (save takes %lld "
      "us)\n",
      kept_old, got_new, temporaries, static_cast<long long>(save_us));
}

// The fuzz corpus (tests/fuzz/corpus/npz, written by NumPy through tests/fuzz/npz_seeds.py, plus
// regression inputs): bad_* raise typed errors, the others load, and each loaded archive equals
// NumPy's view of it member by member (its members re-saved are byte-identical .npy files).
TEST(Npz, FuzzCorpus) {
  const fs::path corpus = fs::path(TESSERA_SOURCE_DIR) / "tests/fuzz/corpus/npz";
  int n = 0, ok = 0;
  for (auto& e : fs::directory_iterator(corpus)) {
    const std::string bytes = read_bytes(e.path().string());
    const std::string name = e.path().filename().string();
    const bool bad = name.rfind("bad_", 0) == 0;
    ++n;
    try {
      const io::NamedArrays got = io::load_npz_bytes(as_span(bytes), name);
      EXPECT_FALSE(bad) << name << " loaded";
      ++ok;
      expect_same(io::load_npz_bytes(as_span(io::save_npz_bytes(got, true)), "again"), got);
    } catch (const ValueError& err) {
      EXPECT_TRUE(bad) << name << ": " << err.what();
    } catch (const TypeError& err) {
      EXPECT_TRUE(bad) << name << ": " << err.what();
    }
  }
  EXPECT_GE(n, 20);
  std::printf("[npz corpus] %d files, %d load\n", n, ok);
}
