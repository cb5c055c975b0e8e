#include "harness.h"

#include <random>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#ifndef TESSERA_BENCH_DIR
#error "TESSERA_BENCH_DIR must name the bench/ source folder"
#endif

namespace tessera::bench {

bool Options::wants(const std::string& name) const {
  return cases.empty() || std::find(cases.begin(), cases.end(), name) != cases.end();
}

Options parse_options(int argc, char** argv, const std::vector<std::string>& known_cases) {
  Options o;
  auto usage = [&](const std::string& why) {
    std::cerr << argv[0] << ": " << why << "\nusage: " << argv[0]
              << " [--reps N] [--warmup N] [--list] [CASE...]\ncases:";
    for (const auto& c : known_cases) std::cerr << " " << c;
    std::cerr << "\n";
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto int_arg = [&](int min) {
      if (i + 1 >= argc) usage(a + " needs a value");
      int v = std::atoi(argv[++i]);
      if (v < min) usage(a + " must be >= " + std::to_string(min));
      return v;
    };
    if (a == "--reps") {
      o.reps = int_arg(7);
    } else if (a == "--warmup") {
      o.warmup = int_arg(1);
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "-h" || a == "--help") {
      usage("runs the suite's cases and prints one JSON object per case and line");
    } else if (!a.empty() && a[0] == '-') {
      usage("unknown option " + a);
    } else if (std::find(known_cases.begin(), known_cases.end(), a) == known_cases.end()) {
      usage("unknown case " + a);
    } else {
      o.cases.push_back(a);
    }
  }
  if (o.list) {
    for (const auto& c : known_cases) std::cout << c << "\n";
    std::exit(0);
  }
  return o;
}

Timing summarize(std::vector<double> s) {
  Timing t;
  t.reps = static_cast<int>(s.size());
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  t.median_ms = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  t.min_ms = s.front();
  t.max_ms = s.back();
  return t;
}

int64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

namespace {

// VmHWM from /proc/self/status, in bytes (0 if unreadable).
int64_t hwm_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace

PeakRss::PeakRss() {
  baseline_ = rss_bytes();
  sampled_peak_ = baseline_;
  std::ofstream f("/proc/self/clear_refs");
  if (f) {
    f << "5";
    f.flush();
    hwm_reset_ = static_cast<bool>(f);
  }
}

void PeakRss::sample() { sampled_peak_ = std::max(sampled_peak_, rss_bytes()); }

double PeakRss::extra_mb() {
  sample();
  int64_t peak = sampled_peak_;
  if (hwm_reset_) peak = std::max(peak, hwm_bytes());
  return std::max<int64_t>(0, peak - baseline_) / double(1 << 20);
}

std::optional<Json> run_python_peer(const std::string& script,
                                    const std::vector<std::string>& args) {
  const char* py = std::getenv("TESSERA_BENCH_PYTHON");
  std::string cmd = "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ";
  cmd += py && *py ? py : "/usr/bin/python3";
  cmd += " '" TESSERA_BENCH_DIR "/peers/" + script + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  std::fflush(stdout);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::cerr << "bench: could not start peer: " << cmd << "\n";
    return std::nullopt;
  }
  std::string out;
  std::array<char, 4096> chunk;
  size_t got;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), p)) > 0) out.append(chunk.data(), got);
  int status = pclose(p);
  std::string last;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') last = line;
  if (status != 0 || last.empty()) {
    std::cerr << "bench: peer failed (status " << status << "): " << cmd << "\n" << out;
    return std::nullopt;
  }
  try {
    return Json::parse(last);
  } catch (const std::exception& e) {
    std::cerr << "bench: peer printed bad JSON (" << e.what() << "): " << last << "\n";
    return std::nullopt;
  }
}

double round_sig(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale =
      std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

void emit(Json r) {
  if (r.contains("tessera_ms") && r.contains("peer_ms") && r["peer_ms"].is_number() &&
      r["tessera_ms"].is_number() && r["tessera_ms"].get<double>() > 0) {
    r["ratio"] = r["peer_ms"].get<double>() / r["tessera_ms"].get<double>();
  }
  // The common fields first, in a fixed order; then the case's own fields as they were set.
  static const char* const kOrder[] = {"bench", "case",   "tessera_ms", "peer",   "peer_ms",
                                       "ratio", "gflops", "gbps",       "peak_mb"};
  Json out;
  for (const char* k : kOrder)
    if (r.contains(k)) out[k] = r[k];
  for (auto it = r.begin(); it != r.end(); ++it)
    if (!out.contains(it.key())) out[it.key()] = it.value();
  for (auto it = out.begin(); it != out.end(); ++it)
    if (it.value().is_number_float()) it.value() = round_sig(it.value().get<double>());
  std::cout << out.dump() << std::endl;
}

void add_numpy_peer(Json& r, const std::string& name, const Options& o, bool show_config) {
  std::vector<std::string> args = {name, "--reps", std::to_string(o.reps), "--warmup",
                                   std::to_string(o.warmup)};
  if (show_config) args.push_back("--show-config");
  if (auto p = run_python_peer("numpy_peer.py", args)) {
    r["peer"] = (*p)["peer"];
    r["peer_ms"] = (*p)["peer_ms"];
    r["peer_peak_mb"] = (*p)["peer_peak_mb"];
  } else {
    r["peer"] = "none";
  }
}

std::vector<float> uniform(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

}  // namespace tessera::bench
