// Sweep rows of the windowed reductions (src/prims/reduce_window.cpp, select_and_scatter.cpp):
// reduce_window_sum/max/min, the generic reduce_window (a product), select_and_gather_add and
// select_and_scatter_add, each under a few window configurations (plain, strided and padded,
// base-dilated, window-dilated) over rank 0-3 shapes with size-1 and zero-size dims. References
// are naive float64 loops over every output and window position written here; padding and holes
// read the reducer's identity.
#include <cmath>
#include <limits>

#include "prims/prims.h"
#include "tessera/lax_window.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

struct Config {
  std::string name;
  int64_t dim, stride, lo, hi, bdil, wdil;
  bool zero_size_ok;  // the window fits a zero-size dimension (no dilation)
};

const std::vector<Config>& configs() {
  static const std::vector<Config> c = {
      {"plain", 2, 1, 0, 1, 1, 1, true},
      {"strided", 3, 2, 1, 1, 1, 1, true},
      // Every window holds an operand element: position 2o is one.
      {"base_dilated", 2, 2, 0, 0, 2, 1, false},
      // Windows read o - 1 and o + 1: o + 1 is inside for every output.
      {"window_dilated", 2, 1, 1, 0, 1, 2, false},
  };
  return c;
}

struct Win {
  std::vector<int64_t> dims, strides, bdil, wdil;
  lax::Pads pads;
};

Win win_for(const Config& c, int64_t rank) {
  Win w;
  for (int64_t d = 0; d < rank; ++d) {
    w.dims.push_back(c.dim);
    w.strides.push_back(c.stride);
    w.pads.push_back({c.lo, c.hi});
    w.bdil.push_back(c.bdil);
    w.wdil.push_back(c.wdil);
  }
  return w;
}

int64_t dilated(int64_t d, int64_t k) { return d == 0 ? 0 : (d - 1) * k + 1; }

Shape out_shape(const Shape& in, const Win& w) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t padded = dilated(in[d], w.bdil[d]) + w.pads[d].first + w.pads[d].second;
    const int64_t win = dilated(w.dims[d], w.wdil[d]);
    out.push_back(padded < win ? 0 : (padded - win) / w.strides[d] + 1);
  }
  return out;
}

// For every output position, the operand flat index of each window position in window order
// (-1 for padding and holes).
std::vector<std::vector<int64_t>> windows(const Shape& in, const Win& w) {
  const Shape out = out_shape(in, w);
  const size_t r = in.size();
  int64_t n_out = 1, n_win = 1;
  for (size_t d = 0; d < r; ++d) n_out *= out[d], n_win *= w.dims[d];
  std::vector<std::vector<int64_t>> res;
  std::vector<int64_t> o(r), k(r);
  for (int64_t fo = 0; fo < n_out; ++fo) {
    int64_t t = fo;
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) o[d] = t % out[d], t /= out[d];
    std::vector<int64_t> idx;
    for (int64_t fk = 0; fk < n_win; ++fk) {
      int64_t u = fk;
      for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d)
        k[d] = u % w.dims[d], u /= w.dims[d];
      int64_t flat = 0;
      for (size_t d = 0; d < r && flat >= 0; ++d) {
        const int64_t pos = o[d] * w.strides[d] + k[d] * w.wdil[d] - w.pads[d].first;
        if (pos < 0 || pos % w.bdil[d] != 0 || pos / w.bdil[d] >= in[d])
          flat = -1;
        else
          flat = flat * in[d] + pos / w.bdil[d];
      }
      idx.push_back(flat);
    }
    res.push_back(std::move(idx));
  }
  return res;
}

// Integer results wrap around in their dtype, as the kernels' sums do.
double wrap(double v, DType dt) {
  if (is_floating(dt) || dt == DType::kBool) return v;
  const int bits = static_cast<int>(itemsize(dt)) * 8;
  if (bits >= 32) return v;  // the drawn values cannot overflow these
  const double m = std::ldexp(1.0, bits);
  double r = std::fmod(v, m);
  if (r < 0) r += m;
  if (is_signed_integer(dt) && r >= m / 2) r -= m;
  return r;
}

enum class Op { kSum, kMax, kMin, kProd };

double identity(Op op, DType dt) {
  const bool f = is_floating(dt);
  switch (op) {
    case Op::kSum:
      return 0;
    case Op::kProd:
      return 1;
    case Op::kMax:
      if (dt == DType::kBool) return 0;
      return f ? -INFINITY : (is_signed_integer(dt) ? -std::ldexp(1.0, itemsize(dt) * 8 - 1) : 0);
    case Op::kMin:
      if (dt == DType::kBool) return 1;
      return f ? INFINITY
               : (is_signed_integer(dt) ? std::ldexp(1.0, itemsize(dt) * 8 - 1) - 1
                                        : std::ldexp(1.0, itemsize(dt) * 8) - 1);
  }
  return 0;
}

RefOut reduce_ref(Op op, const Win& w, const std::vector<std::vector<double>>& v,
                  const std::vector<Aval>& a) {
  const DType dt = a[0].dtype;
  RefOut r{out_shape(a[0].shape, w), dt, {}};
  const double init = identity(op, dt);
  for (const auto& idx : windows(a[0].shape, w)) {
    double acc = init;
    for (int64_t i : idx) {
      const double x = i < 0 ? init : v[0][i];
      if (op == Op::kSum) acc += x;
      if (op == Op::kProd) acc *= x;
      if (op == Op::kMax) acc = std::isnan(x) || x > acc ? x : acc;
      if (op == Op::kMin) acc = std::isnan(x) || x < acc ? x : acc;
    }
    r.values.push_back(op == Op::kSum ? wrap(acc, dt) : acc);
  }
  return r;
}

// The selection rule: the first window position is selected; a later one replaces it when
// `selected >= candidate` (ge) is false; padding is -inf (ge) or +inf (le).
std::vector<int64_t> selections(bool ge, const Win& w, const std::vector<double>& x,
                                const Shape& in) {
  std::vector<int64_t> sel;
  const double pad = ge ? -INFINITY : INFINITY;
  for (const auto& idx : windows(in, w)) {
    int64_t s = idx[0];
    double key = s < 0 ? pad : x[s];
    for (size_t j = 1; j < idx.size(); ++j) {
      const double c = idx[j] < 0 ? pad : x[idx[j]];
      if (!(ge ? key >= c : key <= c)) key = c, s = idx[j];
    }
    sel.push_back(s);
  }
  return sel;
}

std::vector<std::vector<Shape>> shapes_for(const Config& c, bool pairs_for_scatter = false) {
  std::vector<Shape> base = {{}, {5}, {4, 3}, {2, 3, 4}, {1, 4}};
  if (c.zero_size_ok) base.push_back({0, 3});
  std::vector<std::vector<Shape>> out;
  for (const Shape& s : base) {
    if (pairs_for_scatter)
      out.push_back({out_shape(s, win_for(c, static_cast<int64_t>(s.size()))), s});
    else
      out.push_back({s});
  }
  return out;
}

Array apply(Op op, const Array& x, const Win& w) {
  switch (op) {
    case Op::kSum:
      return lax::reduce_window_sum(x, w.dims, w.strides, w.pads, w.bdil, w.wdil);
    case Op::kMax:
      return lax::reduce_window_max(x, w.dims, w.strides, w.pads, w.bdil, w.wdil);
    case Op::kMin:
      return lax::reduce_window_min(x, w.dims, w.strides, w.pads, w.bdil, w.wdil);
    case Op::kProd:
      break;
  }
  return lax::reduce_window(
      x, numpy::scalar(1.0, x.dtype()),
      [](const Array& a, const Array& b) { return lax::mul(a, b); }, w.dims, w.strides, w.pads,
      w.bdil, w.wdil);
}

}  // namespace

std::vector<Row> rows_window() {
  std::vector<Row> t;
  const std::pair<Op, const char*> ops[] = {{Op::kSum, "reduce_window_sum"},
                                            {Op::kMax, "reduce_window_max"},
                                            {Op::kMin, "reduce_window_min"},
                                            {Op::kProd, "reduce_window"}};
  for (const auto& [op, prim] : ops) {
    for (const Config& c : configs()) {
      const bool chooser = op == Op::kMax || op == Op::kMin;
      // Max/min pooling has no VJP with window dilation (as JAX); it is tested forward in
      // test_reduce_window.cpp.
      if (chooser && c.wdil != 1) continue;
      Row r;
      r.name = std::string(prim) + (op == Op::kProd ? "_prod_" : "_") + c.name;
      r.prim = prim;
      r.family = "window";
      r.operands = {op == Op::kProd ? any(0.5, 1.5) : any()};
      r.shapes = shapes_for(c);
      r.dtypes = op == Op::kSum ? numbers() : op == Op::kProd ? floats() : all_types();
      const Config cc = c;
      r.fn = [op, cc](const Args& x) { return apply(op, x[0], win_for(cc, x[0].ndim())); };
      r.ref = [op, cc](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
        return reduce_ref(op, win_for(cc, a[0].ndim()), v, a);
      };
      // 16-bit floats round once at the end (sums, products); float32 sums differ by ulps.
      // The generic computation runs in the dtype: 16-bit floats round at each of up to 8
      // products (about 8 * 2^-9).
      r.ref_rtol = chooser ? 0.0 : op == Op::kProd ? 3e-2 : 8e-3;
      r.ref_atol = chooser ? 0.0 : 1e-5;
      r.vmap_exact = chooser;
      if (chooser) r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };
      t.push_back(r);
    }
  }
  for (bool ge : {true, false}) {
    for (const Config& c : configs()) {
      if (c.wdil != 1) continue;  // no VJP with window dilation (as JAX)
      Row r;
      r.name = std::string("select_and_gather_add_") + (ge ? "ge_" : "le_") + c.name;
      r.prim = "select_and_gather_add";
      r.family = "window";
      Operand key = any();
      key.diff = false;  // piecewise constant in the operand
      r.operands = {any(), key};
      for (auto& s : shapes_for(c)) r.shapes.push_back({s[0], s[0]});
      r.dtypes = floats();
      const Config cc = c;
      r.fn = [ge, cc](const Args& x) {
        const Win w = win_for(cc, x[0].ndim());
        return lax::select_and_gather_add(x[0], x[1], ge, w.dims, w.strides, w.pads, w.bdil,
                                          w.wdil);
      };
      r.ref = [ge, cc](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
        const Win w = win_for(cc, a[0].ndim());
        RefOut out{out_shape(a[0].shape, w), a[0].dtype, {}};
        for (int64_t s : selections(ge, w, v[1], a[1].shape))
          out.values.push_back(s < 0 ? 0.0 : v[0][s]);
        return out;
      };
      r.kink = [](const Args& x) { return min_pairwise_gap(x[1]); };
      t.push_back(r);
    }
    for (const Config& c : configs()) {
      if (c.bdil != 1 || c.wdil != 1) continue;  // select_and_scatter_add has no dilations
      Row r;
      r.name = std::string("select_and_scatter_add_") + (ge ? "ge_" : "le_") + c.name;
      r.prim = "select_and_scatter_add";
      r.family = "window";
      Operand key = any();
      key.diff = false;
      r.operands = {any(), key};
      r.shapes = shapes_for(c, true);
      r.dtypes = floats();
      const Config cc = c;
      r.fn = [ge, cc](const Args& x) {
        const Win w = win_for(cc, x[1].ndim());
        return lax::select_and_scatter_add(x[0], x[1], ge, w.dims, w.strides, w.pads);
      };
      r.ref = [ge, cc](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
        const Win w = win_for(cc, a[1].ndim());
        RefOut out{a[1].shape, a[0].dtype, std::vector<double>(v[1].size(), 0.0)};
        const auto sel = selections(ge, w, v[1], a[1].shape);
        for (size_t o = 0; o < sel.size(); ++o)
          if (sel[o] >= 0) out.values[sel[o]] += v[0][o];
        return out;
      };
      r.ref_rtol = 8e-3;  // 16-bit floats round once, after a float32 sum
      r.ref_atol = 1e-5;
      r.vmap_exact = false;
      r.kink = [](const Args& x) { return min_pairwise_gap(x[1]); };
      t.push_back(r);
    }
  }
  return t;
}

}  // namespace tessera::sweep
