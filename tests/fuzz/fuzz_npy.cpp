// Fuzz target for the .npy reader: arbitrary bytes are loaded as an .npy file, in memory and from a
// file (both readers must agree: same array or same error). A loaded array is printed (printing
// recurses over dims) and round-tripped through save_npy_bytes and save_npy: the reloaded array
// must have the same dtype, shape and bytes, and re-saving must reproduce the same file.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <typeinfo>

#include "fuzz_util.h"
#include "io/npy.h"
#include "tessera/io.h"

namespace {

using tessera::Array;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

// A scratch directory of this process, removed at exit.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    dir =
        std::filesystem::temp_directory_path() / ("tessera_fuzz_npy_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
Scratch& scratch() {
  static Scratch s;
  return s;
}

std::string bytes_of(const Array& a) {
  return a.nbytes() ? std::string(static_cast<const char*>(a.raw_data()), a.nbytes()) : "";
}

void expect_same(const Array& a, const Array& b, const char* how) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || bytes_of(a) != bytes_of(b))
    finding(std::string(how) + " changed the array: " + a.aval().str() + " vs " + b.aval().str());
}

// Outcome of one load: the array, or the error's type and message.
struct Outcome {
  Array array;
  std::string error_type, error;
};
template <class F>
Outcome attempt(F&& load) {
  Outcome o;
  try {
    o.array = load();
  } catch (const tessera::InternalError&) {
    throw;  // a finding: guard() aborts on it
  } catch (const tessera::Error& e) {
    o.error_type = typeid(e).name();
    o.error = e.what();
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tessera::fuzz::guard([&] {
    const std::string path = (scratch().dir / "input.npy").string();
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    // The same name in both, so that the error messages must match exactly.
    Outcome mem = attempt([&] { return tessera::io::load_npy_bytes({data, size}, path); });
    Outcome file = attempt([&] { return tessera::io::load_npy(path); });
    if (mem.error_type != file.error_type || mem.error != file.error)
      finding("load_npy_bytes and load_npy disagree: '" + mem.error + "' vs '" + file.error + "'");
    if (!mem.array.defined()) {
      if (mem.error.rfind("[load_npy] ", 0) != 0) finding("error without [load_npy]: " + mem.error);
      return;
    }
    const Array& a = mem.array;
    expect_same(a, file.array, "load_npy vs load_npy_bytes");
    if (a.nbytes() > size) finding("loaded more bytes than the input holds");
    (void)a.str();
    (void)a.repr();

    // Round trips must succeed: any error from here on is a finding.
    try {
      const std::string saved = tessera::io::save_npy_bytes(a);
      const auto* p = reinterpret_cast<const uint8_t*>(saved.data());
      Array b = tessera::io::load_npy_bytes({p, saved.size()}, "resaved");
      expect_same(a, b, "save_npy_bytes + load_npy_bytes");
      if (tessera::io::save_npy_bytes(b) != saved) finding("re-saving is not idempotent");
      const std::string out = (scratch().dir / "resaved.npy").string();
      tessera::io::save_npy(out, a);
      std::ifstream in(out, std::ios::binary);
      const std::string on_disk{std::istreambuf_iterator<char>(in), {}};
      if (on_disk != saved) finding("save_npy wrote other bytes than save_npy_bytes");
      expect_same(a, tessera::io::load_npy(out), "save_npy + load_npy");
    } catch (const tessera::Error& e) {
      finding(std::string("round trip of a loaded array failed: ") + e.what());
    }
  });
}
