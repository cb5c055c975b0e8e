// The transformations, one runnable example each: grad, value_and_grad (argnums, has_aux,
// allow_int), jvp, vjp, linearize, linear_transpose, vmap (in_axes, out_axes, axis_size),
// jacfwd, jacrev, hessian, make_jaxpr, eval_shape, stop_gradient. Each result is checked
// against a closed form; the program exits non-zero if one disagrees.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include <tessera/tessera.h>

namespace tnp = tessera::numpy;
using tessera::Array;

// A model's parameters as a pytree: one macro registers the struct.
struct Linear {
  Array w, b;
};
TESSERA_REGISTER_PYTREE(Linear, w, b);

static int failures = 0;
static void check(const char* what, const Array& got, const Array& want) {
  bool ok = got.shape() == want.shape();
  if (ok && got.size() > 0) {
    Array d = tnp::subtract(got, want);
    double err = tnp::max(tnp::maximum(d, tnp::negative(d))).item<double>();
    double scale = tnp::max(tnp::maximum(want, tnp::negative(want))).item<double>();
    ok = err <= 1e-5 * (1.0 + scale);
  }
  std::printf("%-44s %s\n", what, ok ? "ok" : "MISMATCH");
  if (!ok) {
    std::cout << "  got  " << got << "\n  want " << want << "\n";
    ++failures;
  }
}

int main() {
  Array x = tnp::array({0.5, -1.0, 2.0});

  // grad: d/dx sum(sin(x)) = cos(x).
  auto f = [](const Array& v) { return tnp::sum(tnp::sin(v)); };
  check("grad(f)(x) == cos(x)", tessera::grad(f)(x), tnp::cos(x));

  // value_and_grad over a struct of parameters, with the data as a second argument.
  Linear p{tnp::array({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}), tnp::array({0.1, 0.2})};
  auto loss = [](const Linear& l, const Array& in) {
    Array y = tnp::add(tnp::matmul(in, l.w), l.b);
    return tnp::mean(tnp::multiply(y, y));
  };
  Array batch = tnp::array({{1.0, 0.0, -1.0}, {0.5, 0.5, 0.5}});
  auto [value, grads] = tessera::value_and_grad(loss)(p, batch);  // grads is a Linear
  check("value_and_grad: value", value, loss(p, batch));
  Array y = tnp::add(tnp::matmul(batch, p.w), p.b);
  check("value_and_grad: d/dw = 2/n x^T y", grads.w,
        tnp::divide(tnp::multiply(2.0, tnp::matmul(tnp::transpose(batch), y)), 4.0));
  check("value_and_grad: d/db = 2/n sum(y)", grads.b,
        tnp::divide(tnp::multiply(2.0, tnp::sum(y, 0)), 4.0));

  // argnums selects arguments (a tuple for several); has_aux returns extra outputs.
  auto g = [](const Array& a, const Array& b) {
    return std::make_pair(tnp::sum(tnp::multiply(a, b)), tnp::max(a));
  };
  auto [gab, aux] = tessera::grad(g, tessera::argnums<0, 1>, tessera::has_aux)(x, tnp::exp(x));
  check("grad(argnums<0,1>, has_aux): d/da = b", std::get<0>(gab), tnp::exp(x));
  check("grad(argnums<0,1>, has_aux): aux", aux, tnp::max(x));

  // jvp: the directional derivative, computed forward.
  auto [out, tangent] = tessera::jvp([](const Array& v) { return tnp::exp(v); }, x, tnp::ones({3}));
  check("jvp(exp)(x; 1) == exp(x)", tangent, tnp::exp(x));

  // vjp: the pullback of a cotangent.
  auto [yv, pullback] = tessera::vjp([](const Array& v) { return tnp::tanh(v); }, x);
  auto [ct] = pullback(tnp::ones({3}));
  check("vjp(tanh)(1) == 1 - tanh^2", ct, tnp::subtract(1.0, tnp::multiply(yv, yv)));

  // linearize: evaluate once, then apply the linear map to many tangents.
  auto [ys, f_jvp] = tessera::linearize([](const Array& v) { return tnp::multiply(v, v); }, x);
  check("linearize(x^2) applied to t == 2 x t", f_jvp(tnp::full({3}, 3.0)), tnp::multiply(6.0, x));

  // linear_transpose of a linear map: A^T.
  Array a = tnp::array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto at = tessera::linear_transpose([&](const Array& v) { return tnp::matmul(a, v); }, x);
  check("linear_transpose(A x)(u) == A^T u", std::get<0>(at(tnp::ones({2}))),
        tnp::matmul(tnp::transpose(a), tnp::ones({2})));

  // vmap: per-row norms; per-example gradients with shared parameters (in_axes None).
  Array rows = tnp::array({{3.0, 4.0}, {6.0, 8.0}});
  check("vmap(norm)(rows)",
        tessera::vmap([](const Array& r) { return tnp::sqrt(tnp::sum(tnp::multiply(r, r))); })(rows),
        tnp::array({5.0, 10.0}));
  auto per_example = tessera::vmap(tessera::grad(loss), {std::nullopt, 0});
  Linear pe = per_example(p, tnp::reshape(batch, {2, 1, 3}));
  check("vmap(grad) per-example d/db sums to grad", tnp::sum(pe.b, 0),
        tnp::multiply(grads.b, 2.0));  // each example's mean is over 2 values, not 4
  // out_axes and axis_size.
  Array cols = tessera::vmap([](const Array& r) { return tnp::multiply(r, 2.0); }, 0, 1)(rows);
  check("vmap(out_axes=1)", cols, tnp::transpose(tnp::multiply(rows, 2.0)));
  Array tiled = tessera::vmap([](const Array& r) { return r; }, std::nullopt, 0,
                              {.axis_size = 2})(x);
  check("vmap(in_axes=None, axis_size=2)", tiled, tnp::broadcast_to(x, {2, 3}));

  // Jacobians and the Hessian.
  Array jf = tessera::jacfwd([](const Array& v) { return tnp::sin(v); })(x);
  check("jacfwd(sin) == diag(cos)", jf, tnp::multiply(tnp::eye(3), tnp::cos(x)));
  Array jr = tessera::jacrev([](const Array& v) { return tnp::sin(v); })(x);
  check("jacrev(sin) == jacfwd(sin)", jr, jf);
  auto cubic = [](const Array& v) { return tnp::sum(tnp::multiply(tnp::multiply(v, v), v)); };
  check("hessian(sum x^3) == diag(6x)", tessera::hessian(cubic)(x),
        tnp::multiply(tnp::eye(3), tnp::multiply(6.0, x)));

  // stop_gradient: d/dx [x * stop_gradient(x)] = x.
  check("grad(x * stop_gradient(x)) == x",
        tessera::grad([](const Array& v) { return tnp::sum(tnp::multiply(v, tessera::stop_gradient(v))); })(x),
        x);

  // make_jaxpr and eval_shape: the staged program and the output types, computing nothing.
  std::cout << "\nmake_jaxpr(grad(f))(x):\n" << tessera::make_jaxpr(tessera::grad(f))(x) << "\n";
  tessera::ShapeDtypeStruct s = tessera::eval_shape([](const Array& m, const Array& v) {
    return tnp::matmul(m, v);
  })(tessera::ShapeDtypeStruct{{1000, 500}}, tessera::ShapeDtypeStruct{{500}});
  std::cout << "eval_shape(matmul)(f32[1000,500], f32[500]) = " << s << "\n";
  if (s.shape != tessera::Shape{1000}) ++failures;

  std::printf("\n%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
