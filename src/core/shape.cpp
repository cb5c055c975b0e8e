#include "tessera/shape.h"

#include <ostream>

#include "tessera/errors.h"

namespace tessera {
namespace {

[[noreturn]] void overflow(std::string_view op, std::string_view what, int64_t a, int64_t b,
                           char sign) {
  throw ValueError(op_message(op, std::string(what) + " overflows: " + std::to_string(a) + ' ' +
                                      sign + ' ' + std::to_string(b) +
                                      " does not fit in int64; use smaller dimensions"));
}

}  // namespace

int64_t checked_mul(std::string_view op, int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow(op, what, a, b, '*');
  return r;
}

int64_t checked_add(std::string_view op, int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow(op, what, a, b, '+');
  return r;
}

int64_t shape_size(const Shape& s, std::string_view op) {
  int64_t n = 1;
  bool over = false;
  for (int64_t d : s) over |= __builtin_mul_overflow(n, d, &n);
  // A zero dimension makes the true product 0 even when a partial product overflowed.
  if (over) {
    for (int64_t d : s)
      if (d == 0) return 0;
    throw ValueError(op_message(op, "the number of elements of shape " + shape_str(s) +
                                        " overflows int64; use smaller dimensions"));
  }
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  const size_t n = s.size();
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    // A rank far beyond kMaxRank (a bad header or param) is shown abbreviated.
    if (n > 2 * kMaxRank && i == 8) {
      out += "... " + std::to_string(n - 16) + " more ..., ";
      i = n - 8;
    }
    out += std::to_string(s[i]);
  }
  if (n == 1) out += ",";
  out += ")";
  return out;
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  bool over = false;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    over |= __builtin_mul_overflow(acc, s[i], &acc);
  }
  if (over && shape_size(s) != 0) {
    throw ValueError(op_message("shape", "the strides of shape " + shape_str(s) +
                                             " overflow int64; use smaller dimensions"));
  }
  return st;
}

void check_shape(std::string_view op, const Shape& s, size_t itemsize) {
  // One pass for the common valid shape; the slow path below says what is wrong.
  if (static_cast<int64_t>(s.size()) <= kMaxRank) {
    int64_t n = itemsize ? static_cast<int64_t>(itemsize) : 1;
    bool bad = false;
    for (int64_t d : s) {
      bad |= d < 0;
      if (d > 0) bad |= __builtin_mul_overflow(n, d, &n);
    }
    if (!bad && n <= kMaxArrayBytes) return;
  }
  if (static_cast<int64_t>(s.size()) > kMaxRank) {
    throw ValueError(op_message(op, "an array may have at most " + std::to_string(kMaxRank) +
                                        " dimensions (NumPy's limit), got rank " +
                                        std::to_string(s.size()) + ": " + shape_str(s)));
  }
  for (int64_t d : s) {
    if (d < 0) {
      throw ValueError(
          op_message(op, "negative dimensions are not allowed, got shape " + shape_str(s)));
    }
  }
  // As NumPy: zero dimensions are skipped, so that the other dimensions (and the strides made
  // from them) are bounded even for an empty array.
  int64_t n = 1;
  bool over = false;
  for (int64_t d : s)
    if (d != 0) over |= __builtin_mul_overflow(n, d, &n);
  int64_t bytes = 0;
  if (over || __builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes) ||
      bytes > kMaxArrayBytes) {
    throw ValueError(
        op_message(op, "shape " + shape_str(s) + " is too large: " +
                           (over ? std::string("its number of elements overflows int64")
                                 : std::to_string(n) + " elements of " + std::to_string(itemsize) +
                                       " bytes exceed the largest array size of 2^62 bytes") +
                           "; use smaller dimensions"));
  }
}

size_t Aval::nbytes() const {
  // check_aval bounds this by 2^62 for every aval a rule or kernel sees; for any other aval a
  // negative or overflowing count must not wrap around into a small allocation.
  const int64_t n = size();
  int64_t bytes = 0;
  if (n < 0 || __builtin_mul_overflow(n, static_cast<int64_t>(itemsize(dtype)), &bytes))
    check_aval("array", *this);  // throws, naming the shape
  return static_cast<size_t>(bytes);
}

void check_aval(std::string_view op, const Aval& a) { check_shape(op, a.shape, itemsize(a.dtype)); }

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
