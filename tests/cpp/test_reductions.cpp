// Edge cases of the reductions family beyond the sweep: reduce_prod's gradient with zeros in
// the input (JAX's values: products of the others, no division), integer products that wrap,
// reduce_min's tie splitting, the logical reductions on integers, argmax/argmin with NaNs, ties,
// index dtypes and big inputs (the column kernel, the thread pool), lax.reduce's monoid
// detection, its tree on big inputs, constants of the computation, errors, and jaxpr text.
// References are plain loops in double (or exact integers) written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using testing::X64Scope;
namespace tnp = numpy;

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kI32 = DType::kInt32,
                kI64 = DType::kInt64, kU8 = DType::kUInt8, kBool = DType::kBool;

Array make(const Shape& s, DType dt, const std::vector<double>& v) {
  Array a = empty_array(Aval{s, dt, false}, "test");
  for (size_t i = 0; i < v.size(); ++i)
    store_from_double(dt, static_cast<char*>(a.buffer()->data()) + i * itemsize(dt), v[i]);
  return a;
}

std::string jaxpr_text(const flat::Fun& f, std::vector<Array> args) {
  return to_string(flat::make_jaxpr(f, args));
}

bool contains(const std::string& s, const std::string& sub) {
  return s.find(sub) != std::string::npos;
}

// ---------------------------------------------------------------- reduce_prod

// x [R, C] with about a third zeros (some rows with one zero, some with two or more).
std::vector<double> with_zeros(int64_t n) {
  std::vector<double> v = to_doubles(random_array({n}, kF64, 0.5, 2.0));
  std::uniform_int_distribution<int> pick(0, 2);
  for (double& x : v)
    if (pick(rng()) == 0) x = 0.0;
  return v;
}

TEST(ReduceProd, GradWithZerosIsTheProductOfTheOthers) {
  X64Scope x64;
  const int64_t R = 40, C = 6;
  std::vector<double> v = with_zeros(R * C);
  for (int64_t c = 0; c < C; ++c) v[c] = c == 0 ? 0.0 : 1.5;      // row 0: one zero
  for (int64_t c = 0; c < C; ++c) v[C + c] = c < 2 ? 0.0 : 1.25;  // row 1: two zeros
  Array x = make({R, C}, kF64, v);
  auto f = [](std::span<const Array> a) {
    return std::vector<Array>{lax::reduce_sum(lax::reduce_prod(a[0], {1}), {0})};
  };
  Array xs[] = {x};
  flat::ValueAndGrad g = flat::value_and_grad(f, xs, false);
  std::vector<double> want(R * C);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      double p = 1.0;
      for (int64_t k = 0; k < C; ++k)
        if (k != c) p *= v[r * C + k];
      want[r * C + c] = p;
    }
  EXPECT_EQ(compare(to_doubles(g.grads[0]), want, 1e-14, 0.0), "");
  // Row 0's zero gets the product of the others (not 0/0); row 1 is all zeros.
  EXPECT_EQ(to_doubles(g.grads[0])[0], std::pow(1.5, C - 1));
  for (int64_t c = 0; c < C; ++c) EXPECT_EQ(to_doubles(g.grads[0])[C + c], 0.0);
}

TEST(ReduceProd, JvpWithZerosOverSeveralAxes) {
  X64Scope x64;
  const Shape s = {3, 5, 4};
  std::vector<double> v = with_zeros(60), t = to_doubles(random_array(s, kF64));
  Array x = make(s, kF64, v), tx = make(s, kF64, t);
  Array xs[] = {x}, ts[] = {tx};
  auto [po, to] = flat::jvp(
      [](std::span<const Array> a) {
        return std::vector<Array>{lax::reduce_prod(a[0], {0, 2})};
      },
      xs, ts);
  std::vector<double> want_p(5, 1.0), want_t(5, 0.0);
  for (int64_t j = 0; j < 5; ++j) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 4; ++k) idx.push_back((i * 5 + j) * 4 + k);
    for (int64_t a : idx) {
      want_p[j] *= v[a];
      double others = 1.0;
      for (int64_t b : idx)
        if (b != a) others *= v[b];
      want_t[j] += t[a] * others;
    }
  }
  EXPECT_EQ(compare(to_doubles(po[0]), want_p, 1e-14, 0.0), "");
  EXPECT_EQ(compare(to_doubles(to[0]), want_t, 1e-13, 1e-300), "");
}

TEST(ReduceProd, IntegersWrap) {
  for (DType d : {kI32, kU8, DType::kInt8, DType::kUInt32}) {
    const int64_t R = 7, C = 33;
    Array x = random_array({R, C}, d);
    std::vector<double> v = to_doubles(x);
    Array got = lax::reduce_prod(x, {1});
    EXPECT_EQ(got.dtype(), d);
    std::vector<double> g = to_doubles(got);
    const int bits = static_cast<int>(itemsize(d) * 8);
    for (int64_t r = 0; r < R; ++r) {
      uint64_t p = 1;
      for (int64_t c = 0; c < C; ++c)
        p *= static_cast<uint64_t>(static_cast<int64_t>(v[r * C + c]));
      uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      uint64_t low = p & mask;
      // Signed: the two's complement value of the low bits.
      double want = is_signed_integer(d) && (low >> (bits - 1))
                        ? -static_cast<double>((~low + 1) & mask)
                        : static_cast<double>(low);
      EXPECT_EQ(g[r], want) << dtype_name(d) << " row " << r;
    }
  }
}

TEST(ReduceProd, EmptyAxesGiveOne) {
  Array x = tnp::zeros({3, 0}, kI32);
  EXPECT_EQ(to_doubles(lax::reduce_prod(x, {1})), std::vector<double>(3, 1.0));
  EXPECT_EQ(to_doubles(lax::reduce_prod(tnp::zeros({0}, kF32), {0})), std::vector<double>{1.0});
}

// ---------------------------------------------------------------- reduce_min

TEST(ReduceMin, TiesShareTheGradient) {
  X64Scope x64;
  Array x = make({2, 4}, kF64, {1.0, 3.0, 1.0, 2.0, 5.0, -2.0, -2.0, -2.0});
  auto f = [](std::span<const Array> a) {
    Array m = lax::reduce_min(a[0], {1});
    return std::vector<Array>{lax::reduce_sum(lax::mul(m, make({2}, kF64, {1.0, 3.0})), {0})};
  };
  Array xs[] = {x};
  flat::ValueAndGrad g = flat::value_and_grad(f, xs, false);
  EXPECT_EQ(to_doubles(g.grads[0]), (std::vector<double>{0.5, 0.0, 0.5, 0.0, 0.0, 1.0, 1.0, 1.0}));
}

TEST(ReduceMin, NanPropagatesAndEmptyIsTheIdentity) {
  Array x = make({2, 3}, kF32, {1.0, NAN, -4.0, 2.0, 0.5, 3.0});
  std::vector<double> m = to_doubles(lax::reduce_min(x, {1}));
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 0.5);
  EXPECT_EQ(to_doubles(lax::reduce_min(tnp::zeros({0, 2}, kF32), {0})),
            std::vector<double>(2, INFINITY));
  EXPECT_EQ(to_doubles(lax::reduce_min(tnp::zeros({0}, kI32), {0}))[0],
            double(std::numeric_limits<int32_t>::max()));
  EXPECT_EQ(to_doubles(lax::reduce_min(tnp::zeros({0}, kBool), {0}))[0], 1.0);
  EXPECT_EQ(to_doubles(lax::reduce_max(tnp::zeros({0}, kU8), {0}))[0], 0.0);
}

// ---------------------------------------------------------------- logical reductions

TEST(ReduceLogical, IntegersAreBitwise) {
  for (DType d : {kI32, kU8, kI64, DType::kInt16}) {
    X64Scope x64(d == kI64);
    const int64_t R = 5, C = 77;
    Array x = random_array({R, C}, d);
    std::vector<double> v = to_doubles(x);
    std::vector<double> a = to_doubles(lax::reduce_and(x, {1})),
                        o = to_doubles(lax::reduce_or(x, {1})),
                        e = to_doubles(lax::reduce_xor(x, {1}));
    for (int64_t r = 0; r < R; ++r) {
      int64_t wa = -1, wo = 0, we = 0;
      for (int64_t c = 0; c < C; ++c) {
        const auto k = static_cast<int64_t>(v[r * C + c]);
        wa &= k, wo |= k, we ^= k;
      }
      auto fit = [&](int64_t w) {  // the value in d's range (unsigned: the low bits)
        return is_signed_integer(d)
                   ? double(w)
                   : double(static_cast<uint64_t>(w) & ((uint64_t{1} << (itemsize(d) * 8)) - 1));
      };
      EXPECT_EQ(a[r], fit(wa)) << dtype_name(d);
      EXPECT_EQ(o[r], fit(wo)) << dtype_name(d);
      EXPECT_EQ(e[r], fit(we)) << dtype_name(d);
    }
    // Empty: all ones, zero, zero.
    Array z = tnp::zeros({0, 2}, d);
    EXPECT_EQ(to_doubles(lax::reduce_and(z, {0}))[0],
              is_signed_integer(d) ? -1.0 : 255.0 * (d == kU8));
    EXPECT_EQ(to_doubles(lax::reduce_or(z, {0}))[0], 0.0);
  }
}

TEST(ReduceLogical, ErrorsAndNoTangents) {
  EXPECT_ERROR(TypeError, lax::reduce_and(tnp::zeros({3}, kF32), {0}),
               "[reduce_and] reduce_and does not accept dtype float32");
  EXPECT_ERROR(TypeError, lax::reduce_prod(tnp::zeros({3}, kBool), {0}),
               "reduce_prod does not accept dtype bool");
  EXPECT_ERROR(IndexError, lax::reduce_xor(tnp::zeros({3}, kI32), {1}), "out-of-bounds");
  EXPECT_ERROR(ValueError, lax::reduce_min(tnp::zeros({3, 2}, kI32), {1, 1}), "duplicate");
  Array x = random_array({4, 3}, kI32);
  Array xs[] = {x}, ts[] = {Array()};
  auto [po, to] = flat::jvp(
      [](std::span<const Array> a) { return std::vector<Array>{lax::reduce_or(a[0], {0})}; }, xs,
      ts);
  EXPECT_EQ(to[0].dtype(), DType::kFloat0);
  EXPECT_EQ(po[0].shape(), (Shape{3}));
}

// ---------------------------------------------------------------- argmax / argmin

TEST(ArgMinMax, NanIsTheExtremumAndTheFirstWins) {
  Array x = make({2, 5}, kF32, {1.0, NAN, 3.0, NAN, -1.0, 2.0, 7.0, -3.0, 7.0, -3.0});
  EXPECT_EQ(to_doubles(lax::argmax(x, 1)), (std::vector<double>{1, 1}));
  EXPECT_EQ(to_doubles(lax::argmin(x, 1)), (std::vector<double>{1, 2}));
  Array y = make({3, 2}, DType::kBFloat16, {0.0, NAN, 0.0, 1.0, 5.0, NAN});
  EXPECT_EQ(to_doubles(lax::argmax(y, 0)), (std::vector<double>{2, 0}));
  EXPECT_EQ(to_doubles(lax::argmin(y, 0)), (std::vector<double>{0, 0}));
  Array b = make({4}, kBool, {0, 1, 0, 1});
  EXPECT_EQ(to_doubles(lax::argmax(b, 0))[0], 1.0);
  EXPECT_EQ(to_doubles(lax::argmin(b, 0))[0], 0.0);
}

TEST(ArgMinMax, IndexDtypeIsCanonicalized) {
  Array x = random_array({3, 4}, kF32);
  EXPECT_EQ(lax::argmax(x, 1, kI64).dtype(), kI32);  // int64 -> int32 without x64
  EXPECT_EQ(lax::argmin(x, 0, kU8).dtype(), kU8);
  X64Scope x64;
  Array i = lax::argmax(x, 1, kI64);
  EXPECT_EQ(i.dtype(), kI64);
  EXPECT_EQ(i.shape(), (Shape{3}));
}

TEST(ArgMinMax, BigInputsMatchALoop) {
  // Rows (the contiguous kernel) and columns (blocks of 1024 columns), split over the pool.
  for (const auto& [shape, axis] : std::vector<std::pair<Shape, int64_t>>{
           {{64, 3000}, 1}, {{300, 2100}, 0}, {{6, 50, 700}, 1}}) {
    for (DType d : {kF32, DType::kFloat16, kI32}) {
      Array x = random_array(shape, d, -50.0, 50.0);
      std::vector<double> v = to_doubles(x);
      int64_t O = 1, I = 1, R = shape[axis];
      for (int64_t k = 0; k < axis; ++k) O *= shape[k];
      for (size_t k = axis + 1; k < shape.size(); ++k) I *= shape[k];
      std::vector<double> gmax = to_doubles(lax::argmax(x, axis)),
                          gmin = to_doubles(lax::argmin(x, axis));
      int64_t bad = 0;
      for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < I; ++i) {
          int64_t amax = 0, amin = 0;
          for (int64_t r = 1; r < R; ++r) {
            const double e = v[(o * R + r) * I + i];
            if (e > v[(o * R + amax) * I + i]) amax = r;
            if (e < v[(o * R + amin) * I + i]) amin = r;
          }
          bad += gmax[o * I + i] != double(amax) || gmin[o * I + i] != double(amin);
        }
      EXPECT_EQ(bad, 0) << dtype_name(d) << " " << shape_str(shape) << " axis " << axis;
    }
  }
}

TEST(ArgMinMax, ErrorsAndJaxprText) {
  EXPECT_ERROR(ValueError, lax::argmax(tnp::zeros({0, 3}, kF32), 0),
               "attempt to get argmax of an empty sequence");
  EXPECT_ERROR(ValueError, lax::argmin(tnp::zeros({2, 0}, kF32), 1),
               "attempt to get argmin of an empty sequence");
  EXPECT_ERROR(IndexError, lax::argmax(tnp::zeros({2, 3}, kF32), 2), "out of bounds");
  EXPECT_ERROR(TypeError, lax::argmax(tnp::zeros({2, 3}, kF32), 0, kF32),
               "index_dtype must be an integer type, but got float32");
  const std::string text =
      jaxpr_text([](std::span<const Array> a) { return std::vector<Array>{lax::argmax(a[0], 1)}; },
                 {random_array({2, 3}, kF32)});
  EXPECT_EQ(
      text,
      "{ lambda ; a:f32[2,3]. let\n    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a\n  in "
      "(b,) }");
  // No tangent: float0.
  Array xs[] = {random_array({2, 3}, kF32)}, ts[] = {random_array({2, 3}, kF32)};
  auto [po, to] = flat::jvp(
      [](std::span<const Array> a) { return std::vector<Array>{lax::argmin(a[0], 0)}; }, xs, ts);
  EXPECT_EQ(to[0].dtype(), DType::kFloat0);
}

// ---------------------------------------------------------------- lax.reduce

Array sum_body(const Array& a, const Array& x) { return lax::sub(a, lax::neg(x)); }  // not a monoid

TEST(Reduce, MonoidsBindTheirPrimitive) {
  struct Case {
    DType d;
    double init;
    Array (*op)(const Array&, const Array&);
    const char* prim;
  };
  const Case cases[] = {
      {kF32, 0.0, lax::add, "reduce_sum"},
      {kI32, 1.0, lax::mul, "reduce_prod"},
      {kF32, -INFINITY, lax::max, "reduce_max"},
      {kI32, double(std::numeric_limits<int32_t>::min()), lax::max, "reduce_max"},
      {kU8, 255.0, lax::min, "reduce_min"},
      {kBool, 1.0, lax::min, "reduce_min"},
      {kBool, 1.0, lax::bitwise_and, "reduce_and"},
      {kI32, -1.0, lax::bitwise_and, "reduce_and"},
      {kU8, 0.0, lax::bitwise_or, "reduce_or"},
      {kBool, 0.0, lax::bitwise_xor, "reduce_xor"},
      {kF32, 1.0, lax::add, "reduce["},  // not the identity: the generic primitive
      {kI32, 0.0, lax::mul, "reduce["},
  };
  for (const Case& c : cases) {
    const Array init = tnp::scalar(c.init, c.d);
    const std::string text = jaxpr_text(
        [&](std::span<const Array> a) {
          return std::vector<Array>{lax::reduce(a[0], init, c.op, {1})};
        },
        {tnp::zeros({2, 3}, c.d)});
    EXPECT_TRUE(contains(text, c.prim)) << c.prim << " " << dtype_name(c.d) << ": " << text;
    if (std::string(c.prim) != "reduce[") {
      EXPECT_FALSE(contains(text, "reduce[")) << text;
    }
  }
  // Either argument order of the equation.
  const std::string text = jaxpr_text(
      [](std::span<const Array> a) {
        return std::vector<Array>{
            lax::reduce(a[0], tnp::scalar(0.0, kF32),
                        [](const Array& p, const Array& q) { return lax::add(q, p); }, {0})};
      },
      {tnp::zeros({4}, kF32)});
  EXPECT_TRUE(contains(text, "reduce_sum[axes=(0,)]")) << text;
}

TEST(Reduce, GenericJaxprText) {
  const std::string text = jaxpr_text(
      [](std::span<const Array> a) {
        return std::vector<Array>{lax::reduce(a[0], tnp::scalar(0.0, kF32), sum_body, {1})};
      },
      {tnp::zeros({2, 3}, kF32)});
  std::cout << text << "\n";
  EXPECT_TRUE(contains(text, "reduce[")) << text;
  EXPECT_TRUE(contains(text, "computation={ lambda ; ")) << text;
  EXPECT_TRUE(contains(text, "dimensions=(1,)")) << text;
  EXPECT_TRUE(contains(text, "neg")) << text;
  EXPECT_TRUE(contains(text, "0.0:f32[]")) << text;  // the init value, a literal operand
}

TEST(Reduce, TreeOnBigInputsMatchesTheMonoid) {
  // sum_body is addition written as two equations: the generic primitive. Integers: exact.
  for (const auto& [shape, dims] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{37, 1001}, {1}}, {{1001, 37}, {0}}, {{5, 7, 9, 11}, {0, 2}}, {{3, 513}, {0, 1}}}) {
    Array xi = random_array(shape, kI32);
    Array gi = lax::reduce(xi, tnp::scalar(0, kI32), sum_body, dims);
    EXPECT_EQ(to_doubles(gi), to_doubles(lax::reduce_sum(xi, dims))) << shape_str(shape);
    Array xf = random_array(shape, kF32);
    Array gf = lax::reduce(xf, tnp::scalar(0.0, kF32), sum_body, dims);
    EXPECT_EQ(compare(to_doubles(gf), to_doubles(lax::reduce_sum(xf, dims)), 1e-5, 1e-4), "")
        << shape_str(shape);
  }
}

TEST(Reduce, InitFoldedOnceAndEmptyAxes) {
  Array x = random_array({3, 4}, kI32);
  std::vector<double> s = to_doubles(lax::reduce_sum(x, {1}));
  std::vector<double> g = to_doubles(lax::reduce(x, tnp::scalar(5, kI32), lax::add, {1}));
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(g[i], s[i] + 5);
  // An empty reduced axis gives the init value.
  EXPECT_EQ(
      to_doubles(lax::reduce(tnp::zeros({3, 0}, kF32), tnp::scalar(2.5, kF32), sum_body, {1})),
      std::vector<double>(3, 2.5));
}

TEST(Reduce, ClosedOverConstantsAndTracedValues) {
  X64Scope x64;
  // A non-scalar concrete array: a constant of the body, passed as an operand.
  Array c = make({3}, kF64, {1.0, 2.0, 0.5});
  Array x = random_array({4, 5}, kF64);
  // (a, v) -> a + v + sum(c) is associative; with the init folded once: sum(x) + n sum(c).
  auto body = [&](const Array& a, const Array& v) {
    return lax::add(lax::add(a, v), lax::reduce_sum(c, {0}));
  };
  const std::string text = jaxpr_text(
      [&](std::span<const Array> a) {
        return std::vector<Array>{lax::reduce(a[0], tnp::scalar(0.0, kF64), body, {1})};
      },
      {x});
  EXPECT_TRUE(contains(text, "{ lambda a:f64[3]; b:f64[4,5]. let")) << text;
  EXPECT_TRUE(contains(text, "computation={ lambda d:f64[3]; e:f64[] f:f64[]. let")) << text;
  EXPECT_TRUE(contains(text, "] b 0.0:f64[] a")) << text;  // the constant, a trailing operand
  std::vector<double> got = to_doubles(lax::reduce(x, tnp::scalar(0.0, kF64), body, {1}));
  std::vector<double> s = to_doubles(lax::reduce_sum(x, {1}));
  for (double& e : s) e += 5 * 3.5;
  EXPECT_EQ(compare(got, s, 1e-13, 1e-13), "");
  // A traced value (the gradient's argument): d/ds reduce(x, 0, a + v + s) = n.
  auto f = [&](std::span<const Array> a) {
    const Array s_ = a[0];
    Array r = lax::reduce(
        x, tnp::scalar(0.0, kF64),
        [&](const Array& p, const Array& q) { return lax::add(lax::add(p, q), s_); }, {0, 1});
    return std::vector<Array>{r};
  };
  Array args[] = {tnp::scalar(0.25, kF64)};
  flat::ValueAndGrad g = flat::value_and_grad(f, args, false);
  EXPECT_EQ(to_doubles(g.grads[0])[0], 20.0);
}

TEST(Reduce, GradOfLogSumExpIsSoftmax) {
  X64Scope x64;
  Array x = random_array({3, 9}, kF64, -3.0, 3.0);
  std::vector<double> v = to_doubles(x);
  auto lse = [](const Array& a, const Array& b) {
    Array m = lax::max(a, b);
    return lax::add(m, lax::log(lax::add(lax::exp(lax::sub(a, m)), lax::exp(lax::sub(b, m)))));
  };
  auto f = [&](std::span<const Array> a) {
    Array r = lax::reduce(a[0], tnp::scalar(-INFINITY, kF64), lse, {1});
    return std::vector<Array>{lax::reduce_sum(r, {0})};
  };
  Array args[] = {x};
  flat::ValueAndGrad g = flat::value_and_grad(f, args, false);
  std::vector<double> want(27);
  for (int r = 0; r < 3; ++r) {
    double z = 0;
    for (int c = 0; c < 9; ++c) z += std::exp(v[r * 9 + c]);
    for (int c = 0; c < 9; ++c) want[r * 9 + c] = std::exp(v[r * 9 + c]) / z;
  }
  EXPECT_EQ(compare(to_doubles(g.grads[0]), want, 1e-13, 1e-15), "");
}

TEST(Reduce, Errors) {
  Array x = tnp::zeros({2, 3}, kF32), z = tnp::scalar(0.0, kF32);
  auto body2 = [](const std::vector<Array>& a, const std::vector<Array>& v) {
    return std::vector<Array>{sum_body(a[0], v[0]), sum_body(a[1], v[1])};
  };
  EXPECT_ERROR(ValueError, lax::reduce({x, tnp::zeros({3, 2}, kF32)}, {z, z}, body2, {0}),
               "reduce operands must have the same shape");
  EXPECT_ERROR(ValueError, lax::reduce(x, tnp::zeros({1}, kF32), sum_body, {0}),
               "non-scalar initial value");
  EXPECT_ERROR(TypeError, lax::reduce(x, tnp::scalar(0, kI32), sum_body, {0}),
               "operand dtypes should match corresponding initial value dtypes");
  EXPECT_ERROR(IndexError, lax::reduce(x, z, sum_body, {2}), "out-of-bounds");
  EXPECT_ERROR(ValueError, lax::reduce(x, z, sum_body, {0, 0}), "duplicate");
  EXPECT_ERROR(
      TypeError,
      lax::reduce(x, z,
                  [](const Array& a, const Array&) { return lax::convert_element_type(a, kI32); },
                  {0}),
      "the computation must map");
  EXPECT_ERROR(TypeError,
               lax::reduce({x}, {z},
                           [](const std::vector<Array>& a, const std::vector<Array>&) {
                             return std::vector<Array>{a[0], a[0]};
                           },
                           {0}),
               "the computation returned 2 values for 1 operands");
}

}  // namespace
}  // namespace tessera
