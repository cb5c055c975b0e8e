// jax.nn's functions (tessera/nn.h) on Python arguments, in the `nn` submodule;
// tessera/nn/__init__.py wraps them with jax.nn's signatures. The C++ work runs with the GIL
// released.
#include <optional>
#include <string>
#include <utility>

#include "py_common.h"
#include "tessera/nn.h"

namespace tessera::python {

namespace {

std::optional<numpy::ArrayLike> opt_arraylike(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return numpy::ArrayLike(to_array(h));
}

numpy::AxisArg axis_arg(const py::object& axis, const char* op) {
  if (auto ax = to_axes(axis, op)) return numpy::AxisArg(*ax);
  return numpy::AxisArg();
}

using Unary = Array (*)(const numpy::ArrayLike&);
using WithParam = Array (*)(const numpy::ArrayLike&, const numpy::ArrayLike&);
using Normalizing = Array (*)(const numpy::ArrayLike&, const numpy::AxisArg&,
                              const std::optional<numpy::ArrayLike>&);

void def_normalizing(py::module_& nnm, const char* name, Normalizing f) {
  nnm.def(
      name,
      [f, name](py::handle x, py::object axis, py::handle where) {
        Array a = to_array(x);
        numpy::AxisArg ax = axis_arg(axis, name);
        std::optional<numpy::ArrayLike> w = opt_arraylike(where);
        py::gil_scoped_release nogil;
        return f(a, ax, w);
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("where") = py::none());
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nnm = m.def_submodule("nn", "jax.nn's functions (tessera/nn.h)");
  const std::pair<const char*, Unary> unary[] = {
      {"relu", nn::relu},
      {"relu6", nn::relu6},
      {"sigmoid", nn::sigmoid},
      {"silu", nn::silu},
      {"log_sigmoid", nn::log_sigmoid},
      {"softplus", nn::softplus},
      {"soft_sign", nn::soft_sign},
      {"selu", nn::selu},
      {"hard_tanh", nn::hard_tanh},
      {"hard_sigmoid", nn::hard_sigmoid},
      {"hard_silu", nn::hard_silu},
      {"mish", nn::mish},
      {"sparse_plus", nn::sparse_plus},
      {"sparse_sigmoid", nn::sparse_sigmoid},
      {"tanh", nn::tanh},
      {"identity", nn::identity},
  };
  for (const auto& [name, f] : unary) def_fn(nnm, name, f);
  const std::pair<const char*, WithParam> with_param[] = {
      {"elu", nn::elu},
      {"celu", nn::celu},
      {"leaky_relu", nn::leaky_relu},
      {"squareplus", nn::squareplus},
  };
  for (const auto& [name, f] : with_param) def_fn(nnm, name, f);
  nnm.def(
      "gelu",
      [](py::handle x, bool approximate) {
        Array a = to_array(x);
        py::gil_scoped_release nogil;
        return nn::gelu(a, approximate);
      },
      py::arg("x"), py::arg("approximate") = true);
  nnm.def(
      "glu",
      [](py::handle x, py::handle axis) {
        Array a = to_array(x);
        const int64_t ax = as_int(axis, "glu", "axis");
        py::gil_scoped_release nogil;
        return nn::glu(a, ax);
      },
      py::arg("x"), py::arg("axis") = -1);
  nnm.def(
      "dot_product_attention",
      [](py::handle q, py::handle k, py::handle v, py::handle bias, py::handle mask,
         std::optional<double> scale, bool is_causal, py::handle q_len, py::handle kv_len,
         std::optional<std::pair<int64_t, int64_t>> window, std::string implementation) {
        Array qa = to_array(q), ka = to_array(k), va = to_array(v);
        nn::AttentionOptions o;
        o.bias = opt_arraylike(bias);
        o.mask = opt_arraylike(mask);
        o.scale = scale;
        o.is_causal = is_causal;
        o.query_seq_lengths = opt_arraylike(q_len);
        o.key_value_seq_lengths = opt_arraylike(kv_len);
        o.local_window_size = window;
        o.implementation = std::move(implementation);
        py::gil_scoped_release nogil;
        return nn::dot_product_attention(qa, ka, va, o);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("bias"), py::arg("mask"),
      py::arg("scale"), py::arg("is_causal"), py::arg("query_seq_lengths"),
      py::arg("key_value_seq_lengths"), py::arg("local_window_size"), py::arg("implementation"));
  def_normalizing(nnm, "softmax", nn::softmax);
  def_normalizing(nnm, "log_softmax", nn::log_softmax);
  nnm.def(
      "logsumexp",
      [](py::handle a, py::object axis, py::handle b, bool keepdims, bool return_sign,
         py::handle where) -> py::object {
        nn::LogsumexpOptions o;
        Array x = to_array(a);
        o.axis = axis_arg(axis, "logsumexp");
        o.b = opt_arraylike(b);
        o.keepdims = keepdims;
        o.where = opt_arraylike(where);
        if (return_sign) {
          std::pair<Array, Array> r;
          {
            py::gil_scoped_release nogil;
            r = nn::logsumexp_with_sign(x, o);
          }
          return py::make_tuple(r.first, r.second);
        }
        Array r;
        {
          py::gil_scoped_release nogil;
          r = nn::logsumexp(x, o);
        }
        return py::cast(r);
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("b") = py::none(),
      py::arg("keepdims") = false, py::arg("return_sign") = false, py::arg("where") = py::none());
  nnm.def(
      "standardize",
      [](py::handle x, py::object axis, py::handle mean, py::handle variance, py::handle epsilon,
         py::handle where) {
        Array a = to_array(x), eps = to_array(epsilon);
        numpy::AxisArg ax = axis_arg(axis, "standardize");
        std::optional<numpy::ArrayLike> mu = opt_arraylike(mean), var = opt_arraylike(variance),
                                        w = opt_arraylike(where);
        py::gil_scoped_release nogil;
        return nn::standardize(a, ax, mu, var, eps, w);
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("mean") = py::none(),
      py::arg("variance") = py::none(), py::arg("epsilon") = 1e-5, py::arg("where") = py::none());
  nnm.def(
      "one_hot",
      [](py::handle x, py::handle num_classes, py::object dtype, py::handle axis) {
        Array a = to_array(x);
        const int64_t n = as_int(num_classes, "one_hot", "num_classes");
        const std::optional<DType> dt = opt_dtype(dtype);
        const int64_t ax = as_int(axis, "one_hot", "axis");
        py::gil_scoped_release nogil;
        return nn::one_hot(a, n, dt, ax);
      },
      py::arg("x"), py::arg("num_classes"), py::arg("dtype") = py::none(), py::arg("axis") = -1);
}

}  // namespace tessera::python
