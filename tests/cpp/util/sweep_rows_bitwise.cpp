// Sweep rows of src/prims/bitwise.cpp's primitives (forward references: tests/oracle/
// oracle_bitwise.py).
//
// The integer ops have bool/integer outputs and no float operands, while the derivative checks
// draw free operands in float64: each op therefore gets a forward + vmap row over its dtypes
// (Deriv::kNone) and a row with a fixed dtype for the zero-tangent checks. Integer operands are
// random bit patterns; shift amounts include negative and >= width ones. reduce_precision is
// linear only in JAX's approximate treatment (the adjoint identity holds for the identity
// format alone), so its rounding formats are forward + vmap rows and the identity format
// (11, 52) gets the full derivative sweep; test_bitwise.cpp checks its rules elsewhere.
#include "util/oracle.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::json_int;
using testing::json_obj;
using testing::json_str;
using Shapes = std::vector<std::vector<Shape>>;

constexpr DType kBool = DType::kBool, kI8 = DType::kInt8, kI16 = DType::kInt16,
                kI32 = DType::kInt32, kI64 = DType::kInt64, kU8 = DType::kUInt8,
                kU16 = DType::kUInt16, kU32 = DType::kUInt32, kF16 = DType::kFloat16,
                kBF16 = DType::kBFloat16, kF32 = DType::kFloat32, kF64 = DType::kFloat64;

// Random bit patterns: the whole range of every dtype up to 32 bits, +-2^62 for 64 bits.
Operand bits() {
  Operand o;
  o.int_lo = -(int64_t{1} << 62), o.int_hi = int64_t{1} << 62;
  o.diff = false;
  return o;
}
Operand amounts(int64_t lo, int64_t hi) {
  Operand o;
  o.int_lo = lo, o.int_hi = hi;
  o.diff = false;
  return o;
}

// A forward + vmap row over dtypes.
Row row(std::string name, std::string prim, OpFn fn, std::vector<Operand> operands, Shapes shapes,
        std::vector<DType> dts) {
  Row r;
  r.name = std::move(name);
  r.oracle_op = "lax." + prim;
  r.prim = std::move(prim);
  r.family = "bitwise";
  r.fn = std::move(fn);
  r.operands = std::move(operands);
  r.shapes = std::move(shapes);
  r.dtypes = std::move(dts);
  r.deriv = Deriv::kNone;
  return r;
}

// The zero-tangent checks with every operand of dtype d (vmap is swept by the forward row).
Row zero_tangent(Row r, DType d) {
  r.name += "_ad_" + std::string(dtype_short_name(d));
  for (Operand& o : r.operands) o.dtype = d;
  r.dtypes = {};
  r.deriv = Deriv::kZeroTangent;
  r.vmap = false;
  return r;
}

Row binary(const std::string& prim, Array (*op)(const Array&, const Array&), Operand b,
           std::vector<DType> dts) {
  return row(
      prim, prim, [op](const Args& x) { return op(x[0], x[1]); }, {bits(), b}, kBinaryShapes,
      std::move(dts));
}
Row unary(const std::string& prim, Array (*op)(const Array&), std::vector<DType> dts) {
  return row(
      prim, prim, [op](const Args& x) { return op(x[0]); }, {bits()}, kUnaryShapes, std::move(dts));
}

// bitcast_convert_type of a fixed source dtype: zero tangents (JAX's defjvp_zero).
Row bitcast(DType from, DType to, Operand o, Shapes shapes) {
  Row r = row(
      "bitcast_" + std::string(dtype_short_name(from)) + "_to_" + std::string(dtype_short_name(to)),
      "bitcast_convert_type", [to](const Args& x) { return lax::bitcast_convert_type(x[0], to); },
      {of_dtype(from, o)}, std::move(shapes), {});
  r.oracle_params = json_obj({{"new_dtype", json_str(dtype_name(to))}});
  r.deriv = Deriv::kZeroTangent;
  r.needs_x64 = itemsize(to) == 8;  // a 64-bit target needs x64 (else it becomes 32-bit)
  return r;
}

Row reduce_precision(std::string name, int64_t e, int64_t m, Operand o, std::vector<DType> dts) {
  Row r = row(
      std::move(name), "reduce_precision",
      [e, m](const Args& x) { return lax::reduce_precision(x[0], e, m); }, {o}, kUnaryShapes,
      std::move(dts));
  r.oracle_params = json_obj({{"exponent_bits", json_int(e)}, {"mantissa_bits", json_int(m)}});
  return r;
}

// The PRNG primitives of random_bits.cpp (family "random", float64 references written here):
// threefry2x32 under lax broadcasting against a scalar Threefry-2x32 (Random123's rounds; the
// two outputs combined as 3 * y0 + y1 so that both are checked), and the key casts as the
// round trip random_unwrap(random_wrap(x)) == x (vmap moves a trailing batch axis off the words).
uint32_t threefry_ref_rotl(uint32_t v, unsigned r) { return (v << r) | (v >> (32 - r)); }
std::pair<uint32_t, uint32_t> threefry_ref(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  static const unsigned R[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0];
  x1 += ks[1];
  for (unsigned r = 0; r < 20; ++r) {
    x0 += x1;
    x1 = threefry_ref_rotl(x1, R[r % 8]) ^ x0;
    if (r % 4 == 3) {
      const uint32_t s = r / 4 + 1;
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

std::vector<Row> random_rows() {
  std::vector<Row> t;
  {
    Row r;
    r.name = r.prim = "threefry2x32";
    r.family = "random";
    r.fn = [](const Args& a) {
      std::vector<Array> y = tessera::bind(*find_primitive("threefry2x32"), a);
      return lax::add(lax::mul(y[0], numpy::scalar(3.0, kU32)), y[1]);
    };
    r.operands = {of_dtype(kU32, bits()), of_dtype(kU32, bits()), of_dtype(kU32, bits()),
                  of_dtype(kU32, bits())};
    r.shapes = {{{3, 4}, {3, 4}, {3, 4}, {3, 4}}, {{}, {}, {3, 4}, {3, 4}},
                {{3, 1}, {1, 4}, {3, 4}, {}},     {{}, {4}, {}, {4}},
                {{0, 3}, {}, {1, 3}, {}},         {{}, {}, {}, {}}};
    r.dtypes = {kU32};
    r.ref = [](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
      std::vector<Aval> in = a;
      Shape out;
      for (const Aval& x : in)
        if (x.ndim() > 0) out.resize(static_cast<size_t>(x.ndim()), 1);
      for (const Aval& x : in)
        for (size_t d = 0; d < x.shape.size(); ++d)
          if (x.shape[d] != 1) out[d] = x.shape[d];
      const int64_t n = shape_size(out);
      RefOut o{out, kU32, std::vector<double>(static_cast<size_t>(n))};
      for (int64_t i = 0; i < n; ++i) {
        uint32_t w[4];
        for (size_t k = 0; k < 4; ++k) {
          const Shape& s = in[k].shape;
          int64_t off = 0, rem = i, stride = 1;
          for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
            const int64_t idx = rem % out[d];
            rem /= out[d];
            if (!s.empty()) {
              if (s[d] != 1) off += idx * stride;
              stride *= s[d];
            }
          }
          w[k] = static_cast<uint32_t>(v[k][static_cast<size_t>(off)]);
        }
        auto [y0, y1] = threefry_ref(w[0], w[1], w[2], w[3]);
        o.values[static_cast<size_t>(i)] = static_cast<double>(static_cast<uint32_t>(3 * y0 + y1));
      }
      return o;
    };
    // Integer outputs: JVP/VJP columns check float0 (zero) tangents, as the other bit ops.
    r.deriv = Deriv::kZeroTangent;
    t.push_back(std::move(r));
  }
  for (const char* prim : {"random_wrap", "random_unwrap"}) {
    Row r;
    r.name = r.prim = prim;
    r.family = "random";
    r.fn = [](const Args& a) {
      Array k = tessera::bind1(*find_primitive("random_wrap"), {a[0]});
      return tessera::bind1(*find_primitive("random_unwrap"), {k});
    };
    r.operands = {of_dtype(kU32, bits())};
    r.shapes = {{{3, 2}}, {{2}}, {{2, 4, 2}}, {{0, 2}}};
    r.dtypes = {kU32};
    r.ref = [](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
      return RefOut{a[0].shape, kU32, v[0]};
    };
    // Integer outputs: JVP/VJP columns check float0 (zero) tangents, as the other bit ops.
    r.deriv = Deriv::kZeroTangent;
    t.push_back(std::move(r));
  }
  return t;
}

}  // namespace

std::vector<Row> rows_bitwise() {
  std::vector<Row> t;
  const std::vector<DType> logic = {kBool, kI8, kI32, kI64, kU8, kU32};
  const std::vector<DType> ints = {kI8, kI32, kI64, kU8, kU32};
  // -- not, and, or, xor
  t.push_back(unary("not", lax::bitwise_not, logic));
  t.push_back(binary("and", lax::bitwise_and, bits(), logic));
  t.push_back(binary("or", lax::bitwise_or, bits(), logic));
  t.push_back(binary("xor", lax::bitwise_xor, bits(), logic));
  for (size_t i = t.size() - 4, n = t.size(); i < n; ++i) {
    t.push_back(zero_tangent(t[i], kI32));
    t.push_back(zero_tangent(t[i], kBool));
  }
  // -- shifts: amounts from negative to beyond the width (32/64-bit and 8-bit dtypes)
  struct Shift {
    const char* prim;
    Array (*op)(const Array&, const Array&);
  };
  for (const Shift& s : {Shift{"shift_left", lax::shift_left},
                         Shift{"shift_right_logical", lax::shift_right_logical},
                         Shift{"shift_right_arithmetic", lax::shift_right_arithmetic}}) {
    Row wide = binary(s.prim, s.op, amounts(-3, 72), {kI32, kU32, kI64});
    Row narrow = binary(s.prim, s.op, amounts(-3, 12), {kI8, kU8});
    narrow.name += "_8bit";
    t.push_back(zero_tangent(wide, kI32));
    t.push_back(std::move(wide));
    t.push_back(std::move(narrow));
  }
  // -- counts
  for (Row r :
       {unary("population_count", lax::population_count, ints), unary("clz", lax::clz, ints)}) {
    t.push_back(zero_tangent(r, kI32));
    t.push_back(std::move(r));
  }
  // -- bitcast_convert_type: same width, narrowing (a trailing dim), widening (consumes one)
  auto trailing = [](int64_t k) {
    return Shapes{{{3, k}}, {{k}}, {{0, k}}, {{2, 1, k}}, {{2, 3, 2, k}}};
  };
  // Integer sources draw bit patterns of positive, finite, moderate floats: the vjp check sums
  // the outputs, which a NaN or an overflowing float16 sum would break (test_bitwise.cpp
  // bitcasts every special pattern).
  const Operand floats_in = any(-3.0, 3.0);
  const Operand f32_bits = amounts(0x30000000, 0x50000000);  // about 5e-10 to 9e9
  const Operand f16_bits = amounts(0x2000, 0x5000);          // 2^-7 to 32
  const Operand low_bytes = amounts(0, 0x4f);  // every byte, so the top one, below 0x50
  t.push_back(bitcast(kF32, kI32, floats_in, kUnaryShapes));
  t.push_back(bitcast(kF32, kU32, floats_in, kUnaryShapes));
  t.push_back(bitcast(kI32, kF32, f32_bits, kUnaryShapes));
  t.push_back(bitcast(kU32, kF32, f32_bits, kUnaryShapes));
  t.push_back(bitcast(kF16, kI16, floats_in, kUnaryShapes));
  t.push_back(bitcast(kI16, kF16, f16_bits, kUnaryShapes));
  t.push_back(bitcast(kBF16, kI16, floats_in, kUnaryShapes));
  t.push_back(bitcast(kU16, kBF16, amounts(0x3000, 0x4f00), kUnaryShapes));
  t.push_back(bitcast(kF32, kU8, floats_in, kUnaryShapes));
  t.push_back(bitcast(kU8, kF32, low_bytes, trailing(4)));
  t.push_back(bitcast(kF64, kU32, floats_in, kUnaryShapes));
  t.push_back(bitcast(kU32, kF64, f32_bits, trailing(2)));
  t.push_back(bitcast(kI8, kF16, low_bytes, trailing(2)));
  // -- reduce_precision: the identity (full derivative sweep), then rounding formats
  {
    Row r = reduce_precision("reduce_precision_identity", 11, 52, any(), {kF16, kBF16, kF32, kF64});
    r.deriv = Deriv::kSmooth;
    t.push_back(r);
  }
  const std::vector<DType> all_floats = {kF16, kBF16, kF32, kF64};
  t.push_back(reduce_precision("reduce_precision_bf16like", 8, 7, any(-3.0, 3.0), all_floats));
  t.push_back(reduce_precision("reduce_precision_f16like", 5, 10, any(-3.0, 3.0), all_floats));
  t.push_back(reduce_precision("reduce_precision_e4m3", 4, 3, any(-300.0, 300.0), all_floats));
  t.push_back(reduce_precision("reduce_precision_m0", 3, 0, any(-20.0, 20.0), all_floats));
  // Overflow to inf and flush to zero (and float32's own denormals rounded, not flushed, when
  // the exponent is not reduced).
  t.push_back(
      reduce_precision("reduce_precision_f16like_big", 5, 10, any(-9e4, 9e4), {kF32, kF64}));
  t.push_back(
      reduce_precision("reduce_precision_f16like_tiny", 5, 10, any(-1.3e-4, 1.3e-4), {kF32, kF64}));
  t.push_back(reduce_precision("reduce_precision_bf16like_big", 8, 7, any(-6e38, 6e38), {kF64}));
  t.push_back(
      reduce_precision("reduce_precision_bf16like_tiny", 8, 7, any(-3e-38, 3e-38), {kF32, kF64}));
  for (size_t i = t.size() - 4; i < t.size(); ++i) t[i].vmap = false;
  for (Row& r : random_rows()) t.push_back(std::move(r));
  return t;
}

}  // namespace tessera::sweep
