// Fuzz target for the .npz reader: arbitrary bytes are loaded as an .npz archive (the zip
// directory parser, the bounded inflater with its CRC check, and the .npy parser of every member).
// A loaded archive is round-tripped through save_npz_bytes (stored or deflated, chosen by the
// input): the reloaded arrays must have the same keys, dtypes, shapes and bytes, and each member of
// the new archive must be exactly save_npy_bytes of its array.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "io/zip.h"
#include "tessera/io.h"

namespace {

using tessera::Array;
using tessera::io::NamedArrays;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

std::string bytes_of(const Array& a) {
  return a.nbytes() ? std::string(static_cast<const char*>(a.raw_data()), a.nbytes()) : "";
}

void expect_same(const NamedArrays& a, const NamedArrays& b, const char* how) {
  if (a.size() != b.size()) finding(std::string(how) + " changed the number of arrays");
  for (size_t i = 0; i < a.size(); ++i) {
    const Array &x = a[i].second, &y = b[i].second;
    if (a[i].first != b[i].first || x.dtype() != y.dtype() || x.shape() != y.shape() ||
        bytes_of(x) != bytes_of(y))
      finding(std::string(how) + " changed member " + std::to_string(i) + ": " + x.aval().str() +
              " vs " + y.aval().str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tessera::fuzz::guard([&] {
    NamedArrays arrays;
    try {
      arrays = tessera::io::load_npz_bytes({data, size}, "input.npz");
    } catch (const tessera::InternalError&) {
      throw;  // a finding: guard() aborts on it
    } catch (const tessera::Error& e) {
      const std::string msg = e.what();
      if (msg.rfind("[load_npz] 'input.npz'", 0) != 0)
        finding("an error that does not name load_npz and the file: " + msg);
      return;
    }
    uint64_t total = 0;
    for (const auto& [key, a] : arrays) total += a.nbytes();
    // Deflate cannot expand more than 1032:1, so the data loaded is bounded by the input.
    if (total > uint64_t{1032} * size + 4096) finding("loaded more than deflate could inflate");

    // Round trips must succeed (keys too long for a zip name aside): errors are findings.
    const bool compressed = size > 0 && (data[size - 1] & 1);
    std::string saved;
    try {
      saved = tessera::io::save_npz_bytes(arrays, compressed);
    } catch (const tessera::ValueError& e) {
      if (std::string(e.what()).find("zip names hold at most 65535") != std::string::npos) return;
      finding(std::string("save_npz_bytes of a loaded archive failed: ") + e.what());
    }
    try {
      const auto* p = reinterpret_cast<const uint8_t*>(saved.data());
      const NamedArrays back = tessera::io::load_npz_bytes({p, saved.size()}, "resaved");
      expect_same(arrays, back, "save_npz_bytes + load_npz_bytes");
      const auto entries = tessera::io::zip::read_directory({p, saved.size()}, "fuzz", "resaved");
      for (size_t i = 0; i < entries.size(); ++i) {
        tessera::io::zip::MemberReader r({p, saved.size()}, entries[i], "fuzz", "resaved");
        std::string member(entries[i].usize, '\0');
        r.read(member.data(), member.size());
        r.finish();
        if (entries[i].name != arrays[i].first + ".npy" ||
            member != tessera::io::save_npy_bytes(arrays[i].second))
          finding("member " + std::to_string(i) + " of the re-saved archive is not save_npy_bytes");
      }
    } catch (const tessera::Error& e) {
      finding(std::string("round trip of a loaded archive failed: ") + e.what());
    }
  });
}
