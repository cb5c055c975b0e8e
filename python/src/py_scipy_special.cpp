// jax.scipy.special's functions (tessera/scipy_special.h) on Python arguments, in the
// `scipy_special` submodule; tessera/scipy/special.py wraps them with jax.scipy.special's
// signatures (Python scalars, keyword names, the checks C++ cannot see). The C++ work runs with
// the GIL released.
#include <optional>
#include <utility>

#include "py_common.h"
#include "tessera/scipy_special.h"

namespace tessera::python {

namespace {

namespace sps = tessera::scipy::special;

std::optional<numpy::ArrayLike> opt_arraylike(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return numpy::ArrayLike(to_array(h));
}

numpy::AxisArg axis_arg(const py::object& axis, const char* op) {
  if (auto ax = to_axes(axis, op)) return numpy::AxisArg(*ax);
  return numpy::AxisArg();
}

using Unary = Array (*)(const numpy::ArrayLike&);
using Binary = Array (*)(const numpy::ArrayLike&, const numpy::ArrayLike&);

}  // namespace

void bind_scipy_special(py::module_& m) {
  py::module_ sm =
      m.def_submodule("scipy_special", "jax.scipy.special's functions (tessera/scipy_special.h)");
  const std::pair<const char*, Unary> unary[] = {
      {"gammaln", sps::gammaln}, {"gammasgn", sps::gammasgn}, {"gamma", sps::gamma},
      {"digamma", sps::digamma}, {"erf", sps::erf},           {"erfc", sps::erfc},
      {"erfinv", sps::erfinv},   {"ndtr", sps::ndtr},         {"ndtri", sps::ndtri},
      {"i0", sps::i0},           {"i0e", sps::i0e},           {"i1", sps::i1},
      {"i1e", sps::i1e},         {"logit", sps::logit},       {"expit", sps::expit},
      {"entr", sps::entr},       {"exp1", sps::exp1},         {"expi", sps::expi},
      {"spence", sps::spence},
  };
  for (const auto& [name, f] : unary) def_fn(sm, name, f);
  const std::pair<const char*, Binary> binary[] = {
      {"betaln", sps::betaln},       {"beta", sps::beta},     {"gammainc", sps::gammainc},
      {"gammaincc", sps::gammaincc}, {"poch", sps::poch},     {"polygamma", sps::polygamma},
      {"zeta", sps::zeta},           {"xlogy", sps::xlogy},   {"xlog1py", sps::xlog1py},
      {"rel_entr", sps::rel_entr},   {"kl_div", sps::kl_div}, {"expn", sps::expn},
  };
  for (const auto& [name, f] : binary) def_fn(sm, name, f);
  def_fn(sm, "betainc", sps::betainc);
  def_fn(sm, "hyp1f1", sps::hyp1f1);
  sm.def("hyp2f1", [](py::handle a, py::handle b, py::handle c, py::handle x) {
    Array aa = to_array(a), ba = to_array(b), ca = to_array(c), xa = to_array(x);
    py::gil_scoped_release nogil;
    return sps::hyp2f1(aa, ba, ca, xa);
  });
  sm.def("fresnel", [](py::handle x) {
    Array a = to_array(x);
    std::pair<Array, Array> r;
    {
      py::gil_scoped_release nogil;
      r = sps::fresnel(a);
    }
    return py::make_tuple(r.first, r.second);
  });
  sm.def(
      "lpmn",
      [](int64_t m, int64_t n, py::handle z) {
        Array a = to_array(z);
        std::pair<Array, Array> r;
        {
          py::gil_scoped_release nogil;
          r = sps::lpmn(m, n, a);
        }
        return py::make_tuple(r.first, r.second);
      },
      py::arg("m"), py::arg("n"), py::arg("z"));
  sm.def(
      "lpmn_values",
      [](int64_t m, int64_t n, py::handle z, bool is_normalized) {
        Array a = to_array(z);
        py::gil_scoped_release nogil;
        return sps::lpmn_values(m, n, a, is_normalized);
      },
      py::arg("m"), py::arg("n"), py::arg("z"), py::arg("is_normalized"));
  sm.def(
      "bernoulli", [](int64_t n) { return sps::bernoulli(n); }, py::arg("n"));
  sm.def(
      "sph_harm",
      [](py::handle m, py::handle n, py::handle theta, py::handle phi,
         std::optional<int64_t> n_max) {
        return sps::sph_harm(to_array(m), to_array(n), to_array(theta), to_array(phi), n_max);
      },
      py::arg("m"), py::arg("n"), py::arg("theta"), py::arg("phi"), py::arg("n_max") = py::none());
  sm.def(
      "sph_harm_y",
      [](py::handle n, py::handle m, py::handle theta, py::handle phi, int diff_n,
         std::optional<int64_t> n_max) {
        return sps::sph_harm_y(to_array(n), to_array(m), to_array(theta), to_array(phi), diff_n,
                               n_max);
      },
      py::arg("n"), py::arg("m"), py::arg("theta"), py::arg("phi"), py::arg("diff_n") = 0,
      py::arg("n_max") = py::none());
  sm.def(
      "factorial",
      [](py::handle n, bool exact) {
        Array a = to_array(n);
        py::gil_scoped_release nogil;
        return sps::factorial(a, exact);
      },
      py::arg("n"), py::arg("exact") = false);
  sm.def(
      "multigammaln",
      [](py::handle a, int64_t d) {
        Array x = to_array(a);
        py::gil_scoped_release nogil;
        return sps::multigammaln(x, d);
      },
      py::arg("a"), py::arg("d"));
  sm.def(
      "log_ndtr",
      [](py::handle x, int series_order) {
        Array a = to_array(x);
        py::gil_scoped_release nogil;
        return sps::log_ndtr(a, series_order);
      },
      py::arg("x"), py::arg("series_order") = 3);
  sm.def(
      "logsumexp",
      [](py::handle a, py::object axis, py::handle b, bool keepdims, bool return_sign,
         py::handle where) -> py::object {
        sps::LogsumexpOptions o;
        Array x = to_array(a);
        o.axis = axis_arg(axis, "logsumexp");
        o.b = opt_arraylike(b);
        o.keepdims = keepdims;
        o.where = opt_arraylike(where);
        if (return_sign) {
          std::pair<Array, Array> r;
          {
            py::gil_scoped_release nogil;
            r = sps::logsumexp_with_sign(x, o);
          }
          return py::make_tuple(r.first, r.second);
        }
        Array r;
        {
          py::gil_scoped_release nogil;
          r = sps::logsumexp(x, o);
        }
        return py::cast(r);
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("b") = py::none(),
      py::arg("keepdims") = false, py::arg("return_sign") = false, py::arg("where") = py::none());
  for (const auto& [name, f] :
       {std::pair<const char*, Array (*)(const numpy::ArrayLike&, const numpy::AxisArg&)>{
            "softmax", sps::softmax},
        {"log_softmax", sps::log_softmax}}) {
    const char* op = name;
    auto fn = f;
    sm.def(
        name,
        [fn, op](py::handle x, py::object axis) {
          Array a = to_array(x);
          numpy::AxisArg ax = axis_arg(axis, op);
          py::gil_scoped_release nogil;
          return fn(a, ax);
        },
        py::arg("x"), py::arg("axis") = py::none());
  }
}

}  // namespace tessera::python
