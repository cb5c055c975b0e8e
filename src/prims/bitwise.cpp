// Bitwise primitives: not, and, or, xor (bool and integers); shift_left, shift_right_logical,
// shift_right_arithmetic, population_count, clz (integers); bitcast_convert_type {new_dtype};
// reduce_precision {exponent_bits, mantissa_bits} (floats).
//
// Integer semantics are XLA's, on the bit pattern: a shift amount is read as unsigned, so a
// negative amount or one >= the bit width gives 0 for shift_left and shift_right_logical and
// the sign fill (the top bit replicated) for shift_right_arithmetic; shift_right_logical
// shifts signed values as unsigned bits and shift_right_arithmetic replicates the top bit of
// unsigned ones. clz(0) is the bit width. On bool, not/and/or/xor are the logical operations.
//
// bitcast_convert_type reinterprets the bytes (little-endian, as NumPy's ndarray.view): the
// same width keeps the shape, a narrower target appends a trailing dim of the width ratio, a
// wider one consumes an operand last dim equal to the ratio (lax's rule; bool only to bool, as
// JAX). The eager result shares the operand's buffer. reduce_precision follows XLA's
// ReducePrecision bit for bit: the mantissa is rounded to nearest even on the bits, then
// exponents beyond the reduced range overflow to a signed inf and those at or below its
// smallest normal exponent flush to a signed zero (no denormals); NaN stays the same NaN, or
// becomes +inf when mantissa_bits == 0 (a format without mantissa has no NaN).
//
// AD as JAX: the bitwise ops, counts and bitcast_convert_type have zero tangents (JAX's
// defjvp_zero; a float bitcast output gets a symbolic zero); reduce_precision is treated as
// linear (JAX's deflinear): its tangent and cotangent are reduce_precision of t and ct.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive not_("not");
Primitive and_("and");
Primitive or_("or");
Primitive xor_("xor");
Primitive shift_left("shift_left");
Primitive shift_right_logical("shift_right_logical");
Primitive shift_right_arithmetic("shift_right_arithmetic");
Primitive population_count("population_count");
Primitive clz("clz");
Primitive bitcast_convert_type("bitcast_convert_type");
Primitive reduce_precision("reduce_precision");

namespace {

using runtime::kElementwiseGrain;
using runtime::parallel_for;

constexpr const char* kLayer = "prims/bitwise";

// ---------------------------------------------------------------- kernels

// bool is computed as uint8_t 0/1 (plain byte loops vectorize; bool loads compile to
// compare-and-branch), so the ops below only see integer types.
template <class T>
using int_storage_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// The kernels' dtypes (elementwise_util.h): integers, and bool for not/and/or/xor (as uint8_t).
struct IntKernel {
  template <class T>
  static constexpr bool accepts = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  template <class T>
  using storage = int_storage_t<T>;
};
struct BoolOrIntKernel {
  template <class T>
  static constexpr bool accepts = std::is_integral_v<T>;
  template <class T>
  using storage = int_storage_t<T>;
};

template <class C>
inline constexpr unsigned kBits = sizeof(C) * 8;

struct AndOp : BoolOrIntKernel {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};
struct OrOp : BoolOrIntKernel {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};
struct XorOp : BoolOrIntKernel {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};
// The amount is masked before shifting (no UB) and out-of-range amounts are selected away,
// which keeps the loops branch-free.
struct ShiftLeftOp : IntKernel {
  template <class C>
  C operator()(C x, C s) const {
    using U = std::make_unsigned_t<C>;
    const U us = static_cast<U>(s);
    const U r = static_cast<U>(static_cast<U>(x) << (us & (kBits<C> - 1)));
    return us < kBits<C> ? static_cast<C>(r) : C(0);
  }
};
struct ShiftRightLogicalOp : IntKernel {
  template <class C>
  C operator()(C x, C s) const {
    using U = std::make_unsigned_t<C>;
    const U us = static_cast<U>(s);
    const U r = static_cast<U>(static_cast<U>(x) >> (us & (kBits<C> - 1)));
    return us < kBits<C> ? static_cast<C>(r) : C(0);
  }
};
// Signed >> is arithmetic in C++20; an out-of-range amount shifts by width - 1 (the sign fill).
struct ShiftRightArithmeticOp : IntKernel {
  template <class C>
  C operator()(C x, C s) const {
    using U = std::make_unsigned_t<C>;
    using S = std::make_signed_t<C>;
    const U us = static_cast<U>(s);
    const unsigned amount = us < kBits<C> ? static_cast<unsigned>(us) : kBits<C> - 1;
    return static_cast<C>(static_cast<S>(static_cast<S>(x) >> amount));
  }
};

// Unary kernels over raw arrays (kernels::parallel_map's signature).
struct NotK {
  template <class T>
  static constexpr bool accepts = std::is_integral_v<T>;
  template <class T>
  using storage = int_storage_t<T>;
  bool logical;  // bool stored as uint8_t 0/1
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_integral_v<C>) {
      if (logical) {
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(x[i] ^ C(1));
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(~x[i]);
      }
    }
  }
};
struct PopulationCountK : IntKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(std::popcount(static_cast<U>(x[i])));
    }
  }
};
struct ClzK : IntKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(std::countl_zero(static_cast<U>(x[i])));
    }
  }
};

// ---------------------------------------------------------------- not/and/or/xor, shifts, counts

// Not elementwise::Accept: bitwise ops take bool and integers, or integers only.
enum class Accept { kBoolOrInt, kInt };

void check_accepts(const char* op, Accept accept, std::span<const Aval> in) {
  for (const Aval& a : in) {
    kernels::check_not_extended(op, a);
    const bool ok = is_integer(a.dtype) || (accept == Accept::kBoolOrInt && is_bool(a.dtype));
    if (!ok) {
      throw TypeError(op_message(
          op, "does not accept dtype " + std::string(dtype_name(a.dtype)) + " (got " +
                  kernels::avals_list(in) + "); accepted dtypes are " +
                  (accept == Accept::kBoolOrInt ? "bool and integers" : "integers") +
                  (is_floating(a.dtype) ? "; to work on a float's bits, bitcast_convert_type it "
                                          "to an integer of its width"
                                        : "")));
    }
  }
}

std::vector<Aval> unary_abstract(const char* op, Accept accept, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 1);
  check_accepts(op, accept, in);
  return {in[0]};
}

std::vector<Aval> binary_abstract(const char* op, Accept accept, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 2);
  check_accepts(op, accept, in);
  kernels::check_same_dtype(op, in, elementwise::kPromoteHint);
  return {elementwise::binary_result(op, in)};
}

template <class Op>
void define_binary(Primitive& p, Accept accept) {
  elementwise::define_binary<elementwise::Runs<Op>>(
      p, kLayer, [accept](const char* op, std::span<const Aval> in) {
        return binary_abstract(op, accept, in);
      });
}

template <class K>
void define_unary(Primitive& p, Accept accept) {
  elementwise::define_unary<K>(p, kLayer, [accept](const char* op, std::span<const Aval> in) {
    return unary_abstract(op, accept, in);
  });
}

void define_not() {
  not_.abstract_eval = [](std::span<const Aval> in, const Params&) {
    return unary_abstract("not", Accept::kBoolOrInt, in);
  };
  not_.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params&,
                 std::span<const Aval> out_avals) {
    return elementwise::unary_impl(ctx, kLayer, "not", args, out_avals,
                                   NotK{is_bool(out_avals[0].dtype)});
  };
}

// ---------------------------------------------------------------- bitcast_convert_type

std::vector<Aval> bitcast_abstract(std::span<const Aval> in, const Params& params) {
  const char* op = "bitcast_convert_type";
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  const DType to = params.get_dtype("new_dtype");
  const std::string to_name(dtype_name(to));
  if (is_extended(x.dtype) || is_extended(to)) {
    throw TypeError(op_message(op, "cannot bitcast " + x.str() + " to " + to_name +
                                       ": extended dtypes (float0, PRNG keys) have no bit "
                                       "layout to reinterpret"));
  }
  if ((is_bool(x.dtype) || is_bool(to)) && x.dtype != to) {
    throw TypeError(op_message(op, "cannot bitcast " + x.str() + " to " + to_name +
                                       ": bool has no defined bit layout (as in JAX); use "
                                       "convert_element_type to convert to or from bool"));
  }
  const int64_t from_size = static_cast<int64_t>(itemsize(x.dtype));
  const int64_t to_size = static_cast<int64_t>(itemsize(to));
  Shape shape = x.shape;
  if (from_size > to_size) {
    shape.push_back(from_size / to_size);
  } else if (from_size < to_size) {
    const int64_t ratio = to_size / from_size;
    if (shape.empty() || shape.back() != ratio) {
      throw ValueError(op_message(
          op, "cannot bitcast " + x.str() + " to " + to_name + ": widening " +
                  std::to_string(8 * from_size) + "-bit to " + std::to_string(8 * to_size) +
                  "-bit elements needs an operand whose last dimension is " +
                  std::to_string(ratio) + " (got shape " + shape_str(x.shape) +
                  "); reshape so that the last axis holds " + std::to_string(ratio) + " elements"));
    }
    shape.pop_back();
  }
  return {Aval{std::move(shape), to, false}};  // JAX strips the weak type
}

// The bytes do not change: the result is the operand's buffer under the new aval.
std::vector<Array> bitcast_impl(const ExecContext&, std::span<const Array> args, const Params&,
                                std::span<const Aval> out_avals) {
  return {Array(out_avals[0], args[0].buffer("bitcast_convert_type"))};
}

// ---------------------------------------------------------------- reduce_precision

std::vector<Aval> reduce_precision_abstract(std::span<const Aval> in, const Params& params) {
  const char* op = "reduce_precision";
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  if (!is_floating(x.dtype)) {
    throw TypeError(op_message(op, "requires a floating dtype, got " + x.str() +
                                       "; convert with convert_element_type first"));
  }
  const int64_t e = params.get_int("exponent_bits");
  const int64_t m = params.get_int("mantissa_bits");
  if (e < 1) {
    throw ValueError(op_message(op, "exponent_bits must be positive; got " + std::to_string(e)));
  }
  if (m < 0) {
    throw ValueError(
        op_message(op, "mantissa_bits must be non-negative; got " + std::to_string(m)));
  }
  return {x};
}

// XLA's ReducePrecision on the bits U of a float with src_e exponent and src_m mantissa bits.
template <class U>
struct ReducePrecisionK {
  int src_e, src_m;
  int64_t e, m;

  void operator()(const U* x, U* y, int64_t n) const {
    constexpr int kN = static_cast<int>(sizeof(U) * 8);
    const U sign_mask = static_cast<U>(U(1) << (kN - 1));
    const U exp_mask = static_cast<U>(((U(1) << src_e) - 1) << src_m);
    const U abs_mask = static_cast<U>(~sign_mask);
    // Mantissa rounding: add 0111... plus the last kept bit, then clear the dropped bits; a
    // carry into the exponent is the correct rounding up to the next binade.
    const bool round = m < src_m;
    const int drop = round ? src_m - static_cast<int>(m) : 0;
    const U last_bit = static_cast<U>(U(1) << drop);
    const U base_bias = static_cast<U>((last_bit >> 1) - U(round ? 1 : 0));
    const U keep_mask = static_cast<U>(~static_cast<U>(last_bit - 1));
    // Exponent range: biased exponents above bias + reduced_bias overflow, those at or below
    // bias - reduced_bias (the reduced format's zero/denormal exponent) flush.
    const bool clamp = e < src_e;
    U max_field = 0, min_field = 0;
    if (clamp) {
      const U bias = static_cast<U>((U(1) << (src_e - 1)) - 1);
      const U reduced_bias = static_cast<U>((U(1) << (e - 1)) - 1);
      max_field = static_cast<U>(static_cast<U>(bias + reduced_bias) << src_m);
      min_field = static_cast<U>(static_cast<U>(bias - reduced_bias) << src_m);
    }
    for (int64_t i = 0; i < n; ++i) {
      const U v = x[i];
      U r = v;
      if (round) {
        const U bit = static_cast<U>((r >> drop) & U(1));
        r = static_cast<U>(static_cast<U>(r + static_cast<U>(bit + base_bias)) & keep_mask);
      }
      if (clamp) {
        const U field = static_cast<U>(r & exp_mask);
        const U signed_zero = static_cast<U>(r & sign_mask);
        if (field > max_field) r = static_cast<U>(signed_zero | exp_mask);
        if (field <= min_field) r = signed_zero;
      }
      const bool nan = static_cast<U>(v & abs_mask) > exp_mask;
      y[i] = nan ? (m > 0 ? v : exp_mask) : r;  // no mantissa bits: NaN -> +inf
    }
  }
};

template <class U>
void reduce_precision_run(const Array& x, Array& out, int src_e, int src_m, int64_t e, int64_t m) {
  const U* px = static_cast<const U*>(x.raw_data("reduce_precision"));
  U* py = static_cast<U*>(out.buffer()->data());
  const ReducePrecisionK<U> k{src_e, src_m, e, m};
  parallel_for(x.size(), kElementwiseGrain,
               [&](int64_t b, int64_t en) { k(px + b, py + b, en - b); });
}

std::vector<Array> reduce_precision_impl(const ExecContext& ctx, std::span<const Array> args,
                                         const Params& params, std::span<const Aval> out_avals) {
  const Aval& oa = out_avals[0];
  const Array& x = args[0];
  const int64_t e = params.get_int("exponent_bits");
  const int64_t m = params.get_int("mantissa_bits");
  Array out = empty_array(oa, "reduce_precision", ctx.device);
  if (oa.size() == 0) return {out};
  switch (oa.dtype) {
    case DType::kFloat16:
      reduce_precision_run<uint16_t>(x, out, 5, 10, e, m);
      break;
    case DType::kBFloat16:
      reduce_precision_run<uint16_t>(x, out, 8, 7, e, m);
      break;
    case DType::kFloat32:
      reduce_precision_run<uint32_t>(x, out, 8, 23, e, m);
      break;
    case DType::kFloat64:
      reduce_precision_run<uint64_t>(x, out, 11, 52, e, m);
      break;
    default:
      elementwise::rejected_dtype(kLayer, "reduce_precision", oa.dtype);
  }
  return {out};
}

// ---------------------------------------------------------------- AD rules

using ad::JvpOut;

// JAX's deflinear: the tangent is reduce_precision of the tangent.
JvpOut reduce_precision_jvp(std::span<const Array> p, std::span<const Array> t,
                            const Params& params) {
  Array out = bind1(reduce_precision, p, params);
  if (!t[0].defined()) return {{out}, {Array()}};
  return {{out}, {bind1(reduce_precision, t, params)}};
}

std::vector<Array> reduce_precision_transpose(std::span<const Array> ct,
                                              std::span<const Array> args, std::span<const Aval>,
                                              const Params& params) {
  if (args[0].defined()) ad::bad_linearity("reduce_precision", "transpose needs a linear operand");
  return {bind1(reduce_precision, {ct[0]}, params)};
}

// ---------------------------------------------------------------- batching

// bitcast_convert_type only changes the trailing dim: the batch dim stays where it is, except
// that a widening bitcast consumes the last axis, so a batch axis there first moves one place
// in (the widened result keeps it at that place).
batching::BatchOut bitcast_batch(const BatchAxis&, std::span<const Array> args,
                                 std::span<const int64_t> dims, const Params& params) {
  Array x = args[0];
  int64_t d = dims[0];
  const bool widening = itemsize(params.get_dtype("new_dtype")) > itemsize(x.dtype());
  if (widening && d == x.ndim() - 1) {
    if (x.ndim() == 1) {  // a rank-0 example cannot widen: raise the unbatched error
      const Aval example{{}, x.dtype(), x.weak_type()};
      bitcast_abstract(std::span<const Aval>(&example, 1), params);
    }
    x = batching::move_axis(x, d, d - 1);
    d -= 1;
  }
  return {{bind1(bitcast_convert_type, {x}, params)}, {d}};
}

// ---- Scalar definitions (scalar_ir.h). The bit ops are one op each; bitcast_convert_type and
// reduce_precision work on the storage bits, so they see 16-bit floats as they are.

namespace sd = elementwise::sdef;

// A bitcast between types of one width (a width-changing bitcast moves bytes between elements:
// it is not elementwise and has no scalar definition).
sd::Values bitcast_def(sd::Builder& b, std::span<const sd::Value> in, const Params& params) {
  const DType to = params.get_dtype("new_dtype");
  if (itemsize(to) != itemsize(in[0].type)) {
    throw_internal(kLayer, "bitcast_convert_type between widths has no scalar definition");
  }
  return {b.bitcast(in[0], to)};
}

DType bits_type(DType t) {
  switch (itemsize(t)) {
    case 2:
      return DType::kUInt16;
    case 4:
      return DType::kUInt32;
    default:
      return DType::kUInt64;
  }
}

// XLA's ReducePrecision on the bits, in the order of ReducePrecisionK.
sd::Values reduce_precision_def(sd::Builder& b, std::span<const sd::Value> in,
                                const Params& params) {
  const sd::Value x = in[0];
  const int64_t e = params.get_int("exponent_bits"), m = params.get_int("mantissa_bits");
  const FInfo fi = finfo(x.type);
  const int src_e = fi.nexp, src_m = fi.nmant;
  const DType u = bits_type(x.type);
  const int n = static_cast<int>(itemsize(x.type) * 8);
  auto k = [&](uint64_t v) { return b.constant_bits(v, u); };
  auto mask = [](int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; };
  const uint64_t width = mask(n);
  const uint64_t sign_mask = uint64_t{1} << (n - 1);
  const uint64_t exp_mask = (mask(src_e) << src_m) & width;
  const uint64_t abs_mask = ~sign_mask & width;
  const sd::Value v = b.bitcast(x, u);
  sd::Value r = v;
  if (m < src_m) {
    const int drop = src_m - static_cast<int>(m);
    const uint64_t last_bit = uint64_t{1} << drop;
    const uint64_t base_bias = (last_bit >> 1) - 1;
    const uint64_t keep_mask = ~(last_bit - 1) & width;
    const sd::Value bit = b.bit_and(b.binary(scalar::Op::kShrLogical, r, k(drop)), k(1));
    r = b.bit_and(b.add(r, b.add(bit, k(base_bias))), k(keep_mask));
  }
  if (e < src_e) {
    const uint64_t bias = mask(src_e - 1);
    const uint64_t reduced_bias = mask(static_cast<int>(e) - 1);
    const sd::Value field = b.bit_and(r, k(exp_mask));
    const sd::Value signed_zero = b.bit_and(r, k(sign_mask));
    const sd::Value over = b.gt(field, k(((bias + reduced_bias) << src_m) & width));
    const sd::Value under = b.le(field, k(((bias - reduced_bias) << src_m) & width));
    r = b.select(over, b.bit_or(signed_zero, k(exp_mask)), r);
    r = b.select(under, signed_zero, r);
  }
  const sd::Value nan = b.gt(b.bit_and(v, k(abs_mask)), k(exp_mask));
  r = b.select(nan, m > 0 ? v : k(exp_mask), r);
  return {b.bitcast(r, x.type)};
}

void set_scalar_defs() {
  using scalar::Op;
  not_.scalar = sd::op(Op::kNot);
  and_.scalar = sd::op(Op::kAnd);
  or_.scalar = sd::op(Op::kOr);
  xor_.scalar = sd::op(Op::kXor);
  shift_left.scalar = sd::op(Op::kShl);
  shift_right_logical.scalar = sd::op(Op::kShrLogical);
  shift_right_arithmetic.scalar = sd::op(Op::kShrArith);
  population_count.scalar = sd::op(Op::kPopcnt);
  clz.scalar = sd::op(Op::kClz);
  bitcast_convert_type.scalar = {bitcast_def, true};
  reduce_precision.scalar = {reduce_precision_def, true};
}

}  // namespace

void register_bitwise() {
  for (Primitive* p :
       {&not_, &and_, &or_, &xor_, &shift_left, &shift_right_logical, &shift_right_arithmetic,
        &population_count, &clz, &bitcast_convert_type, &reduce_precision})
    p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  for (Primitive* p : {&not_, &population_count, &clz}) p->signature = Signature::fixed(1);
  for (Primitive* p :
       {&and_, &or_, &xor_, &shift_left, &shift_right_logical, &shift_right_arithmetic})
    p->signature = Signature::fixed(2);
  bitcast_convert_type.signature = Signature::fixed(1, {{"new_dtype", ParamKind::kDType}});
  reduce_precision.signature =
      Signature::fixed(1, {{"exponent_bits", ParamKind::kInt}, {"mantissa_bits", ParamKind::kInt}});
  define_not();
  define_binary<AndOp>(and_, Accept::kBoolOrInt);
  define_binary<OrOp>(or_, Accept::kBoolOrInt);
  define_binary<XorOp>(xor_, Accept::kBoolOrInt);
  define_binary<ShiftLeftOp>(shift_left, Accept::kInt);
  define_binary<ShiftRightLogicalOp>(shift_right_logical, Accept::kInt);
  define_binary<ShiftRightArithmeticOp>(shift_right_arithmetic, Accept::kInt);
  define_unary<PopulationCountK>(population_count, Accept::kInt);
  define_unary<ClzK>(clz, Accept::kInt);
  bitcast_convert_type.abstract_eval = bitcast_abstract;
  bitcast_convert_type.impl = bitcast_impl;
  reduce_precision.abstract_eval = reduce_precision_abstract;
  reduce_precision.impl = reduce_precision_impl;

  for (Primitive* p : {&not_, &and_, &or_, &xor_, &shift_left, &shift_right_logical,
                       &shift_right_arithmetic, &population_count, &clz, &bitcast_convert_type})
    p->jvp = ad::zero_jvp(*p);  // JAX's defjvp_zero
  reduce_precision.jvp = reduce_precision_jvp;
  reduce_precision.transpose = reduce_precision_transpose;

  // Batching: elementwise ops keep the operand's batch dim; binary ones align batched
  // operands with lax broadcasting (batch_util.h).
  for (Primitive* p : {&not_, &population_count, &clz, &reduce_precision})
    p->batch = batching::vectorized_rule(*p);
  for (Primitive* p :
       {&and_, &or_, &xor_, &shift_left, &shift_right_logical, &shift_right_arithmetic})
    p->batch = batching::broadcasting_rule(*p);
  bitcast_convert_type.batch = bitcast_batch;

  for (Primitive* p :
       {&not_, &and_, &or_, &xor_, &shift_left, &shift_right_logical, &shift_right_arithmetic,
        &population_count, &clz, &bitcast_convert_type, &reduce_precision})
    register_primitive(*p);
}

}  // namespace tessera::prims
