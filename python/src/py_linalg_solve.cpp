// The solve family of linear algebra (tessera/linalg_solve.h) as _tessera.linalg_solve:
// lax.linalg's triangular_solve, cholesky, lu, lu_pivots_to_permutation, lu_solve and solve,
// jnp.linalg's and jax.scipy.linalg's composites. python/tessera/lax/linalg.py,
// numpy/_linalg_solve.py and scipy/linalg.py wrap them with JAX's signatures. The C++ work runs
// with the GIL released.
#include <string>
#include <vector>

#include "py_common.h"
#include "tessera/linalg_solve.h"

namespace tessera::python {

void bind_linalg_solve(py::module_& m) {
  py::module_ s = m.def_submodule("linalg_solve", "the solve family of linear algebra");
  namespace tl = lax::linalg;
  namespace jl = linalg;
  namespace sl = linalg::scipy;
  s.def(
      "triangular_solve",
      [](py::handle a, py::handle b, bool left_side, bool lower, bool transpose_a, bool conjugate_a,
         bool unit_diagonal) {
        Array x = to_array(a), y = to_array(b);
        py::gil_scoped_release nogil;
        return tl::triangular_solve(x, y, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal);
      },
      py::arg("a"), py::arg("b"), py::arg("left_side"), py::arg("lower"), py::arg("transpose_a"),
      py::arg("conjugate_a"), py::arg("unit_diagonal"));
  s.def("cholesky", [](py::handle x, bool sym) {
    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return tl::cholesky(a, sym);
  });
  s.def("lu", [](py::handle x) {
    Array a = to_array(x);
    py::gil_scoped_release nogil;
    auto [lu, piv, perm] = tl::lu(a);
    return std::vector<Array>{lu, piv, perm};
  });
  s.def("lu_pivots_to_permutation", [](py::handle p, int64_t size) {
    Array a = to_array(p);
    py::gil_scoped_release nogil;
    return tl::lu_pivots_to_permutation(a, size);
  });
  s.def("lax_lu_solve", [](py::handle lu, py::handle perm, py::handle b, int trans) {
    Array x = to_array(lu), p = to_array(perm), y = to_array(b);
    py::gil_scoped_release nogil;
    return tl::lu_solve(x, p, y, trans);
  });
  s.def("lax_solve", [](py::handle a, py::handle b) {
    Array x = to_array(a), y = to_array(b);
    py::gil_scoped_release nogil;
    return tl::solve(x, y);
  });
  // jnp.linalg
  s.def("solve", [](py::handle a, py::handle b) {
    Array x = to_array(a), y = to_array(b);
    py::gil_scoped_release nogil;
    return jl::solve(x, y);
  });
  s.def("inv", [](py::handle a) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return jl::inv(x);
  });
  s.def("det", [](py::handle a) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return jl::det(x);
  });
  s.def("slogdet", [](py::handle a) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    auto [sign, logdet] = jl::slogdet(x);
    return std::vector<Array>{sign, logdet};
  });
  s.def("matrix_power", [](py::handle a, int64_t n) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return jl::matrix_power(x, n);
  });
  s.def("multi_dot", [](py::sequence xs) {
    std::vector<Array> v = to_arrays(xs);
    py::gil_scoped_release nogil;
    return jl::multi_dot(v);
  });
  s.def("tensorsolve", [](py::handle a, py::handle b, std::optional<std::vector<int64_t>> axes) {
    Array x = to_array(a), y = to_array(b);
    py::gil_scoped_release nogil;
    return jl::tensorsolve(x, y, axes);
  });
  s.def("tensorinv", [](py::handle a, int64_t ind) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return jl::tensorinv(x, ind);
  });
  s.def("jnp_cholesky", [](py::handle a, bool upper) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return jl::cholesky(x, upper);
  });
  // jax.scipy.linalg
  s.def("scipy_cholesky", [](py::handle a, bool lower) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return sl::cholesky(x, lower);
  });
  s.def("cho_solve", [](py::handle c, bool lower, py::handle b) {
    Array x = to_array(c), y = to_array(b);
    py::gil_scoped_release nogil;
    return sl::cho_solve({x, lower}, y);
  });
  s.def("lu_factor", [](py::handle a) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    auto [lu, piv] = sl::lu_factor(x);
    return std::vector<Array>{lu, piv};
  });
  s.def("lu_solve", [](py::handle lu, py::handle piv, py::handle b, int trans) {
    Array x = to_array(lu), p = to_array(piv), y = to_array(b);
    py::gil_scoped_release nogil;
    return sl::lu_solve({x, p}, y, trans);
  });
  s.def("scipy_lu", [](py::handle a, bool permute_l) {
    Array x = to_array(a);
    py::gil_scoped_release nogil;
    return sl::lu(x, permute_l);
  });
  s.def("solve_triangular", [](py::handle a, py::handle b, int trans, bool lower, bool unit) {
    Array x = to_array(a), y = to_array(b);
    py::gil_scoped_release nogil;
    return sl::solve_triangular(x, y, trans, lower, unit);
  });
  s.def("scipy_solve", [](py::handle a, py::handle b, bool lower, std::string assume_a) {
    Array x = to_array(a), y = to_array(b);
    py::gil_scoped_release nogil;
    return sl::solve(x, y, lower, assume_a);
  });
}

}  // namespace tessera::python
