#include "util/oracle.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "tessera/io.h"
#include "util/test_util.h"

namespace tessera::testing {
namespace fs = std::filesystem;

namespace {
constexpr const char* kPython = "/usr/bin/python3";
std::string oracle_script() {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/oracle/numpy_oracle.py";
}
}  // namespace

bool oracle_available() {
  static const bool ok = [] {
    std::string cmd = std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1";
    return fs::exists(oracle_script()) && std::system(cmd.c_str()) == 0;
  }();
  return ok;
}

X64Scope::X64Scope(bool on) : prev_(x64_enabled()) { set_x64_enabled(on); }
X64Scope::~X64Scope() { set_x64_enabled(prev_); }

// ---------------------------------------------------------------- JSON

std::string json_str(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, r.ptr);
  // Keep floats recognizable as floats for Python (1 -> 1.0 is not needed: json gives int).
  return s;
}
std::string json_int(int64_t v) { return std::to_string(v); }
std::string json_bool(bool b) { return b ? "true" : "false"; }
std::string json_ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out + "]";
}
std::string json_nums(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += json_num(v[i]);
  }
  return out + "]";
}
std::string json_obj(std::initializer_list<std::pair<std::string_view, std::string>> kv) {
  std::string out = "{";
  bool first = true;
  for (auto& [k, v] : kv) {
    if (!first) out += ',';
    out += json_str(k);
    out += ':';
    out += v;
    first = false;
  }
  return out + "}";
}

// ---------------------------------------------------------------- dtypes and shapes

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {
      DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,  DType::kInt64,
      DType::kUInt8,    DType::kUInt16,  DType::kUInt32, DType::kUInt64, DType::kFloat16,
      DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  return v;
}
const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> v = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                       DType::kFloat64};
  return v;
}
const std::vector<DType>& int_dtypes() {
  static const std::vector<DType> v = {DType::kInt8,   DType::kInt16, DType::kInt32,
                                       DType::kInt64,  DType::kUInt8, DType::kUInt16,
                                       DType::kUInt32, DType::kUInt64};
  return v;
}
bool is_64bit(DType d) { return d == DType::kInt64 || d == DType::kUInt64 || d == DType::kFloat64; }

Shape random_shape(int min_rank, int max_rank, int64_t max_dim, double p_zero, double p_one) {
  std::uniform_int_distribution<int> rank_d(min_rank, max_rank);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int64_t> dim_d(2, std::max<int64_t>(2, max_dim));
  Shape s(static_cast<size_t>(rank_d(rng())));
  for (auto& d : s) {
    double r = u(rng());
    d = r < p_zero ? 0 : r < p_zero + p_one ? 1 : dim_d(rng());
  }
  return s;
}

Shape lax_partner_shape(const Shape& s) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng()) < 0.15) return {};
  Shape t = s;
  for (auto& d : t)
    if (u(rng()) < 0.3) d = 1;
  return t;
}

Shape numpy_partner_shape(const Shape& s) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<size_t> drop(0, s.size());
  double r = u(rng());
  Shape t;
  if (r < 0.1) return {};
  if (r < 0.45) {
    t.assign(s.begin() + static_cast<long>(drop(rng())), s.end());  // a suffix: lower rank
  } else if (r < 0.6 && s.size() < 4) {
    t = s;
    t.insert(t.begin(), u(rng()) < 0.5 ? 1 : 2);  // higher rank
  } else {
    t = s;
  }
  for (auto& d : t)
    if (u(rng()) < 0.25) d = 1;
  return t;
}

// ---------------------------------------------------------------- values

namespace {

template <class T>
void fill_ints(T* p, int64_t n, const ValueOpts& o) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int64_t lo =
      std::max<int64_t>(o.int_lo, std::is_signed_v<T> ? int64_t(std::numeric_limits<T>::min()) : 0);
  const int64_t hi = std::min<int64_t>(o.int_hi, std::numeric_limits<T>::max() > uint64_t(INT64_MAX)
                                                     ? INT64_MAX
                                                     : int64_t(std::numeric_limits<T>::max()));
  std::uniform_int_distribution<int64_t> small(lo, std::max(lo, hi));
  const T specials[] = {std::numeric_limits<T>::min(),
                        std::numeric_limits<T>::max(),
                        T(0),
                        T(-1),  // all ones for unsigned
                        T(1),
                        T(std::numeric_limits<T>::min() + 1),
                        T(std::numeric_limits<T>::max() - 1)};
  std::uniform_int_distribution<size_t> sp(0, std::size(specials) - 1);
  for (int64_t i = 0; i < n; ++i) {
    double r = u(rng());
    if (!o.int_full_range || r < 0.55) {
      p[i] = static_cast<T>(small(rng()));
    } else if (r < 0.8) {
      p[i] = static_cast<T>(rng()());  // uniform over the whole range
    } else {
      p[i] = specials[sp(rng())];
    }
  }
}

std::vector<double> float_specials(DType d, const ValueOpts& o) {
  std::vector<double> s = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.0};
  if (o.nan_inf) {
    s.push_back(std::numeric_limits<double>::quiet_NaN());
    s.push_back(std::numeric_limits<double>::infinity());
    s.push_back(-std::numeric_limits<double>::infinity());
  }
  if (o.extremes) {
    const double mx = finfo(d).max;
    s.push_back(mx);
    s.push_back(-mx);
    s.push_back(1e4);
    s.push_back(-3e4);
    s.push_back(finfo(d).tiny);
  }
  return s;
}

}  // namespace

Array oracle_array(const Shape& shape, DType dtype, const ValueOpts& o) {
  const int64_t n = shape_size(shape);
  Array out = empty_array(Aval{shape, dtype, false}, "oracle_array");
  char* p = n ? static_cast<char*>(out.buffer()->data()) : nullptr;
  if (n == 0) return out;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  switch (dtype) {
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) p[i] = u(rng()) < 0.5;
      return out;
    case DType::kInt8:
      fill_ints(reinterpret_cast<int8_t*>(p), n, o);
      return out;
    case DType::kInt16:
      fill_ints(reinterpret_cast<int16_t*>(p), n, o);
      return out;
    case DType::kInt32:
      fill_ints(reinterpret_cast<int32_t*>(p), n, o);
      return out;
    case DType::kInt64:
      fill_ints(reinterpret_cast<int64_t*>(p), n, o);
      return out;
    case DType::kUInt8:
      fill_ints(reinterpret_cast<uint8_t*>(p), n, o);
      return out;
    case DType::kUInt16:
      fill_ints(reinterpret_cast<uint16_t*>(p), n, o);
      return out;
    case DType::kUInt32:
      fill_ints(reinterpret_cast<uint32_t*>(p), n, o);
      return out;
    case DType::kUInt64:
      fill_ints(reinterpret_cast<uint64_t*>(p), n, o);
      return out;
    default:
      break;
  }
  const auto specials = float_specials(dtype, o);
  std::uniform_int_distribution<size_t> sp(0, specials.size() - 1);
  std::uniform_real_distribution<double> bulk(o.lo, o.hi);
  const size_t item = itemsize(dtype);
  for (int64_t i = 0; i < n; ++i) {
    double v = u(rng()) < o.special_rate ? specials[sp(rng())] : bulk(rng());
    store_from_double(dtype, p + i * item, v);
  }
  return out;
}

Array host_array(const std::vector<double>& values, const Shape& shape, DType dtype) {
  if (static_cast<int64_t>(values.size()) != shape_size(shape)) {
    throw std::invalid_argument("host_array: " + std::to_string(values.size()) +
                                " values for shape " + shape_str(shape));
  }
  Array out = empty_array(Aval{shape, dtype, false}, "host_array");
  char* p = values.empty() ? nullptr : static_cast<char*>(out.buffer()->data());
  for (size_t i = 0; i < values.size(); ++i)
    store_from_double(dtype, p + i * itemsize(dtype), values[i]);
  return out;
}

Array misaligned_copy(const Array& a) {
  const size_t n = a.nbytes();
  void* base = std::aligned_alloc(64, ((n + 16 + 63) / 64) * 64);
  if (!base) throw std::bad_alloc();
  std::shared_ptr<void> owner(base, [](void* p) { std::free(p); });
  char* data = static_cast<char*>(base) + 16;
  if (n) std::memcpy(data, a.raw_data(), n);
  auto buf = Buffer::external(default_device(), data, n, owner);
  return Array(a.aval(), buf);
}

std::string describe(const Array& a) {
  if (!a.defined()) return "<undefined>";
  return a.aval().str() + (a.weak_type() ? "{weak}" : "");
}

// ---------------------------------------------------------------- the batch

OracleBatch::OracleBatch(std::string family, double time_box_s, int max_random)
    : family_(std::move(family)), max_random_(max_random) {
  if (const char* env = std::getenv("TESSERA_ORACLE_SECONDS")) time_box_s = std::atof(env);
  if (const char* env = std::getenv("TESSERA_ORACLE_RANDOM_CASES")) max_random_ = std::atoi(env);
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::microseconds(static_cast<int64_t>(time_box_s * 1e6));
  keep_dir_ = std::getenv("TESSERA_ORACLE_KEEP") != nullptr;
  (void)test_seed();  // prints the seed once
}

OracleBatch::~OracleBatch() {
  if (!dir_.empty() && !keep_dir_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

bool OracleBatch::time_left() {
  if (random_base_ < 0) random_base_ = static_cast<int64_t>(cases_.size());
  return static_cast<int64_t>(cases_.size()) - random_base_ < max_random_ &&
         std::chrono::steady_clock::now() < deadline_;
}

void OracleBatch::add(std::string name, std::string op, std::string params,
                      std::vector<Array> inputs, const std::function<Array()>& fn) {
  Case c;
  c.name = std::move(name);
  c.op = std::move(op);
  c.params = params.empty() ? "{}" : std::move(params);
  c.inputs = std::move(inputs);
  c.x64 = x64_enabled();
  try {
    c.result = fn();
    if (!c.result.defined()) {
      c.error_kind = "undefined";
      c.error = "Tessera returned an empty Array handle";
    }
  } catch (const InternalError& e) {
    c.error_kind = "InternalError";
    c.error = e.what();
  } catch (const IndexError& e) {
    c.error_kind = "IndexError";
    c.error = e.what();
  } catch (const TypeError& e) {
    c.error_kind = "TypeError";
    c.error = e.what();
  } catch (const ValueError& e) {
    c.error_kind = "ValueError";
    c.error = e.what();
  } catch (const Error& e) {
    c.error_kind = "Error";
    c.error = e.what();
  } catch (const std::exception& e) {
    c.error_kind = "std::exception";
    c.error = e.what();
  }
  cases_.push_back(std::move(c));
}

namespace {

// bfloat16 inputs go to NumPy as float32 (exact); everything else as is.
Array to_savable(const Array& a) {
  if (a.dtype() != DType::kBFloat16) return a;
  Array f = empty_array(Aval{a.shape(), DType::kFloat32, false}, "oracle");
  if (a.size() == 0) return f;
  const auto* src = static_cast<const uint16_t*>(a.raw_data());
  auto* dst = static_cast<float*>(f.buffer()->data());
  for (int64_t i = 0; i < a.size(); ++i) dst[i] = bfloat16_bits_to_float(src[i]);
  return f;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string index_str(int64_t flat, const Shape& shape) {
  if (shape.empty()) return "()";
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  std::string s = "(";
  for (size_t k = 0; k < idx.size(); ++k) {
    if (k) s += ',';
    s += std::to_string(idx[k]);
  }
  return s + (idx.size() == 1 ? ",)" : ")");
}

// One element as text: integers exactly, floats shortest round-trip in their precision.
std::string elem_str(DType d, const void* base, int64_t i) {
  const char* p = static_cast<const char*>(base) + i * itemsize(d);
  char buf[64];
  if (d == DType::kInt64) return std::to_string(*reinterpret_cast<const int64_t*>(p));
  if (d == DType::kUInt64) return std::to_string(*reinterpret_cast<const uint64_t*>(p));
  double v = load_as_double(d, p);
  if (d == DType::kBool) return v != 0 ? "True" : "False";
  if (is_integer(d)) return std::to_string(static_cast<int64_t>(v));
  std::to_chars_result r;
  if (d == DType::kFloat64)
    r = std::to_chars(buf, buf + sizeof(buf), v);
  else
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v));
  return std::string(buf, r.ptr);
}

// The flat index of input `in` (broadcast NumPy-style to out_shape) at output index flat,
// or -1 when in_shape does not broadcast to out_shape.
int64_t broadcast_source(int64_t flat, const Shape& out_shape, const Shape& in_shape) {
  if (in_shape.size() > out_shape.size()) return -1;
  const size_t off = out_shape.size() - in_shape.size();
  std::vector<int64_t> idx(out_shape.size());
  for (size_t k = out_shape.size(); k-- > 0;) {
    idx[k] = out_shape[k] ? flat % out_shape[k] : 0;
    flat = out_shape[k] ? flat / out_shape[k] : 0;
  }
  int64_t src = 0;
  for (size_t k = 0; k < in_shape.size(); ++k) {
    int64_t od = out_shape[off + k], id = in_shape[k];
    if (id != od && id != 1) return -1;
    src = src * id + (id == 1 ? 0 : idx[off + k]);
  }
  return src;
}

bool kind_matches(const std::string& want, const std::string& got) {
  if (got == "InternalError" || got == "std::exception" || got == "undefined") return false;
  if (want == "Error") return true;
  if (want == got) return true;
  if (want == "ValueError" && got == "IndexError") return true;  // IndexError is a ValueError
  if (want == "IndexError" && got == "ValueError") return true;  // JAX's AxisError is both
  return false;
}

}  // namespace

std::string OracleBatch::check_case(const Case& c, int id,
                                    const std::vector<std::string>& f) const {
  const std::string status = f.size() > 1 ? f[1] : "";
  if (status == "skip") return "";
  if (status == "oracle_bug") return "the oracle script failed: " + (f.size() > 2 ? f[2] : "");
  if (status == "error") {
    const std::string kind = f.size() > 2 ? f[2] : "Error";
    const std::string why = f.size() > 3 ? f[3] : "";
    if (c.error_kind.empty()) {
      return "JAX raises " + kind + " (" + why + ") but Tessera returned " + describe(c.result);
    }
    if (!kind_matches(kind, c.error_kind)) {
      return "JAX raises " + kind + " (" + why + ") but Tessera raised " + c.error_kind + ": " +
             c.error;
    }
    return "";
  }
  if (status != "ok" || f.size() < 7) return "malformed oracle result line";
  const std::string want_dtype = f[2], want_weak = f[3];
  const double rtol = std::stod(f[4]), atol = std::stod(f[5]);
  const bool has_atol = f[6] == "1";
  if (!c.error_kind.empty()) {
    return "Tessera raised " + c.error_kind + ": " + c.error + " (JAX gives " + want_dtype + ")";
  }
  const Array& got = c.result;
  if (!got.is_concrete()) return "Tessera's result is not concrete";
  if (std::string(dtype_name(got.dtype())) != want_dtype) {
    return "dtype: Tessera gives " + describe(got) + ", JAX gives " + want_dtype;
  }
  if (want_weak != "-" && (want_weak == "1") != got.weak_type()) {
    return "weak type: Tessera gives " + describe(got) + ", JAX's result is " +
           (want_weak == "1" ? "weakly" : "strongly") + " typed";
  }
  const Array want = io::load_npy(dir_ + "/out" + std::to_string(id) + ".npy");
  if (got.shape() != want.shape()) {
    return "shape: Tessera gives " + describe(got) + ", JAX gives " + shape_str(want.shape());
  }
  Array tol;
  if (has_atol) tol = io::load_npy(dir_ + "/atol" + std::to_string(id) + ".npy");
  const int64_t n = got.size();
  if (n == 0) return "";
  const DType d = got.dtype();
  const char* gp = static_cast<const char*>(got.raw_data());
  const char* wp = static_cast<const char*>(want.raw_data());
  const double* tp = has_atol ? tol.data<double>() : nullptr;
  const size_t gi = itemsize(d), wi = itemsize(want.dtype());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (d == DType::kBool) {
      ok = (gp[i] != 0) == (wp[i] != 0);
    } else if (is_integer(d)) {
      ok = std::memcmp(gp + i * gi, wp + i * wi, gi) == 0;
    } else {
      const double g = load_as_double(d, gp + i * gi);
      const double w = load_as_double(want.dtype(), wp + i * wi);
      if (std::isnan(w))
        ok = std::isnan(g);
      else if (std::isinf(w))
        ok = g == w;
      else
        ok = std::fabs(g - w) <= std::max(atol, tp ? tp[i] : 0.0) + rtol * std::fabs(w);
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return "";
  std::ostringstream os;
  os << "value at index " << index_str(first, got.shape()) << " of " << describe(got) << ": got "
     << elem_str(d, gp, first) << ", want " << elem_str(want.dtype(), wp, first);
  if (is_floating(d)) {
    os << " (rtol " << rtol << ", atol " << std::max(atol, tp ? tp[first] : 0.0) << ")";
  }
  os << "; " << bad << " of " << n << " elements differ";
  std::string at;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Array& in = c.inputs[k];
    int64_t src = broadcast_source(first, got.shape(), in.shape());
    if (src >= 0 && in.size() > 0) {
      if (!at.empty()) at += ", ";
      at += "in" + std::to_string(k) + "=" + elem_str(in.dtype(), in.raw_data(), src);
    }
  }
  if (!at.empty()) os << "; inputs there: " << at;
  return os.str();
}

OracleBatch::Summary OracleBatch::run(int max_reports) {
  Summary s;
  s.cases = static_cast<int>(cases_.size());
  if (cases_.empty()) return s;
  std::string tmpl = (fs::temp_directory_path() / "tessera_oracle_XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    ADD_FAILURE() << "[" << family_ << "] cannot create a temp dir: " << std::strerror(errno);
    return s;
  }
  dir_ = tmpl;

  std::string json = "[\n";
  for (size_t id = 0; id < cases_.size(); ++id) {
    const Case& c = cases_[id];
    std::string ins = "[";
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const Array& a = c.inputs[k];
      const std::string file = "in" + std::to_string(id) + "_" + std::to_string(k) + ".npy";
      io::save_npy(dir_ + "/" + file, to_savable(a));
      if (k) ins += ',';
      ins += json_obj({{"file", json_str(file)},
                       {"dtype", json_str(dtype_name(a.dtype()))},
                       {"weak", json_bool(a.weak_type())}});
    }
    ins += "]";
    if (id) json += ",\n";
    json += json_obj({{"id", json_int(static_cast<int64_t>(id))},
                      {"name", json_str(c.name)},
                      {"op", json_str(c.op)},
                      {"params", c.params},
                      {"x64", json_bool(c.x64)},
                      {"inputs", ins}});
  }
  json += "\n]\n";
  {
    std::ofstream out(dir_ + "/cases.json");
    out << json;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string cmd =
      std::string(kPython) + " " + oracle_script() + " " + dir_ + " 2>" + dir_ + "/stderr.txt";
  const int rc = std::system(cmd.c_str());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    std::ifstream err(dir_ + "/stderr.txt");
    std::stringstream ss;
    ss << err.rdbuf();
    std::string tail = ss.str();
    if (tail.size() > 3000) tail = tail.substr(tail.size() - 3000);
    ADD_FAILURE() << "[" << family_ << "] the NumPy oracle failed (exit " << rc << "):\n" << tail;
    return s;
  }
  std::map<int, std::vector<std::string>> results;
  {
    std::ifstream in(dir_ + "/results.tsv");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto f = split(line, '\t');
      results[std::stoi(f[0])] = f;
    }
  }
  int reported = 0;
  for (size_t id = 0; id < cases_.size(); ++id) {
    const Case& c = cases_[id];
    s.ops.insert(c.op);
    for (auto& a : c.inputs) s.dtypes.insert(std::string(dtype_short_name(a.dtype())));
    auto it = results.find(static_cast<int>(id));
    std::string problem;
    if (it == results.end()) {
      problem = "the oracle produced no result";
    } else {
      const std::string& status = it->second.size() > 1 ? it->second[1] : "";
      try {
        problem = check_case(c, static_cast<int>(id), it->second);
      } catch (const std::exception& e) {
        problem = std::string("reading the oracle's output failed: ") + e.what();
      }
      if (problem.empty()) {
        if (status == "skip")
          ++s.skipped;
        else if (status == "error")
          ++s.expected_errors;
        else
          ++s.compared;
      }
    }
    if (problem.empty()) continue;
    ++s.mismatches;
    if (reported++ < max_reports) {
      std::string ins;
      for (auto& a : c.inputs) {
        if (!ins.empty()) ins += ", ";
        ins += describe(a);
      }
      ADD_FAILURE() << "[" << family_ << "] case " << id << " '" << c.name << "' (" << c.op << " "
                    << c.params << "; inputs " << (ins.empty() ? "none" : ins)
                    << (c.x64 ? "; x64" : "") << "; TESSERA_TEST_SEED=" << test_seed()
                    << "): " << problem;
    }
  }
  if (reported > max_reports) {
    ADD_FAILURE() << "[" << family_ << "] ... and " << (reported - max_reports)
                  << " more mismatches";
  }
  std::cout << "[oracle " << family_ << "] " << s.cases << " cases, " << s.ops.size()
            << " ops, input dtypes {";
  bool first = true;
  for (auto& d : s.dtypes) {
    std::cout << (first ? "" : " ") << d;
    first = false;
  }
  std::cout << "}: " << s.compared << " compared equal, " << s.expected_errors
            << " expected errors raised, " << s.skipped << " skipped, " << s.mismatches
            << " mismatches; python " << secs << " s" << (keep_dir_ ? "; kept " + dir_ : "")
            << std::endl;
  return s;
}

}  // namespace tessera::testing
