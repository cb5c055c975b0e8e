// tessera::lax elementwise functions: each binds its primitive (rules in src/prims/).
#include "prims/prims.h"
#include "tessera/lax.h"

namespace tessera::lax {

Array add(const Array& x, const Array& y) { return bind1(prims::add, {x, y}); }
Array sub(const Array& x, const Array& y) { return bind1(prims::sub, {x, y}); }
Array mul(const Array& x, const Array& y) { return bind1(prims::mul, {x, y}); }
Array div(const Array& x, const Array& y) { return bind1(prims::div, {x, y}); }
Array max(const Array& x, const Array& y) { return bind1(prims::max, {x, y}); }
Array min(const Array& x, const Array& y) { return bind1(prims::min, {x, y}); }
Array pow(const Array& x, const Array& y) { return bind1(prims::pow, {x, y}); }

Array neg(const Array& x) { return bind1(prims::neg, {x}); }
Array exp(const Array& x) { return bind1(prims::exp, {x}); }
Array log(const Array& x) { return bind1(prims::log, {x}); }
Array sin(const Array& x) { return bind1(prims::sin, {x}); }
Array cos(const Array& x) { return bind1(prims::cos, {x}); }
Array tanh(const Array& x) { return bind1(prims::tanh, {x}); }
Array logistic(const Array& x) { return bind1(prims::logistic, {x}); }
Array sqrt(const Array& x) { return bind1(prims::sqrt, {x}); }
Array integer_pow(const Array& x, int64_t y) {
  return bind1(prims::integer_pow, {x}, Params{{"y", y}});
}

Array eq(const Array& x, const Array& y) { return bind1(prims::eq, {x, y}); }
Array ne(const Array& x, const Array& y) { return bind1(prims::ne, {x, y}); }
Array lt(const Array& x, const Array& y) { return bind1(prims::lt, {x, y}); }
Array le(const Array& x, const Array& y) { return bind1(prims::le, {x, y}); }
Array gt(const Array& x, const Array& y) { return bind1(prims::gt, {x, y}); }
Array ge(const Array& x, const Array& y) { return bind1(prims::ge, {x, y}); }

Array select_n(const Array& which, const std::vector<Array>& cases) {
  std::vector<Array> args;
  args.reserve(cases.size() + 1);
  args.push_back(which);
  args.insert(args.end(), cases.begin(), cases.end());
  return bind1(prims::select_n, std::span<const Array>(args));
}

// As jax.lax.convert_element_type: the dtype is canonicalized to the 32/64-bit mode and the
// result is strongly typed.
Array convert_element_type(const Array& x, DType new_dtype) {
  return bind1(prims::convert_element_type, {x},
               Params{{"new_dtype", canonicalize_dtype(new_dtype)}, {"weak_type", false}});
}

}  // namespace tessera::lax
