// Binary arithmetic primitives: add, sub, mul, div, max, min, pow.
//
// Operands share one dtype (no promotion: that is tessera::numpy's job) and follow lax's
// broadcasting rule. Kernels never materialize broadcasts: they walk runs of the output with
// per-operand strides (broadcast_iter.h). Integer arithmetic wraps (computed in unsigned types,
// so there is no signed-overflow UB); integer division follows XLA: x / 0 == -1 (all ones for
// unsigned) and INT_MIN / -1 == INT_MIN. 16-bit floats are computed in float32 and rounded.
#include <cmath>
#include <limits>
#include <type_traits>

#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive add("add");
Primitive sub("sub");
Primitive mul("mul");
Primitive div("div");
Primitive max("max");
Primitive min("min");
Primitive pow("pow");

namespace {

using kernels::dispatch_dtype;

// The unsigned type (at least 32 bits) in which integer T wraps without UB.
template <class T>
using wrap_t = std::make_unsigned_t<std::common_type_t<T, unsigned>>;

template <class T>
inline constexpr bool kIsNumber = !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsFloat = kernels::is_half_v<T> || std::is_floating_point_v<T>;

struct AddOp {
  template <class T>
  static constexpr bool accepts = kIsNumber<T>;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) + wrap_t<C>(b));
    else
      return a + b;
  }
};
struct SubOp {
  template <class T>
  static constexpr bool accepts = kIsNumber<T>;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) - wrap_t<C>(b));
    else
      return a - b;
  }
};
struct MulOp {
  template <class T>
  static constexpr bool accepts = kIsNumber<T>;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) * wrap_t<C>(b));
    else
      return a * b;
  }
};
struct DivOp {
  template <class T>
  static constexpr bool accepts = kIsNumber<T>;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return static_cast<C>(-1);  // all ones: -1 signed, the maximum unsigned
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return static_cast<C>(wrap_t<C>(0) - wrap_t<C>(a));  // MIN / -1 == MIN
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
// NaN-propagating: if either operand is NaN the result is NaN. On bool: logical or / and.
struct MaxOp {
  template <class T>
  static constexpr bool accepts = true;
  template <class C>
  C operator()(C a, C b) const {
    const C m = a > b ? a : b;
    if constexpr (std::is_floating_point_v<C>)
      return a != a ? a : m;
    else
      return m;
  }
};
struct MinOp {
  template <class T>
  static constexpr bool accepts = true;
  template <class C>
  C operator()(C a, C b) const {
    const C m = a < b ? a : b;
    if constexpr (std::is_floating_point_v<C>)
      return a != a ? a : m;
    else
      return m;
  }
};
// In the dtype's precision: powf for f32/f16/bf16, pow for f64.
struct PowOp {
  template <class T>
  static constexpr bool accepts = kIsFloat<T>;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      return std::pow(a, b);
    else
      return a;  // never instantiated for integers (accepts)
  }
};

enum class Accept { kAny, kNumber, kFloating };

std::vector<Aval> binary_abstract(const char* op, Accept accept, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 2);
  for (const Aval& a : in) kernels::check_not_extended(op, a);
  kernels::check_same_dtype(
      op, in, "convert with convert_element_type or use tessera::numpy which promotes");
  const DType d = in[0].dtype;
  if (accept == Accept::kNumber && is_bool(d)) {
    throw TypeError(op_message(op, "does not accept dtype bool (got " + kernels::avals_list(in) +
                                       "); accepted dtypes are integers and floats; convert "
                                       "with convert_element_type"));
  }
  if (accept == Accept::kFloating && !is_floating(d)) {
    throw TypeError(op_message(op, "requires floating operands, got " + kernels::avals_list(in) +
                                       "; use integer_pow for an integer exponent, or convert "
                                       "with convert_element_type"));
  }
  Shape shape = kernels::broadcast_shapes(op, in);
  bool weak = true;
  for (const Aval& a : in) weak = weak && a.weak_type;
  return {Aval{std::move(shape), d, weak}};
}

template <class Op>
std::vector<Array> binary_impl(const char* op, std::span<const Array> args,
                               std::span<const Aval> out_avals) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op);
  const auto plan = kernels::make_plan<2>(oa.shape, {&args[0].shape(), &args[1].shape()});
  if (plan.size == 0) return {out};
  dispatch_dtype(oa.dtype, [&]<class T>() {
    if constexpr (Op::template accepts<T>) {
      const T* a = static_cast<const T*>(args[0].raw_data(op));
      const T* b = static_cast<const T*>(args[1].raw_data(op));
      T* o = static_cast<T*>(out.buffer()->data());
      kernels::parallel_runs<2>(
          plan, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t len) {
            kernels::run2(a + off[0], plan.inner[0], b + off[1], plan.inner[1], o + oo, len, Op{});
          });
    } else {
      throw_internal("prims/elementwise_binary", std::string(op) + " reached a kernel for dtype " +
                                                     std::string(dtype_name(oa.dtype)) +
                                                     " that abstract_eval rejects");
    }
  });
  return {out};
}

template <class Op>
void define(Primitive& p, Accept accept) {
  const char* name = p.name().c_str();
  p.abstract_eval = [name, accept](std::span<const Aval> in, const Params&) {
    return binary_abstract(name, accept, in);
  };
  p.impl = [name](std::span<const Array> args, const Params&, std::span<const Aval> out_avals) {
    return binary_impl<Op>(name, args, out_avals);
  };
  register_primitive(p);
}

}  // namespace

void register_elementwise_binary() {
  define<AddOp>(add, Accept::kNumber);
  define<SubOp>(sub, Accept::kNumber);
  define<MulOp>(mul, Accept::kNumber);
  define<DivOp>(div, Accept::kNumber);
  define<MaxOp>(max, Accept::kAny);
  define<MinOp>(min, Accept::kAny);
  define<PowOp>(pow, Accept::kFloating);
}

}  // namespace tessera::prims
