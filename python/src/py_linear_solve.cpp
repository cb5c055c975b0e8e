// lax.custom_linear_solve and lax.custom_root (tessera/lax_linear_solve.h) over Python callables
// on flat lists of arrays. The operator handed to solve / transpose_solve / tangent_solve is a
// C++ callable over a list of arrays; the package (tessera/lax/_custom_linear_solve.py) adds
// the pytree structure, has_aux's (x, aux) pairs and JAX's structure errors. As in
// py_custom.cpp, the C++ work runs with the GIL held and each callback takes it.
#include <string>
#include <utility>

#include "py_common.h"
#include "tessera/lax_linear_solve.h"

namespace tessera::python {

namespace {

// A Python solve(op, b) -> list as a flat::SolveFun (empty for None).
flat::SolveFun solve_fun(const py::object& f, const char* op, const char* what) {
  if (f.is_none()) return {};
  return [fn = share(py::reinterpret_borrow<py::function>(f)), op, what](const flat::Fun& linear,
                                                                         std::span<const Array> b) {
    py::gil_scoped_acquire gil;
    py::cpp_function py_op(
        [linear](const py::sequence& xs) { return to_list(linear(to_arrays(xs))); });
    return result_arrays((*fn)(py_op, to_list(b)), op, what, false);
  };
}

}  // namespace

void bind_linear_solve(py::module_& m) {
  m.def(
      "custom_linear_solve_flat",
      [](py::function matvec, const py::sequence& b, py::function solve,
         const py::object& transpose_solve, bool symmetric, bool has_aux) {
        flat::LinearSolveOptions o;
        o.symmetric = symmetric;
        o.has_aux = has_aux;
        return to_list(flat::custom_linear_solve(
            flat_fun(std::move(matvec), "custom_linear_solve"), to_arrays(b),
            solve_fun(solve, "custom_linear_solve", "solve"),
            solve_fun(transpose_solve, "custom_linear_solve", "transpose_solve"), o));
      },
      py::arg("matvec"), py::arg("b"), py::arg("solve"), py::arg("transpose_solve"),
      py::arg("symmetric"), py::arg("has_aux"));
  m.def(
      "custom_root_flat",
      [](py::function f, const py::sequence& guess, py::function solve, py::function tangent_solve,
         bool has_aux) {
        return to_list(flat::custom_root(flat_fun(std::move(f), "custom_root"), to_arrays(guess),
                                         solve_fun(solve, "custom_root", "solve"),
                                         solve_fun(tangent_solve, "custom_root", "tangent_solve"),
                                         has_aux));
      },
      py::arg("f"), py::arg("initial_guess"), py::arg("solve"), py::arg("tangent_solve"),
      py::arg("has_aux"));
}

}  // namespace tessera::python
