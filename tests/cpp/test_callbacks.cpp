// Host callbacks (tessera/debug.h): debug::print / debug::callback see the right values, in
// order, once per vmap member and once under grad/jvp (primals), stage with their effects,
// survive DCE; pure_callback checks its results, is dropped by DCE when unused, refuses JVP and
// batches per vmap_method; io_callback carries (ordered) IO effects. References are the inputs'
// values read back on the host and plain loops in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/passes/dce.h"
#include "tessera/control_flow_flat.h"
#include "tessera/debug.h"
#include "tessera/tessera.h"
#include "tessera/transforms_flat.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

// Captures debug::print's lines for the test's scope.
struct CapturePrints {
  std::vector<std::string> lines;
  debug::PrintSink prev;
  CapturePrints() {
    prev = debug::set_print_sink([this](const std::string& s) { lines.push_back(s); });
  }
  ~CapturePrints() { debug::set_print_sink(prev); }
};

// Host values of each call of a recording callback.
struct Recorder {
  std::vector<std::vector<double>> calls;
  std::vector<Shape> shapes;
};

std::vector<double> slice_row(const std::vector<double>& v, int64_t i, int64_t n) {
  return std::vector<double>(v.begin() + i * n, v.begin() + (i + 1) * n);
}

// Column i of a row-major (rows x cols) host matrix.
std::vector<double> slice_col(const std::vector<double>& v, int64_t i, int64_t rows, int64_t cols) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) out.push_back(v[r * cols + i]);
  return out;
}

std::vector<std::string> eqn_names(const Jaxpr& j) {
  std::vector<std::string> out;
  for (const JaxprEqn& e : j.eqns) out.push_back(e.primitive->name());
  return out;
}

int count(const std::vector<std::string>& xs, const std::string& x) {
  return static_cast<int>(std::count(xs.begin(), xs.end(), x));
}

std::vector<std::optional<int64_t>> zeros_axes(size_t n) {
  return std::vector<std::optional<int64_t>>(n, std::optional<int64_t>(0));
}

// vmap over `in_axes` with every output batched at 0.
std::vector<Array> vmap_(const flat::Fun& f, std::vector<Array> args,
                         std::vector<std::optional<int64_t>> in_axes) {
  return flat::vmap(f, args, in_axes, zeros_axes);
}

TEST(DebugPrint, PrintsValuesInOrder) {
  Array x = random_array({3}, DType::kFloat32);
  Array y = random_array({2, 2}, DType::kInt32);
  CapturePrints cap;
  debug::print("x = {} and y = {}", x, y);
  debug::print("{1}|{0}|{{literal}}", x, y, debug::ordered);
  debug::print("scalar {}", 2.5);
  ASSERT_EQ(cap.lines.size(), 3u);
  EXPECT_EQ(cap.lines[0], "x = " + x.str() + " and y = " + y.str() + "\n");
  EXPECT_EQ(cap.lines[1], y.str() + "|" + x.str() + "|{literal}\n");
  EXPECT_EQ(cap.lines[2], "scalar 2.5\n");
}

TEST(DebugPrint, FormatErrors) {
  Array x = random_array({3}, DType::kFloat32);
  CapturePrints cap;
  EXPECT_ERROR(ValueError, debug::print("nothing", x), "Unused positional arguments");
  EXPECT_ERROR(IndexError, debug::print("{} {}", x), "Replacement index 1 out of range");
  EXPECT_ERROR(ValueError, debug::print("{} {0}", x, x), "cannot switch");
  EXPECT_ERROR(ValueError, debug::print("{", x), "expected '}'");
  EXPECT_ERROR(ValueError, debug::print("}", x), "Single '}'");
  EXPECT_TRUE(cap.lines.empty());
}

TEST(DebugCallback, SeesConcreteValuesAndPytrees) {
  Array x = random_array({4}, DType::kFloat32);
  Array y = random_array({2}, DType::kFloat32);
  std::vector<double> got_x, got_y;
  double got_s = 0;
  debug::callback(
      [&](const Array& a, const std::pair<Array, double>& p) {
        EXPECT_TRUE(a.is_concrete());
        got_x = to_doubles(a);
        got_y = to_doubles(p.first);
        got_s = p.second;
      },
      x, std::make_pair(y, 1.5));
  EXPECT_EQ(compare(got_x, to_doubles(x), 0, 0), "");
  EXPECT_EQ(compare(got_y, to_doubles(y), 0, 0), "");
  EXPECT_EQ(got_s, 1.5);
  // debug::ordered as the last argument: an ordered effect; the function gets the others.
  int calls = 0;
  flat::Fun f = [&](std::span<const Array> a) {
    debug::callback([&](const Array&) { ++calls; }, a[0], debug::ordered);
    return std::vector<Array>{a[0]};
  };
  ClosedJaxpr cj = flat::make_jaxpr(f, std::vector<Array>{x});
  EXPECT_EQ(cj.jaxpr->effects, make_effects({{"OrderedDebug", true}}));
  EXPECT_EQ(calls, 0);
  eval_jaxpr(cj, std::vector<Array>{x});
  EXPECT_EQ(calls, 1);
}

TEST(DebugCallback, RunsWhenStagedProgramRunsAndShowsEffect) {
  Array x = random_array({3}, DType::kFloat32);
  CapturePrints cap;
  flat::Fun f = [](std::span<const Array> xs) {
    Array y = lax::sin(xs[0]);
    debug::print("y: {}", y, debug::ordered);
    debug::print("x: {}", xs[0]);
    return std::vector<Array>{lax::mul(y, xs[0])};
  };
  ClosedJaxpr cj = flat::make_jaxpr(f, std::vector<Array>{x});
  EXPECT_TRUE(cap.lines.empty()) << "tracing must not print";
  std::string text = to_string(cj);
  EXPECT_NE(text.find("debug_callback[\n      callback=<function debug_callback.<locals>._flat_"
                      "callback>\n      effect=OrderedDebug\n    ] b"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("effect=Debug\n    ] a"), std::string::npos) << text;
  EXPECT_EQ(cj.jaxpr->effects, make_effects({{"Debug", false}, {"OrderedDebug", true}}));
  verify(*cj.jaxpr);
  std::vector<Array> out = eval_jaxpr(cj, std::vector<Array>{x});
  ASSERT_EQ(cap.lines.size(), 2u);
  EXPECT_EQ(cap.lines[0], "y: " + lax::sin(x).str() + "\n");
  EXPECT_EQ(cap.lines[1], "x: " + x.str() + "\n");
}

TEST(DebugCallback, VmapCallsOncePerMemberInOrder) {
  const int64_t B = 5, n = 3;
  Array xs = random_array({B, n}, DType::kFloat32);
  Array c = random_array({n}, DType::kFloat32);
  Recorder rec;
  flat::Fun f = [&](std::span<const Array> a) {
    debug::callback(
        [&](const Array& v, const Array& w) {
          rec.calls.push_back(to_doubles(v));
          rec.shapes.push_back(w.shape());
        },
        a[0], a[1]);
    return std::vector<Array>{lax::mul(a[0], a[1])};
  };
  std::vector<Array> out = vmap_(f, std::vector<Array>{xs, c}, {0, std::nullopt});
  std::vector<double> xv = to_doubles(xs);
  ASSERT_EQ(rec.calls.size(), static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) {
    EXPECT_EQ(compare(rec.calls[i], slice_row(xv, i, n), 0, 0), "") << "member " << i;
    EXPECT_EQ(rec.shapes[i], Shape{n});
  }
  // Batched along axis 1: member i is column i.
  rec.calls.clear();
  Array xt = random_array({n, B}, DType::kFloat32);
  vmap_(f, std::vector<Array>{xt, c}, {1, std::nullopt});
  std::vector<double> tv = to_doubles(xt);
  ASSERT_EQ(rec.calls.size(), static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i)
    EXPECT_EQ(compare(rec.calls[i], slice_col(tv, i, n, B), 0, 0), "") << "member " << i;
  // debug::print under vmap: one line per member, in order.
  CapturePrints cap;
  flat::Fun g = [](std::span<const Array> a) {
    debug::print("v={}", a[0], debug::ordered);
    return std::vector<Array>{a[0]};
  };
  vmap_(g, std::vector<Array>{xs}, {0});
  ASSERT_EQ(cap.lines.size(), static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) EXPECT_EQ(cap.lines[i], "v=" + xs[i].str() + "\n");
}

TEST(DebugCallback, GradAndJvpSeePrimalsOnce) {
  Array x = random_array({4}, DType::kFloat32);
  Recorder rec;
  flat::Fun f = [&](std::span<const Array> a) {
    Array s = lax::sin(a[0]);
    debug::callback([&](const Array& v) { rec.calls.push_back(to_doubles(v)); }, s);
    return std::vector<Array>{lax::reduce_sum(lax::mul(s, a[0]), {0})};
  };
  std::vector<double> want_s;
  for (double v : to_doubles(x)) want_s.push_back(std::sin(v));
  flat::ValueAndGrad vg = flat::value_and_grad(f, std::vector<Array>{x}, false);
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_EQ(compare(rec.calls[0], want_s, 1e-6, 1e-6), "");
  // d/dx sum(sin(x) x) = cos(x) x + sin(x)
  std::vector<double> want_g;
  for (double v : to_doubles(x)) want_g.push_back(std::cos(v) * v + std::sin(v));
  EXPECT_EQ(compare(to_doubles(vg.grads[0]), want_g, 1e-5, 1e-5), "");

  rec.calls.clear();
  Array t = random_array({4}, DType::kFloat32);
  flat::jvp(f, std::vector<Array>{x}, std::vector<Array>{t});
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_EQ(compare(rec.calls[0], want_s, 1e-6, 1e-6), "");

  // linearize runs it in the forward pass only; applying the linear map does not call it.
  rec.calls.clear();
  flat::Linearized lin = flat::linearize(f, std::vector<Array>{x});
  EXPECT_EQ(rec.calls.size(), 1u);
  lin.jvp(std::vector<Array>{t});
  lin.vjp(std::vector<Array>{tnp::asarray(1.0f)});
  EXPECT_EQ(rec.calls.size(), 1u);

  // Staged grad: the callback is in the jaxpr once and runs once per evaluation.
  rec.calls.clear();
  flat::Fun gf = [&](std::span<const Array> a) { return flat::value_and_grad(f, a, false).grads; };
  ClosedJaxpr cj = flat::make_jaxpr(gf, std::vector<Array>{x});
  EXPECT_EQ(count(eqn_names(*cj.jaxpr), "debug_callback"), 1) << to_string(cj);
  eval_jaxpr(cj, std::vector<Array>{x});
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_EQ(compare(rec.calls[0], want_s, 1e-6, 1e-6), "");
}

TEST(DebugCallback, DceKeepsEffectsAndDropsUnusedPureCallback) {
  Array x = random_array({3}, DType::kFloat32);
  int pure_calls = 0;
  flat::Fun f = [&](std::span<const Array> a) {
    debug::print("{}", a[0]);
    flat::pure_callback(
        [&](std::span<const Array> v) {
          ++pure_calls;
          return std::vector<Array>{v[0]};
        },
        {a[0].aval()}, a, VmapMethod::kSequential);
    flat::io_callback([](std::span<const Array>) { return std::vector<Array>{}; }, {}, a);
    return std::vector<Array>{lax::sin(a[0])};
  };
  ClosedJaxpr cj = flat::make_jaxpr(f, std::vector<Array>{x});
  std::vector<std::string> before = eqn_names(*cj.jaxpr);
  EXPECT_EQ(count(before, "pure_callback"), 1);
  auto [pruned, used_in] = ir::dce(*cj.jaxpr, {true});
  std::vector<std::string> after = eqn_names(*pruned);
  EXPECT_EQ(count(after, "debug_callback"), 1);
  EXPECT_EQ(count(after, "io_callback"), 1);
  EXPECT_EQ(count(after, "pure_callback"), 0);
  EXPECT_EQ(count(after, "sin"), 1);
  verify(*pruned);
  // Even with no used output the effectful equations stay.
  auto [pruned2, used2] = ir::dce(*cj.jaxpr, {false});
  std::vector<std::string> after2 = eqn_names(*pruned2);
  EXPECT_EQ(count(after2, "debug_callback"), 1);
  EXPECT_EQ(count(after2, "io_callback"), 1);
  EXPECT_EQ(count(after2, "sin"), 0);
  EXPECT_TRUE(used2[0]);
  CapturePrints cap;
  pure_calls = 0;
  eval_jaxpr(*pruned2, cj.consts, std::vector<Array>{x});
  EXPECT_EQ(cap.lines.size(), 1u);
  EXPECT_EQ(pure_calls, 0);
}

// y = x * 2 + c computed on the host in float64 then stored as float32.
std::vector<Array> host_affine(std::span<const Array> v) {
  std::vector<double> a = to_doubles(v[0]), b = to_doubles(v[1]);
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out[i] = static_cast<float>(a[i] * 2.0 + b[b.size() == 1 ? 0 : i % b.size()]);
  Shape s = v[0].shape();
  return {array_from_host(Aval{s, DType::kFloat32}, out.data())};
}

TEST(PureCallback, ComputesAndChecksResults) {
  Array x = random_array({2, 3}, DType::kFloat32);
  Array c = random_array({3}, DType::kFloat32);
  std::vector<Array> out = flat::pure_callback(host_affine, {x.aval()}, std::vector<Array>{x, c});
  std::vector<double> xv = to_doubles(x), cv = to_doubles(c), want;
  for (size_t i = 0; i < xv.size(); ++i) want.push_back(xv[i] * 2.0 + cv[i % 3]);
  EXPECT_EQ(compare(to_doubles(out[0]), want, 1e-6, 1e-6), "");

  EXPECT_ERROR(
      ValueError,
      flat::pure_callback(host_affine, {Aval{{3, 2}, DType::kFloat32}}, std::vector<Array>{x, c}),
      "Incorrect output shape for return value #0: Expected: (3, 2), Actual: (2, 3)");
  EXPECT_ERROR(
      TypeError,
      flat::pure_callback(host_affine, {Aval{{2, 3}, DType::kInt32}}, std::vector<Array>{x, c}),
      "Incorrect output dtype for return value #0: Expected: int32, Actual: float32");
  EXPECT_ERROR(ValueError,
               flat::pure_callback(host_affine, {x.aval(), x.aval()}, std::vector<Array>{x, c}),
               "Mismatched number of outputs from callback. Expected: 2, Actual: 1");
  EXPECT_ERROR(ValueError, parse_vmap_method("vectorised"), "vmap_method must be on of");

  // Staged: the declared avals print as JAX prints them; the check runs at evaluation.
  flat::Fun f = [](std::span<const Array> a) {
    return flat::pure_callback(host_affine, {Aval{{3, 2}, DType::kFloat32}}, a,
                               VmapMethod::kExpandDims);
  };
  ClosedJaxpr cj = flat::make_jaxpr(f, std::vector<Array>{x, c});
  std::string text = to_string(cj);
  EXPECT_NE(text.find("result_avals=(ShapedArray(float32[3,2]),)"), std::string::npos) << text;
  EXPECT_NE(text.find("vmap_method=expand_dims"), std::string::npos) << text;
  EXPECT_TRUE(cj.jaxpr->effects.empty());
  EXPECT_ERROR(ValueError, eval_jaxpr(cj, std::vector<Array>{x, c}), "Incorrect output shape");

  // Typed pytree API.
  Array y = pure_callback(
      [](const std::tuple<Array, Array>& a) {
        return host_affine(std::vector<Array>{std::get<0>(a), std::get<1>(a)})[0];
      },
      x, std::make_tuple(x, c));
  EXPECT_EQ(compare(to_doubles(y), want, 1e-6, 1e-6), "");
}

TEST(PureCallback, NoJvp) {
  Array x = random_array({3}, DType::kFloat32);
  flat::Fun f = [](std::span<const Array> a) {
    std::vector<Array> o = flat::pure_callback(
        [](std::span<const Array> v) { return std::vector<Array>{v[0]}; }, {a[0].aval()}, a);
    return std::vector<Array>{lax::reduce_sum(o[0], {0})};
  };
  const char* msg =
      "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while "
      "taking gradients.";
  EXPECT_ERROR(ValueError, flat::value_and_grad(f, std::vector<Array>{x}, false), msg);
  EXPECT_ERROR(ValueError, flat::jvp(f, std::vector<Array>{x}, std::vector<Array>{x}), msg);
}

TEST(PureCallback, VmapMethods) {
  const int64_t B = 4, n = 3;
  Array xs = random_array({B, n}, DType::kFloat32);
  Array c = random_array({n}, DType::kFloat32);
  std::vector<double> xv = to_doubles(xs), cv = to_doubles(c), want;
  for (int64_t i = 0; i < B * n; ++i) want.push_back(xv[i] * 2.0 + cv[i % n]);
  struct Case {
    VmapMethod m;
    int calls;
    Shape x_shape, c_shape;
  };
  const Case cases[] = {
      {VmapMethod::kSequential, static_cast<int>(B), {n}, {n}},
      {VmapMethod::kSequentialUnrolled, static_cast<int>(B), {n}, {n}},
      {VmapMethod::kExpandDims, 1, {B, n}, {1, n}},
      {VmapMethod::kBroadcastAll, 1, {B, n}, {B, n}},
      {VmapMethod::kLegacyVectorized, 1, {B, n}, {n}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(vmap_method_name(k.m));
    int calls = 0;
    std::vector<Shape> x_shapes, c_shapes;
    HostFun host = [&](std::span<const Array> v) {
      ++calls;
      x_shapes.push_back(v[0].shape());
      c_shapes.push_back(v[1].shape());
      // Row-wise affine with broadcasting of c over leading axes.
      std::vector<double> a = to_doubles(v[0]), b = to_doubles(v[1]);
      std::vector<float> out(a.size());
      for (size_t i = 0; i < a.size(); ++i)
        out[i] = static_cast<float>(a[i] * 2.0 + b[i % b.size()]);
      return std::vector<Array>{array_from_host(Aval{v[0].shape(), DType::kFloat32}, out.data())};
    };
    flat::Fun f = [&](std::span<const Array> a) {
      return flat::pure_callback(host, {a[0].aval()}, a, k.m);
    };
    std::vector<Array> out = vmap_(f, std::vector<Array>{xs, c}, {0, std::nullopt});
    EXPECT_EQ(calls, k.calls);
    for (size_t i = 0; i < x_shapes.size(); ++i) {
      EXPECT_EQ(x_shapes[i], k.x_shape);
      EXPECT_EQ(c_shapes[i], k.c_shape);
    }
    ASSERT_EQ(out[0].shape(), (Shape{B, n}));
    EXPECT_EQ(compare(to_doubles(out[0]), want, 1e-6, 1e-6), "");
  }
  // Batched at axis 1 with sequential: member i is column i.
  Array xt = random_array({n, B}, DType::kFloat32);
  std::vector<std::vector<double>> seen;
  HostFun rec = [&](std::span<const Array> v) {
    seen.push_back(to_doubles(v[0]));
    return std::vector<Array>{v[0]};
  };
  flat::Fun g = [&](std::span<const Array> a) {
    return flat::pure_callback(rec, {a[0].aval()}, a, VmapMethod::kSequential);
  };
  std::vector<Array> gt = vmap_(g, std::vector<Array>{xt}, {1});
  ASSERT_EQ(seen.size(), static_cast<size_t>(B));
  std::vector<double> tv = to_doubles(xt);
  for (int64_t i = 0; i < B; ++i) EXPECT_EQ(compare(seen[i], slice_col(tv, i, n, B), 0, 0), "");
  // sequential stages JAX's lax.map (a scan over the members); sequential_unrolled does not.
  ClosedJaxpr staged = flat::make_jaxpr(
      [&](std::span<const Array> a) { return vmap_(g, {a[0]}, {1}); }, std::vector<Array>{xt});
  EXPECT_EQ(count(eqn_names(*staged.jaxpr), "scan"), 1) << to_string(staged);
  EXPECT_EQ(count(eqn_names(*staged.jaxpr), "pure_callback"), 0) << to_string(staged);
  EXPECT_NE(to_string(staged).find("pure_callback["), std::string::npos);
  seen.clear();
  eval_jaxpr(staged, std::vector<Array>{xt});
  EXPECT_EQ(seen.size(), static_cast<size_t>(B));
  // Unspecified: JAX's NotImplementedError.
  flat::Fun h = [&](std::span<const Array> a) {
    return flat::pure_callback(rec, {a[0].aval()}, a);
  };
  EXPECT_ERROR(NotImplementedError, vmap_(h, std::vector<Array>{xs}, {0}),
               "vmap is only supported for the pure_callback primitive when vmap_method is one "
               "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
               "'legacy_vectorized'. Got vmap_method=None.");
}

TEST(IoCallback, OrderedEffectsVmapAndJvp) {
  const int64_t B = 3, n = 2;
  Array x = random_array({n}, DType::kFloat32);
  std::vector<std::vector<double>> log;
  HostFun host = [&](std::span<const Array> v) {
    log.push_back(to_doubles(v[0]));
    return std::vector<Array>{v[0]};
  };
  flat::Fun f = [&](std::span<const Array> a) {
    return flat::io_callback(host, {a[0].aval()}, a, /*ordered=*/true);
  };
  ClosedJaxpr cj = flat::make_jaxpr(f, std::vector<Array>{x});
  std::string text = to_string(cj);
  EXPECT_NE(text.find("io_callback["), std::string::npos) << text;
  EXPECT_NE(text.find("ordered=True"), std::string::npos) << text;
  EXPECT_EQ(cj.jaxpr->effects, make_effects({{"OrderedIO", true}}));
  EXPECT_TRUE(log.empty());
  std::vector<Array> out = eval_jaxpr(cj, std::vector<Array>{x});
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(compare(to_doubles(out[0]), to_doubles(x), 0, 0), "");
  // Unused but effectful: DCE keeps it.
  auto [pruned, used] = ir::dce(*cj.jaxpr, {false});
  EXPECT_EQ(count(eqn_names(*pruned), "io_callback"), 1);

  Array xs = random_array({B, n}, DType::kFloat32);
  EXPECT_ERROR(ValueError, vmap_(f, std::vector<Array>{xs}, {0}),
               "Cannot `vmap` ordered IO callback.");
  log.clear();
  flat::Fun g = [&](std::span<const Array> a) {
    return flat::io_callback(host, {a[0].aval()}, a, /*ordered=*/false);
  };
  std::vector<Array> vo = vmap_(g, std::vector<Array>{xs}, {0});
  ASSERT_EQ(log.size(), static_cast<size_t>(B));
  std::vector<double> xv = to_doubles(xs);
  for (int64_t i = 0; i < B; ++i) EXPECT_EQ(compare(log[i], slice_row(xv, i, n), 0, 0), "");
  EXPECT_EQ(compare(to_doubles(vo[0]), xv, 0, 0), "");
  EXPECT_ERROR(ValueError, flat::jvp(g, std::vector<Array>{x}, std::vector<Array>{x}),
               "IO callbacks do not support JVP.");
  // Typed API with a declared result from a placeholder.
  Array y = io_callback([](const Array& a) { return lax::neg(a); },
                        flat::abstract_placeholder(x.aval()), x);
  std::vector<double> want;
  for (double v : to_doubles(x)) want.push_back(-v);
  EXPECT_EQ(compare(to_doubles(y), want, 0, 0), "");
}

Array f32_scalar(float v) { return array_from_host(Aval{{}, DType::kFloat32}, &v); }

TEST(DebugCallback, OrderedPrintInsideScanUnderVmapSurvivesDce) {
  const int64_t B = 3, T = 4;
  Array xs = random_array({B, T}, DType::kFloat32);
  flat::Fun step = [](std::span<const Array> cx) {
    debug::print("c={} x={}", cx[0], cx[1], debug::ordered);
    return std::vector<Array>{lax::add(cx[0], cx[1]), lax::mul(cx[0], cx[1])};
  };
  flat::Fun run = [&](std::span<const Array> a) {
    flat::ScanResult r = flat::scan(step, std::vector<Array>{f32_scalar(0.0f)}, a);
    return std::vector<Array>{r.carry[0], r.ys[0]};
  };
  flat::Fun batched = [&](std::span<const Array> a) { return vmap_(run, {a[0]}, {0}); };
  // Host reference: iteration-major, batch member-minor (each step's batched body calls the
  // print once per member, in order); float32 carries as the program computes them.
  std::vector<double> xv = to_doubles(xs);
  std::vector<float> c(B, 0.0f);
  std::string want;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < B; ++b) {
      float x = static_cast<float>(xv[b * T + t]);
      want += "c=" + f32_scalar(c[b]).str() + " x=" + f32_scalar(x).str() + "\n";
    }
    for (int64_t b = 0; b < B; ++b) c[b] = c[b] + static_cast<float>(xv[b * T + t]);
  }
  auto joined = [](const std::vector<std::string>& ls) {
    std::string s;
    for (const auto& l : ls) s += l;
    return s;
  };
  {
    CapturePrints cap;
    std::vector<Array> out = batched(std::vector<Array>{xs});
    EXPECT_EQ(joined(cap.lines), want);
    std::vector<double> cw(c.begin(), c.end());
    EXPECT_EQ(compare(to_doubles(out[0]), cw, 1e-6, 1e-6), "");
  }
  CapturePrints cap;
  ClosedJaxpr cj = flat::make_jaxpr(batched, std::vector<Array>{xs});
  EXPECT_TRUE(cap.lines.empty());
  EXPECT_EQ(cj.jaxpr->effects, make_effects({{"OrderedDebug", true}})) << to_string(cj);
  // Nothing used: the scan stays for its effect, its body keeps the print.
  auto [pruned, used] = ir::dce(*cj.jaxpr, {false, false});
  verify(*pruned);
  ASSERT_EQ(count(eqn_names(*pruned), "scan"), 1) << to_string(*pruned);
  std::string text = to_string(*pruned);
  EXPECT_NE(text.find("debug_callback["), std::string::npos) << text;
  EXPECT_NE(text.find("effect=OrderedDebug"), std::string::npos) << text;
  eval_jaxpr(*pruned, cj.consts, std::vector<Array>{xs});
  EXPECT_EQ(joined(cap.lines), want);
}

}  // namespace
}  // namespace tessera
