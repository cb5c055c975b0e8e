// jax.random's gamma family, counting, closed-form and linear-algebra distributions over
// tessera::random (random_dists.h), on flat arguments: tessera/_src/random_dists.py keeps
// jax.random's signatures, dtype canonicalization and Python-level checks. Parameters are
// array-likes (Python scalars stay weak); shape is None or a sequence; the C++ work runs with
// the GIL released.
#include <optional>
#include <string>

#include "py_common.h"
#include "tessera/random_dists.h"

namespace tessera::python {

namespace {

std::optional<Shape> opt_shape(const py::object& s, const char* op) {
  if (s.is_none()) return std::nullopt;
  return to_shape(s, op);
}

// f(key, param, shape, dtype) with shape None = the parameter's shape.
using Dist1 = Array (*)(const Array&, const numpy::ArrayLike&, std::optional<Shape>,
                        std::optional<DType>);
void def_dist1(py::module_& m, const char* name, const char* param, Dist1 f) {
  m.def(
      name,
      [f, name](py::handle key, py::handle x, py::object shape, py::object dtype) {
        Array k = to_array(key), a = to_array(x);
        std::optional<Shape> s = opt_shape(shape, name);
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return f(k, a, s, d);
      },
      py::arg("key"), py::arg(param), py::arg("shape") = py::none(), py::arg("dtype") = py::none());
}

// f(key, param1, param2, shape, dtype).
using Dist2 = Array (*)(const Array&, const numpy::ArrayLike&, const numpy::ArrayLike&,
                        std::optional<Shape>, std::optional<DType>);
void def_dist2(py::module_& m, const char* name, const char* p1, const char* p2, Dist2 f) {
  m.def(
      name,
      [f, name](py::handle key, py::handle x, py::handle y, py::object shape, py::object dtype) {
        Array k = to_array(key), a = to_array(x), b = to_array(y);
        std::optional<Shape> s = opt_shape(shape, name);
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return f(k, a, b, s, d);
      },
      py::arg("key"), py::arg(p1), py::arg(p2), py::arg("shape") = py::none(),
      py::arg("dtype") = py::none());
}

}  // namespace

void bind_random_dists(py::module_& m) {
  py::module_ r =
      m.def_submodule("random_dists", "jax.random's distributions over tessera::random");
  def_dist1(r, "gamma", "a", random::gamma);
  def_dist1(r, "loggamma", "a", random::loggamma);
  def_dist1(r, "dirichlet", "alpha", random::dirichlet);
  def_dist1(r, "chisquare", "df", random::chisquare);
  def_dist1(r, "poisson", "lam", random::poisson);
  def_dist1(r, "geometric", "p", random::geometric);
  def_dist1(r, "lognormal", "sigma", random::lognormal);
  def_dist1(r, "pareto", "b", random::pareto);
  def_dist1(r, "wald", "mean", random::wald);
  def_dist2(r, "beta", "a", "b", random::beta);
  def_dist2(r, "f", "dfnum", "dfden", random::f);
  def_dist2(r, "binomial", "n", "p", random::binomial);
  r.def(
      "t",
      [](py::handle key, py::handle df, py::object shape, py::object dtype) {
        Array k = to_array(key), a = to_array(df);
        Shape s = to_shape(shape, "t");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::t(k, a, s, d);
      },
      py::arg("key"), py::arg("df"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none());
  r.def(
      "generalized_normal",
      [](py::handle key, py::handle p, py::object shape, py::object dtype) {
        Array k = to_array(key), a = to_array(p);
        Shape s = to_shape(shape, "generalized_normal");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::generalized_normal(k, a, s, d);
      },
      py::arg("key"), py::arg("p"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none());
  r.def(
      "ball",
      [](py::handle key, py::handle dim, py::handle p, py::object shape, py::object dtype) {
        Array k = to_array(key), a = to_array(p);
        const int64_t n = as_int(dim, "ball", "d");
        Shape s = to_shape(shape, "ball");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::ball(k, n, a, s, d);
      },
      py::arg("key"), py::arg("d"), py::arg("p") = 2, py::arg("shape") = py::tuple(),
      py::arg("dtype") = py::none());
  r.def(
      "maxwell",
      [](py::handle key, py::object shape, py::object dtype) {
        Array k = to_array(key);
        Shape s = to_shape(shape, "maxwell");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::maxwell(k, s, d);
      },
      py::arg("key"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none());
  r.def(
      "double_sided_maxwell",
      [](py::handle key, py::handle loc, py::handle scale, py::object shape, py::object dtype) {
        Array k = to_array(key), l = to_array(loc), sc = to_array(scale);
        Shape s = to_shape(shape, "double_sided_maxwell");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::double_sided_maxwell(k, l, sc, s, d);
      },
      py::arg("key"), py::arg("loc"), py::arg("scale"), py::arg("shape") = py::tuple(),
      py::arg("dtype") = py::none());
  r.def(
      "triangular",
      [](py::handle key, py::handle left, py::handle mode, py::handle right, py::object shape,
         py::object dtype) {
        Array k = to_array(key), l = to_array(left), m = to_array(mode), rt = to_array(right);
        std::optional<Shape> s = opt_shape(shape, "triangular");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::triangular(k, l, m, rt, s, d);
      },
      py::arg("key"), py::arg("left"), py::arg("mode"), py::arg("right"),
      py::arg("shape") = py::none(), py::arg("dtype") = py::none());
  r.def(
      "multivariate_normal",
      [](py::handle key, py::handle mean, py::handle cov, py::object shape, py::object dtype,
         std::string method) {
        Array k = to_array(key), mu = to_array(mean), c = to_array(cov);
        std::optional<Shape> s = opt_shape(shape, "multivariate_normal");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::multivariate_normal(k, mu, c, s, d, method);
      },
      py::arg("key"), py::arg("mean"), py::arg("cov"), py::arg("shape") = py::none(),
      py::arg("dtype") = py::none(), py::arg("method") = "cholesky");
  r.def(
      "orthogonal",
      [](py::handle key, py::handle n, py::object shape, py::object dtype, py::object m) {
        Array k = to_array(key);
        const int64_t nn = as_int(n, "orthogonal", "n");
        Shape s = to_shape(shape, "orthogonal");
        std::optional<DType> d = opt_dtype(dtype);
        std::optional<int64_t> mm;
        if (!m.is_none()) mm = as_int(m, "orthogonal", "m");
        py::gil_scoped_release nogil;
        return random::orthogonal(k, nn, s, d, mm);
      },
      py::arg("key"), py::arg("n"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none(),
      py::arg("m") = py::none());
}

}  // namespace tessera::python
