// Shared pieces of the elementwise families (arithmetic, arithmetic_unary, transcendental,
// binary_math, bitwise, special, compare): the operand and dtype
// checks of abstract eval, the eager impl drivers (dtype dispatch, then parallel_map for unary
// kernels or broadcast runs for binary ones), the define helpers that install both, and the
// unary JVP rule builder.
//
// A kernel K tells the drivers which dtypes it has code for: K::accepts<T> for the storage type
// T of the operands' dtype (a dtype it does not accept is an internal error: abstract eval
// rejects it first). Optional: K::storage<T>, the type its loops see instead of T (bitwise
// kernels read bool as uint8_t), and K::result<S>, the output element type (bool for is_finite
// and the comparisons; S otherwise).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "prims/ad_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "tessera/array.h"
#include "tessera/primitive.h"

namespace tessera::prims::elementwise {

template <class T>
inline constexpr bool kIsNumber = !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsFloat = kernels::is_half_v<T> || std::is_floating_point_v<T>;

// The unsigned type (at least 32 bits) in which integer T wraps without UB.
template <class T>
using wrap_t = std::make_unsigned_t<std::common_type_t<T, unsigned>>;

// Bases naming the dtypes a kernel has code for.
struct AnyKernel {
  template <class T>
  static constexpr bool accepts = true;
};
struct NumberKernel {
  template <class T>
  static constexpr bool accepts = kIsNumber<T>;
};
struct FloatKernel {
  template <class T>
  static constexpr bool accepts = kIsFloat<T>;
};
// A floating kernel from a float32 array function and a float64 element function (16-bit
// floats run the float32 one on float32 blocks).
template <void (*F32)(const float*, float*, int64_t), double (*F64)(double)>
struct FloatFnKernel : FloatKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_same_v<C, float>) {
      F32(x, y, n);
    } else if constexpr (std::is_same_v<C, double>) {
      for (int64_t i = 0; i < n; ++i) y[i] = F64(x[i]);
    }
  }
};

// K::storage<T> where the kernel names one, else T; K::result<S> where it names one, else S.
template <class K, class T>
auto storage_probe(int) -> typename K::template storage<T>;
template <class K, class T>
auto storage_probe(long) -> T;
template <class K, class S>
auto result_probe(int) -> typename K::template result<S>;
template <class K, class S>
auto result_probe(long) -> S;
template <class K, class T>
using storage_t = decltype(storage_probe<K, T>(0));
template <class K, class S>
using result_t = decltype(result_probe<K, S>(0));

// ---------------------------------------------------------------- abstract eval

// The dtypes an op accepts (abstract eval's rule; kAny: every non-extended dtype).
enum class Accept { kAny, kNumber, kFloating };

// The same-dtype hint of the binary ops that tessera::numpy promotes for.
inline constexpr const char* kPromoteHint =
    "convert with convert_element_type or use tessera::numpy which promotes";

// One operand, not extended, of an accepted dtype; the output has the operand's aval.
std::vector<Aval> unary_abstract(const char* op, Accept accept, std::span<const Aval> in);

// Two operands, neither extended, of one dtype (`same_dtype_hint` ends that error).
void check_binary_operands(const char* op, std::span<const Aval> in,
                           const std::string& same_dtype_hint);
// The output of a binary op under lax broadcasting: the broadcast shape, the operands' dtype,
// weak when both operands are.
Aval binary_result(const char* op, std::span<const Aval> in);
// check_binary_operands, the accepted dtypes (`reject_fix` ends those errors), binary_result.
std::vector<Aval> binary_abstract(const char* op, Accept accept, std::span<const Aval> in,
                                  std::string_view reject_fix,
                                  const std::string& same_dtype_hint = kPromoteHint);

// ---------------------------------------------------------------- impl drivers

// InternalError from `layer`: op reached a kernel for dtype d that abstract eval rejects.
[[noreturn]] void rejected_dtype(const char* layer, const char* op, DType d);

// y = kernel(x) elementwise: kernel(const C* x, R* y, n) on compute types (kernels::parallel_map
// converts 16-bit floats in float32 blocks).
template <class K>
std::vector<Array> unary_impl(const ExecContext& ctx, const char* layer, const char* op,
                              std::span<const Array> args, std::span<const Aval> out_avals,
                              const K& kernel) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op, ctx.device);
  const int64_t n = oa.size();
  if (n == 0) return {out};
  const DType d = args[0].dtype();
  kernels::dispatch_dtype(d, [&]<class T>() {
    if constexpr (K::template accepts<T>) {
      using S = storage_t<K, T>;
      using R = result_t<K, S>;
      const S* x = static_cast<const S*>(args[0].raw_data(op));
      R* y = static_cast<R*>(out.buffer()->data());
      kernels::parallel_map(x, y, n, kernel);
    } else {
      rejected_dtype(layer, op, d);
    }
  });
  return {out};
}

// The run form of an elementwise binary op (operator()(C a, C b) on compute types):
// kernels::run2, which computes 16-bit floats in float32 blocks.
template <class Op>
struct Runs : Op {
  template <class S, class R>
  void operator()(const S* a, int64_t sa, const S* b, int64_t sb, R* o, int64_t n) const {
    kernels::run2(a, sa, b, sb, o, n, static_cast<const Op&>(*this));
  }
};

// o = kernel(a, b) under lax broadcasting: kernel(a, stride_a, b, stride_b, o, n) is called for
// the runs of the output (strides 0 or 1), in parallel (broadcast_iter.h).
template <class K>
std::vector<Array> binary_impl(const ExecContext& ctx, const char* layer, const char* op,
                               std::span<const Array> args, std::span<const Aval> out_avals,
                               const K& kernel = K{}) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op, ctx.device);
  const auto plan = kernels::make_plan<2>(oa.shape, {&args[0].shape(), &args[1].shape()});
  if (plan.size == 0) return {out};
  const DType d = args[0].dtype();
  kernels::dispatch_dtype(d, [&]<class T>() {
    if constexpr (K::template accepts<T>) {
      using S = storage_t<K, T>;
      using R = result_t<K, S>;
      const S* a = static_cast<const S*>(args[0].raw_data(op));
      const S* b = static_cast<const S*>(args[1].raw_data(op));
      R* o = static_cast<R*>(out.buffer()->data());
      kernels::parallel_runs<2>(
          plan, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t len) {
            kernel(a + off[0], plan.inner[0], b + off[1], plan.inner[1], o + oo, len);
          });
    } else {
      rejected_dtype(layer, op, d);
    }
  });
  return {out};
}

// ---------------------------------------------------------------- define helpers

// Installs p's abstract_eval, abstract(op, in), and its impl, unary_impl with `kernel`.
template <class K, class A>
void define_unary(Primitive& p, const char* layer, A abstract, K kernel = K{}) {
  const char* name = p.name().c_str();
  p.abstract_eval = [name, abstract](std::span<const Aval> in, const Params&) {
    return abstract(name, in);
  };
  p.impl = [layer, name, kernel](const ExecContext& ctx, std::span<const Array> args, const Params&,
                                 std::span<const Aval> out_avals) {
    return unary_impl(ctx, layer, name, args, out_avals, kernel);
  };
}

template <class K>
void define_unary(Primitive& p, const char* layer, Accept accept, K kernel = K{}) {
  define_unary(
      p, layer,
      [accept](const char* op, std::span<const Aval> in) { return unary_abstract(op, accept, in); },
      kernel);
}

// Installs p's abstract_eval, abstract(op, in), and its impl, binary_impl with K.
template <class K, class A>
void define_binary(Primitive& p, const char* layer, A abstract) {
  const char* name = p.name().c_str();
  p.abstract_eval = [name, abstract](std::span<const Aval> in, const Params&) {
    return abstract(name, in);
  };
  p.impl = [layer, name](const ExecContext& ctx, std::span<const Array> args, const Params&,
                         std::span<const Aval> out_avals) {
    return binary_impl<K>(ctx, layer, name, args, out_avals);
  };
}

template <class K>
void define_binary(Primitive& p, const char* layer, Accept accept, const char* reject_fix,
                   const char* same_dtype_hint = kPromoteHint) {
  define_binary<K>(p, layer,
                   [accept, reject_fix, same_dtype_hint](const char* op, std::span<const Aval> in) {
                     return binary_abstract(op, accept, in, reject_fix, same_dtype_hint);
                   });
}

// ---------------------------------------------------------------- JVP

using ad::JvpOut;

// The rule of a unary primitive without params from its tangent map d(t, x, out); undefined
// tangents and integer/bool outputs give symbolic zeros.
template <class D>
JvpRule unary_jvp(const Primitive& prim, D d) {
  const Primitive* pp = &prim;
  return [pp, d](std::span<const Array> p, std::span<const Array> t, const Params&) -> JvpOut {
    Array out = tessera::bind1(*pp, {p[0]});
    if (!t[0].defined() || !ad::has_tangent(out.dtype())) return {{out}, {Array()}};
    return {{out}, {d(t[0], p[0], out)}};
  };
}

// ---------------------------------------------------------------- scalar definitions

namespace sdef {
using scalar::Builder;
using scalar::Fn;
using scalar::Op;
using scalar::Value;
using Values = std::vector<Value>;
// The definition "op applied to the operands" (neg, exp, add, the comparisons, ...).
ScalarDef op(Op o);
// The float64 library function f of the operands, rounded back to the first operand's type
// (the eager kernels: computed in double, rounded once).
ScalarDef extern_f64(Fn f);
Value via_f64(Builder& b, Fn f, std::span<const Value> in);
}  // namespace sdef

// A rank-0 constant v of like's dtype.
inline Array c(double v, const Array& like) { return ad::scalar_const(v, like.dtype()); }

}  // namespace tessera::prims::elementwise
