// The spectral linear algebra family (include/tessera/linalg_spectral.h) as the submodule
// _tessera.linalg_spectral; tessera/lax/_linalg_spectral.py, tessera/numpy/_linalg_spectral.py
// and tessera/scipy/_linalg_spectral.py give them JAX's signatures. The C++ work runs with the
// GIL released.
#include <optional>
#include <string>
#include <vector>

#include "py_common.h"
#include "tessera/linalg_spectral.h"

namespace tessera::python {

namespace {

std::optional<Array> opt_array(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_array(h);
}

template <class F>
py::list run_list(F&& f) {
  std::vector<Array> out;
  {
    py::gil_scoped_release nogil;
    out = f();
  }
  return to_list(out);
}

}  // namespace

void bind_linalg_spectral(py::module_& m) {
  py::module_ L = m.def_submodule("linalg_spectral", "eigh, svd, qr and the composites on them");
  // ---- lax.linalg ----
  L.def(
      "lax_eigh",
      [](py::handle x, bool lower, bool symmetrize_input, bool sort_eigenvalues) {
        Array a = to_array(x);
        return run_list([&] {
          auto [v, w] = lax::linalg::eigh(a, lower, symmetrize_input, sort_eigenvalues);
          return std::vector<Array>{v, w};
        });
      },
      py::arg("x"), py::arg("lower") = true, py::arg("symmetrize_input") = true,
      py::arg("sort_eigenvalues") = true);
  L.def(
      "lax_svd",
      [](py::handle x, bool full_matrices, bool compute_uv) {
        Array a = to_array(x);
        return run_list([&] { return lax::linalg::svd(a, full_matrices, compute_uv); });
      },
      py::arg("x"), py::arg("full_matrices") = true, py::arg("compute_uv") = true);
  L.def(
      "lax_qr",
      [](py::handle x, bool pivoting, bool full_matrices) {
        Array a = to_array(x);
        return run_list([&] { return lax::linalg::qr(a, pivoting, full_matrices); });
      },
      py::arg("x"), py::arg("pivoting") = false, py::arg("full_matrices") = true);
  L.def("geqrf", [](py::handle x) {
    Array a = to_array(x);
    return run_list([&] {
      auto [h, taus] = lax::linalg::geqrf(a);
      return std::vector<Array>{h, taus};
    });
  });
  L.def("geqp3", [](py::handle x, py::handle jpvt) {
    Array a = to_array(x), j = to_array(jpvt);
    return run_list([&] { return lax::linalg::geqp3(a, j); });
  });
  L.def("householder_product", [](py::handle x, py::handle taus) {
    Array a = to_array(x), t = to_array(taus);
    py::gil_scoped_release nogil;
    return lax::linalg::householder_product(a, t);
  });
  L.def("symmetrize", [](py::handle x) {
    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return lax::linalg::symmetrize(a);
  });
  // ---- jnp.linalg ----
  L.def("eigh", [](py::handle x, std::string uplo, bool symmetrize_input) {
    Array a = to_array(x);
    return run_list([&] {
      auto r = linalg::eigh(a, uplo, symmetrize_input);
      return std::vector<Array>{r.eigenvalues, r.eigenvectors};
    });
  });
  L.def("svd", [](py::handle x, bool full_matrices, bool compute_uv, bool hermitian) {
    Array a = to_array(x);
    return run_list([&] { return linalg::svd(a, full_matrices, compute_uv, hermitian); });
  });
  L.def("qr", [](py::handle x, std::string mode) {
    Array a = to_array(x);
    return run_list([&] { return linalg::qr(a, mode); });
  });
  L.def("pinv", [](py::handle x, py::handle rtol, bool hermitian) {
    Array a = to_array(x);
    std::optional<Array> r = opt_array(rtol);
    py::gil_scoped_release nogil;
    return linalg::pinv(a, r, hermitian);
  });
  L.def("matrix_rank", [](py::handle x, py::handle rtol) {
    Array a = to_array(x);
    std::optional<Array> r = opt_array(rtol);
    py::gil_scoped_release nogil;
    return linalg::matrix_rank(a, r);
  });
  L.def("lstsq", [](py::handle a, py::handle b, std::optional<double> rcond) {
    Array x = to_array(a), y = to_array(b);
    return run_list([&] { return linalg::lstsq(x, y, rcond); });
  });
  L.def("cond", [](py::handle x, py::object p) {
    Array a = to_array(x);
    linalg::NormOrd ord;
    if (py::isinstance<py::str>(p))
      ord = linalg::NormOrd(p.cast<std::string>());
    else if (!p.is_none())
      ord = linalg::NormOrd(p.cast<double>());
    py::gil_scoped_release nogil;
    return linalg::cond(a, ord);
  });
  L.def("eig", [](py::handle x) { linalg::eig(to_array(x)); });
  L.def("eigvals", [](py::handle x) { linalg::eigvals(to_array(x)); });
  // ---- scipy.linalg ----
  L.def("scipy_eigh", [](py::handle x, bool lower, bool eigvals_only) {
    Array a = to_array(x);
    return run_list([&] { return linalg::scipy::eigh(a, lower, eigvals_only); });
  });
  L.def("scipy_svd", [](py::handle x, bool full_matrices, bool compute_uv) {
    Array a = to_array(x);
    return run_list([&] { return linalg::scipy::svd(a, full_matrices, compute_uv); });
  });
  L.def("scipy_qr", [](py::handle x, std::string mode, bool pivoting) {
    Array a = to_array(x);
    return run_list([&] { return linalg::scipy::qr(a, mode, pivoting); });
  });
  L.def("expm", [](py::handle x, bool upper_triangular, int64_t max_squarings) {
    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return linalg::scipy::expm(a, upper_triangular, max_squarings);
  });
}

}  // namespace tessera::python
