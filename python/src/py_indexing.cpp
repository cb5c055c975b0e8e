// Indexing from Python: x.at[...] updates and gathers (tessera/_src/indexing.py wraps them with
// JAX's signatures), jnp.take / take_along_axis, and lax.gather / lax.scatter* over the typed
// dimension numbers (tessera.lax's GatherDimensionNumbers & co. are Python NamedTuples passed
// here field by field).
#include <cctype>
#include <string>

#include "py_common.h"
#include "tessera/lax_gather.h"
#include "tessera/numpy_indexing.h"
#include "tessera/ops.h"

namespace tessera::python {

namespace {

// mode: None, "clip", "fill", "drop", "promise_in_bounds", "one_hot" (or the enum's name).
std::optional<GatherScatterMode> parse_mode(py::handle h) {
  if (h.is_none()) return std::nullopt;
  std::string s = py::hasattr(h, "name") && !py::isinstance<py::str>(h)
                      ? std::string(py::str(h.attr("name")))
                      : std::string(py::str(h));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "clip") return GatherScatterMode::kClip;
  if (s == "fill" || s == "drop" || s == "fill_or_drop") return GatherScatterMode::kFillOrDrop;
  if (s == "promise_in_bounds") return GatherScatterMode::kPromiseInBounds;
  if (s == "one_hot") return GatherScatterMode::kOneHot;
  throw ValueError("Unknown gather mode \"" + s +
                   "\"; expected 'clip', 'fill', 'drop', 'promise_in_bounds' or 'one_hot'");
}

numpy::IndexOptions index_options(py::handle mode, py::handle fill_value, bool sorted,
                                  bool unique) {
  numpy::IndexOptions o;
  o.mode = parse_mode(mode);
  if (!fill_value.is_none())
    o.fill_value =
        py::cast<double>(py::reinterpret_borrow<py::object>(fill_value).attr("__float__")());
  o.indices_are_sorted = sorted;
  o.unique_indices = unique;
  return o;
}

std::vector<int64_t> dims_of(py::handle h, const char* what) {
  std::vector<int64_t> r;
  for (py::handle d : h) r.push_back(as_int(d, "gather", what));
  return r;
}

}  // namespace

void bind_indexing(py::module_& m) {
  // jax.ops' segment reductions (python/tessera/ops.py wraps them).
  for (auto [name, fn] :
       {std::pair{"segment_sum", &ops::segment_sum}, std::pair{"segment_prod", &ops::segment_prod},
        std::pair{"segment_max", &ops::segment_max}, std::pair{"segment_min", &ops::segment_min}}) {
    m.def(
        name,
        [fn](py::handle data, py::handle ids, std::optional<int64_t> num_segments, bool sorted,
             bool unique, py::handle mode) {
          Array d = to_array(data), i = to_array(ids);
          ops::SegmentOptions o;
          o.indices_are_sorted = sorted;
          o.unique_indices = unique;
          o.mode = parse_mode(mode);
          py::gil_scoped_release nogil;
          return fn(d, i, num_segments, o);
        },
        py::arg("data"), py::arg("segment_ids"), py::arg("num_segments") = py::none(),
        py::arg("indices_are_sorted") = false, py::arg("unique_indices") = false,
        py::arg("mode") = py::none());
  }
  m.def(
      "_index_get",
      [](const Array& x, py::handle key, py::handle mode, py::handle fill_value, bool sorted,
         bool unique) {
        std::vector<Index> idx = index_items(key);
        numpy::IndexOptions o = index_options(mode, fill_value, sorted, unique);
        py::gil_scoped_release nogil;
        return numpy::index_get(x, idx, o);
      },
      py::arg("x"), py::arg("key"), py::arg("mode"), py::arg("fill_value"),
      py::arg("indices_are_sorted"), py::arg("unique_indices"));
  m.def(
      "_index_update",
      [](const Array& x, py::handle key, py::handle values, int op, py::handle mode, bool sorted,
         bool unique) {
        std::vector<Index> idx = index_items(key);
        Array v = to_array(values);
        numpy::IndexOptions o = index_options(mode, py::none(), sorted, unique);
        py::gil_scoped_release nogil;
        return numpy::index_update(x, idx, v, static_cast<numpy::IndexUpdate>(op), o);
      },
      py::arg("x"), py::arg("key"), py::arg("values"), py::arg("op"), py::arg("mode"),
      py::arg("indices_are_sorted"), py::arg("unique_indices"));
  m.def("_take", [](py::handle a, py::handle indices, py::handle axis, py::handle mode,
                    py::handle fill_value) {
    Array x = to_array(a), i = to_array(indices);
    std::optional<int64_t> ax;
    if (!axis.is_none()) ax = as_int(axis, "take", "axis");
    numpy::IndexOptions o = index_options(mode, fill_value, false, false);
    py::gil_scoped_release nogil;
    return numpy::take(x, i, ax, o);
  });
  m.def("_take_along_axis", [](py::handle a, py::handle indices, py::handle axis, py::handle mode,
                               py::handle fill_value) {
    Array x = to_array(a), i = to_array(indices);
    std::optional<int64_t> ax;
    if (!axis.is_none()) ax = as_int(axis, "take_along_axis", "axis");
    numpy::IndexOptions o = index_options(mode, fill_value, false, false);
    py::gil_scoped_release nogil;
    return numpy::take_along_axis(x, i, ax, o);
  });
  py::module_ lax = m.attr("lax");
  lax.def("_gather",
          [](py::handle operand, py::handle indices, py::handle dn, py::handle slice_sizes,
             bool sorted, bool unique, py::handle mode, py::handle fill_value) {
            Array x = to_array(operand), i = to_array(indices);
            GatherDimensionNumbers d{
                dims_of(dn.attr("offset_dims"), "offset_dims"),
                dims_of(dn.attr("collapsed_slice_dims"), "collapsed_slice_dims"),
                dims_of(dn.attr("start_index_map"), "start_index_map"),
                dims_of(dn.attr("operand_batching_dims"), "operand_batching_dims"),
                dims_of(dn.attr("start_indices_batching_dims"), "start_indices_batching_dims")};
            std::vector<int64_t> ss = dims_of(slice_sizes, "slice_sizes");
            numpy::IndexOptions io = index_options(mode, fill_value, sorted, unique);
            lax::GatherOptions o{io.indices_are_sorted, io.unique_indices, io.mode, io.fill_value};
            py::gil_scoped_release nogil;
            return lax::gather(x, i, d, ss, o);
          });
  lax.def("_scatter",
          [](const std::string& kind, py::handle operand, py::handle indices, py::handle updates,
             py::handle dn, bool sorted, bool unique, py::handle mode) {
            Array x = to_array(operand), i = to_array(indices), u = to_array(updates);
            ScatterDimensionNumbers d{
                dims_of(dn.attr("update_window_dims"), "update_window_dims"),
                dims_of(dn.attr("inserted_window_dims"), "inserted_window_dims"),
                dims_of(dn.attr("scatter_dims_to_operand_dims"), "scatter_dims_to_operand_dims"),
                dims_of(dn.attr("operand_batching_dims"), "operand_batching_dims"),
                dims_of(dn.attr("scatter_indices_batching_dims"), "scatter_indices_batching_dims")};
            lax::ScatterOptions o{sorted, unique, parse_mode(mode)};
            using F = Array (*)(const Array&, const Array&, const Array&,
                                const ScatterDimensionNumbers&, const lax::ScatterOptions&);
            F f = kind == "scatter" ? F(lax::scatter)
                  : kind == "add"   ? F(lax::scatter_add)
                  : kind == "sub"   ? F(lax::scatter_sub)
                  : kind == "mul"   ? F(lax::scatter_mul)
                  : kind == "min"   ? F(lax::scatter_min)
                  : kind == "max"   ? F(lax::scatter_max)
                                    : nullptr;
            if (!f) throw ValueError("unknown scatter kind " + kind);
            py::gil_scoped_release nogil;
            return f(x, i, u, d, o);
          });
}

}  // namespace tessera::python
