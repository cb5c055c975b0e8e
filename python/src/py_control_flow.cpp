// Structured control flow (control_flow_flat.h) over Python callables: cond, switch, while_loop,
// fori_loop, scan and map on flat lists of arrays. The core decides the loop carries' types
// (weak-type promotion, mismatches); the tessera package (tessera/_src/control_flow.py) handles
// pytrees and words JAX's structure/type errors, the carry type errors through a callback. As in
// py_custom.cpp the C++ work runs with the GIL held and each callback takes it (re-entrantly);
// Python exceptions raised by a callback propagate out unchanged.
#include <memory>
#include <optional>
#include <string>

#include "py_common.h"
#include "tessera/control_flow_flat.h"

namespace tessera::python {

namespace {

std::vector<Array> arrays(const py::sequence& s) { return to_arrays(s); }

py::list aval_list(std::span<const Aval> avals) {
  py::list out;
  for (const Aval& a : avals) {
    py::tuple shape(a.shape.size());
    for (size_t i = 0; i < a.shape.size(); ++i) shape[i] = py::int_(a.shape[i]);
    out.append(py::make_tuple(shape, std::string(dtype_name(a.dtype)), a.weak_type));
  }
  return out;
}

// The Python callback error(in_avals, out_avals, [(k, dtype_differs, shape_differs)]) that words
// the carry type error (it raises); None: the core's message.
flat::CarryTypeError carry_type_error(py::object error) {
  if (error.is_none()) return {};
  PyFn fn = share(py::reinterpret_borrow<py::function>(error));
  return [fn](std::span<const Aval> in, std::span<const Aval> out,
              std::span<const flat::CarryMismatch> diffs) {
    py::gil_scoped_acquire gil;
    py::list ds;
    for (const flat::CarryMismatch& d : diffs) ds.append(py::make_tuple(d.index, d.dtype, d.shape));
    (*fn)(aval_list(in), aval_list(out), ds);
  };
}

}  // namespace

void bind_control_flow(py::module_& m) {
  py::module_ cf = m.def_submodule("control_flow", "lax control flow over flat lists of arrays");
  cf.def(
      "cond",
      [](py::handle pred, py::function true_fun, py::function false_fun,
         const py::sequence& operands) {
        return to_list(flat::cond(to_array(pred), flat_fun(std::move(true_fun), "cond"),
                                  flat_fun(std::move(false_fun), "cond"), arrays(operands)));
      },
      py::arg("pred"), py::arg("true_fun"), py::arg("false_fun"), py::arg("operands"));
  cf.def(
      "switch",
      [](py::handle index, const py::sequence& branches, const py::sequence& operands) {
        std::vector<flat::Fun> funs;
        for (py::handle b : branches)
          funs.push_back(flat_fun(py::reinterpret_borrow<py::function>(b), "switch"));
        return to_list(flat::switch_(to_array(index), funs, arrays(operands)));
      },
      py::arg("index"), py::arg("branches"), py::arg("operands"));
  cf.def(
      "while_loop",
      [](py::function cond_fun, py::function body_fun, const py::sequence& init,
         py::object carry_error) {
        return to_list(flat::while_loop(flat_fun(std::move(cond_fun), "while_loop"),
                                        flat_fun(std::move(body_fun), "while_loop"), arrays(init),
                                        carry_type_error(std::move(carry_error))));
      },
      py::arg("cond_fun"), py::arg("body_fun"), py::arg("init"),
      py::arg("carry_type_error") = py::none());
  // body receives [i, carry...] and returns the carry.
  cf.def(
      "fori_loop",
      [](py::handle lower, py::handle upper, py::function body, const py::sequence& init,
         py::handle unroll_) {
        int64_t unroll = as_int(unroll_, "fori_loop", "unroll");

        return to_list(flat::fori_loop(to_array(lower), to_array(upper),
                                       flat_fun(std::move(body), "fori_loop"), arrays(init),
                                       unroll));
      },
      py::arg("lower"), py::arg("upper"), py::arg("body"), py::arg("init"), py::arg("unroll") = 1);
  // f receives [carry..., x...] and returns [carry..., y...]; the result is (carry, ys).
  cf.def(
      "scan",
      [](py::function f, const py::sequence& init, const py::sequence& xs, py::handle length_,
         bool reverse, py::handle unroll_, py::object carry_error) {
        std::optional<int64_t> length = opt_int(length_, "scan", "length");
        int64_t unroll = as_int(unroll_, "scan", "unroll");

        flat::ScanOptions opts;
        opts.length = length;
        opts.reverse = reverse;
        opts.unroll = unroll;
        opts.on_carry_type_error = carry_type_error(std::move(carry_error));
        flat::ScanResult r =
            flat::scan(flat_fun(std::move(f), "scan"), arrays(init), arrays(xs), opts);
        return py::make_tuple(to_list(r.carry), to_list(r.ys));
      },
      py::arg("f"), py::arg("init"), py::arg("xs"), py::arg("length") = py::none(),
      py::arg("reverse") = false, py::arg("unroll") = 1, py::arg("carry_type_error") = py::none());
  cf.def(
      "map",
      [](py::function f, const py::sequence& xs, py::handle batch_size_) {
        std::optional<int64_t> batch_size = opt_int(batch_size_, "map", "batch_size");

        return to_list(flat::map(flat_fun(std::move(f), "map"), arrays(xs), batch_size));
      },
      py::arg("f"), py::arg("xs"), py::arg("batch_size") = py::none());
}

}  // namespace tessera::python
