// .npy I/O: round trips for every NumPy dtype, interop with NumPy in both directions (files we
// write are read by np.load, files np.save writes -- including big-endian, version 2.0/3.0
// headers -- are read by us), clear errors for malformed/unsupported files (and a fuzz loop
// that corrupts valid files: errors, never crashes), and atomic saves (a failed save leaves
// no partial file and keeps an existing one intact).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

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
  TempDir() : tessera::testing::TempDir("tessera_npy") {}
};

// A fresh temp dir, removed at the end of the test.

std::string bytes_of(const Array& a) {
  if (a.nbytes() == 0) return "";
  return std::string(static_cast<const char*>(a.raw_data()), a.nbytes());
}

// Dtypes NumPy has (everything numeric but bfloat16).
std::vector<DType> npy_dtypes() {
  std::vector<DType> out;
  for (DType d : tessera::testing::all_dtypes())
    if (d != DType::kBFloat16) out.push_back(d);
  return out;
}
// Every dtype a .npy file holds (bfloat16 too, as '<V2').
std::vector<DType> savable_dtypes() { return tessera::testing::all_dtypes(); }

// A valid .npy header for `dict` (padded to 64 bytes, version 1.0).
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  if (major == 1) {
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
  } else {
    for (int b = 0; b < 4; ++b) out += static_cast<char>((h.size() >> (8 * b)) & 0xff);
  }
  return out + h + data;
}

template <class E>
void expect_load_error(const std::string& path, const std::vector<std::string>& substrings) {
  try {
    io::load_npy(path);
    ADD_FAILURE() << "load_npy(" << path << ") did not raise";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[load_npy] ", 0), 0u) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << "the message should name the path: " << msg;
    for (auto& s : substrings) EXPECT_NE(msg.find(s), std::string::npos) << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "load_npy(" << path << ") raised the wrong type: " << e.what();
  }
}

}  // namespace

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  TempDir dir;
  int n = 0;
  for (DType d : savable_dtypes()) {
    for (int rep = 0; rep < 6; ++rep) {
      Shape s = rep == 0 ? Shape{} : rep == 1 ? Shape{0, 3} : random_shape(1, 4, 5);
      Array a = oracle_array(s, d);
      const std::string path = dir.file(std::string("a").append(std::to_string(n++)) + ".npy");
      io::save_npy(path, a);
      Array b = io::load_npy(path);
      ASSERT_EQ(b.dtype(), d) << describe(a);
      ASSERT_EQ(b.shape(), s) << describe(a);
      EXPECT_FALSE(b.weak_type());
      EXPECT_EQ(bytes_of(b), bytes_of(a)) << describe(a);  // bit-exact, NaN payloads included
      // NumPy's layout: the data starts at a multiple of 64 bytes.
      const std::string raw = read_bytes(path);
      ASSERT_GE(raw.size(), 10u);
      const size_t hlen =
          static_cast<unsigned char>(raw[8]) | (static_cast<unsigned char>(raw[9]) << 8);
      EXPECT_EQ((10 + hlen) % 64, 0u);
      EXPECT_EQ(raw[10 + hlen - 1], '\n');
      EXPECT_EQ(raw.size(), 10 + hlen + a.nbytes());
    }
  }
  // Saving over an existing file replaces it; no temp files stay behind.
  Array x = oracle_array({4}, DType::kFloat32);
  io::save_npy(dir.file("a0.npy"), x);
  EXPECT_EQ(bytes_of(io::load_npy(dir.file("a0.npy"))), bytes_of(x));
  EXPECT_EQ(dir.entries().size(), static_cast<size_t>(n));
}

TEST(Npy, MaxRankHeaderFitsVersion1) {
  TempDir dir;
  Shape s(static_cast<size_t>(kMaxRank), 1);  // the longest shape an array may have
  s[3] = 2;
  Array a = oracle_array(s, DType::kInt16);
  io::save_npy(dir.file("big.npy"), a);
  const std::string raw = read_bytes(dir.file("big.npy"));
  EXPECT_EQ(raw[6], 1);
  Array b = io::load_npy(dir.file("big.npy"));
  EXPECT_EQ(b.shape(), s);
  EXPECT_EQ(bytes_of(b), bytes_of(a));
}

// One python process: it reads every file we wrote (checking dtype and shape, then saving a
// copy with np.save), and writes its own variants: big-endian, versions 2.0 and 3.0, and
// unsupported files. We then read all of those back.
TEST(Npy, NumPyInterop) {
  TESSERA_REQUIRE_ORACLE();
  TempDir dir;
  std::vector<Array> ours;
  std::string manifest;
  for (DType d : npy_dtypes()) {
    for (int rep = 0; rep < 3; ++rep) {
      Shape s = rep == 0 ? Shape{} : rep == 1 ? Shape{2, 0} : random_shape(1, 4, 4);
      Array a = oracle_array(s, d);
      const std::string name = "ours" + std::to_string(ours.size());
      io::save_npy(dir.file(name + ".npy"), a);
      manifest += name + " " + std::string(dtype_name(d)) + " " + std::to_string(a.ndim());
      for (auto v : s) manifest.append(" ").append(std::to_string(v));
      manifest += "\n";
      ours.push_back(a);
    }
  }
  write_bytes(dir.file("manifest.txt"), manifest);
  const std::string script = R"PY(
import sys, os
import numpy as np
d, seed = sys.argv[1], int(sys.argv[2])
for line in open(os.path.join(d, "manifest.txt")):
    f = line.split()
    name, dtype, ndim = f[0], f[1], int(f[2])
    shape = tuple(int(v) for v in f[3:3 + ndim])
    x = np.load(os.path.join(d, name + ".npy"))
    assert x.dtype == np.dtype(dtype), (name, x.dtype, dtype)
    assert x.shape == shape, (name, x.shape, shape)
    np.save(os.path.join(d, name + "_copy.npy"), x)
rng = np.random.default_rng(seed)
types = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64"]
for t in types:
    shape = tuple(rng.integers(0, 4, size=rng.integers(0, 4)))
    if t == "bool":
        x = rng.integers(0, 2, size=shape).astype(bool)
    elif t.startswith("float"):
        x = rng.standard_normal(size=shape).astype(t)
    else:
        info = np.iinfo(t)
        x = rng.integers(info.min, info.max, size=shape, dtype=t, endpoint=True)
    np.save(os.path.join(d, "np_%s_le.npy" % t), x)
    np.save(os.path.join(d, "np_%s_be.npy" % t), x.astype(x.dtype.newbyteorder(">")))
    for v in [(2, 0), (3, 0)]:
        with open(os.path.join(d, "np_%s_v%d.npy" % (t, v[0])), "wb") as fh:
            np.lib.format.write_array(fh, x, version=v)
    # Fortran order (np.save keeps it for F-contiguous arrays) holds the same values.
    y = (rng.integers(0, 3, size=(2, 3, 4)) * (0.37 if t.startswith("float") else 1)).astype(t)
    np.save(os.path.join(d, "np_%s_C.npy" % t), y)
    np.save(os.path.join(d, "np_%s_F.npy" % t), np.asfortranarray(y))
    assert open(os.path.join(d, "np_%s_F.npy" % t), "rb").read().find(b"'fortran_order': True") > 0
np.save(os.path.join(d, "bad_complex.npy"), np.ones(3, np.complex64))
np.save(os.path.join(d, "bad_object.npy"), np.array([1, "a"], dtype=object), allow_pickle=True)
np.save(os.path.join(d, "bad_struct.npy"), np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
np.save(os.path.join(d, "bad_str.npy"), np.array(["ab", "c"]))
)PY";
  write_bytes(dir.file("interop.py"), script);
  const std::string cmd = "/usr/bin/python3 " + dir.file("interop.py") + " " + dir.path() + " " +
                          std::to_string(tessera::testing::test_seed() % 1000000007) + " 2>" +
                          dir.file("stderr.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_bytes(dir.file("stderr.txt"));

  // NumPy read our files with the right dtype and shape; its copies read back bit-exact.
  for (size_t i = 0; i < ours.size(); ++i) {
    Array b = io::load_npy(dir.file("ours" + std::to_string(i) + "_copy.npy"));
    EXPECT_EQ(b.dtype(), ours[i].dtype());
    EXPECT_EQ(b.shape(), ours[i].shape());
    EXPECT_EQ(bytes_of(b), bytes_of(ours[i])) << describe(ours[i]);
  }
  // NumPy's own files: little-endian, big-endian (swapped on load), versions 2.0 and 3.0 all
  // hold the same values.
  for (DType d : npy_dtypes()) {
    const std::string t(dtype_name(d));
    Array le = io::load_npy(dir.file("np_" + t + "_le.npy"));
    EXPECT_EQ(le.dtype(), d);
    for (const char* variant : {"_be", "_v2", "_v3"}) {
      Array v = io::load_npy(dir.file("np_" + t + variant + ".npy"));
      EXPECT_EQ(v.dtype(), d) << t << variant;
      EXPECT_EQ(v.shape(), le.shape()) << t << variant;
      EXPECT_EQ(bytes_of(v), bytes_of(le)) << t << variant;
    }
  }
  // Fortran-order files load as the same row-major array.
  for (DType d : npy_dtypes()) {
    const std::string t(dtype_name(d));
    Array c = io::load_npy(dir.file("np_" + t + "_C.npy"));
    Array f = io::load_npy(dir.file("np_" + t + "_F.npy"));
    EXPECT_EQ(f.dtype(), d);
    EXPECT_EQ(f.shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(bytes_of(f), bytes_of(c)) << t;
  }
  expect_load_error<TypeError>(dir.file("bad_complex.npy"), {"<c8", "complex"});
  expect_load_error<TypeError>(dir.file("bad_object.npy"), {"|O", "Python objects"});
  expect_load_error<ValueError>(dir.file("bad_struct.npy"), {"structured"});
  expect_load_error<TypeError>(dir.file("bad_str.npy"), {"<U2", "string dtype"});
}

TEST(Npy, MalformedFilesRaiseClearErrors) {
  TempDir dir;
  const std::string f4x3(12, '\0');
  struct Bad {
    std::string name, bytes;
    std::vector<std::string> substrings;
  };
  std::vector<Bad> value_errors = {
      {"empty", "", {"magic"}},
      {"magic", "\x93NUMPX\x01\x00" + std::string(100, ' '), {"magic"}},
      {"short", "\x93NU", {"magic"}},
      {"version",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4x3)
           .replace(6, 1, "\x09"),
       {"version 9.0"}},
      {"hlen_trunc", std::string("\x93NUMPY\x01\x00\x05", 9), {"header"}},
      {"hlen_beyond", std::string("\x93NUMPY\x01\x00\xff\x7f", 10) + "{}", {"truncated"}},
      {"not_dict", npy_file("['descr', '<f4']", f4x3), {"expected '{'"}},
      {"missing_key", npy_file("{'descr': '<f4', 'shape': (3,), }", f4x3), {"lacks"}},
      {"extra_key",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", f4x3),
       {"unexpected key 'x'"}},
      {"bad_bool",
       npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", f4x3),
       {"True or False"}},
      {"neg_shape",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", f4x3),
       {"negative dimensions", "(-3,)"}},
      {"list_shape",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': [3], }", f4x3),
       {"expected '('"}},
      {"unterminated",
       npy_file("{'descr': '<f4, 'fortran_order': False, 'shape': (3,), }", f4x3),
       {"expected ',' or '}'"}},
      {"data_trunc",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", f4x3),
       {"truncated", "48 bytes", "only 12"}},
      {"huge_shape",
       npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
                f4x3),
       {"too large"}},
      {"descr_junk",
       npy_file("{'descr': 'zz', 'fortran_order': False, 'shape': (3,), }", f4x3),
       {"not a valid dtype descriptor: 'zz'"}},
  };
  for (auto& b : value_errors) {
    const std::string path = dir.file(b.name + ".npy");
    write_bytes(path, b.bytes);
    SCOPED_TRACE(b.name);
    expect_load_error<ValueError>(path, b.substrings);
    EXPECT_EQ(read_bytes(path), b.bytes) << "a failed load must leave the file untouched";
  }
  std::vector<Bad> type_errors = {
      {"descr_c16",
       npy_file("{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", f4x3),
       {"complex"}},
      {"descr_V4",
       npy_file("{'descr': '<V4', 'fortran_order': False, 'shape': (3,), }", f4x3),
       {"raw void type of 4 bytes", "only 'V2'"}},
  };
  for (auto& b : type_errors) {
    const std::string path = dir.file(b.name + ".npy");
    write_bytes(path, b.bytes);
    SCOPED_TRACE(b.name);
    expect_load_error<TypeError>(path, b.substrings);
  }
  expect_load_error<ValueError>(dir.file("does_not_exist.npy"), {"cannot open"});
  fs::create_directory(dir.file("a_dir.npy"));
  expect_load_error<ValueError>(dir.file("a_dir.npy"), {"directory"});

  // Keys in any order, extra spaces, rank 0 and a header without the trailing comma are fine.
  write_bytes(dir.file("ok.npy"), npy_file("{ 'shape' : () , 'fortran_order':False,'descr':'<i4'}",
                                           std::string("\x07\0\0\0", 4)));
  Array ok = io::load_npy(dir.file("ok.npy"));
  EXPECT_EQ(ok.dtype(), DType::kInt32);
  EXPECT_EQ(ok.shape(), Shape{});
  EXPECT_EQ(ok.item<int32_t>(), 7);
}

// Corrupts valid files at random (byte flips, truncation): every load either succeeds or
// raises a tessera::Error; it never crashes or throws anything else.
TEST(Npy, FuzzedFilesNeverCrash) {
  TempDir dir;
  std::uniform_int_distribution<int> byte(0, 255);
  int errors = 0, loads = 0;
  for (int it = 0; it < 300; ++it) {
    DType d = npy_dtypes()[static_cast<size_t>(it) % npy_dtypes().size()];
    Array a = oracle_array(random_shape(0, 3, 4), d);
    const std::string path = dir.file("f.npy");
    io::save_npy(path, a);
    std::string raw = read_bytes(path);
    // Flips land in the header half of the time, anywhere otherwise.
    std::uniform_int_distribution<size_t> pos(
        0, (it % 2 ? std::min<size_t>(raw.size(), 80) : raw.size()) - 1);
    if (it % 3 == 0) {
      raw.resize(std::uniform_int_distribution<size_t>(0, raw.size())(rng()));
    } else {
      for (int k = 0; k < 1 + it % 4; ++k) raw[pos(rng())] = static_cast<char>(byte(rng()));
    }
    write_bytes(path, raw);
    try {
      Array b = io::load_npy(path);
      ++loads;
      EXPECT_LE(b.nbytes(), raw.size());
    } catch (const Error& e) {
      ++errors;
      EXPECT_EQ(std::string(e.what()).rfind("[load_npy] ", 0), 0u) << e.what();
    }
  }
  EXPECT_GT(errors, 50);
  std::cout << "[npy fuzz] " << errors << " clean errors, " << loads << " loads\n";
}

TEST(Npy, FailedSavesLeaveNoPartialFile) {
  TempDir dir;
  const std::string path = dir.file("keep.npy");
  Array good = oracle_array({16}, DType::kFloat32);
  io::save_npy(path, good);
  const std::string before = read_bytes(path);

  // A typed PRNG key (no NumPy dtype) is refused before anything is written.
  Array key = random::key(3);
  try {
    io::save_npy(path, key);
    ADD_FAILURE() << "saving a PRNG key did not raise";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[save_npy] dtype key<fry> has no NumPy equivalent"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(io::save_npy(dir.file("key.npy"), key), TypeError);
  EXPECT_FALSE(fs::exists(dir.file("key.npy")));

  // A deleted array and an empty handle.
  Array del = oracle_array({2}, DType::kInt32);
  del.delete_buffer();
  EXPECT_THROW(io::save_npy(dir.file("del.npy"), del), ValueError);
  EXPECT_THROW(io::save_npy(dir.file("undef.npy"), Array()), ValueError);

  // A missing directory.
  try {
    io::save_npy(dir.file("no/such/dir/x.npy"), good);
    ADD_FAILURE() << "saving into a missing directory did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/x.npy"), std::string::npos) << e.what();
  }

  // The target is a directory: the final rename fails; the temp file is removed.
  fs::create_directory(dir.file("target_dir.npy"));
  EXPECT_THROW(io::save_npy(dir.file("target_dir.npy"), good), ValueError);
  EXPECT_TRUE(fs::is_directory(dir.file("target_dir.npy")));

  // A write that fails half-way (the file size limit is hit): the existing file is kept
  // byte for byte and nothing else is left behind.
  Array big = oracle_array({1 << 16}, DType::kFloat64);
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  std::string msg;
  try {
    io::save_npy(path, big);
  } catch (const ValueError& e) {
    msg = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_NE(msg.find("[save_npy] cannot write"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(path), before);

  // Only the files we meant to create exist (no "*.tmp.*" leftovers).
  std::vector<std::string> want = {"keep.npy", "target_dir.npy"};
  EXPECT_EQ(dir.entries(), want);
  EXPECT_EQ(bytes_of(io::load_npy(path)), bytes_of(good));
}

// Files we write are byte-identical to what np.save writes for the same values (header text,
// NumPy's spare room for the first axis, padding, version), over every dtype and shapes whose
// headers land on every side of the 64-byte boundaries. bfloat16 ('<V2') is read by plain NumPy
// as raw 2-byte values holding the bfloat16 bits.
TEST(Npy, SavedFilesAreByteIdenticalToNumPy) {
  TESSERA_REQUIRE_ORACLE();
  TempDir dir;
  std::mt19937_64& r = rng();
  std::vector<Array> ours;
  std::string list;
  auto add = [&](const Array& a) {
    const std::string name = "f" + std::to_string(ours.size());
    io::save_npy(dir.file(name + ".npy"), a);
    EXPECT_EQ(read_bytes(dir.file(name + ".npy")), io::save_npy_bytes(a));
    list += name + (a.dtype() == DType::kBFloat16 ? " bf16\n" : " plain\n");
    ours.push_back(a);
  };
  for (DType d : savable_dtypes()) {
    add(oracle_array({}, d));
    add(oracle_array({0}, d));
    for (int rep = 0; rep < 6; ++rep) add(oracle_array(random_shape(1, 5, 5), d));
  }
  // First axes of 1 to 19 digits (empty arrays, so any length is cheap) and ranks up to 12:
  // the header length sweeps across several multiples of 64.
  for (int digits = 1; digits <= 19; ++digits) {
    int64_t first = 1;
    for (int k = 1; k < digits; ++k) first *= 10;
    first += static_cast<int64_t>(r() % static_cast<uint64_t>(first));
    Shape s{first};
    const int extra = static_cast<int>(r() % 12);
    // NumPy refuses shapes whose nonzero dims multiply past 2^63 bytes, even empty ones.
    double nonzero_bytes = 4.0 * static_cast<double>(first);
    for (int k = 0; k < extra; ++k) {
      int64_t dim = static_cast<int64_t>(r() % 3);
      if (dim == 2 && nonzero_bytes * 2 >= 0x1p62) dim = 1;
      if (dim) nonzero_bytes *= static_cast<double>(dim);
      s.push_back(dim);
    }
    if (s.size() == 1 || std::find(s.begin() + 1, s.end(), 0) == s.end()) s.push_back(0);
    add(oracle_array(s, DType::kFloat32));
  }
  write_bytes(dir.file("list.txt"), list);
  const std::string script = R"PY(
import sys, os
import numpy as np
d = sys.argv[1]
for line in open(os.path.join(d, "list.txt")):
    name, kind = line.split()
    x = np.load(os.path.join(d, name + ".npy"))
    if kind == "bf16":
        # Plain NumPy sees 2-byte voids; their bytes are the bfloat16 bits.
        assert x.dtype.kind == "V" and x.dtype.itemsize == 2, x.dtype
        np.save(os.path.join(d, name + "_bits.npy"), x.view("<u2"))
    else:
        np.save(os.path.join(d, name + "_np.npy"), x)
)PY";
  write_bytes(dir.file("identity.py"), script);
  const std::string cmd = "/usr/bin/python3 " + dir.file("identity.py") + " " + dir.path() + " 2>" +
                          dir.file("stderr.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_bytes(dir.file("stderr.txt"));
  int identical = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    const std::string name = "f" + std::to_string(i);
    if (ours[i].dtype() == DType::kBFloat16) {
      Array bits = io::load_npy(dir.file(name + "_bits.npy"));
      EXPECT_EQ(bits.dtype(), DType::kUInt16);
      EXPECT_EQ(bits.shape(), ours[i].shape());
      EXPECT_EQ(bytes_of(bits), bytes_of(ours[i])) << describe(ours[i]);
      // And our reader turns the file back into bfloat16.
      Array back = io::load_npy(dir.file(name + ".npy"));
      EXPECT_EQ(back.dtype(), DType::kBFloat16);
      EXPECT_EQ(bytes_of(back), bytes_of(ours[i]));
    } else {
      const std::string mine = read_bytes(dir.file(name + ".npy"));
      const std::string theirs = read_bytes(dir.file(name + "_np.npy"));
      EXPECT_EQ(mine, theirs) << describe(ours[i]) << "\nours:  " << mine.substr(0, 200)
                              << "\nnumpy: " << theirs.substr(0, 200);
      identical += mine == theirs;
    }
  }
  std::printf("[npy identity] %d files byte-identical to np.save\n", identical);
}
