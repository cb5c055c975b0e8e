// jax.random over tessera::random (random.h): keys, split, fold_in, bits and the distributions
// on flat arguments; tessera/random.py gives them jax.random's signatures. A Python int seed is
// passed as int64 (JAX's np.int64(seed)); arrays and NumPy scalars as arrays. The C++ work runs
// with the GIL released.
#include <optional>
#include <string>
#include <vector>

#include "py_common.h"
#include "tessera/random.h"

namespace tessera::python {

namespace {

std::optional<Shape> opt_shape(const py::object& s, const char* op) {
  if (s.is_none()) return std::nullopt;
  return to_shape(s, op);
}

bool is_py_int(py::handle h) {
  return py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h);
}

// A key-building function from an int or an integer array seed.
template <Array (*FromInt)(int64_t), Array (*FromArray)(const Array&)>
Array seed_call(py::handle seed, const char* op) {
  if (is_py_int(seed)) {
    const int64_t s = as_int(seed, op, "seed");
    py::gil_scoped_release nogil;
    return FromInt(s);
  }
  Array a = to_array(seed);
  py::gil_scoped_release nogil;
  return FromArray(a);
}

using Dist = Array (*)(const Array&, const Shape&, std::optional<DType>);
void def_dist(py::module_& m, const char* name, Dist f) {
  m.def(
      name,
      [f, name](py::handle key, py::object shape, py::object dtype) {
        Array k = to_array(key);
        Shape s = to_shape(shape, name);
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return f(k, s, d);
      },
      py::arg("key"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none());
}

}  // namespace

void bind_random(py::module_& m) {
  py::module_ r = m.def_submodule("random", "jax.random over tessera::random");
  r.def("PRNGKey", [](py::handle seed) {
    return seed_call<static_cast<Array (*)(int64_t)>(random::PRNGKey),
                     static_cast<Array (*)(const Array&)>(random::PRNGKey)>(seed, "PRNGKey");
  });
  r.def("key", [](py::handle seed) {
    return seed_call<static_cast<Array (*)(int64_t)>(random::key),
                     static_cast<Array (*)(const Array&)>(random::key)>(seed, "key");
  });
  r.def("key_data", [](py::handle keys) { return random::key_data(to_array(keys)); });
  r.def(
      "wrap_key_data",
      [](py::handle bits, std::string impl) { return random::wrap_key_data(to_array(bits), impl); },
      py::arg("key_bits_array"), py::arg("impl") = "threefry2x32");
  r.def("key_impl", [](py::handle keys) { return random::key_impl(to_array(keys)); });
  r.def("clone", [](py::handle key) { return random::clone(to_array(key)); });
  r.def(
      "split",
      [](py::handle key, py::object num) {
        Array k = to_array(key);
        if (is_py_int(num) || py::hasattr(num, "__index__")) {
          const int64_t n = as_int(num, "split", "num");
          py::gil_scoped_release nogil;
          return random::split(k, n);
        }
        Shape s = to_shape(num, "split", "num");
        py::gil_scoped_release nogil;
        return random::split(k, s);
      },
      py::arg("key"), py::arg("num") = 2);
  r.def("fold_in", [](py::handle key, py::handle data) {
    Array k = to_array(key), d;
    if (is_py_int(data)) {  // jnp.uint32(data): a Python int becomes its 32-bit word
      const auto w = static_cast<uint32_t>(static_cast<uint64_t>(as_int(data, "fold_in", "data")));
      d = array_from_host(Aval{{}, DType::kUInt32, false}, &w);
    } else {
      d = to_array(data);
    }
    py::gil_scoped_release nogil;
    return random::fold_in(k, d);
  });
  r.def(
      "bits",
      [](py::handle key, py::object shape, py::object dtype) {
        Array k = to_array(key);
        Shape s = to_shape(shape, "bits");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::bits(k, s, d);
      },
      py::arg("key"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none());
  r.def("threefry_2x32", [](py::handle keypair, py::handle count) {
    return random::threefry_2x32(to_array(keypair), to_array(count));
  });
  r.def(
      "uniform",
      [](py::handle key, py::object shape, py::object dtype, py::handle minval, py::handle maxval) {
        Array k = to_array(key), lo = to_array(minval), hi = to_array(maxval);
        Shape s = to_shape(shape, "uniform");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::uniform(k, s, d, lo, hi);
      },
      py::arg("key"), py::arg("shape") = py::tuple(), py::arg("dtype") = py::none(),
      py::arg("minval") = 0.0, py::arg("maxval") = 1.0);
  def_dist(r, "normal", random::normal);
  def_dist(r, "gumbel", random::gumbel);
  def_dist(r, "exponential", random::exponential);
  def_dist(r, "laplace", random::laplace);
  def_dist(r, "logistic", random::logistic);
  def_dist(r, "cauchy", random::cauchy);
  def_dist(r, "rademacher", random::rademacher);
  r.def(
      "truncated_normal",
      [](py::handle key, py::handle lower, py::handle upper, py::object shape, py::object dtype) {
        Array k = to_array(key), lo = to_array(lower), hi = to_array(upper);
        std::optional<Shape> s = opt_shape(shape, "truncated_normal");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::truncated_normal(k, lo, hi, s, d);
      },
      py::arg("key"), py::arg("lower"), py::arg("upper"), py::arg("shape") = py::none(),
      py::arg("dtype") = py::none());
  r.def(
      "bernoulli",
      [](py::handle key, py::handle p, py::object shape) {
        Array k = to_array(key), pa = to_array(p);
        std::optional<Shape> s = opt_shape(shape, "bernoulli");
        py::gil_scoped_release nogil;
        return random::bernoulli(k, pa, s);
      },
      py::arg("key"), py::arg("p"), py::arg("shape") = py::none());
  r.def(
      "randint",
      [](py::handle key, py::object shape, py::handle minval, py::handle maxval, py::object dtype) {
        Array k = to_array(key), lo = to_array(minval), hi = to_array(maxval);
        Shape s = to_shape(shape, "randint");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::randint(k, s, lo, hi, d);
      },
      py::arg("key"), py::arg("shape"), py::arg("minval"), py::arg("maxval"),
      py::arg("dtype") = py::none());
  r.def(
      "categorical",
      [](py::handle key, py::handle logits, py::handle axis, py::object shape) {
        Array k = to_array(key), l = to_array(logits);
        const int64_t ax = as_int(axis, "categorical", "axis");
        std::optional<Shape> s = opt_shape(shape, "categorical");
        py::gil_scoped_release nogil;
        return random::categorical(k, l, ax, s);
      },
      py::arg("key"), py::arg("logits"), py::arg("axis") = -1, py::arg("shape") = py::none());
  r.def(
      "rayleigh",
      [](py::handle key, py::handle scale, py::object shape, py::object dtype) {
        Array k = to_array(key), sc = to_array(scale);
        std::optional<Shape> s = opt_shape(shape, "rayleigh");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::rayleigh(k, sc, s, d);
      },
      py::arg("key"), py::arg("scale"), py::arg("shape") = py::none(),
      py::arg("dtype") = py::none());
  r.def(
      "weibull_min",
      [](py::handle key, py::handle scale, py::handle concentration, py::object shape,
         py::object dtype) {
        Array k = to_array(key), sc = to_array(scale), c = to_array(concentration);
        Shape s = to_shape(shape, "weibull_min");
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return random::weibull_min(k, sc, c, s, d);
      },
      py::arg("key"), py::arg("scale"), py::arg("concentration"), py::arg("shape") = py::tuple(),
      py::arg("dtype") = py::none());
  r.def(
      "permutation",
      [](py::handle key, py::handle x, py::handle axis, bool independent) {
        Array k = to_array(key);
        if (is_py_int(x)) {
          const int64_t n = as_int(x, "permutation", "x");
          py::gil_scoped_release nogil;
          return random::permutation(k, n);
        }
        Array a = to_array(x);
        const int64_t ax = as_int(axis, "permutation", "axis");
        py::gil_scoped_release nogil;
        return random::permutation(k, a, ax, independent);
      },
      py::arg("key"), py::arg("x"), py::arg("axis") = 0, py::arg("independent") = false);
  r.def(
      "choice",
      [](py::handle key, py::handle a, py::object shape, bool replace, py::object p,
         py::handle axis) {
        Array k = to_array(key);
        Shape s = to_shape(shape, "choice");
        std::optional<Array> pa;
        if (!p.is_none()) pa = to_array(p);
        if (is_py_int(a)) {
          const int64_t n = as_int(a, "choice", "a");
          py::gil_scoped_release nogil;
          return random::choice(k, n, s, replace, pa);
        }
        Array arr = to_array(a);
        const int64_t ax = as_int(axis, "choice", "axis");
        py::gil_scoped_release nogil;
        return random::choice(k, arr, s, replace, pa, ax);
      },
      py::arg("key"), py::arg("a"), py::arg("shape") = py::tuple(), py::arg("replace") = true,
      py::arg("p") = py::none(), py::arg("axis") = 0);
}

}  // namespace tessera::python
