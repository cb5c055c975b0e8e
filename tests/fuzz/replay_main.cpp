// Runs a fuzz target without libFuzzer (the gcc Release and ASan builds, under ctest): every
// file of the given corpus directories, then, for a time box, random inputs made by mutating
// corpus entries (bit flips, byte edits, inserts, deletes, splices). The seed is printed; rerun
// with --seed to reproduce. The libFuzzer build (scripts/fuzz) links the same target files
// against libFuzzer's own main instead.
//   replay_<target> DIR... [--seconds S] [--seed N] [--max-len L]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void mutate(std::vector<uint8_t>& d, const std::vector<std::vector<uint8_t>>& corpus,
            std::mt19937_64& rng, size_t max_len) {
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < n; ++k) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!d.empty()) d[rng() % d.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // set a byte to an interesting value
        if (!d.empty()) {
          static const uint8_t kVals[] = {0,   1,   0x7f, 0x80, 0xff, '0', '9', '(',  ')', '{',
                                          '}', '[', ']',  ',',  ':',  '-', ' ', '\n', '\''};
          d[rng() % d.size()] = kVals[rng() % sizeof kVals];
        }
        break;
      case 2:  // insert random bytes
        if (d.size() < max_len) {
          const size_t at = d.empty() ? 0 : rng() % (d.size() + 1);
          const size_t len = 1 + rng() % 8;
          for (size_t i = 0; i < len; ++i) d.insert(d.begin() + at, static_cast<uint8_t>(rng()));
        }
        break;
      case 3:  // delete a range
        if (!d.empty()) {
          const size_t at = rng() % d.size();
          const size_t len = 1 + rng() % std::min<size_t>(16, d.size() - at);
          d.erase(d.begin() + at, d.begin() + at + len);
        }
        break;
      case 4:  // duplicate a range (deepens nesting in text formats)
        if (!d.empty() && d.size() < max_len) {
          const size_t at = rng() % d.size();
          const size_t len = 1 + rng() % std::min<size_t>(64, d.size() - at);
          std::vector<uint8_t> chunk(d.begin() + at, d.begin() + at + len);
          d.insert(d.begin() + at, chunk.begin(), chunk.end());
        }
        break;
      case 5:  // splice in part of another corpus entry
        if (!corpus.empty()) {
          const auto& o = corpus[rng() % corpus.size()];
          if (!o.empty()) {
            const size_t from = rng() % o.size();
            const size_t len = 1 + rng() % (o.size() - from);
            const size_t at = d.empty() ? 0 : rng() % (d.size() + 1);
            d.insert(d.begin() + at, o.begin() + from, o.begin() + from + len);
          }
        }
        break;
      default:  // overwrite with a random digit run (sizes, dims, counts)
        if (!d.empty()) {
          const size_t at = rng() % d.size();
          const size_t len = 1 + rng() % 20;
          for (size_t i = 0; i < len && at + i < d.size(); ++i)
            d[at + i] = static_cast<uint8_t>('0' + rng() % 10);
        }
        break;
    }
  }
  if (d.size() > max_len) d.resize(max_len);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  uint64_t seed = std::random_device{}();
  size_t max_len = 4096;
  std::vector<std::filesystem::path> dirs;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--max-len") && i + 1 < argc) {
      max_len = std::strtoull(argv[++i], nullptr, 10);
    } else {
      dirs.emplace_back(argv[i]);
    }
  }
  std::vector<std::vector<uint8_t>> corpus;
  for (const auto& dir : dirs) {
    if (std::filesystem::is_regular_file(dir)) {
      corpus.push_back(read_file(dir));
      continue;
    }
    if (!std::filesystem::is_directory(dir)) {
      std::fprintf(stderr, "replay: %s is not a file or directory\n", dir.c_str());
      return 2;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::vector<uint8_t> d = read_file(f);
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), d.size());
      LLVMFuzzerTestOneInput(d.data(), d.size());
      corpus.push_back(std::move(d));
    }
  }
  std::printf("replay: %zu corpus inputs passed\n", corpus.size());
  if (seconds > 0) {
    std::printf("replay: random mutations for %.0f s, seed %llu (rerun with --seed %llu)\n",
                seconds, static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed));
    std::fflush(stdout);
    std::mt19937_64 rng(seed);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    int64_t runs = 0;
    while (std::chrono::steady_clock::now() < end) {
      std::vector<uint8_t> d;
      if (!corpus.empty() && rng() % 8 != 0)
        d = corpus[rng() % corpus.size()];
      else {
        d.resize(rng() % 64);
        for (auto& b : d) b = static_cast<uint8_t>(rng());
      }
      mutate(d, corpus, rng, max_len);
      LLVMFuzzerTestOneInput(d.data(), d.size());
      ++runs;
    }
    std::printf("replay: %lld random inputs passed\n", static_cast<long long>(runs));
  }
  return 0;
}
