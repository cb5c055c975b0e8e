#include "tessera/shape.h"

#include <ostream>

#include "tessera/errors.h"

namespace tessera {

int64_t shape_size(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  out += ")";
  return out;
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

int normalize_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) {
    throw IndexError(op_message(op, "axis " + std::to_string(axis) +
                                        " is out of bounds for array of dimension " +
                                        std::to_string(ndim) + "; valid axes are " +
                                        std::to_string(-ndim) + ".." + std::to_string(ndim - 1)));
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::string Aval::str() const {
  std::string out(dtype_short_name(dtype));
  out += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape[i]);
  }
  out += ']';
  return out;
}

std::ostream& operator<<(std::ostream& os, const Aval& a) { return os << a.str(); }

}  // namespace tessera
