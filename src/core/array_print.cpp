// Array::repr() (JAX's Array repr) and Array::str() (NumPy's str), following NumPy's default
// print options: precision 8, floatmode 'maxprec', linewidth 75, threshold 1000, edgeitems 3.
// Floats print with the fewest digits that identify the value in its own dtype (NumPy's Dragon4
// "unique" mode), aligned on the decimal point (scientific notation: every element with the
// digits of the longest, the extra ones its exact value's); bfloat16 prints as ml_dtypes does (C++
// ostream of the float value, no alignment), since NumPy treats it as an opaque scalar type.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/array.h"

namespace tessera {
namespace {

constexpr int kLineWidth = 75;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kPrecision = 8;

// ---------------------------------------------------------------- element access

struct Elements {
  DType dtype;
  const unsigned char* base;
  size_t item;
  double real(int64_t i) const { return load_as_double(dtype, base + i * item); }
  int64_t int64(int64_t i) const {
    int64_t v;
    std::memcpy(&v, base + i * item, 8);
    return v;
  }
  uint64_t uint64(int64_t i) const {
    uint64_t v;
    std::memcpy(&v, base + i * item, 8);
    return v;
  }
  std::string integer_str(int64_t i) const {
    if (dtype == DType::kInt64) return std::to_string(int64(i));
    if (dtype == DType::kUInt64) return std::to_string(uint64(i));
    return std::to_string(static_cast<int64_t>(real(i)));
  }
};

// ---------------------------------------------------------------- shortest decimal digits

// v (finite, nonzero) == digits[0].digits[1..] x 10^exp, digits without trailing zeros.
struct Decimal {
  std::string digits;
  int exp = 0;
};

// The value rounded to the dtype (comparisons that NumPy makes in the array's dtype).
double round_to(DType d, double v) {
  switch (d) {
    case DType::kFloat16:
      return half_bits_to_float(double_to_half_bits(v));
    case DType::kBFloat16:
      return bfloat16_bits_to_float(double_to_bfloat16_bits(v));
    case DType::kFloat32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

bool round_trips(DType d, double v, const char* s) {
  switch (d) {
    case DType::kFloat32:
      return std::strtof(s, nullptr) == static_cast<float>(v);
    case DType::kFloat16:
      return double_to_half_bits(std::strtod(s, nullptr)) == double_to_half_bits(v);
    case DType::kBFloat16:
      return double_to_bfloat16_bits(std::strtod(s, nullptr)) == double_to_bfloat16_bits(v);
    default:
      return std::strtod(s, nullptr) == v;
  }
}

// Parses "%.Ne" output of |v|.
Decimal parse_e(const char* buf) {
  Decimal out;
  const char* p = buf;
  for (; *p && *p != 'e'; ++p) {
    if (*p >= '0' && *p <= '9') out.digits += *p;
  }
  out.exp = *p == 'e' ? std::atoi(p + 1) : 0;
  while (out.digits.size() > 1 && out.digits.back() == '0') out.digits.pop_back();
  return out;
}

// |v| with `sig` significant digits, correctly rounded.
Decimal rounded(double v, int sig) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", sig - 1, std::fabs(v));
  return parse_e(buf);
}

// The fewest significant digits of |v| that read back as the same value of dtype d.
Decimal shortest(DType d, double v) {
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, std::fabs(v));
    if (round_trips(d, std::fabs(v), buf)) break;
  }
  return parse_e(buf);
}

struct Parts {
  std::string int_part;  // with the sign
  std::string frac;      // digits after the point (maybe empty)
  int exp = 0;           // scientific only
};

// Positional digits: unique, at most max_frac fractional digits (-1: no limit). With
// exact_integer (NumPy's array formatting), an integer part longer than the unique digits shows
// the value's exact digits (float16 12528 prints 12528., not 12530.), as NumPy's array2string
// does; scalar str pads with zeros.
Parts positional(DType d, double v, int max_frac, bool exact_integer = false) {
  Parts out;
  const std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) {
    out.int_part = sign + "0";
    return out;
  }
  Decimal dec = shortest(d, v);
  const int nd = static_cast<int>(dec.digits.size());
  if (max_frac >= 0 && nd - 1 - dec.exp > max_frac) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", max_frac, std::fabs(v));
    std::string s(buf);
    size_t dot = s.find('.');
    out.int_part = sign + s.substr(0, dot);
    out.frac = dot == std::string::npos ? "" : s.substr(dot + 1);
    while (!out.frac.empty() && out.frac.back() == '0') out.frac.pop_back();
    return out;
  }
  if (dec.exp >= 0) {
    std::string ip = dec.digits.substr(0, std::min(nd, dec.exp + 1));
    if (exact_integer && nd < dec.exp + 1) {
      // Fewer unique digits than the integer part: the value is an integer (its spacing is
      // above 1), printed exactly.
      char buf[400];
      std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
      ip = buf;
    }
    ip.append(static_cast<size_t>(std::max(0, dec.exp + 1 - static_cast<int>(ip.size()))), '0');
    out.int_part = sign + ip;
    if (nd > dec.exp + 1) out.frac = dec.digits.substr(dec.exp + 1);
  } else {
    out.int_part = sign + "0";
    out.frac = std::string(static_cast<size_t>(-dec.exp - 1), '0') + dec.digits;
  }
  return out;
}

// Scientific digits: unique, at most max_frac mantissa digits after the point (-1: no limit).
Parts scientific(DType d, double v, int max_frac) {
  Parts out;
  const std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) {
    out.int_part = sign + "0";
    return out;
  }
  Decimal dec = shortest(d, v);
  if (max_frac >= 0 && static_cast<int>(dec.digits.size()) - 1 > max_frac)
    dec = rounded(v, max_frac + 1);
  out.int_part = sign + dec.digits.substr(0, 1);
  out.frac = dec.digits.substr(1);
  out.exp = dec.exp;
  return out;
}

std::string exp_str(int e, int min_digits) {
  std::string digits = std::to_string(e < 0 ? -e : e);
  if (static_cast<int>(digits.size()) < min_digits)
    digits.insert(0, static_cast<size_t>(min_digits) - digits.size(), '0');
  return std::string(e < 0 ? "-" : "+") + digits;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// ---------------------------------------------------------------- NumPy's FloatingFormat

class FloatFormat {
 public:
  FloatFormat(DType d, const std::vector<double>& data) : dtype_(d) { fill(data); }

  std::string operator()(double x) const {
    if (!std::isfinite(x)) {
      std::string r = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      return pad_left(r, static_cast<size_t>(pad_left_ + pad_right_ + 1));
    }
    if (exp_format_) {
      // NumPy prints every element with the same number of mantissa digits (min_digits =
      // precision): an element whose unique digits are fewer gets the further digits of its
      // exact value, correctly rounded (not zeros).
      Parts p = scientific(dtype_, x, precision_);
      if (x != 0 && static_cast<int>(p.frac.size()) < precision_) {
        Decimal dec = rounded(x, precision_ + 1);
        p.int_part = (std::signbit(x) ? "-" : "") + dec.digits.substr(0, 1);
        p.frac = dec.digits.substr(1);
        p.exp = dec.exp;
      }
      std::string frac = p.frac;
      frac.append(static_cast<size_t>(std::max(0, precision_ - int(frac.size()))), '0');
      return pad_left(p.int_part, pad_left_) + "." + frac + "e" + exp_str(p.exp, exp_size_);
    }
    Parts p = positional(dtype_, x, kPrecision, true);
    std::string s = pad_left(p.int_part, pad_left_) + "." + p.frac;
    s.append(static_cast<size_t>(std::max(0, pad_right_ - int(p.frac.size()))), ' ');
    return s;
  }

 private:
  void fill(const std::vector<double>& data) {
    std::vector<double> finite;
    bool neg_inf = false;
    for (double v : data) {
      if (std::isfinite(v))
        finite.push_back(v);
      else if (std::isinf(v) && v < 0)
        neg_inf = true;
    }
    double max_val = 0, min_val = 0;
    bool any_nonzero = false;
    for (double v : finite) {
      if (v == 0) continue;
      double a = std::fabs(v);
      max_val = any_nonzero ? std::max(max_val, a) : a;
      min_val = any_nonzero ? std::min(min_val, a) : a;
      any_nonzero = true;
    }
    if (any_nonzero) {
      // NumPy divides in the array's dtype and compares against Python floats (doubles).
      exp_format_ =
          max_val >= 1e8 || min_val < 1e-4 || round_to(dtype_, max_val / min_val) > 1000.0;
    }
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_format_) {
      int exp_size = 0, precision = 0, left = 0;
      for (double v : finite) {
        Parts p = scientific(dtype_, v, kPrecision);
        exp_size = std::max(exp_size, static_cast<int>(exp_str(p.exp, 2).size()) - 1);
        precision = std::max(precision, static_cast<int>(p.frac.size()));
        left = std::max(left, static_cast<int>(p.int_part.size()));
      }
      exp_size_ = exp_size;
      precision_ = precision;
      pad_left_ = left;
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      for (double v : finite) {
        Parts p = positional(dtype_, v, kPrecision, true);
        pad_left_ = std::max(pad_left_, static_cast<int>(p.int_part.size()));
        pad_right_ = std::max(pad_right_, static_cast<int>(p.frac.size()));
      }
    }
    if (finite.size() != data.size()) {
      const int offset = pad_right_ + 1;  // +1 for the point
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neg_inf ? 1 : 0) - offset});
    }
  }

  DType dtype_;
  bool exp_format_ = false;
  int pad_left_ = 0, pad_right_ = 0, precision_ = 0, exp_size_ = 2;
};

// ml_dtypes' repr of a bfloat16 scalar: ostream of the float (6 significant digits, %g style).
std::string bfloat16_str(double v) {
  std::ostringstream s;
  float f = static_cast<float>(v);
  s << (std::isnan(f) ? std::fabs(f) : f);
  return s.str();
}

// NumPy's str of a float scalar (a 0-d array's str): unique digits, positional within
// [1e-4, 1e16), else scientific.
std::string float_scalar_str(DType d, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  double a = std::fabs(v);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    Parts p = positional(d, v, -1);
    return p.int_part + "." + (p.frac.empty() ? "0" : p.frac);
  }
  Parts p = scientific(d, v, -1);
  return p.int_part + (p.frac.empty() ? "" : "." + p.frac) + "e" + exp_str(p.exp, 2);
}

// ---------------------------------------------------------------- array2string

using ElementFormat = std::function<std::string(int64_t flat)>;

// Flat indices of the elements NumPy looks at to choose a format: all of them, or, when the
// array is summarized, those within edgeitems of either end on every long axis.
std::vector<int64_t> format_indices(const Shape& shape, bool summarize) {
  std::vector<int64_t> out;
  std::vector<int64_t> strides = row_major_strides(shape);
  std::function<void(size_t, int64_t)> rec = [&](size_t axis, int64_t off) {
    if (axis == shape.size()) {
      out.push_back(off);
      return;
    }
    const int64_t n = shape[axis];
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
      rec(axis + 1, off + i * strides[axis]);
    }
  };
  rec(0, 0);
  return out;
}

ElementFormat make_format(const Array& a, const Elements& el, bool summarize) {
  const DType d = a.dtype();
  const bool rank0 = a.ndim() == 0;
  if (d == DType::kBool) {
    std::string t = rank0 ? "True" : " True";
    return [el, t](int64_t i) { return el.real(i) != 0 ? t : std::string("False"); };
  }
  std::vector<int64_t> idx = format_indices(a.shape(), summarize);
  if (is_integer(d)) {
    size_t width = 0;
    for (int64_t i : idx) width = std::max(width, el.integer_str(i).size());
    return [el, width](int64_t i) { return pad_left(el.integer_str(i), width); };
  }
  if (d == DType::kBFloat16) return [el](int64_t i) { return bfloat16_str(el.real(i)); };
  std::vector<double> data;
  data.reserve(idx.size());
  for (int64_t i : idx) data.push_back(el.real(i));
  auto fmt = std::make_shared<FloatFormat>(d, data);
  return [el, fmt](int64_t i) { return (*fmt)(el.real(i)); };
}

std::string rstrip(const std::string& s) {
  size_t end = s.find_last_not_of(" \t\n");
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

// NumPy's _extendLine: wrap before `word` when the line would pass `width` (unless wrapping
// cannot help).
void extend_line(std::string& s, std::string& line, const std::string& word, size_t width,
                 const std::string& next_line_prefix) {
  bool wrap = line.size() + word.size() > width;
  if (line.size() <= next_line_prefix.size()) wrap = false;
  if (wrap) {
    s += rstrip(line) + "\n";
    line = next_line_prefix;
  }
  line += word;
}

struct Formatter {
  const Shape& shape;
  std::vector<int64_t> strides;
  ElementFormat fmt;
  std::string separator;
  bool summarize;

  // NumPy's _formatArray recurser.
  std::string rec(size_t axis, int64_t off, const std::string& hanging, int width) const {
    const size_t axes_left = shape.size() - axis;
    if (axes_left == 0) return fmt(off);
    const std::string next_hanging = hanging + ' ';
    const int next_width = width - 1;
    const int64_t n = shape[axis];
    const bool show_summary = summarize && 2 * kEdgeItems < n;
    const int64_t leading = show_summary ? kEdgeItems : 0;
    const int64_t trailing = show_summary ? kEdgeItems : n;
    const std::string sep_r = rstrip(separator);
    auto child = [&](int64_t i) {
      return rec(axis + 1, off + i * strides[axis], next_hanging, next_width);
    };
    std::string s;
    if (axes_left == 1) {
      const size_t elem_width =
          static_cast<size_t>(width - static_cast<int>(std::max<size_t>(sep_r.size(), 1)));
      std::string line = hanging;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, child(i), elem_width, hanging);
        line += separator;
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging);
        line += separator;
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, child(n - i), elem_width, hanging);
        line += separator;
      }
      extend_line(s, line, child(n - 1), elem_width, hanging);
      s += line;
    } else {
      const std::string line_sep = sep_r + std::string(axes_left - 1, '\n');
      for (int64_t i = 0; i < leading; ++i) s += hanging + child(i) + line_sep;
      if (show_summary) s += hanging + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i) s += hanging + child(n - i) + line_sep;
      s += hanging + child(n - 1);
    }
    std::string out(1, '[');
    out.append(s, hanging.size(), std::string::npos);
    out += ']';
    return out;
  }
};

// np.array2string for a concrete array of size > 0.
std::string array2string(const Array& a, const std::string& separator, const std::string& prefix,
                         const std::string& suffix) {
  const Elements el{a.dtype(), static_cast<const unsigned char*>(a.raw_data("print")),
                    itemsize(a.dtype())};
  const bool summarize = a.size() > kThreshold;
  Formatter f{a.shape(), row_major_strides(a.shape()), make_format(a, el, summarize), separator,
              summarize};
  const int width = kLineWidth - static_cast<int>(suffix.size());
  const std::string hanging(prefix.size() + 1, ' ');  // past "[" and the prefix
  return f.rec(0, 0, hanging, width);
}

std::string deleted_str(const Array& a) {
  return "Array(<deleted>, shape=" + shape_str(a.shape()) +
         ", dtype=" + std::string(dtype_name(a.dtype())) + ")";
}

// A key array prints as JAX does: its shape, then the uint32 words it overlays.
std::string key_repr(const Array& a) {
  Shape words = a.shape();
  words.push_back(2);
  Array data(Aval{words, DType::kUInt32, false}, a.buffer("print"));
  return "Array(" + shape_str(a.shape()) + ", dtype=" + std::string(dtype_name(a.dtype())) +
         ") overlaying:\n" + data.str();
}

}  // namespace

std::string Array::repr() const {
  if (!defined()) return "Array(<undefined>)";
  if (is_tracer()) return tracer()->str();
  if (is_deleted()) return deleted_str(*this);
  if (dtype() == DType::kKeyThreefry) return key_repr(*this);
  const std::string prefix = "Array(";
  const std::string dtype_s =
      "dtype=" + std::string(dtype_name(dtype())) + (weak_type() ? ", weak_type=True)" : ")");
  std::string s;
  if (size() == 0 || dtype() == DType::kFloat0) {
    s = "[], shape=" + shape_str(shape());
  } else {
    s = array2string(*this, ", ", prefix, ",");
  }
  // JAX's arithmetic, kept as is: a one-line body counts two extra characters.
  size_t nl = s.rfind('\n');
  const int64_t last_line_len = static_cast<int64_t>(s.size()) -
                                (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  std::string sep = " ";
  if (last_line_len + static_cast<int64_t>(dtype_s.size()) + 1 > kLineWidth)
    sep = std::string(prefix.size(), ' ');
  return prefix + s + "," + sep + dtype_s;
}

std::string Array::str() const {
  if (!defined()) return "Array(<undefined>)";
  if (is_tracer()) return tracer()->str();
  if (is_deleted()) return deleted_str(*this);
  if (dtype() == DType::kKeyThreefry) return key_repr(*this);
  if (dtype() == DType::kFloat0) return "[]";
  if (ndim() == 0) {
    const Elements el{dtype(), static_cast<const unsigned char*>(raw_data("print")),
                      itemsize(dtype())};
    if (dtype() == DType::kBool) return el.real(0) != 0 ? "True" : "False";
    if (is_integer(dtype())) return el.integer_str(0);
    if (dtype() == DType::kBFloat16) return bfloat16_str(el.real(0));
    return float_scalar_str(dtype(), el.real(0));
  }
  if (size() == 0) return "[]";
  return array2string(*this, " ", "", "");
}

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << a.repr(); }

}  // namespace tessera
