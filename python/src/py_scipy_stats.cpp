// jax.scipy.stats's functions (tessera/scipy_stats.h) on Python arguments, in the `scipy_stats`
// submodule with one submodule per distribution (`scipy_stats.norm.logpdf(x, loc, scale)`);
// tessera/scipy/stats/*.py wrap them with JAX's signatures and keyword defaults. The C++ work
// runs with the GIL released.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "py_common.h"
#include "tessera/scipy_stats.h"

namespace tessera::python {

namespace {

namespace st = tessera::scipy::stats;
using numpy::ArrayLike;

template <class T>
using Handle = py::handle;

// Binds f(a0, ..., aN) over N array-like Python arguments (all positional: the Python
// wrappers supply JAX's defaults).
template <class... A, size_t... I>
void def_n(py::module_& m, const char* name, Array (*f)(A...), std::index_sequence<I...>) {
  m.def(name, [f](Handle<A>... hs) {
    std::array<Array, sizeof...(A)> args{to_array(hs)...};
    py::gil_scoped_release nogil;
    return f(args[I]...);
  });
}
template <class... A>
void def(py::module_& m, const char* name, Array (*f)(A...)) {
  def_n(m, name, f, std::index_sequence_for<A...>{});
}

using L = const ArrayLike&;
using Loc = Array (*)(L, L, L);        // x, loc, scale
using Shape1 = Array (*)(L, L, L, L);  // x, s, loc, scale
using Shape2 = Array (*)(L, L, L, L, L);
using Two = Array (*)(L, L);

template <size_t N, class F>
void def_all(py::module_& stats, const char* dist,
             const std::array<std::pair<const char*, F>, N>& fs) {
  py::module_ sub = stats.def_submodule(dist);
  for (const auto& [name, f] : fs) def(sub, name, f);
}

st::GaussianKDE kde_of(const py::tuple& t) {
  if (t.size() != 5) throw py::value_error("gaussian_kde: expected its 5 array fields");
  return st::GaussianKDE{to_array(t[0]), to_array(t[1]), to_array(t[2]), to_array(t[3]),
                         to_array(t[4])};
}

py::tuple kde_fields(const st::GaussianKDE& k) {
  return py::make_tuple(k.dataset, k.weights, k.neff, k.covariance, k.inv_cov);
}

void bind_kde(py::module_& s) {
  py::module_ k = s.def_submodule("gaussian_kde", "gaussian_kde's kernels over its 5 fields");
  k.def(
      "make",
      [](py::handle dataset, py::handle bw, py::handle weights) {
        Array data = to_array(dataset);
        std::variant<std::string, double, Array> bw_method = std::string("scott");
        if (py::isinstance<py::str>(bw)) {
          bw_method = bw.cast<std::string>();
        } else if (py::isinstance<py::float_>(bw) || py::isinstance<py::int_>(bw)) {
          bw_method = bw.cast<double>();
        } else if (!bw.is_none()) {
          bw_method = to_array(bw);
        }
        std::optional<ArrayLike> w;
        if (!weights.is_none()) w = ArrayLike(to_array(weights));
        st::GaussianKDE out;
        {
          py::gil_scoped_release nogil;
          out = st::GaussianKDE::make(data, bw_method, w);
        }
        return kde_fields(out);
      },
      py::arg("dataset"), py::arg("bw_method"), py::arg("weights"));
  k.def("factor", [](const py::tuple& f) { return kde_of(f).factor(); });
  k.def("logpdf", [](const py::tuple& f, py::handle x) { return kde_of(f).logpdf(to_array(x)); });
  k.def("integrate_gaussian", [](const py::tuple& f, py::handle mean, py::handle cov) {
    return kde_of(f).integrate_gaussian(to_array(mean), to_array(cov));
  });
  k.def("integrate_box_1d", [](const py::tuple& f, py::handle low, py::handle high) {
    return kde_of(f).integrate_box_1d(to_array(low), to_array(high));
  });
  k.def("integrate_kde", [](const py::tuple& f, const py::tuple& other) {
    return kde_of(f).integrate_kde(kde_of(other));
  });
  k.def("resample", [](const py::tuple& f, py::handle key, const py::object& shape) {
    return kde_of(f).resample(to_array(key), to_shape(shape, "gaussian_kde.resample"));
  });
}

}  // namespace

void bind_scipy_stats(py::module_& m) {
  py::module_ s = m.def_submodule("scipy_stats", "jax.scipy.stats (tessera/scipy_stats.h)");
  def_all<8, Loc>(s, "norm",
                  {{{"logpdf", st::norm::logpdf},
                    {"pdf", st::norm::pdf},
                    {"cdf", st::norm::cdf},
                    {"logcdf", st::norm::logcdf},
                    {"sf", st::norm::sf},
                    {"logsf", st::norm::logsf},
                    {"ppf", st::norm::ppf},
                    {"isf", st::norm::isf}}});
  def_all<8, Loc>(s, "logistic",
                  {{{"logpdf", st::logistic::logpdf},
                    {"pdf", st::logistic::pdf},
                    {"cdf", st::logistic::cdf},
                    {"logcdf", st::logistic::logcdf},
                    {"sf", st::logistic::sf},
                    {"logsf", st::logistic::logsf},
                    {"ppf", st::logistic::ppf},
                    {"isf", st::logistic::isf}}});
  def_all<8, Loc>(s, "cauchy",
                  {{{"logpdf", st::cauchy::logpdf},
                    {"pdf", st::cauchy::pdf},
                    {"cdf", st::cauchy::cdf},
                    {"logcdf", st::cauchy::logcdf},
                    {"sf", st::cauchy::sf},
                    {"logsf", st::cauchy::logsf},
                    {"ppf", st::cauchy::ppf},
                    {"isf", st::cauchy::isf}}});
  def_all<7, Loc>(s, "expon",
                  {{{"logpdf", st::expon::logpdf},
                    {"pdf", st::expon::pdf},
                    {"cdf", st::expon::cdf},
                    {"logcdf", st::expon::logcdf},
                    {"sf", st::expon::sf},
                    {"logsf", st::expon::logsf},
                    {"ppf", st::expon::ppf}}});
  def_all<3, Loc>(
      s, "laplace",
      {{{"logpdf", st::laplace::logpdf}, {"pdf", st::laplace::pdf}, {"cdf", st::laplace::cdf}}});
  def_all<4, Loc>(s, "uniform",
                  {{{"logpdf", st::uniform::logpdf},
                    {"pdf", st::uniform::pdf},
                    {"cdf", st::uniform::cdf},
                    {"ppf", st::uniform::ppf}}});
  def_all<7, Loc>(s, "gumbel_l",
                  {{{"logpdf", st::gumbel_l::logpdf},
                    {"pdf", st::gumbel_l::pdf},
                    {"logcdf", st::gumbel_l::logcdf},
                    {"cdf", st::gumbel_l::cdf},
                    {"logsf", st::gumbel_l::logsf},
                    {"sf", st::gumbel_l::sf},
                    {"ppf", st::gumbel_l::ppf}}});
  def_all<7, Loc>(s, "gumbel_r",
                  {{{"logpdf", st::gumbel_r::logpdf},
                    {"pdf", st::gumbel_r::pdf},
                    {"logcdf", st::gumbel_r::logcdf},
                    {"cdf", st::gumbel_r::cdf},
                    {"logsf", st::gumbel_r::logsf},
                    {"sf", st::gumbel_r::sf},
                    {"ppf", st::gumbel_r::ppf}}});
  def_all<6, Shape1>(s, "gamma",
                     {{{"logpdf", st::gamma::logpdf},
                       {"pdf", st::gamma::pdf},
                       {"cdf", st::gamma::cdf},
                       {"logcdf", st::gamma::logcdf},
                       {"sf", st::gamma::sf},
                       {"logsf", st::gamma::logsf}}});
  def_all<6, Shape1>(s, "chi2",
                     {{{"logpdf", st::chi2::logpdf},
                       {"pdf", st::chi2::pdf},
                       {"cdf", st::chi2::cdf},
                       {"logcdf", st::chi2::logcdf},
                       {"sf", st::chi2::sf},
                       {"logsf", st::chi2::logsf}}});
  def_all<2, Shape1>(s, "t", {{{"logpdf", st::t::logpdf}, {"pdf", st::t::pdf}}});
  def_all<7, Shape1>(s, "pareto",
                     {{{"logpdf", st::pareto::logpdf},
                       {"pdf", st::pareto::pdf},
                       {"logcdf", st::pareto::logcdf},
                       {"cdf", st::pareto::cdf},
                       {"logsf", st::pareto::logsf},
                       {"sf", st::pareto::sf},
                       {"ppf", st::pareto::ppf}}});
  def_all<6, Shape2>(s, "beta",
                     {{{"logpdf", st::beta::logpdf},
                       {"pdf", st::beta::pdf},
                       {"cdf", st::beta::cdf},
                       {"logcdf", st::beta::logcdf},
                       {"sf", st::beta::sf},
                       {"logsf", st::beta::logsf}}});
  def_all<6, Shape2>(s, "truncnorm",
                     {{{"logpdf", st::truncnorm::logpdf},
                       {"pdf", st::truncnorm::pdf},
                       {"logcdf", st::truncnorm::logcdf},
                       {"cdf", st::truncnorm::cdf},
                       {"logsf", st::truncnorm::logsf},
                       {"sf", st::truncnorm::sf}}});
  def_all<3, Two>(
      s, "gennorm",
      {{{"logpdf", st::gennorm::logpdf}, {"pdf", st::gennorm::pdf}, {"cdf", st::gennorm::cdf}}});
  def_all<2, Two>(s, "vonmises", {{{"logpdf", st::vonmises::logpdf}, {"pdf", st::vonmises::pdf}}});
  def_all<2, Two>(s, "wrapcauchy",
                  {{{"logpdf", st::wrapcauchy::logpdf}, {"pdf", st::wrapcauchy::pdf}}});
  // discrete
  def_all<2, Loc>(s, "bernoulli",
                  {{{"logpmf", st::bernoulli::logpmf}, {"pmf", st::bernoulli::pmf}}});
  py::module_ bern = s.attr("bernoulli").cast<py::module_>();
  def(bern, "cdf", st::bernoulli::cdf);
  def(bern, "ppf", st::bernoulli::ppf);
  def_all<3, Loc>(
      s, "poisson",
      {{{"logpmf", st::poisson::logpmf}, {"pmf", st::poisson::pmf}, {"cdf", st::poisson::cdf}}});
  py::module_ pois = s.attr("poisson").cast<py::module_>();
  def(pois, "entropy", st::poisson::entropy);
  def_all<2, Loc>(s, "geom", {{{"logpmf", st::geom::logpmf}, {"pmf", st::geom::pmf}}});
  def_all<2, Shape1>(s, "binom", {{{"logpmf", st::binom::logpmf}, {"pmf", st::binom::pmf}}});
  def_all<2, Shape1>(s, "nbinom", {{{"logpmf", st::nbinom::logpmf}, {"pmf", st::nbinom::pmf}}});
  def_all<2, Shape2>(s, "betabinom",
                     {{{"logpmf", st::betabinom::logpmf}, {"pmf", st::betabinom::pmf}}});
  // multivariate
  def_all<2, Loc>(
      s, "multivariate_normal",
      {{{"logpdf", st::multivariate_normal::logpdf}, {"pdf", st::multivariate_normal::pdf}}});
  def_all<2, Two>(s, "dirichlet",
                  {{{"logpdf", st::dirichlet::logpdf}, {"pdf", st::dirichlet::pdf}}});
  def_all<2, Loc>(s, "multinomial",
                  {{{"logpmf", st::multinomial::logpmf}, {"pmf", st::multinomial::pmf}}});
  // summary statistics
  s.def(
      "mode",
      [](py::handle a, py::handle axis, const std::string& nan_policy, bool keepdims) {
        Array x = to_array(a);
        const std::optional<int64_t> ax = opt_int(axis, "mode", "axis");
        py::gil_scoped_release nogil;
        return st::mode(x, ax, nan_policy, keepdims);
      },
      py::arg("a"), py::arg("axis"), py::arg("nan_policy"), py::arg("keepdims"));
  s.def(
      "rankdata",
      [](py::handle a, const std::string& method, py::handle axis, const std::string& nan_policy) {
        Array x = to_array(a);
        const std::optional<int64_t> ax = opt_int(axis, "rankdata", "axis");
        py::gil_scoped_release nogil;
        return st::rankdata(x, method, ax, nan_policy);
      },
      py::arg("a"), py::arg("method"), py::arg("axis"), py::arg("nan_policy"));
  s.def(
      "sem",
      [](py::handle a, py::handle axis, int64_t ddof, const std::string& nan_policy,
         bool keepdims) {
        Array x = to_array(a);
        const std::optional<int64_t> ax = opt_int(axis, "sem", "axis");
        py::gil_scoped_release nogil;
        return st::sem(x, ax, ddof, nan_policy, keepdims);
      },
      py::arg("a"), py::arg("axis"), py::arg("ddof"), py::arg("nan_policy"), py::arg("keepdims"));
  bind_kde(s);
}

}  // namespace tessera::python
