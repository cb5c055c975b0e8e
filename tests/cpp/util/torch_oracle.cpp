#include "util/torch_oracle.h"

#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "tessera/io.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera::testing {
namespace fs = std::filesystem;

namespace {
constexpr const char* kPython = "/usr/bin/python3";
std::string torch_script() {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/oracle/torch_oracle.py";
}
std::string read_text(const std::string& path, size_t tail = 4000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > tail ? s.substr(s.size() - tail) : s;
}
}  // namespace

bool torch_available() {
  static const bool ok = [] {
    // find_spec, not import: importing torch takes seconds, and the batch imports it anyway.
    std::string cmd = std::string(kPython) +
                      " -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec(\"torch\") "
                      "and u.find_spec(\"functorch\") and u.find_spec(\"numpy\")))' "
                      ">/dev/null 2>&1";
    return fs::exists(torch_script()) && std::system(cmd.c_str()) == 0;
  }();
  return ok;
}

TorchOracle::TorchOracle(std::string family, std::function<void(TorchOracle&)> init)
    : family_(std::move(family)), init_(std::move(init)) {}
TorchOracle::~TorchOracle() = default;

void TorchOracle::add(const std::string& key, const std::string& op, std::vector<Array> inputs,
                      std::string params) {
  if (cases_.count(key)) throw std::runtime_error("torch oracle: duplicate case key " + key);
  if (ran_) throw std::runtime_error("torch oracle: case " + key + " added after the run");
  order_.push_back(key);
  cases_[key] = Case{op, std::move(params), std::move(inputs), {}, {}};
}

void TorchOracle::ensure_registered() {
  if (registered_) return;
  registered_ = true;
  init_(*this);
}

TorchOracle::Case& TorchOracle::find(const std::string& key) {
  ensure_registered();
  auto it = cases_.find(key);
  if (it == cases_.end()) throw std::runtime_error("torch oracle: no case named " + key);
  return it->second;
}

const std::vector<Array>& TorchOracle::inputs(const std::string& key) { return find(key).inputs; }

const std::vector<Array>& TorchOracle::refs(const std::string& key) {
  Case& c = find(key);
  ensure_run();
  if (!run_error_.empty()) throw std::runtime_error(run_error_);
  if (!c.error.empty())
    throw std::runtime_error("torch oracle case " + key + " (" + c.op + "): " + c.error);
  return c.refs;
}

void TorchOracle::ensure_run() {
  if (ran_) return;
  ran_ = true;
  std::string dir = (fs::temp_directory_path() / "tessera_torch_XXXXXX").string();
  if (!mkdtemp(dir.data())) {
    run_error_ = "[" + family_ + "] cannot create a temp dir: " + std::strerror(errno);
    return;
  }
  try {
    run_in(dir);
  } catch (const std::exception& e) {  // e.g. an input .npy cannot be written
    run_error_ = "[" + family_ + "] the torch oracle run failed: " + e.what();
  }
  std::error_code ec;
  if (std::getenv("TESSERA_ORACLE_KEEP"))
    std::cout << "[torch oracle " << family_ << "] kept " << dir << std::endl;
  else
    fs::remove_all(dir, ec);
}

void TorchOracle::run_in(const std::string& dir) {
  std::string json = "[\n";
  for (size_t id = 0; id < order_.size(); ++id) {
    const Case& c = cases_[order_[id]];
    std::string ins = "[";
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const std::string file = "in" + std::to_string(id) + "_" + std::to_string(k) + ".npy";
      io::save_npy(dir + "/" + file, c.inputs[k]);
      if (k) ins += ',';
      ins += json_str(file);
    }
    ins += "]";
    if (id) json += ",\n";
    json += json_obj({{"id", json_int(static_cast<int64_t>(id))},
                      {"key", json_str(order_[id])},
                      {"op", json_str(c.op)},
                      {"params", c.params},
                      {"inputs", ins}});
  }
  json += "\n]\n";
  std::ofstream(dir + "/cases.json") << json;

  const auto t0 = std::chrono::steady_clock::now();
  const std::string cmd =
      std::string(kPython) + " " + torch_script() + " " + dir + " 2>" + dir + "/stderr.txt";
  const int rc = std::system(cmd.c_str());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    run_error_ = "[" + family_ + "] the torch oracle failed (exit " + std::to_string(rc) + "):\n" +
                 read_text(dir + "/stderr.txt");
  } else {
    // results.tsv: "id <TAB> ok <TAB> n_outputs" or "id <TAB> error <TAB> message".
    std::ifstream in(dir + "/results.tsv");
    std::string line;
    std::vector<bool> seen(order_.size(), false);
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string id_s, status, rest;
      std::getline(ls, id_s, '\t');
      std::getline(ls, status, '\t');
      std::getline(ls, rest);
      const size_t id = std::stoul(id_s);
      if (id >= order_.size()) continue;
      seen[id] = true;
      Case& c = cases_[order_[id]];
      if (status != "ok") {
        c.error = rest.empty() ? "the oracle failed" : rest;
        continue;
      }
      try {
        const int n = std::stoi(rest);
        for (int k = 0; k < n; ++k)
          c.refs.push_back(
              io::load_npy(dir + "/out" + std::to_string(id) + "_" + std::to_string(k) + ".npy"));
      } catch (const std::exception& e) {
        c.refs.clear();
        c.error = std::string("reading the oracle's output failed: ") + e.what();
      }
    }
    for (size_t id = 0; id < order_.size(); ++id)
      if (!seen[id]) cases_[order_[id]].error = "the oracle produced no result";
  }
  std::cout << "[torch oracle " << family_ << "] " << order_.size() << " cases; python " << secs
            << " s" << std::endl;
}

::testing::AssertionResult all_close(const std::string& what, const Array& got, const Array& want,
                                     double rtol, double atol) {
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure()
           << what << ": shape " << shape_str(got.shape()) << " (" << dtype_name(got.dtype())
           << "), reference " << shape_str(want.shape());
  }
  const std::vector<double> g = to_doubles(got), w = to_doubles(want);
  double max_abs = 0, max_rel = 0, worst_excess = 0;
  int64_t first = -1, worst = -1, bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    const double err = std::isnan(g[i]) || std::isnan(w[i]) ? INFINITY : std::fabs(g[i] - w[i]);
    max_abs = std::max(max_abs, err);
    if (w[i] != 0) max_rel = std::max(max_rel, err / std::fabs(w[i]));
    const double excess = err - (atol + rtol * std::fabs(w[i]));
    if (excess > 0 || std::isnan(excess)) {
      ++bad;
      if (first < 0) first = static_cast<int64_t>(i);
      if (worst < 0 || excess > worst_excess) {
        worst = static_cast<int64_t>(i);
        worst_excess = excess;
      }
    }
  }
  std::printf("  [all_close] %-44s %-10s max abs err %.3g, max rel err %.3g\n", what.c_str(),
              shape_str(got.shape()).c_str(), max_abs, max_rel);
  if (bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(17);
  os << what << " (" << dtype_name(got.dtype()) << shape_str(got.shape()) << "): " << bad << " of "
     << g.size() << " elements differ beyond rtol " << rtol << ", atol " << atol
     << "; first at flat index " << first << ": got " << g[first] << ", want " << w[first]
     << "; worst at " << worst << ": got " << g[worst] << ", want " << w[worst] << "; max abs err "
     << max_abs << "; TESSERA_TEST_SEED=" << test_seed();
  return ::testing::AssertionFailure() << os.str();
}

}  // namespace tessera::testing
