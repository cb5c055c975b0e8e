// The public transformation API (transforms.h): every function and option against closed
// forms on fresh random inputs, and the errors JAX raises.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tessera/tessera.h"
#include "trace/batch_trace.h"
#include "util/test_util.h"

namespace tessera::api_test {

struct Layer {
  Array w, b;
};
TESSERA_REGISTER_PYTREE(Layer, w, b);

}  // namespace tessera::api_test

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using api_test::Layer;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

double scalar(const Array& a) { return a.item<double>(); }

#define EXPECT_CLOSE(got, want, tol) \
  EXPECT_EQ(compare(to_doubles(got), to_doubles(want), tol, tol), "")

// ---- grad / value_and_grad ----

TEST(Grad, ClosedFormsAndHigherOrder) {
  Array x = random_array({}, DType::kFloat32);
  auto f = [](const Array& v) { return lax::sin(v); };
  EXPECT_NEAR(scalar(grad(f)(x)), std::cos(scalar(x)), 1e-6);
  EXPECT_NEAR(scalar(grad(grad(f))(x)), -std::sin(scalar(x)), 1e-6);
  EXPECT_NEAR(scalar(grad(grad(grad(f)))(x)), -std::cos(scalar(x)), 1e-6);
}

TEST(Grad, ScalarArgumentsBecomeArrays) {
  // A C++ double is a weakly typed leaf: the gradient is an Array (as JAX returns an Array).
  Array g = grad([](const Array& v) { return lax::mul(v, v); })(1.5);
  EXPECT_EQ(g.dtype(), DType::kFloat32);
  EXPECT_EQ(scalar(g), 3.0);
}

TEST(Grad, Argnums) {
  Array x = random_array({3}, DType::kFloat32), y = random_array({3}, DType::kFloat32);
  auto f = [](const Array& a, const Array& b) { return tnp::sum(tnp::multiply(a, tnp::exp(b))); };
  Array gy = grad(f, argnums<1>)(x, y);
  EXPECT_CLOSE(gy, tnp::multiply(x, tnp::exp(y)), 1e-6);
  auto [ga, gb] = grad(f, argnums<0, 1>)(x, y);
  EXPECT_CLOSE(ga, tnp::exp(y), 1e-6);
  EXPECT_CLOSE(gb, gy, 0);
  // Arguments that are not differentiated are passed through unchanged (an int stays an int).
  auto h = [](const Array& a, int power) { return tnp::sum(lax::integer_pow(a, power)); };
  EXPECT_CLOSE(grad(h)(x, 3), tnp::multiply(3.0, tnp::multiply(x, x)), 1e-5);
}

TEST(Grad, HasAuxAndValueAndGrad) {
  Array x = random_array({4}, DType::kFloat32);
  auto f = [](const Array& v) {
    Array s = tnp::sum(tnp::multiply(v, v));
    return std::make_pair(s, tnp::multiply(v, 2.0));  // aux: any pytree
  };
  auto [g, aux] = grad(f, has_aux)(x);
  EXPECT_CLOSE(g, tnp::multiply(x, 2.0), 1e-6);
  EXPECT_CLOSE(aux, tnp::multiply(x, 2.0), 0);
  EXPECT_FALSE(aux.is_tracer());
  auto [va, g2] = value_and_grad(f, has_aux)(x);
  EXPECT_CLOSE(va.first, tnp::sum(tnp::multiply(x, x)), 1e-6);
  EXPECT_CLOSE(g2, g, 0);
  auto [v, g3] = value_and_grad([](const Array& a) { return tnp::sum(tnp::exp(a)); })(x);
  EXPECT_CLOSE(v, tnp::sum(tnp::exp(x)), 1e-6);
  EXPECT_CLOSE(g3, tnp::exp(x), 1e-6);
}

TEST(Grad, PytreeParamsKeepTheirStructure) {
  Layer p{random_array({3, 2}, DType::kFloat32), random_array({2}, DType::kFloat32)};
  Array x = random_array({5, 3}, DType::kFloat32);
  auto loss = [](const Layer& l, const Array& in) {
    return tnp::sum(tnp::add(tnp::matmul(in, l.w), l.b));
  };
  Layer g = grad(loss)(p, x);
  // d/dw sum(x w + b) = x^T 1; d/db = 5 * 1.
  EXPECT_CLOSE(g.w, tnp::matmul(tnp::transpose(x), tnp::ones({5, 2})), 1e-5);
  EXPECT_CLOSE(g.b, tnp::full({2}, 5.0), 1e-6);
  std::map<std::string, Array> m{{"a", x}, {"b", p.b}};
  auto gm = grad([](const std::map<std::string, Array>& d) {
    return tnp::add(tnp::sum(d.at("a")), tnp::sum(tnp::multiply(d.at("b"), d.at("b"))));
  })(m);
  EXPECT_CLOSE(gm.at("a"), tnp::ones({5, 3}), 0);
  EXPECT_CLOSE(gm.at("b"), tnp::multiply(p.b, 2.0), 1e-6);
}

TEST(Grad, IntegerInputsNeedAllowInt) {
  Array x = random_array({3}, DType::kFloat32);
  Array i = tnp::array({1.0, 2.0, 3.0}, DType::kInt32);
  auto f = [](const Array& a, const Array& n) {
    return tnp::sum(tnp::multiply(a, lax::convert_element_type(n, DType::kFloat32)));
  };
  EXPECT_ERROR(TypeError, grad(f, argnums<1>)(x, i), "grad requires real-valued inputs");
  EXPECT_ERROR(TypeError, grad(f, argnums<1>)(x, i), "allow_int");
  Array gi = grad(f, argnums<1>, allow_int)(x, i);
  EXPECT_EQ(gi.dtype(), DType::kFloat0);
  EXPECT_EQ(gi.shape(), (Shape{3}));
  auto [gx, gn] = grad(f, argnums<0, 1>, allow_int)(x, i);
  EXPECT_CLOSE(gx, tnp::array({1.0, 2.0, 3.0}), 0);
  EXPECT_EQ(gn.dtype(), DType::kFloat0);
}

TEST(Grad, OutputMustBeAFloatScalar) {
  Array x = random_array({3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, grad([](const Array& v) { return tnp::sin(v); })(x),
               "only defined for scalar-output functions. Output had shape: (3,)");
  EXPECT_ERROR(TypeError, grad([](const Array& v) {
                 return lax::convert_element_type(tnp::sum(v), DType::kInt32);
               })(x),
               "real-valued outputs");
}

TEST(Grad, StopGradient) {
  Array x = random_array({}, DType::kFloat32);
  // d/dx [x * stop_gradient(x)] = stop_gradient(x) = x.
  Array g = grad([](const Array& v) { return lax::mul(v, stop_gradient(v)); })(x);
  EXPECT_CLOSE(g, x, 0);
  Layer p{random_array({2}, DType::kFloat32), random_array({2}, DType::kFloat32)};
  Layer s = stop_gradient(p);
  EXPECT_CLOSE(s.w, p.w, 0);
  auto [y, t] = jvp([](const Array& v) { return stop_gradient(tnp::exp(v)); }, x, tnp::ones({}));
  EXPECT_EQ(scalar(t), 0.0);
}

// ---- jvp / vjp / linearize / linear_transpose ----

TEST(Jvp, TupleAndSingleArguments) {
  Array x = random_array({4}, DType::kFloat32), v = random_array({4}, DType::kFloat32);
  Array y = random_array({4}, DType::kFloat32), w = random_array({4}, DType::kFloat32);
  auto [out, tan] = jvp([](const Array& a) { return tnp::exp(a); }, x, v);
  EXPECT_CLOSE(out, tnp::exp(x), 0);
  EXPECT_CLOSE(tan, tnp::multiply(v, tnp::exp(x)), 1e-6);
  auto f2 = [](const Array& a, const Array& b) { return tnp::multiply(a, b); };
  auto [o2, t2] = jvp(f2, std::make_tuple(x, y), std::make_tuple(v, w));
  EXPECT_CLOSE(t2, tnp::add(tnp::multiply(v, y), tnp::multiply(x, w)), 1e-6);
}

TEST(Jvp, TangentErrors) {
  Array x = random_array({4}, DType::kFloat32);
  auto f = [](const Array& a) { return tnp::exp(a); };
  EXPECT_ERROR(TypeError, jvp(f, x, random_array({3}, DType::kFloat32)),
               "primal and tangent arguments do not match");
  EXPECT_ERROR(TypeError, jvp(f, x, random_array({4}, DType::kFloat64)), "f32[4]");
  std::vector<Array> xs{x, x}, ts{x};
  EXPECT_ERROR(ValueError, jvp([](const std::vector<Array>& a) { return a[0]; }, xs, ts),
               "between primal and tangent argument 0");
}

TEST(Vjp, TupleOfCotangentsAndAux) {
  Array x = random_array({3}, DType::kFloat32), y = random_array({3}, DType::kFloat32);
  auto f = [](const Array& a, const Array& b) { return tnp::multiply(tnp::sin(a), b); };
  auto [out, f_vjp] = vjp(f, x, y);
  EXPECT_CLOSE(out, tnp::multiply(tnp::sin(x), y), 0);
  Array u = random_array({3}, DType::kFloat32);
  auto [cx, cy] = f_vjp(u);
  EXPECT_CLOSE(cx, tnp::multiply(tnp::multiply(u, y), tnp::cos(x)), 1e-6);
  EXPECT_CLOSE(cy, tnp::multiply(u, tnp::sin(x)), 1e-6);
  EXPECT_ERROR(TypeError, f_vjp(random_array({4}, DType::kFloat32)), "cotangent 0 is f32[4]");
  auto g = [](const Array& a) { return std::make_pair(tnp::exp(a), tnp::sum(a)); };
  auto [o, g_vjp, aux] = vjp(g, has_aux, x);
  EXPECT_CLOSE(aux, tnp::sum(x), 0);
  auto [c] = g_vjp(u);
  EXPECT_CLOSE(c, tnp::multiply(u, tnp::exp(x)), 1e-6);
}

TEST(Linearize, EvaluatesOnceAndMatchesJvp) {
  Array x = random_array({5}, DType::kFloat32);
  auto f = [](const Array& a) { return tnp::sin(tnp::multiply(a, a)); };
  reset_eval_count();
  auto [y, f_jvp] = linearize(f, x);
  int64_t linearize_evals = eval_count();
  EXPECT_CLOSE(y, f(x), 0);
  Array v = random_array({5}, DType::kFloat32);
  reset_eval_count();
  Array t = f_jvp(v);
  int64_t jvp_evals = eval_count();
  EXPECT_CLOSE(t, jvp(f, x, v).second, 1e-6);
  // The linear map re-runs only tangent ops (here: mul, mul, add, mul), not sin/cos.
  EXPECT_LE(jvp_evals, 4);
  EXPECT_GE(linearize_evals, 3);
}

TEST(LinearTranspose, MatrixTransposes) {
  Array a = random_array({3, 4}, DType::kFloat32);
  Array x = random_array({4}, DType::kFloat32);
  auto f = [&](const Array& v) { return tnp::matmul(a, v); };
  auto ft = linear_transpose(f, x);
  Array u = random_array({3}, DType::kFloat32);
  auto [c] = ft(u);
  EXPECT_CLOSE(c, tnp::matmul(tnp::transpose(a), u), 1e-5);
  // Cotangent shape mismatch names both.
  EXPECT_ERROR(TypeError, ft(random_array({2}, DType::kFloat32)), "f32[3]");
}

// ---- vmap ----

TEST(Vmap, AxesOptions) {
  Array x = random_array({4, 3}, DType::kFloat32);
  Array b = random_array({3}, DType::kFloat32);
  auto f = [](const Array& r, const Array& c) { return tnp::multiply(r, c); };
  // in_axes -1 maps x's last axis; out_axes 1 puts the mapped axis second.
  Array y = vmap(f, {-1, std::nullopt}, 1)(tnp::transpose(x), b);
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_CLOSE(y, tnp::transpose(tnp::multiply(x, b)), 0);
  // An unmapped output with out_axes None; a mapped-size broadcast when out_axes is an int.
  auto g = [](const Array& r, const Array& c) { return std::make_pair(tnp::sum(r), c); };
  auto [s, c] = vmap(g, {0, std::nullopt}, {0, std::nullopt})(x, b);
  EXPECT_EQ(c.shape(), (Shape{3}));
  auto [s2, c2] = vmap(g, {0, std::nullopt})(x, b);
  EXPECT_EQ(c2.shape(), (Shape{4, 3}));
  EXPECT_CLOSE(s2, tnp::sum(x, 1), 1e-6);
}

TEST(Vmap, AxisSizeAndErrors) {
  Array b = random_array({3}, DType::kFloat32);
  Array y = vmap([](const Array& c) { return tnp::exp(c); }, std::nullopt, 0, {.axis_size = 5})(b);
  EXPECT_EQ(y.shape(), (Shape{5, 3}));
  auto f = [](const Array& r, const Array& c) { return tnp::add(r, c); };
  EXPECT_ERROR(
      ValueError,
      vmap(f)(random_array({4, 3}, DType::kFloat32), random_array({5, 3}, DType::kFloat32)),
      "inconsistent sizes");
  EXPECT_ERROR(ValueError, vmap(f, {2, 0})(random_array({4, 3}, DType::kFloat32), b),
               "out of range");
  EXPECT_ERROR(ValueError, vmap([](const Array& c) { return c; }, std::nullopt)(b),
               "at least one non-None value in in_axes");
  EXPECT_ERROR(ValueError, vmap([](const Array& c) { return c; }, 0, std::nullopt)(b),
               "out_axes None");
  EXPECT_ERROR(ValueError, vmap(f, {0, 0, 0})(b, b), "in_axes specification (0, 0, 0)");
}

TEST(Vmap, PytreePrefixes) {
  Layer p{random_array({4, 2}, DType::kFloat32), random_array({2}, DType::kFloat32)};
  auto f = [](const Layer& l) { return tnp::add(l.w, l.b); };
  Array y = vmap(f, VmapAxes{VmapAxes{0, std::nullopt}})(p);
  EXPECT_CLOSE(y, tnp::add(p.w, p.b), 0);
  std::map<std::string, Array> m{{"a", p.w}, {"b", p.b}};
  auto g = [](const std::map<std::string, Array>& d) { return tnp::add(d.at("a"), d.at("b")); };
  Array z = vmap(g, VmapAxes{VmapAxes::dict({{"a", 1}, {"b", 0}})})(m);
  EXPECT_EQ(z.shape(), (Shape{2, 4}));
  EXPECT_CLOSE(z, tnp::transpose(tnp::add(p.w, p.b)), 0);
  EXPECT_ERROR(ValueError, vmap(g, VmapAxes{VmapAxes::dict({{"a", 1}, {"c", 0}})})(m),
               "dict keys differ");
}

TEST(Vmap, Nesting) {
  Array x = random_array({2, 3, 4}, DType::kFloat32);
  auto inner = vmap([](const Array& r) { return tnp::sum(tnp::exp(r)); });
  Array y = vmap(inner, 2)(x);  // outer over axis 2, inner over (remaining) axis 0
  EXPECT_EQ(y.shape(), (Shape{4, 2}));
  EXPECT_CLOSE(y, tnp::transpose(tnp::sum(tnp::exp(x), 1)), 1e-5);
}

TEST(Vmap, AxisNamesAreFoundFromInside) {
  // Collectives (later) find their vmap by name from inside the mapped function.
  Array x = random_array({2, 3, 4}, DType::kFloat32);
  std::vector<int64_t> seen;
  auto inner = [&](const Array& r) {
    auto* i = trace::find_batch_trace("i");
    auto* j = trace::find_batch_trace("j");
    EXPECT_TRUE(i != nullptr && j != nullptr);
    if (i && j) seen = {i->axis_size(), j->axis_size()};
    EXPECT_EQ(trace::find_batch_trace("k"), nullptr);
    return tnp::sum(r);
  };
  auto outer = [&](const Array& m) { return vmap(inner, 0, 0, {.axis_name = "j"})(m); };
  Array y = vmap(outer, 0, 0, {.axis_name = "i"})(x);
  EXPECT_EQ(seen, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(trace::find_batch_trace("i"), nullptr);  // ended with its vmap
}

// ---- jacobians ----

TEST(Jacobian, FwdRevHessianClosedForms) {
  Array w = random_array({3, 4}, DType::kFloat32);
  Array x = random_array({4}, DType::kFloat32);
  auto f = [&](const Array& v) { return tnp::sin(tnp::matmul(w, v)); };
  // J = diag(cos(w x)) w
  Array want = tnp::multiply(tnp::reshape(tnp::cos(tnp::matmul(w, x)), {3, 1}), w);
  EXPECT_CLOSE(jacfwd(f)(x), want, 1e-5);
  EXPECT_CLOSE(jacrev(f)(x), want, 1e-5);
  Array a = random_array({4, 4}, DType::kFloat32);
  auto q = [&](const Array& v) { return tnp::sum(tnp::multiply(v, tnp::matmul(a, v))); };
  EXPECT_CLOSE(hessian(q)(x), tnp::add(a, tnp::transpose(a)), 1e-5);
  // Pytree input, Array output: the jacobian has the input's structure.
  Layer p{random_array({2, 2}, DType::kFloat32), random_array({2}, DType::kFloat32)};
  Layer jp = jacrev([](const Layer& l) { return tnp::matmul(l.w, l.b); })(p);
  EXPECT_EQ(jp.w.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(jp.b.shape(), (Shape{2, 2}));
  EXPECT_CLOSE(jp.b, p.w, 0);
  Layer jf = jacfwd([](const Layer& l) { return tnp::matmul(l.w, l.b); })(p);
  EXPECT_CLOSE(jf.w, jp.w, 1e-6);
}

TEST(Jacobian, FlatAuxOutputsAreReturnedNotDifferentiated) {
  Array x = random_array({3}, DType::kFloat32);
  // Outputs: sin(x) (differentiated), then aux: sum(x) and an int32 (which could not be).
  flat::Fun f = [](std::span<const Array> xs) {
    return std::vector<Array>{tnp::sin(xs[0]), tnp::sum(xs[0]),
                              lax::convert_element_type(tnp::sum(xs[0]), DType::kInt32)};
  };
  Array want = tnp::multiply(tnp::eye(3), tnp::cos(x));
  for (bool fwd : {true, false}) {
    std::vector<Array> outs;
    std::vector<Array> args{x};
    std::vector<Array> j = fwd ? flat::jacfwd(f, args, &outs, [] { return size_t{2}; })
                               : flat::jacrev(f, args, &outs, [] { return size_t{2}; });
    ASSERT_EQ(j.size(), 1u);
    EXPECT_CLOSE(j[0], want, 1e-6);
    ASSERT_EQ(outs.size(), 3u);
    EXPECT_CLOSE(outs[1], tnp::sum(x), 1e-6);
    EXPECT_EQ(outs[2].dtype(), DType::kInt32);
    EXPECT_FALSE(outs[1].is_tracer());
  }
}

// ---- staging ----

TEST(EvalShape, ComputesNothing) {
  auto f = [](const Array& a, const Array& b) {
    return std::make_tuple(tnp::matmul(a, b), tnp::sum(a, 0));
  };
  reset_eval_count();
  auto [m, s] = eval_shape(f)(ShapeDtypeStruct{{5, 3}}, random_array({3, 2}, DType::kFloat32));
  EXPECT_EQ(eval_count(), 0);
  EXPECT_EQ(m, (ShapeDtypeStruct{{5, 2}, DType::kFloat32}));
  EXPECT_EQ(s.str(), "ShapeDtypeStruct(shape=(3,), dtype=float32)");
  ShapeDtypeStruct one = eval_shape([](const Array& a) { return tnp::multiply(a, 2); })(
      ShapeDtypeStruct{{2}, DType::kInt32});
  EXPECT_EQ(one.dtype, DType::kInt32);
  EXPECT_ERROR(ValueError, eval_shape(f)(ShapeDtypeStruct{{5, 3}}, ShapeDtypeStruct{{4, 2}}),
               "(5, 3) @ (4, 2)");
}

// ---- reverse mode cost ----

TEST(ReverseMode, CostIsAConstantFactorOfTheFunction) {
  auto f = [](const Array& x) {
    Array y = tnp::tanh(tnp::multiply(x, x));
    y = tnp::add(tnp::exp(y), tnp::sin(x));
    return tnp::sum(tnp::multiply(y, y));
  };
  std::vector<double> ratios;
  for (int64_t n : {4, 64, 4096}) {
    Array x = random_array({n}, DType::kFloat32);
    reset_eval_count();
    (void)f(x);
    int64_t fwd = eval_count();
    reset_eval_count();
    Array g = grad(f)(x);
    int64_t rev = eval_count();
    ASSERT_EQ(g.shape(), (Shape{n}));
    ratios.push_back(static_cast<double>(rev) / static_cast<double>(fwd));
    EXPECT_LE(rev, 5 * fwd) << "n=" << n;
  }
  // Independent of the input size (one gradient costs the same number of applications).
  EXPECT_EQ(ratios[0], ratios[1]);
  EXPECT_EQ(ratios[1], ratios[2]);
}

// ---- errors and the trace context ----

TEST(Errors, ConcretizationNamesTheFix) {
  auto branchy = [](const Array& x) {
    if (lax::gt(x, tnp::zeros({}))) return tnp::sin(x);
    return tnp::cos(x);
  };
  Array x = random_array({}, DType::kFloat32);
  // Abstract tracers (vmap, make_jaxpr) have no value to branch on.
  EXPECT_ERROR(ConcretizationError, vmap(branchy)(random_array({3}, DType::kFloat32)), "where");
  EXPECT_ERROR(ConcretizationError, make_jaxpr(branchy)(x), "static");
  EXPECT_ERROR(ConcretizationError, make_jaxpr(grad(branchy))(x), "cond");
  auto to_number = [](const Array& v) { return tnp::multiply(v, v.item<float>()); };
  EXPECT_ERROR(ConcretizationError, vmap(to_number)(random_array({3}, DType::kFloat32)), "item()");
  auto shape_from_value = [](const Array& v) {
    return tnp::sum(tnp::zeros({static_cast<int64_t>(v.item<float>())}));
  };
  EXPECT_ERROR(ConcretizationError, make_jaxpr(shape_from_value)(x), "concrete value");
  // As in JAX, grad and jvp of eager code see concrete primals: control flow on them works
  // and picks the branch of the primal value.
  for (double v : {-0.7, 0.4}) {
    Array xv = tnp::asarray(v, DType::kFloat32);
    double want = v > 0 ? std::cos(v) : -std::sin(v);
    EXPECT_NEAR(scalar(grad(branchy)(xv)), want, 1e-6);
    EXPECT_NEAR(scalar(jvp(branchy, xv, tnp::ones({})).second), want, 1e-6);
  }
  // grad(x * float(x)) treats float(x) as a constant.
  EXPECT_NEAR(scalar(grad(to_number)(tnp::asarray(1.5f))), 1.5, 1e-6);
}

TEST(Errors, LeakedTracerIsDetectedWhenUsed) {
  Array leaked;
  Array x = random_array({3}, DType::kFloat32);
  (void)grad([&](const Array& v) {
    leaked = v;
    return tnp::sum(v);
  })(x);
  ASSERT_TRUE(leaked.is_tracer());
  EXPECT_ERROR(UnexpectedTracerError, tnp::sin(leaked), "leaked out of the function");
  // Also inside another transformation.
  EXPECT_ERROR(UnexpectedTracerError, vmap([&](const Array& v) {
                 return tnp::add(v, leaked);
               })(random_array({2, 3}, DType::kFloat32)),
               "outside the transformation that created it");
  EXPECT_ERROR(UnexpectedTracerError,
               make_jaxpr([&](const Array& v) { return tnp::add(v, leaked); })(x),
               "LinearizeTracer");
}

TEST(Errors, TraceContextIsCleanAfterExceptions) {
  Trace* bottom = current_trace();
  Array x = random_array({3}, DType::kFloat32);
  auto bad = [](const Array& v) -> Array {
    (void)tnp::sin(v);
    throw ValueError("[user] boom");
  };
  EXPECT_ERROR(ValueError, grad([&](const Array& v) {
                 return tnp::sum(vmap(bad)(tnp::reshape(v, {3, 1})));
               })(x),
               "boom");
  EXPECT_EQ(current_trace(), bottom);
  EXPECT_ERROR(ValueError, jvp(bad, x, x), "boom");
  EXPECT_ERROR(ValueError, make_jaxpr(bad)(x), "boom");
  EXPECT_EQ(current_trace(), bottom);
  // A shape error inside nested transformations unwinds the same way.
  EXPECT_ERROR(ValueError, grad([](const Array& v) {
                 return tnp::sum(tnp::matmul(v, v));
               })(random_array({2, 3}, DType::kFloat32)),
               "(2, 3) @ (2, 3)");
  EXPECT_EQ(current_trace(), bottom);
  EXPECT_CLOSE(grad([](const Array& v) { return tnp::sum(tnp::exp(v)); })(x), tnp::exp(x), 1e-6);
}

}  // namespace
}  // namespace tessera
