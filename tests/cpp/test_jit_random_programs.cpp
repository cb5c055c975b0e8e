// Differential testing of jit: random programs — DAGs of elementwise (unary, binary with NumPy
// broadcasting, weak Python scalars, where), index-map (transpose, reshape, flip, expand_dims +
// broadcast_to, pad with cropping and interior padding, concatenate, dynamic_slice and
// dynamic_update_slice with literal and computed starts, integer-array indexing — a gather —
// with constant or computed indices, out of range ones clamped), reduction (sum, max, argmax over
// an axis), contraction (matmul) and convert primitives over random shapes — give bitwise the same
// results under jit as eagerly. jit runs them through the whole pipeline (inline, fold, simplify,
// cse, dce) and its thunks, so every simplification rule must be exact. Each program is recorded as
// a list of steps chosen while running it eagerly, then replayed under jit. Time-boxed
// (TESSERA_RANDOM_PROGRAM_SECONDS, default 8 s, at most 1000 programs); the seed is the test seed,
// printed at start.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/env.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::random_array;

enum class Op {
  kUnary,
  kBinary,
  kScalar,
  kWhere,
  kTranspose,
  kReshape,
  kFlip,
  kBroadcast,
  kReduce,
  kMatmul,
  kConvert,
  kPad,
  kConcat,
  kDynamicSlice,
  kDynamicUpdateSlice,
  kTake
};

struct Step {
  Op op;
  std::vector<int64_t> args;  // operand indices, then the op's choices
};

std::vector<int64_t> random_perm(size_t n, std::mt19937_64& g) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}

// NumPy broadcasting compatibility of two shapes.
bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

Array run_step(const Step& s, const std::vector<Array>& v) {
  const Array& a = v[static_cast<size_t>(s.args[0])];
  switch (s.op) {
    case Op::kUnary:
      switch (s.args[1]) {
        case 0:
          return tnp::sin(a);
        case 1:
          return tnp::tanh(a);
        case 2:
          return tnp::abs(a);
        case 3:
          return tnp::negative(a);
        case 4:
          return tnp::square(a);
        case 5:
          return tnp::log1p(tnp::abs(a));
        default:
          return tnp::exp(tnp::negative(tnp::abs(a)));
      }
    case Op::kBinary: {
      const Array& b = v[static_cast<size_t>(s.args[1])];
      switch (s.args[2]) {
        case 0:
          return a + b;
        case 1:
          return a - b;
        case 2:
          return a * b;
        case 3:
          return tnp::maximum(a, b);
        default:
          return tnp::minimum(a, b);
      }
    }
    case Op::kScalar:  // weak Python-style scalars, including the identities simplify sees
      switch (s.args[1]) {
        case 0:
          return a * 1.0;
        case 1:
          return a + 0.0;  // not an identity for -0.0
        case 2:
          return a - 0.0;
        case 3:
          return a * 0.75;
        default:
          return 1.5 - a;
      }
    case Op::kWhere: {
      const Array& b = v[static_cast<size_t>(s.args[1])];
      return tnp::where(a > b, a, b);
    }
    case Op::kTranspose:
      return tnp::transpose(a, std::vector<int64_t>(s.args.begin() + 1, s.args.end()));
    case Op::kReshape:
      return tnp::reshape(a, Shape(s.args.begin() + 1, s.args.end()));
    case Op::kFlip:
      return tnp::flip(a, s.args[1]);
    case Op::kBroadcast: {
      Shape target = a.shape();
      target.insert(target.begin(), s.args[1]);
      return tnp::broadcast_to(tnp::expand_dims(a, 0), target);
    }
    case Op::kReduce:  // sum, max, or argmax (as float32 for the steps after it)
      if (s.args[2] == 2) return tnp::astype(lax::argmax(a, s.args[1]), DType::kFloat32);
      return s.args[2] == 0 ? tnp::sum(a, s.args[1]) : tnp::max(a, s.args[1]);
    case Op::kMatmul:
      return tnp::matmul(a, tnp::transpose(a));
    case Op::kConvert:  // f32 -> i32 -> f32 truncates: must not simplify away
      return tnp::astype(tnp::astype(a * 3.0, DType::kInt32), DType::kFloat32);
    case Op::kPad: {  // (low, high) per axis, negative crops; interior on one axis
      std::vector<lax::PadConfig> cfg;
      for (size_t d = 0; d < a.shape().size(); ++d)
        cfg.push_back({s.args[1 + 3 * d], s.args[2 + 3 * d], s.args[3 + 3 * d]});
      return lax::pad(a, tnp::full({}, 0.5, a.dtype()), cfg);
    }
    case Op::kConcat:
      return tnp::concatenate({a, v[static_cast<size_t>(s.args[1])], a}, s.args[2]);
    case Op::kDynamicSlice: {  // starts: literals, or computed from the data (kernel symbols)
      std::vector<Array> starts;
      Shape sizes;
      for (size_t d = 0; d < a.shape().size(); ++d) {
        const int64_t c = s.args[1 + 2 * d];
        sizes.push_back(s.args[2 + 2 * d]);
        starts.push_back(c >= 100 ? tnp::astype(tnp::sum(a) > 0.0, DType::kInt32) * (c - 100)
                                  : tnp::array(std::vector<int32_t>{static_cast<int32_t>(c)}, {}));
      }
      return lax::dynamic_slice(a * 2.0, starts, sizes);
    }
    case Op::kDynamicUpdateSlice: {  // the update: a computed corner of a, written elsewhere
      std::vector<Array> starts;
      std::vector<int64_t> zero, sizes;
      for (size_t d = 0; d < a.shape().size(); ++d) {
        const int64_t c = s.args[1 + 2 * d];
        zero.push_back(0);
        sizes.push_back(s.args[2 + 2 * d]);
        starts.push_back(c >= 100 ? tnp::astype(tnp::sum(a) > 0.0, DType::kInt32) * (c - 100)
                                  : tnp::array(std::vector<int32_t>{static_cast<int32_t>(c)}, {}));
      }
      return lax::dynamic_update_slice(a + 1.0, lax::slice(a, zero, sizes) * 3.0, starts);
    }
    case Op::kTake: {  // a[:, ..., ids] along axis args[1], ids args[3:]: constant (args[2] 0),
                       // computed (1), or jnp.take, which fills out-of-range ones (2)
      const auto axis = static_cast<size_t>(s.args[1]);
      std::vector<int32_t> ids;
      for (size_t k = 3; k < s.args.size(); ++k) ids.push_back(static_cast<int32_t>(s.args[k]));
      Array idx = tnp::array(ids, {static_cast<int64_t>(ids.size())});
      if (s.args[2] == 1) idx = idx + tnp::astype(tnp::sum(a) > 0.0, DType::kInt32);
      if (s.args[2] == 2) return tnp::take(a, idx, static_cast<int64_t>(axis)) * 1.5;  // fills
      std::vector<Index> where(axis, Slice());
      where.push_back(idx);
      return a[where] * 1.5;
    }
  }
  return a;
}

// Picks a step valid for the current values (and returns it).
Step choose(const std::vector<Array>& v, std::mt19937_64& g) {
  auto pick = [&](size_t n) { return static_cast<int64_t>(g() % n); };
  for (;;) {
    const int64_t i = pick(v.size());
    const Array& a = v[static_cast<size_t>(i)];
    const Shape& sh = a.shape();
    switch (static_cast<Op>(pick(16))) {
      case Op::kUnary:
        return {Op::kUnary, {i, pick(7)}};
      case Op::kBinary:
      case Op::kWhere: {
        std::vector<int64_t> ok;
        for (size_t j = 0; j < v.size(); ++j)
          if (broadcastable(sh, v[j].shape())) ok.push_back(static_cast<int64_t>(j));
        const int64_t j = ok[static_cast<size_t>(pick(ok.size()))];
        if (pick(3) == 0) return {Op::kWhere, {i, j}};
        return {Op::kBinary, {i, j, pick(5)}};
      }
      case Op::kScalar:
        return {Op::kScalar, {i, pick(5)}};
      case Op::kTranspose: {
        if (sh.size() < 2) continue;
        Step s{Op::kTranspose, {i}};
        for (int64_t p : random_perm(sh.size(), g)) s.args.push_back(p);
        return s;
      }
      case Op::kReshape: {
        if (a.size() == 0) continue;
        Step s{Op::kReshape, {i}};
        if (sh.size() != 1) {
          s.args.push_back(a.size());
        } else {
          // Split a 1-D array at a divisor.
          int64_t d = 1;
          for (int64_t c = 2; c <= a.size(); ++c)
            if (a.size() % c == 0 && pick(2) == 0) d = c;
          s.args.push_back(d);
          s.args.push_back(a.size() / d);
        }
        return s;
      }
      case Op::kFlip:
        if (sh.empty()) continue;
        return {Op::kFlip, {i, pick(sh.size())}};
      case Op::kBroadcast:
        if (a.size() > 64) continue;
        return {Op::kBroadcast, {i, 1 + pick(3)}};
      case Op::kReduce: {
        if (sh.empty()) continue;
        const int64_t axis = pick(sh.size());
        // max and argmax over an empty axis have no identity (an error, as in JAX): sum there.
        return {Op::kReduce, {i, axis, sh[static_cast<size_t>(axis)] == 0 ? 0 : pick(3)}};
      }
      case Op::kMatmul:
        if (sh.size() != 2) continue;
        return {Op::kMatmul, {i}};
      case Op::kConvert:
        return {Op::kConvert, {i}};
      case Op::kPad: {
        if (a.size() > 256) continue;
        Step s{Op::kPad, {i}};
        for (int64_t n : sh) {
          const int64_t lo = pick(4) - 1, hi = pick(4) - 1;
          const int64_t interior = pick(8) == 0 ? 1 : 0;
          const int64_t size = n + std::max<int64_t>(0, n - 1) * interior + lo + hi;
          s.args.push_back(size < 0 ? 0 : lo);
          s.args.push_back(size < 0 ? 0 : hi);
          s.args.push_back(interior);
        }
        return s;
      }
      case Op::kConcat: {
        if (sh.empty() || a.size() > 256) continue;
        const int64_t axis = pick(sh.size());
        std::vector<int64_t> ok;  // the same shape but along the axis
        for (size_t j = 0; j < v.size(); ++j) {
          const Shape& o = v[j].shape();
          bool same = o.size() == sh.size();
          for (size_t d = 0; same && d < sh.size(); ++d)
            same = static_cast<int64_t>(d) == axis || o[d] == sh[d];
          if (same) ok.push_back(static_cast<int64_t>(j));
        }
        return {Op::kConcat, {i, ok[static_cast<size_t>(pick(ok.size()))], axis}};
      }
      case Op::kDynamicSlice:
      case Op::kDynamicUpdateSlice: {
        if (sh.empty()) continue;
        Step s{pick(2) == 0 ? Op::kDynamicSlice : Op::kDynamicUpdateSlice, {i}};
        for (int64_t n : sh) {
          const int64_t start = pick(3) == 0 ? 100 + pick(4) : pick(6) - 2;  // may be negative
          s.args.push_back(start);
          s.args.push_back(n == 0 ? 0 : 1 + pick(n));
        }
        return s;
      }
      case Op::kTake: {
        if (sh.empty()) continue;
        const int64_t axis = pick(sh.size());
        const int64_t n = sh[static_cast<size_t>(axis)];
        if (n == 0) continue;
        Step s{Op::kTake, {i, axis, pick(3)}};
        for (int64_t k = 1 + pick(5); k > 0; --k) s.args.push_back(pick(2 * n + 4) - n - 2);
        return s;
      }
    }
  }
}

// The same bits, except that any NaN equals any NaN: a NaN's sign and payload after arithmetic
// depend on the operand order the instruction selection chose (jnp.take fills with NaN).
bool same_bits(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype() || a.weak_type() != b.weak_type())
    return false;
  if (a.nbytes() == 0 || std::memcmp(a.raw_data("test"), b.raw_data("test"), a.nbytes()) == 0)
    return true;
  if (a.dtype() == DType::kFloat16 || a.dtype() == DType::kBFloat16) {
    const uint16_t inf = a.dtype() == DType::kFloat16 ? 0x7c00 : 0x7f80;
    const auto* x = static_cast<const uint16_t*>(a.raw_data("test"));
    const auto* y = static_cast<const uint16_t*>(b.raw_data("test"));
    for (int64_t i = 0; i < a.size(); ++i)
      if (x[i] != y[i] && !((x[i] & 0x7fff) > inf && (y[i] & 0x7fff) > inf)) return false;
    return true;
  }
  if (a.dtype() != DType::kFloat32) return false;
  const auto* x = static_cast<const float*>(a.raw_data("test"));
  const auto* y = static_cast<const float*>(b.raw_data("test"));
  for (int64_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(x[i]) && std::isnan(y[i])) && std::memcmp(x + i, y + i, sizeof(float)) != 0)
      return false;
  return true;
}

std::string describe(const std::vector<Step>& steps) {
  std::ostringstream s;
  for (const Step& st : steps) {
    s << static_cast<int>(st.op) << "(";
    for (int64_t x : st.args) s << x << ",";
    s << ") ";
  }
  return s.str();
}

TEST(JitRandomPrograms, EqualEagerBitwise) {
  std::mt19937_64& g = testing::rng();
  const auto start = std::chrono::steady_clock::now();
  const int64_t seconds = env_int("TESSERA_RANDOM_PROGRAM_SECONDS", 1, 3600).value_or(8);
  const std::vector<Shape> shapes = {{}, {4}, {3, 4}, {2, 3, 4}, {1, 4}, {3, 1}};
  int programs = 0;
  for (; programs < 1000; ++programs) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) break;
    std::vector<Array> inputs;
    const size_t n_in = 1 + g() % 3;
    // A third of the programs start from 16-bit floats (each op rounds to them, as eager does;
    // steps that mix in float32 values promote).
    const int kind = static_cast<int>(g() % 6);
    const DType dt = kind == 0 ? DType::kBFloat16 : kind == 1 ? DType::kFloat16 : DType::kFloat32;
    for (size_t k = 0; k < n_in; ++k)
      inputs.push_back(random_array(shapes[g() % shapes.size()], dt));
    // Record the steps while running them eagerly.
    std::vector<Step> steps;
    std::vector<Array> vals = inputs;
    const size_t n_steps = 3 + g() % 14;
    for (size_t k = 0; k < n_steps; ++k) {
      steps.push_back(choose(vals, g));
      vals.push_back(run_step(steps.back(), vals));
    }
    const size_t n_out = 1 + g() % 2;
    auto program = [&steps, n_in, n_out](const std::vector<Array>& xs) {
      std::vector<Array> v(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n_in));
      for (const Step& s : steps) v.push_back(run_step(s, v));
      return std::vector<Array>(v.end() - static_cast<std::ptrdiff_t>(n_out), v.end());
    };
    std::vector<Array> want = program(inputs);
    std::vector<Array> got;
    try {
      got = jit(program)(inputs);
    } catch (const std::exception& e) {
      FAIL() << "program " << programs << ": " << describe(steps) << "\n"
             << to_string(make_jaxpr(program)(inputs)) << "\n"
             << e.what();
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k)
      ASSERT_TRUE(same_bits(got[k], want[k]))
          << "program " << programs << " output " << k << ": " << describe(steps) << "\njit "
          << got[k].repr() << "\neager " << want[k].repr();
  }
  EXPECT_GT(programs, 0);
  std::cerr << "[random programs] " << programs << " programs equal under jit and eagerly\n";
}

}  // namespace
}  // namespace tessera
