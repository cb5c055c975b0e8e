// jnp's index functions, histograms, interp and the gufunc signature parser
// (tessera/numpy_index_funcs.h, numpy_vectorize.h) as tessera._tessera.index_funcs, on flat
// arguments: python/tessera/numpy/_indexing_funcs.py and _histogram_funcs.py keep only jnp's
// signatures, keyword handling and NumPy-style argument forms. Array-likes go through to_array
// (Python scalars stay weak); the C++ work runs with the GIL released.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "py_common.h"
#include "tessera/numpy_index_funcs.h"
#include "tessera/numpy_vectorize.h"

namespace tessera::python {

namespace {

std::optional<Array> opt_array(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_array(h);
}

std::optional<std::string> opt_str(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return py::cast<std::string>(h);
}

std::optional<double> opt_double(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return py::cast<double>(py::reinterpret_borrow<py::object>(h).attr("__float__")());
}

numpy::NonzeroOptions nonzero_options(py::handle size, py::handle fill_value, const char* op) {
  numpy::NonzeroOptions o;
  o.size = opt_int(size, op, "size");
  if (fill_value.is_none()) return o;
  if (py::isinstance<py::tuple>(fill_value) || py::isinstance<py::list>(fill_value)) {
    for (py::handle f : fill_value) o.fill_value.push_back(as_int(f, op, "fill_value"));
  } else {
    o.fill_value.push_back(as_int(fill_value, op, "fill_value"));
  }
  return o;
}

// A bin count (an integer that is not an array) or an array (of edges; a rank-0 array is a
// count when concrete and integer, which the C++ side checks).
numpy::HistogramBins to_bins(py::handle h) {
  if (!py::isinstance<Array>(h) && !py::isinstance<py::array>(h) && PyIndex_Check(h.ptr()))
    return as_int(h, "histogram", "bins");
  return to_array(h);
}

std::vector<numpy::HistogramBins> to_bins_list(py::handle h) {
  std::vector<numpy::HistogramBins> out;
  for (py::handle b : h) out.push_back(to_bins(b));
  return out;
}

// None or a pair (lo, hi): two numbers, or arrays when either is an Array (maybe traced).
numpy::HistogramRange to_range(py::handle h) {
  if (h.is_none()) return {};
  std::vector<py::object> ends;
  for (py::handle e : h) ends.push_back(py::reinterpret_borrow<py::object>(e));
  if (ends.size() != 2)
    throw ValueError("`range` must be either None or a sequence of scalars; got " +
                     std::to_string(ends.size()) + " values");
  if (py::isinstance<Array>(ends[0]) || py::isinstance<Array>(ends[1]))
    return numpy::HistogramRange(to_array(ends[0]), to_array(ends[1]));
  return std::pair<double, double>{py::cast<double>(ends[0].attr("__float__")()),
                                   py::cast<double>(ends[1].attr("__float__")())};
}

std::vector<numpy::HistogramRange> to_range_list(py::handle h) {
  std::vector<numpy::HistogramRange> out;
  if (h.is_none()) return out;
  for (py::handle r : h) out.push_back(to_range(r));
  return out;
}

numpy::InterpEnd to_end(py::handle h) {
  if (h.is_none()) return {};
  if (py::isinstance<py::str>(h)) return numpy::InterpEnd(py::cast<std::string>(h));
  return numpy::InterpEnd(to_array(h));
}

py::tuple names_tuple(const std::vector<std::vector<std::string>>& args) {
  py::list l;
  for (const auto& dims : args) {
    py::tuple t(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t[i] = py::str(dims[i]);
    l.append(t);
  }
  return py::tuple(l);
}

using NonzeroFn = Array (*)(const numpy::ArrayLike&, const numpy::NonzeroOptions&);
void def_nonzero1(py::module_& m, const char* name, NonzeroFn f) {
  m.def(
      name,
      [f, name](py::handle a, py::handle size, py::handle fill_value) {
        Array x = to_array(a);
        numpy::NonzeroOptions o = nonzero_options(size, fill_value, name);
        py::gil_scoped_release nogil;
        return f(x, o);
      },
      py::arg("a"), py::arg("size") = py::none(), py::arg("fill_value") = py::none());
}

using TriFn = std::vector<Array> (*)(int64_t, int64_t, std::optional<int64_t>);
using TriFromFn = std::vector<Array> (*)(const Array&, int64_t);

}  // namespace

void bind_index_funcs(py::module_& parent) {
  py::module_ m = parent.def_submodule("index_funcs", "jnp's index functions (C++)");

  // ---- nonzero & co. ----
  m.def(
      "nonzero",
      [](py::handle a, py::handle size, py::handle fill_value) {
        Array x = to_array(a);
        numpy::NonzeroOptions o = nonzero_options(size, fill_value, "nonzero");
        std::vector<Array> r;
        {
          py::gil_scoped_release nogil;
          r = numpy::nonzero(x, o);
        }
        return py::tuple(to_list(r));
      },
      py::arg("a"), py::arg("size") = py::none(), py::arg("fill_value") = py::none());
  def_nonzero1(m, "flatnonzero", numpy::flatnonzero);
  def_nonzero1(m, "argwhere", numpy::argwhere);

  // ---- searching and counting ----
  m.def(
      "searchsorted",
      [](py::handle a, py::handle v, std::string side, py::handle sorter, std::string method) {
        Array x = to_array(a), y = to_array(v);
        std::optional<Array> s = opt_array(sorter);
        py::gil_scoped_release nogil;
        return numpy::searchsorted(x, y, side, s, method);
      },
      py::arg("a"), py::arg("v"), py::arg("side") = "left", py::arg("sorter") = py::none(),
      py::arg("method") = "scan");
  m.def(
      "digitize",
      [](py::handle x, py::handle bins, bool right, py::handle method) {
        Array a = to_array(x), b = to_array(bins);
        std::optional<std::string> me = opt_str(method);
        py::gil_scoped_release nogil;
        return numpy::digitize(a, b, right, me);
      },
      py::arg("x"), py::arg("bins"), py::arg("right") = false, py::arg("method") = py::none());
  m.def(
      "bincount",
      [](py::handle x, py::handle weights, py::handle minlength, py::handle length) {
        Array a = to_array(x);
        std::optional<Array> w = opt_array(weights);
        const int64_t ml = as_int(minlength, "bincount", "minlength");
        std::optional<int64_t> len = opt_int(length, "bincount", "length");
        py::gil_scoped_release nogil;
        return numpy::bincount(a, w, ml, len);
      },
      py::arg("x"), py::arg("weights") = py::none(), py::arg("minlength") = 0,
      py::arg("length") = py::none());

  // ---- unique, partition ----
  m.def(
      "unique",
      [](py::handle ar, bool return_index, bool return_inverse, bool return_counts, bool equal_nan,
         py::handle size, py::handle fill_value, py::handle axis) {
        Array a = to_array(ar);
        numpy::UniqueOptions o;
        o.return_index = return_index;
        o.return_inverse = return_inverse;
        o.return_counts = return_counts;
        o.equal_nan = equal_nan;
        o.size = opt_int(size, "unique", "size");
        o.fill_value = opt_double(fill_value);
        o.axis = opt_int(axis, "unique", "axis");
        numpy::UniqueResult r;
        {
          py::gil_scoped_release nogil;
          r = numpy::unique(a, o);
        }
        return to_list(std::vector<Array>{r.values, r.indices, r.inverse, r.counts});
      },
      py::arg("ar"), py::arg("return_index") = false, py::arg("return_inverse") = false,
      py::arg("return_counts") = false, py::arg("equal_nan") = true, py::arg("size") = py::none(),
      py::arg("fill_value") = py::none(), py::arg("axis") = py::none());
  for (auto [name, fn] : {std::pair{"partition", &numpy::partition},
                          std::pair{"argpartition", &numpy::argpartition}}) {
    m.def(
        name,
        [fn, name](py::handle a, py::handle kth, py::handle axis) {
          Array x = to_array(a);
          const int64_t k = as_int(kth, name, "kth"), ax = as_int(axis, name, "axis");
          py::gil_scoped_release nogil;
          return fn(x, k, ax);
        },
        py::arg("a"), py::arg("kth"), py::arg("axis") = -1);
  }

  // ---- selection ----
  m.def(
      "select",
      [](py::handle condlist, py::handle choicelist, py::handle default_) {
        std::vector<Array> c = arrays_of(condlist), ch = arrays_of(choicelist);
        Array d = to_array(default_);
        py::gil_scoped_release nogil;
        return numpy::select(c, ch, d);
      },
      py::arg("condlist"), py::arg("choicelist"), py::arg("default") = 0);
  m.def(
      "choose",
      [](py::handle a, py::handle choices, std::string mode) {
        Array x = to_array(a);
        std::vector<Array> ch = arrays_of(choices);
        py::gil_scoped_release nogil;
        return numpy::choose(x, ch, mode);
      },
      py::arg("a"), py::arg("choices"), py::arg("mode") = "raise");
  m.def(
      "compress",
      [](py::handle condition, py::handle a, py::handle axis, py::handle size,
         py::handle fill_value) {
        Array c = to_array(condition), x = to_array(a);
        std::optional<int64_t> ax = opt_int(axis, "compress", "axis");
        std::optional<int64_t> sz = opt_int(size, "compress", "size");
        const double fv = opt_double(fill_value).value_or(0.0);
        py::gil_scoped_release nogil;
        return numpy::compress(c, x, ax, sz, fv);
      },
      py::arg("condition"), py::arg("a"), py::arg("axis") = py::none(),
      py::arg("size") = py::none(), py::arg("fill_value") = 0);
  m.def(
      "extract",
      [](py::handle condition, py::handle arr, py::handle size, py::handle fill_value) {
        Array c = to_array(condition), x = to_array(arr);
        std::optional<int64_t> sz = opt_int(size, "extract", "size");
        const double fv = opt_double(fill_value).value_or(0.0);
        py::gil_scoped_release nogil;
        return numpy::extract(c, x, sz, fv);
      },
      py::arg("condition"), py::arg("arr"), py::arg("size") = py::none(),
      py::arg("fill_value") = 0);

  // ---- differences ----
  m.def(
      "diff",
      [](py::handle a, py::handle n, py::handle axis, py::handle prepend, py::handle append) {
        Array x = to_array(a);
        const int64_t nn = as_int(n, "diff", "n"), ax = as_int(axis, "diff", "axis");
        std::optional<numpy::ArrayLike> pre, app;
        if (!prepend.is_none()) pre = to_array(prepend);
        if (!append.is_none()) app = to_array(append);
        py::gil_scoped_release nogil;
        return numpy::diff(x, nn, ax, pre, app);
      },
      py::arg("a"), py::arg("n") = 1, py::arg("axis") = -1, py::arg("prepend") = py::none(),
      py::arg("append") = py::none());
  m.def(
      "ediff1d",
      [](py::handle ary, py::handle to_end, py::handle to_begin) {
        Array x = to_array(ary);
        std::optional<numpy::ArrayLike> e, b;
        if (!to_end.is_none()) e = to_array(to_end);
        if (!to_begin.is_none()) b = to_array(to_begin);
        py::gil_scoped_release nogil;
        return numpy::ediff1d(x, e, b);
      },
      py::arg("ary"), py::arg("to_end") = py::none(), py::arg("to_begin") = py::none());

  // ---- index arithmetic ----
  m.def(
      "unravel_index",
      [](py::handle indices, py::object shape) {
        Array i = to_array(indices);
        Shape s = to_shape(shape, "unravel_index");
        std::vector<Array> r;
        {
          py::gil_scoped_release nogil;
          r = numpy::unravel_index(i, s);
        }
        return py::tuple(to_list(r));
      },
      py::arg("indices"), py::arg("shape"));
  m.def(
      "ravel_multi_index",
      [](py::handle multi_index, py::object dims, std::string mode, std::string order) {
        std::vector<Array> mi = arrays_of(multi_index);
        Shape d = to_shape(dims, "ravel_multi_index", "dims");
        py::gil_scoped_release nogil;
        return numpy::ravel_multi_index(mi, d, mode, order);
      },
      py::arg("multi_index"), py::arg("dims"), py::arg("mode") = "raise", py::arg("order") = "C");
  m.def(
      "indices",
      [](py::object dimensions, py::object dtype, bool sparse) -> py::object {
        Shape s = to_shape(dimensions, "indices", "dimensions");
        std::optional<DType> dt = opt_dtype(dtype);
        if (sparse) {
          std::vector<Array> r;
          {
            py::gil_scoped_release nogil;
            r = numpy::indices_sparse(s, dt);
          }
          return py::tuple(to_list(r));
        }
        Array r;
        {
          py::gil_scoped_release nogil;
          r = numpy::indices(s, dt);
        }
        return py::cast(r);
      },
      py::arg("dimensions"), py::arg("dtype") = py::none(), py::arg("sparse") = false);
  m.def("ix_", [](py::args args) {
    std::vector<Array> a = arrays_of(args);
    std::vector<Array> r;
    {
      py::gil_scoped_release nogil;
      r = numpy::ix_(a);
    }
    return py::tuple(to_list(r));
  });
  for (auto [name, fn] : {std::pair<const char*, TriFn>{"tril_indices", &numpy::tril_indices},
                          std::pair<const char*, TriFn>{"triu_indices", &numpy::triu_indices}}) {
    m.def(
        name,
        [fn, name](py::handle n, py::handle k, py::handle mm) {
          const int64_t nn = as_int(n, name, "n"), kk = as_int(k, name, "k");
          std::optional<int64_t> m2 = opt_int(mm, name, "m");
          std::vector<Array> r;
          {
            py::gil_scoped_release nogil;
            r = fn(nn, kk, m2);
          }
          return py::tuple(to_list(r));
        },
        py::arg("n"), py::arg("k") = 0, py::arg("m") = py::none());
  }
  for (auto [name, fn] :
       {std::pair<const char*, TriFromFn>{"tril_indices_from", &numpy::tril_indices_from},
        std::pair<const char*, TriFromFn>{"triu_indices_from", &numpy::triu_indices_from}}) {
    m.def(
        name,
        [fn, name](py::handle arr, py::handle k) {
          Array a = to_array(arr);
          const int64_t kk = as_int(k, name, "k");
          std::vector<Array> r;
          {
            py::gil_scoped_release nogil;
            r = fn(a, kk);
          }
          return py::tuple(to_list(r));
        },
        py::arg("arr"), py::arg("k") = 0);
  }
  m.def(
      "diag_indices",
      [](py::handle n, py::handle ndim) {
        const int64_t nn = as_int(n, "diag_indices", "n");
        const int64_t nd = as_int(ndim, "diag_indices", "ndim");
        std::vector<Array> r;
        {
          py::gil_scoped_release nogil;
          r = numpy::diag_indices(nn, nd);
        }
        return py::tuple(to_list(r));
      },
      py::arg("n"), py::arg("ndim") = 2);
  m.def(
      "diag_indices_from",
      [](py::handle arr) {
        Array a = to_array(arr);
        std::vector<Array> r;
        {
          py::gil_scoped_release nogil;
          r = numpy::diag_indices_from(a);
        }
        return py::tuple(to_list(r));
      },
      py::arg("arr"));

  // ---- functional puts ----
  m.def(
      "put",
      [](py::handle a, py::handle ind, py::handle v, py::handle mode, bool inplace) {
        Array x = to_array(a), i = to_array(ind), vv = to_array(v);
        std::optional<std::string> md = opt_str(mode);
        py::gil_scoped_release nogil;
        return numpy::put(x, i, vv, md, inplace);
      },
      py::arg("a"), py::arg("ind"), py::arg("v"), py::arg("mode") = py::none(),
      py::arg("inplace") = true);
  m.def(
      "put_along_axis",
      [](py::handle arr, py::handle indices, py::handle values, py::handle axis, bool inplace,
         py::handle mode) {
        Array x = to_array(arr), i = to_array(indices), v = to_array(values);
        std::optional<int64_t> ax = opt_int(axis, "put_along_axis", "axis");
        std::optional<std::string> md = opt_str(mode);
        py::gil_scoped_release nogil;
        return numpy::put_along_axis(x, i, v, ax, inplace, md);
      },
      py::arg("arr"), py::arg("indices"), py::arg("values"), py::arg("axis"),
      py::arg("inplace") = true, py::arg("mode") = py::none());

  // ---- histograms and interpolation ----
  m.def(
      "histogram_bin_edges",
      [](py::handle a, py::handle bins, py::handle range, py::handle weights) {
        Array x = to_array(a);
        numpy::HistogramBins b = to_bins(bins);
        numpy::HistogramRange r = to_range(range);
        std::optional<Array> w = opt_array(weights);
        py::gil_scoped_release nogil;
        return numpy::histogram_bin_edges(x, b, r, w);
      },
      py::arg("a"), py::arg("bins") = 10, py::arg("range") = py::none(),
      py::arg("weights") = py::none());
  m.def(
      "histogram",
      [](py::handle a, py::handle bins, py::handle range, py::handle weights, bool density) {
        Array x = to_array(a);
        numpy::HistogramBins b = to_bins(bins);
        numpy::HistogramRange r = to_range(range);
        std::optional<Array> w = opt_array(weights);
        std::vector<Array> out;
        {
          py::gil_scoped_release nogil;
          out = numpy::histogram(x, b, r, w, density);
        }
        return py::tuple(to_list(out));
      },
      py::arg("a"), py::arg("bins") = 10, py::arg("range") = py::none(),
      py::arg("weights") = py::none(), py::arg("density") = false);
  m.def(
      "histogramdd",
      [](py::handle sample, py::handle bins, py::handle range, py::handle weights, bool density) {
        Array s = to_array(sample);
        std::vector<numpy::HistogramBins> b = to_bins_list(bins);
        std::vector<numpy::HistogramRange> r = to_range_list(range);
        std::optional<Array> w = opt_array(weights);
        numpy::HistogramDD out;
        {
          py::gil_scoped_release nogil;
          out = numpy::histogramdd(s, b, r, w, density);
        }
        return py::make_tuple(out.hist, to_list(out.edges));
      },
      py::arg("sample"), py::arg("bins"), py::arg("range") = py::none(),
      py::arg("weights") = py::none(), py::arg("density") = false);
  m.def(
      "histogram2d",
      [](py::handle x, py::handle y, py::handle bins, py::handle range, py::handle weights,
         bool density) {
        Array a = to_array(x), b = to_array(y);
        std::vector<numpy::HistogramBins> bb = to_bins_list(bins);
        std::vector<numpy::HistogramRange> r = to_range_list(range);
        std::optional<Array> w = opt_array(weights);
        std::vector<Array> out;
        {
          py::gil_scoped_release nogil;
          out = numpy::histogram2d(a, b, bb, r, w, density);
        }
        return py::tuple(to_list(out));
      },
      py::arg("x"), py::arg("y"), py::arg("bins"), py::arg("range") = py::none(),
      py::arg("weights") = py::none(), py::arg("density") = false);
  m.def(
      "interp",
      [](py::handle x, py::handle xp, py::handle fp, py::handle left, py::handle right,
         py::handle period) {
        Array a = to_array(x), b = to_array(xp), c = to_array(fp);
        numpy::InterpEnd l = to_end(left), r = to_end(right);
        std::optional<numpy::ArrayLike> p;
        if (!period.is_none()) p = to_array(period);
        py::gil_scoped_release nogil;
        return numpy::interp(a, b, c, l, r, p);
      },
      py::arg("x"), py::arg("xp"), py::arg("fp"), py::arg("left") = py::none(),
      py::arg("right") = py::none(), py::arg("period") = py::none());

  // ---- vectorize's signature parser (the Python vectorize keeps its own loop) ----
  m.def(
      "parse_gufunc_signature",
      [](const std::string& signature) {
        numpy::GufuncSignature s = numpy::parse_gufunc_signature(signature);
        return py::make_tuple(names_tuple(s.inputs), names_tuple(s.outputs));
      },
      py::arg("signature"));
}

}  // namespace tessera::python
