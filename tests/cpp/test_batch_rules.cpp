// Batching (vmap) rules of every primitive, checked against vmap-as-a-loop: each example b is
// sliced out of the batched arguments on the host, the primitive is applied to it eagerly and
// the results are stacked; the rule's output, with its batch axis moved to the front on the
// host, must equal that bit for bit (dot_general and float reduce_sum: a tight tolerance, as
// the kernels may block the sums differently). Batch axes go at the front, the back and in the
// middle, and every combination of batched/unbatched arguments is swept. Each rule also runs
// on abstract tracers under a recording trace: that proves it only binds primitives (it never
// reads data, so it works under any trace), gives the same output aval, and lists the
// primitives it binds, so the tests can check that it adds no needless transposes or copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

#include "prims/prims.h"
#include "tessera/param_types.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::rng;
using testing::to_doubles;
using Ints = std::vector<int64_t>;

constexpr int64_t kU = -1;  // an unbatched argument
constexpr DType kF32 = DType::kFloat32;
constexpr DType kI32 = DType::kInt32;
constexpr DType kBool = DType::kBool;

// ---------------------------------------------------------------- host helpers

int64_t prod(const Shape& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; ++i) p *= s[i];
  return p;
}

Shape with_axis(Shape s, int64_t pos, int64_t size) {
  s.insert(s.begin() + pos, size);
  return s;
}

// x[..., i, ...] along `axis`, copied on the host.
Array take(const Array& x, int64_t axis, int64_t i) {
  const Shape& s = x.shape();
  Shape out = s;
  out.erase(out.begin() + axis);
  const int64_t outer = prod(s, 0, axis), n = s[axis];
  const int64_t inner = prod(s, axis + 1, s.size()) * static_cast<int64_t>(itemsize(x.dtype()));
  std::vector<char> buf(static_cast<size_t>(outer * inner) + 1);
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(buf.data() + o * inner, src + (o * n + i) * inner, inner);
  return array_from_host(Aval{out, x.dtype(), x.weak_type()}, buf.data());
}

// Stacks arrays of one aval along a new leading axis, on the host.
Array stack(const std::vector<Array>& xs) {
  const Aval& a = xs.at(0).aval();
  const size_t nb = a.nbytes();
  std::vector<char> buf(nb * xs.size() + 1);
  for (size_t k = 0; k < xs.size(); ++k) {
    EXPECT_EQ(xs[k].aval(), a);
    if (nb) std::memcpy(buf.data() + k * nb, xs[k].raw_data(), nb);
  }
  return array_from_host(
      Aval{with_axis(a.shape, 0, static_cast<int64_t>(xs.size())), a.dtype, a.weak_type},
      buf.data());
}

Array to_front(const Array& x, int64_t axis) {
  std::vector<Array> parts;
  for (int64_t i = 0; i < x.shape()[axis]; ++i) parts.push_back(take(x, axis, i));
  return stack(parts);
}

// Value distributions: kAny floats in [-2, 2) / integers in [-50, 50]; kSmall integer values
// in [-2, 2] (so comparisons and max/min see ties); kPositive floats in [0.5, 2).
enum class Dist { kAny, kSmall, kPositive };

Array make_random(const Shape& shape, DType dtype, Dist dist, bool weak) {
  Array a;
  if (dist == Dist::kSmall && !is_bool(dtype)) {
    const int64_t n = shape_size(shape);
    std::uniform_int_distribution<int> d(is_unsigned_integer(dtype) ? 0 : -2, 2);
    a = empty_array(Aval{shape, dtype, false}, "test");
    auto* p = static_cast<char*>(a.buffer()->data());
    for (int64_t i = 0; i < n; ++i) store_from_double(dtype, p + i * itemsize(dtype), d(rng()));
  } else if (dist == Dist::kPositive) {
    a = testing::random_array(shape, dtype, 0.5, 2.0);
  } else {
    a = testing::random_array(shape, dtype);
  }
  return Array(Aval{shape, dtype, weak}, a.buffer());
}

// ---------------------------------------------------------------- abstract tracing

class AbstractTracer : public Tracer {
 public:
  AbstractTracer(Aval aval, uint64_t tag) : aval_(std::move(aval)), tag_(tag) {}
  const Aval& aval() const override { return aval_; }
  uint64_t trace_tag() const override { return tag_; }
  std::string str() const override { return "AbstractTracer(" + aval_.str() + ")"; }

 private:
  Aval aval_;
  uint64_t tag_;
};

// Records the primitives bound under it and returns abstract tracers of their output avals.
class RecordingTrace : public Trace {
 public:
  RecordingTrace() : Trace(current_trace()) {}
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                       const Params& params) override {
    names.push_back(p.name());
    std::vector<Aval> in;
    for (const Array& a : args) in.push_back(a.aval());
    std::vector<Array> outs;
    for (Aval& o : p.abstract_eval(in, params)) outs.push_back(tracer(std::move(o)));
    return outs;
  }
  Array tracer(Aval a) { return Array(std::make_shared<AbstractTracer>(std::move(a), tag())); }
  std::vector<std::string> names;
};

int count(const std::vector<std::string>& names, const std::string& n) {
  return static_cast<int>(std::count(names.begin(), names.end(), n));
}

// ---------------------------------------------------------------- the check

struct Arg {
  Shape shape;  // logical (per-example) shape
  DType dtype;
  bool weak = false;
};

struct Outcome {
  std::vector<std::string> names;  // primitives the rule bound
  int64_t out_dim = -2;
  Aval out_aval;
};

std::string describe(const Primitive& prim, const Params& params, const std::vector<Arg>& args,
                     const Ints& dims, int64_t B) {
  std::ostringstream os;
  os << prim.name() << " {" << params.str() << "} B=" << B << " args:";
  for (size_t i = 0; i < args.size(); ++i)
    os << " " << Aval{args[i].shape, args[i].dtype, args[i].weak}.str() << "@" << dims[i];
  return os.str();
}

// Runs prim.batch on fresh random arguments (logical shapes `args`, batch axis of size B at
// dims[i], or unbatched for -1) and compares it with the loop over examples.
Outcome check_impl(const Primitive& prim, const Params& params, const std::vector<Arg>& args,
                   const Ints& dims, int64_t B, Dist dist, double tol) {
  Outcome res;
  std::vector<Array> xs;
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape s = dims[i] == kU ? args[i].shape : with_axis(args[i].shape, dims[i], B);
    xs.push_back(make_random(s, args[i].dtype, dist, args[i].weak));
  }
  if (!prim.batch) {
    ADD_FAILURE() << "no batching rule";
    return res;
  }
  auto [outs, out_dims] = prim.batch(BatchAxis{B, ""}, xs, dims, params);
  if (outs.size() != 1 || out_dims.size() != 1) {
    ADD_FAILURE() << "expected one output and one out dim";
    return res;
  }
  res.out_dim = out_dims[0];
  res.out_aval = outs[0].aval();
  if (res.out_dim < 0 || res.out_dim >= outs[0].ndim() || outs[0].shape()[res.out_dim] != B) {
    ADD_FAILURE() << "bad out dim " << res.out_dim << " for " << outs[0].aval().str();
    return res;
  }
  // The loop over examples.
  std::vector<Array> per_example;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<Array> ex;
    for (size_t i = 0; i < xs.size(); ++i)
      ex.push_back(dims[i] == kU ? xs[i] : take(xs[i], dims[i], b));
    per_example.push_back(bind1(prim, ex, params));
  }
  const Array want = stack(per_example);
  const Array got = to_front(outs[0], res.out_dim);
  EXPECT_EQ(got.aval(), want.aval());
  if (got.shape() == want.shape()) {
    EXPECT_EQ(compare(to_doubles(got), to_doubles(want), tol, tol), "");
  }
  // The same rule on abstract tracers: binds only, and the same output aval.
  RecordingTrace rec;
  std::vector<Array> ts;
  for (const Array& x : xs) ts.push_back(rec.tracer(x.aval()));
  {
    TraceScope scope(&rec);
    auto [touts, tdims] = prim.batch(BatchAxis{B, ""}, ts, dims, params);
    EXPECT_EQ(tdims, out_dims);
    if (touts.size() == 1) {
      EXPECT_TRUE(touts[0].is_tracer());
      EXPECT_EQ(touts[0].aval(), outs[0].aval());
    }
  }
  res.names = rec.names;
  return res;
}

// check_impl, with an exception reported as this case's failure (the sweep goes on).
Outcome check(const Primitive& prim, const Params& params, const std::vector<Arg>& args,
              const Ints& dims, int64_t B, Dist dist = Dist::kAny, double tol = 0) {
  SCOPED_TRACE(describe(prim, params, args, dims, B));
  try {
    return check_impl(prim, params, args, dims, B, dist, tol);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "exception: " << e.what();
    return {};
  }
}

// Calls f(dims) for every assignment of a batch dim (-1, or 0..rank) to each argument, except
// all unbatched.
template <class F>
void for_each_dims(const Ints& ranks, F&& f) {
  Ints dims(ranks.size(), kU);
  auto rec = [&](auto&& self, size_t i) -> void {
    if (i == ranks.size()) {
      if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d != kU; })) f(dims);
      return;
    }
    for (int64_t d = kU; d <= ranks[i]; ++d) {
      dims[i] = d;
      self(self, i + 1);
    }
  };
  rec(rec, 0);
}

constexpr int64_t kSizes[] = {1, 3};

class BatchRules : public ::testing::Test {
 protected:
  void SetUp() override { register_all(); }
};

// ---------------------------------------------------------------- elementwise

struct ShapePair {
  Shape x, y;
};
const ShapePair kBroadcastPairs[] = {{{3, 4}, {3, 4}},       {{3, 4}, {1, 4}}, {{3, 1}, {1, 4}},
                                     {{}, {3, 4}},           {{3, 4}, {}},     {{}, {}},
                                     {{2, 3, 4}, {2, 1, 4}}, {{1}, {5}}};

// Binary rules bind the primitive once, reshape unbatched or rank-0 operands (no copies) and
// transpose only when both operands are batched, of the same rank > 0, at different dims.
void check_binary(const Primitive& prim, DType dtype, Dist dist) {
  for (const ShapePair& sp : kBroadcastPairs) {
    const Ints ranks = {static_cast<int64_t>(sp.x.size()), static_cast<int64_t>(sp.y.size())};
    for (int64_t B : kSizes) {
      for_each_dims(ranks, [&](const Ints& dims) {
        const Outcome o = check(prim, {}, {{sp.x, dtype}, {sp.y, dtype}}, dims, B, dist);
        SCOPED_TRACE(describe(prim, {}, {{sp.x, dtype}, {sp.y, dtype}}, dims, B));
        const bool both = dims[0] != kU && dims[1] != kU;
        const int want_t = both && ranks[0] == ranks[1] && ranks[0] > 0 && dims[0] != dims[1];
        EXPECT_EQ(count(o.names, "transpose"), want_t);
        EXPECT_EQ(count(o.names, prim.name()), 1);
        EXPECT_EQ(
            count(o.names, prim.name()) + count(o.names, "transpose") + count(o.names, "reshape"),
            static_cast<int>(o.names.size()));
        // Batched operands that need no reshaping keep their batch dim.
        if (dims[0] != kU && !both && ranks[0] > 0) {
          EXPECT_EQ(o.out_dim, dims[0]);
        }
        if (dims[1] != kU && !both && ranks[1] > 0) {
          EXPECT_EQ(o.out_dim, dims[1]);
        }
        if (dims[0] != kU && dims[0] == dims[1] && ranks[0] == ranks[1]) {
          EXPECT_TRUE(o.names == std::vector<std::string>{prim.name()});
        }
      });
    }
  }
}

TEST_F(BatchRules, BinaryArithmetic) {
  using namespace prims;
  for (const Primitive* p : {&add, &sub, &mul, &div, &max, &min}) {
    check_binary(*p, kF32, Dist::kAny);
    check_binary(*p, kI32, Dist::kAny);
  }
  check_binary(prims::max, kBool, Dist::kAny);
  check_binary(prims::min, kBool, Dist::kAny);
  check_binary(prims::max, kF32, Dist::kSmall);  // ties
  check_binary(prims::pow, kF32, Dist::kPositive);
  check_binary(prims::pow, kF32, Dist::kAny);  // NaNs for negative bases, compared as equal
}

TEST_F(BatchRules, Compare) {
  using namespace prims;
  for (const Primitive* p : {&eq, &ne, &lt, &le, &gt, &ge}) {
    check_binary(*p, kF32, Dist::kSmall);
    check_binary(*p, kI32, Dist::kSmall);
  }
  check_binary(prims::eq, kBool, Dist::kAny);
  check_binary(prims::lt, kBool, Dist::kAny);
}

const Shape kUnaryShapes[] = {{}, {5}, {2, 3, 4}, {3, 1}};

// Unary rules bind the primitive once and keep the batch dim.
void check_unary(const Primitive& prim, const Params& params, DType dtype, Dist dist) {
  for (const Shape& s : kUnaryShapes) {
    for (int64_t B : kSizes) {
      for_each_dims({static_cast<int64_t>(s.size())}, [&](const Ints& dims) {
        const Outcome o = check(prim, params, {{s, dtype}}, dims, B, dist);
        EXPECT_EQ(o.out_dim, dims[0]);
        EXPECT_TRUE(o.names == std::vector<std::string>{prim.name()}) << prim.name();
      });
    }
  }
}

TEST_F(BatchRules, Unary) {
  using namespace prims;
  for (const Primitive* p : {&neg, &exp, &sin, &cos, &tanh, &logistic})
    check_unary(*p, {}, kF32, Dist::kAny);
  for (const Primitive* p : {&log, &sqrt}) check_unary(*p, {}, kF32, Dist::kPositive);
  check_unary(neg, {}, kI32, Dist::kAny);
  for (int64_t y : {0, 1, 2, 3, -2}) check_unary(integer_pow, {{"y", y}}, kF32, Dist::kAny);
  for (int64_t y : {0, 2, 3}) check_unary(integer_pow, {{"y", y}}, kI32, Dist::kAny);
}

TEST_F(BatchRules, ConvertElementType) {
  const std::pair<DType, DType> pairs[] = {
      {kF32, kI32}, {kI32, kF32}, {kF32, kBool}, {kBool, kI32}, {kF32, DType::kFloat16}};
  for (const auto& [from, to] : pairs) {
    for (bool weak : {false, true}) {
      if (weak && is_bool(to)) continue;
      check_unary(prims::convert_element_type, {{"new_dtype", to}, {"weak_type", weak}}, from,
                  Dist::kAny);
    }
  }
}

// select_n: the batch axis goes where most full-rank batched operands have it; unbatched cases
// are broadcast (select_n cannot broadcast them itself), an unbatched rank-0 `which` is used as
// is, a batched rank-0 `which` is broadcast to the cases' shape when they have rank > 0.
void check_select(DType which_dtype, int ncases, DType case_dtype) {
  const Shape shapes[] = {{}, {3}, {2, 3}};
  for (const Shape& s : shapes) {
    const int64_t R = static_cast<int64_t>(s.size());
    for (const Shape& ws : {Shape{}, s}) {
      if (R == 0 && !ws.empty()) continue;
      std::vector<Arg> args = {{ws, which_dtype}};
      for (int k = 0; k < ncases; ++k) args.push_back({s, case_dtype});
      Ints ranks(args.size(), R);
      ranks[0] = static_cast<int64_t>(ws.size());
      for (int64_t B : kSizes) {
        for_each_dims(ranks, [&](const Ints& dims) {
          const Outcome o = check(prims::select_n, {}, args, dims, B, Dist::kSmall);
          SCOPED_TRACE(describe(prims::select_n, {}, args, dims, B));
          // Transposes: the full-rank batched operands not already at the most common dim.
          std::map<int64_t, int> at;
          int full = 0;
          for (size_t i = 0; i < args.size(); ++i) {
            if (dims[i] != kU && ranks[i] == R) ++full, ++at[dims[i]];
          }
          int most = 0;
          for (const auto& [d, c] : at) most = std::max(most, c);
          EXPECT_EQ(count(o.names, "transpose"), R == 0 ? 0 : full - most);
          // Copies: unbatched cases, an unbatched full-shape `which`, a batched rank-0 `which`
          // against cases of rank > 0.
          int copies = 0;
          for (size_t i = 1; i < args.size(); ++i) copies += dims[i] == kU;
          if (dims[0] == kU && ranks[0] > 0) ++copies;
          if (dims[0] != kU && ranks[0] == 0 && R > 0) ++copies;
          EXPECT_EQ(count(o.names, "broadcast_in_dim"), copies);
          EXPECT_EQ(count(o.names, "select_n"), 1);
          EXPECT_EQ(static_cast<int>(o.names.size()), 1 + copies + count(o.names, "transpose"));
        });
      }
    }
  }
}

TEST_F(BatchRules, SelectN) {
  check_select(kBool, 2, kF32);
  check_select(kBool, 2, kI32);
  check_select(kI32, 3, kF32);  // `which` in [-2, 2]: out-of-range values clamp
  check_select(kBool, 1, kF32);
}

// ---------------------------------------------------------------- structural

TEST_F(BatchRules, BroadcastInDim) {
  struct Case {
    Shape x, shape;
    Ints bdims;
  };
  const Case cases[] = {
      {{3}, {2, 3, 4}, {1}},    {{3, 1}, {3, 5}, {0, 1}},    {{}, {2, 3}, {}},
      {{2, 3}, {2, 3}, {0, 1}}, {{1, 3}, {4, 2, 3}, {1, 2}}, {{2, 1, 3}, {2, 5, 4, 3}, {0, 1, 3}},
      {{4}, {4, 2}, {0}}};
  for (const Case& c : cases) {
    const Params params{{"shape", c.shape}, {"broadcast_dimensions", c.bdims}};
    for (DType dt : {kF32, kI32}) {
      for (int64_t B : kSizes) {
        for_each_dims({static_cast<int64_t>(c.x.size())}, [&](const Ints& dims) {
          const Outcome o = check(prims::broadcast_in_dim, params, {{c.x, dt}}, dims, B);
          EXPECT_TRUE(o.names == std::vector<std::string>{"broadcast_in_dim"})
              << describe(prims::broadcast_in_dim, params, {{c.x, dt}}, dims, B);
        });
      }
    }
  }
}

TEST_F(BatchRules, Reshape) {
  struct Case {
    Shape x, ns;
  };
  const Case cases[] = {{{2, 3, 4}, {6, 4}},    {{2, 3, 4}, {2, 12}},   {{2, 3, 4}, {24}},
                        {{2, 3, 4}, {4, 3, 2}}, {{2, 3, 4}, {2, 3, 4}}, {{6}, {2, 3}},
                        {{}, {1, 1}},           {{2, 1, 3}, {2, 3}},    {{1, 1}, {}},
                        {{0, 3}, {3, 0}}};
  for (const Case& c : cases) {
    const Params params{{"new_sizes", c.ns}};
    const int64_t r = static_cast<int64_t>(c.x.size());
    for (int64_t B : kSizes) {
      for_each_dims({r}, [&](const Ints& dims) {
        const Outcome o = check(prims::reshape, params, {{c.x, kF32}}, dims, B);
        SCOPED_TRACE(describe(prims::reshape, params, {{c.x, kF32}}, dims, B));
        // No transpose when a prefix of new_sizes holds the elements before the batch axis
        // (always so at the front or the back); at most one otherwise.
        const int64_t before = prod(c.x, 0, dims[0]);
        bool prefix = false;
        for (size_t k = 0; k <= c.ns.size(); ++k) prefix = prefix || prod(c.ns, 0, k) == before;
        if (dims[0] == 0 || dims[0] == r) {
          EXPECT_TRUE(prefix);
        }
        EXPECT_EQ(count(o.names, "transpose"), prefix ? 0 : 1);
        EXPECT_LE(count(o.names, "reshape"), 1);
        EXPECT_EQ(o.names.size(), size_t(count(o.names, "transpose") + count(o.names, "reshape")));
      });
    }
  }
  // Spot checks of the placement: (2, B, 3, 4) -> (2, B, 12) moves nothing; (2, B, 3, 4) ->
  // (6, 4) must move the batch axis.
  const Outcome a =
      check(prims::reshape, {{"new_sizes", Shape{2, 12}}}, {{{2, 3, 4}, kF32}}, {1}, 3);
  EXPECT_EQ(a.out_dim, 1);
  EXPECT_EQ(count(a.names, "transpose"), 0);
  const Outcome b =
      check(prims::reshape, {{"new_sizes", Shape{6, 4}}}, {{{2, 3, 4}, kF32}}, {1}, 3);
  EXPECT_EQ(count(b.names, "transpose"), 1);
}

TEST_F(BatchRules, Transpose) {
  std::vector<Ints> perms = {{}, {0}, {0, 1}, {1, 0}};
  Ints p3 = {0, 1, 2};
  do perms.push_back(p3);
  while (std::next_permutation(p3.begin(), p3.end()));
  for (const Ints& perm : perms) {
    Shape s;
    for (size_t i = 0; i < perm.size(); ++i) s.push_back(static_cast<int64_t>(i) + 2);
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
    const Params params{{"permutation", perm}};
    for (DType dt : {kF32, kI32, kBool}) {
      for (int64_t B : kSizes) {
        for_each_dims({static_cast<int64_t>(s.size())}, [&](const Ints& dims) {
          const Outcome o = check(prims::transpose, params, {{s, dt}}, dims, B);
          EXPECT_EQ(o.out_dim, dims[0]);
          EXPECT_EQ(o.names.size(), identity ? 0u : 1u);
          EXPECT_EQ(count(o.names, "transpose"), identity ? 0 : 1);
        });
      }
    }
  }
}

TEST_F(BatchRules, Iota) {
  // iota has no operands: vmap never calls its rule, which reports a bug if it does.
  ASSERT_TRUE(prims::iota.batch);
  const Params params{{"dtype", kI32}, {"shape", Shape{3}}, {"dimension", int64_t{0}}};
  EXPECT_THROW(prims::iota.batch(BatchAxis{3, ""}, {}, {}, params), InternalError);
}

void check_reduce(const Primitive& prim, DType dt, double tol) {
  struct Case {
    Shape x;
    Ints axes;
  };
  const Case cases[] = {{{2, 3, 4}, {}},     {{2, 3, 4}, {0}},       {{2, 3, 4}, {1}},
                        {{2, 3, 4}, {2}},    {{2, 3, 4}, {0, 2}},    {{2, 3, 4}, {2, 0}},
                        {{2, 3, 4}, {1, 2}}, {{2, 3, 4}, {0, 1, 2}}, {{}, {}},
                        {{5}, {0}},          {{40, 3}, {0}}};
  for (const Case& c : cases) {
    const Params params{{"axes", c.axes}};
    for (int64_t B : kSizes) {
      for_each_dims({static_cast<int64_t>(c.x.size())}, [&](const Ints& dims) {
        const Outcome o = check(prim, params, {{c.x, dt}}, dims, B, Dist::kAny, tol);
        int64_t before = 0;
        for (int64_t a : c.axes) before += a < dims[0];
        EXPECT_EQ(o.out_dim, dims[0] - before);
        EXPECT_TRUE(o.names == std::vector<std::string>{prim.name()});
      });
    }
  }
}

TEST_F(BatchRules, Reductions) {
  // Batched and per-example float32 sums fold in different orders: the pairwise error bound
  // eps * ceil(log2 n) * sum|x| for up to 24 values of |x| <= 2 is ~3e-5 (1e-6 flaked on a
  // sum near zero: seed 32356053870113).
  check_reduce(prims::reduce_sum, kF32, 3e-5);
  check_reduce(prims::reduce_sum, kI32, 0);
  check_reduce(prims::reduce_max, kF32, 0);
  check_reduce(prims::reduce_max, kI32, 0);
  check_reduce(prims::reduce_max, kBool, 0);
}

// ---------------------------------------------------------------- dot_general

TEST_F(BatchRules, DotGeneral) {
  struct Case {
    Shape l, r;
    Ints lc, rc, lb, rb;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, {1}, {0}, {}, {}},                // matmul
      {{2, 3, 4}, {2, 4, 5}, {2}, {1}, {0}, {0}},        // batched matmul
      {{4}, {4}, {0}, {0}, {}, {}},                      // inner product
      {{3}, {4}, {}, {}, {}, {}},                        // outer product
      {{4, 3}, {4, 5}, {0}, {0}, {}, {}},                // transposed lhs
      {{3, 4}, {5, 4}, {1}, {1}, {}, {}},                // transposed rhs
      {{3, 2, 4}, {4, 2}, {2}, {0}, {1}, {1}},           // batch dims not leading
      {{2, 3, 4}, {3, 2, 4}, {2}, {2}, {0, 1}, {1, 0}},  // batch dims in another order
      {{2, 3, 4}, {4, 3}, {1, 2}, {1, 0}, {}, {}},       // two contracting dims
  };
  struct Types {
    DType in;
    std::optional<DType> pref;
    double tol;
  };
  const Types types[] = {{kF32, std::nullopt, 1e-5},
                         {kI32, std::nullopt, 0},
                         {DType::kInt8, kI32, 0},
                         {kI32, kF32, 1e-5}};
  for (const Case& c : cases) {
    for (const Types& t : types) {
      Params params{{"dimension_numbers", DotDimensionNumbers{c.lc, c.rc, c.lb, c.rb}.to_param()}};
      if (t.pref) params.set("preferred_element_type", *t.pref);
      const std::vector<Arg> args = {{c.l, t.in}, {c.r, t.in}};
      const Ints ranks = {static_cast<int64_t>(c.l.size()), static_cast<int64_t>(c.r.size())};
      for (int64_t B : kSizes) {
        for_each_dims(ranks, [&](const Ints& dims) {
          const Outcome o = check(prims::dot_general, params, args, dims, B, Dist::kSmall, t.tol);
          // No operand moves: exactly the one dot_general.
          EXPECT_TRUE(o.names == std::vector<std::string>{"dot_general"})
              << describe(prims::dot_general, params, args, dims, B);
          if (dims[0] != kU && dims[1] != kU) {
            EXPECT_EQ(o.out_dim, 0);
          }
        });
      }
    }
  }
}

// ---------------------------------------------------------------- dtypes and weak types

TEST_F(BatchRules, WeakTypesAreKept) {
  const Shape s{2, 3};
  auto weak_of = [](const Outcome& o) { return o.out_aval.weak_type; };
  // Both weak: weak; one strong: strong (the reference agrees, check() compares avals).
  EXPECT_TRUE(weak_of(check(prims::add, {}, {{s, kF32, true}, {s, kF32, true}}, {1, kU}, 3)));
  EXPECT_TRUE(weak_of(check(prims::mul, {}, {{{}, kF32, true}, {s, kF32, true}}, {0, kU}, 3)));
  EXPECT_FALSE(weak_of(check(prims::add, {}, {{s, kF32, true}, {s, kF32}}, {kU, 2}, 3)));
  EXPECT_TRUE(weak_of(check(prims::neg, {}, {{s, kF32, true}}, {1}, 3)));
  EXPECT_TRUE(weak_of(
      check(prims::select_n, {}, {{s, kBool}, {s, kF32, true}, {s, kF32, true}}, {kU, 0, kU}, 3)));
  EXPECT_TRUE(weak_of(check(prims::reshape, {{"new_sizes", Shape{6}}}, {{s, kF32, true}}, {1}, 3)));
  EXPECT_TRUE(
      weak_of(check(prims::transpose, {{"permutation", Ints{1, 0}}}, {{s, kF32, true}}, {2}, 3)));
  EXPECT_TRUE(weak_of(check(prims::broadcast_in_dim,
                            {{"shape", Shape{4, 2, 3}}, {"broadcast_dimensions", Ints{1, 2}}},
                            {{s, kF32, true}}, {1}, 3)));
  EXPECT_TRUE(weak_of(
      check(prims::reduce_sum, {{"axes", Ints{0}}}, {{s, kF32, true}}, {2}, 3, Dist::kAny, 1e-6)));
  EXPECT_FALSE(
      weak_of(check(prims::convert_element_type, {{"new_dtype", kI32}, {"weak_type", false}},
                    {{s, kF32, true}}, {0}, 3)));
}

TEST_F(BatchRules, EveryPrimitiveHasARule) {
  const char* names[] = {"add",
                         "sub",
                         "mul",
                         "div",
                         "max",
                         "min",
                         "pow",
                         "neg",
                         "exp",
                         "log",
                         "sin",
                         "cos",
                         "tanh",
                         "logistic",
                         "sqrt",
                         "integer_pow",
                         "eq",
                         "ne",
                         "lt",
                         "le",
                         "gt",
                         "ge",
                         "select_n",
                         "convert_element_type",
                         "broadcast_in_dim",
                         "reshape",
                         "transpose",
                         "iota",
                         "reduce_sum",
                         "reduce_max",
                         "dot_general"};
  for (const char* n : names) {
    const Primitive* p = find_primitive(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(p->batch) << n;
  }
}

}  // namespace
}  // namespace tessera
