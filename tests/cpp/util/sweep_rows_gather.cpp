// Sweep rows of the gather/scatter family (src/prims/gather.cpp, scatter.cpp): row lookups,
// point gathers, partial windows, batching dims, every mode; the five scatters with duplicate
// indices. Index operands are int32 drawn beyond both ends (so clamping, filling and dropping
// are exercised) and not differentiated; vmap batches them too (the batched-indices rules).
// Forward references: the naive gather/scatter of gather_reference.h.
#include <cmath>

#include "tessera/lax_gather.h"
#include "util/gather_reference.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::Config;
using Ints = std::vector<int64_t>;

Operand indices(int64_t lo, int64_t hi) {
  Operand o = of_dtype(DType::kInt32);
  o.int_lo = lo, o.int_hi = hi, o.diff = false;
  return o;
}

Config config(Shape operand, Shape idx, GatherDimensionNumbers dn, Ints slice_sizes) {
  Config c;
  c.operand = std::move(operand);
  c.indices = std::move(idx);
  c.dn = std::move(dn);
  c.slice_sizes = std::move(slice_sizes);
  Ints window;
  for (int64_t d = 0; d < static_cast<int64_t>(c.operand.size()); ++d)
    if (!testing::contains(c.dn.collapsed_slice_dims, d) &&
        !testing::contains(c.dn.operand_batching_dims, d))
      window.push_back(c.slice_sizes[d]);
  const int64_t rank = static_cast<int64_t>(window.size() + c.indices.size() - 1);
  size_t wi = 0, pi = 0;
  for (int64_t i = 0; i < rank; ++i)
    c.out.push_back(testing::contains(c.dn.offset_dims, i) ? window[wi++] : c.indices[pi++]);
  return c;
}

ScatterDimensionNumbers mirror(const GatherDimensionNumbers& g) {
  return {g.offset_dims, g.collapsed_slice_dims, g.start_index_map, g.operand_batching_dims,
          g.start_indices_batching_dims};
}

bool clamps(GatherScatterMode m) { return m != GatherScatterMode::kFillOrDrop; }

const char* mode_name(GatherScatterMode m) {
  return m == GatherScatterMode::kClip         ? "clip"
         : m == GatherScatterMode::kFillOrDrop ? "fill"
                                               : "promise";
}

Row gather_row(const std::string& name, const Config& c, GatherScatterMode m) {
  Row r;
  r.name = "gather_" + name + "_" + mode_name(m);
  r.prim = "gather";
  r.family = "gather";
  lax::GatherOptions o;
  o.mode = m;
  if (!clamps(m)) o.fill_value = 0.5;
  r.fn = [c, o](const Args& a) { return lax::gather(a[0], a[1], c.dn, c.slice_sizes, o); };
  int64_t hi = 0;
  for (int64_t d : c.operand) hi = std::max(hi, d);
  r.operands = {any(), indices(-2, hi + 1)};
  r.shapes = {{c.operand, c.indices}};
  r.dtypes = clamps(m) ? all_types() : numbers();
  r.ref = [c, m](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
    const DType dt = avals[0].dtype;
    const double fill = is_floating(dt) ? 0.5 : 0.0;  // 0.5 converted to the dtype
    return RefOut{c.out, dt, testing::naive_gather(c, v[0], v[1], clamps(m), fill)};
  };
  return r;
}

using ScatterFn = Array (*)(const Array&, const Array&, const Array&,
                            const ScatterDimensionNumbers&, const lax::ScatterOptions&);

Row scatter_row(const std::string& prim, const std::string& op, ScatterFn f,
                const std::string& name, const Config& c, GatherScatterMode m) {
  Row r;
  r.name = "scatter_" + op + "_" + name + "_" + mode_name(m);
  r.prim = prim;
  r.family = "gather";
  lax::ScatterOptions o;
  o.mode = m;
  const ScatterDimensionNumbers dn = mirror(c.dn);
  r.fn = [f, dn, o](const Args& a) { return f(a[0], a[1], a[2], dn, o); };
  int64_t hi = 0;
  for (int64_t d : c.operand) hi = std::max(hi, d);
  r.operands = {any(), indices(-1, hi), any()};
  r.shapes = {{c.operand, c.indices, c.out}};
  r.dtypes = {DType::kFloat32, DType::kFloat64, DType::kInt32};
  r.ref = [c, m, op](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
    return RefOut{c.operand, avals[0].dtype,
                  testing::naive_scatter(c, v[0], v[1], v[2], clamps(m), op, avals[0].dtype)};
  };
  if (op == "mul") {
    // scatter-mul's gradient in the updates needs unique indices (JAX's restriction): its rows
    // use fixed unique indices and say so.
    std::vector<int32_t> unique = c.indices == Shape{4, 1}   ? std::vector<int32_t>{3, 0, 4, 1}
                                  : c.indices == Shape{2, 1} ? std::vector<int32_t>{2, 0}
                                                             : std::vector<int32_t>{};
    o.unique_indices = true;
    r.fn = [f, dn, o, unique, shape = c.indices](const Args& a) {
      return f(a[0], numpy::array(unique, shape), a[1], dn, o);
    };
    r.operands = {any(), any()};
    r.shapes = {{c.operand, c.out}};
    r.ref = [c, m, unique](const std::vector<std::vector<double>>& v,
                           const std::vector<Aval>& avals) {
      const std::vector<double> idx(unique.begin(), unique.end());
      return RefOut{c.operand, avals[0].dtype,
                    testing::naive_scatter(c, v[0], idx, v[1], clamps(m), "mul", avals[0].dtype)};
    };
  }
  if (op == "min" || op == "max") {
    // Ties between the operand and the updates are kinks.
    r.kink = [](const Args& a) {
      return min_pairwise_gap(lax::concatenate(
          {lax::reshape(a[0], {a[0].size()}), lax::reshape(a[2], {a[2].size()})}, 0));
    };
  }
  r.vmap_exact = op == "scatter" || op == "min" || op == "max";
  return r;
}

}  // namespace

std::vector<Row> rows_gather() {
  const std::vector<std::pair<std::string, Config>> configs = {
      {"rows", config({5, 3}, {4, 1}, {{1}, {0}, {0}, {}, {}}, {1, 3})},
      {"points", config({3, 4}, {2, 3, 2}, {{}, {0, 1}, {0, 1}, {}, {}}, {1, 1})},
      {"window", config({4, 5}, {3, 1}, {{0, 2}, {}, {1}, {}, {}}, {4, 2})},
      {"batching", config({2, 3, 4}, {2, 1}, {{1}, {1}, {1}, {0}, {0}}, {1, 1, 4})},
      {"empty", config({3, 2}, {0, 1}, {{1}, {0}, {0}, {}, {}}, {1, 2})},
  };
  std::vector<Row> t;
  for (const auto& [name, c] : configs)
    for (GatherScatterMode m : {GatherScatterMode::kClip, GatherScatterMode::kFillOrDrop,
                                GatherScatterMode::kPromiseInBounds})
      t.push_back(gather_row(name, c, m));
  for (const auto& [name, c] : configs) {
    for (GatherScatterMode m : {GatherScatterMode::kClip, GatherScatterMode::kFillOrDrop}) {
      t.push_back(scatter_row("scatter", "scatter", lax::scatter, name, c, m));
      t.push_back(scatter_row("scatter-add", "add", lax::scatter_add, name, c, m));
      if (name == "rows" || name == "batching" || name == "empty")
        t.push_back(scatter_row("scatter-mul", "mul", lax::scatter_mul, name, c, m));
      t.push_back(scatter_row("scatter-min", "min", lax::scatter_min, name, c, m));
      t.push_back(scatter_row("scatter-max", "max", lax::scatter_max, name, c, m));
    }
  }
  return t;
}

}  // namespace tessera::sweep
