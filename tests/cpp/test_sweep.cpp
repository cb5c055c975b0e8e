// The primitive sweep (util/sweep.h): one table row per primitive configuration, and every row
// checked forward (NumPy), jvp (finite differences, 1st and 2nd order), vjp (adjoint identity,
// grad of sum), vmap (loop-and-stack) and jit (equal to eager on every dtype and shape). A new
// primitive joins by adding a row here; SweepTable fails while a registered primitive has none.
// SweepCatches breaks rules on purpose (through the rule slots, restored afterwards) to show that
// each check fails when it should.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "prims/prims.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/sweep.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

// gtest prints a row parameter by its name.
void PrintTo(const Row* row, std::ostream* os) { *os << row->name; }

namespace {

using testing::json_int;
using testing::json_ints;
using testing::json_obj;
using testing::json_str;
using Ints = std::vector<int64_t>;
using Shapes = std::vector<std::vector<Shape>>;

constexpr DType kF16 = DType::kFloat16, kBF16 = DType::kBFloat16, kF32 = DType::kFloat32,
                kF64 = DType::kFloat64, kI8 = DType::kInt8, kI32 = DType::kInt32,
                kU8 = DType::kUInt8, kU32 = DType::kUInt32, kBool = DType::kBool;

// ---------------------------------------------------------------- shape patterns

const Shapes& kBinary = kBinaryShapes;
const Shapes& kUnary = kUnaryShapes;

// ---------------------------------------------------------------- row builders

Row binary(std::string name, Array (*op)(const Array&, const Array&), std::vector<DType> dts,
           Operand a = any(), Operand b = any()) {
  Row r;
  r.prim = name;
  r.oracle_op = "lax." + name;
  r.name = std::move(name);
  r.family = "binary";
  r.fn = [op](const Args& x) { return op(x[0], x[1]); };
  r.operands = {a, b};
  r.shapes = kBinary;
  r.dtypes = std::move(dts);
  return r;
}

Row unary(std::string name, Array (*op)(const Array&), std::vector<DType> dts, Operand a = any()) {
  Row r;
  r.prim = name;
  r.oracle_op = "lax." + name;
  r.name = std::move(name);
  r.family = "unary";
  r.fn = [op](const Args& x) { return op(x[0]); };
  r.operands = {a};
  r.shapes = kUnary;
  r.dtypes = std::move(dts);
  return r;
}

Row integer_pow(int64_t y) {
  Row r;
  r.name = "integer_pow_" + (y < 0 ? "m" + std::to_string(-y) : std::to_string(y));
  r.prim = "integer_pow";
  r.family = "unary";
  r.fn = [y](const Args& x) { return lax::integer_pow(x[0], y); };
  // Negative powers: floats away from 0 (integers raise TypeError, as JAX's).
  r.operands = {y < 0 ? nonzero(0.5, 2.0) : any()};
  r.shapes = kUnary;
  r.dtypes = y < 0 ? floats() : numbers();
  r.oracle_op = "lax.integer_pow";
  r.oracle_params = json_obj({{"y", json_int(y)}});
  return r;
}

Row compare(std::string name, Array (*op)(const Array&, const Array&)) {
  Row r = binary(std::move(name), op, all_types());
  r.family = "compare";
  r.deriv = Deriv::kZeroTangent;  // bool output: a float0 tangent, zero cotangents
  return r;
}

Row select(std::string name, bool bool_which, int ncases, std::vector<DType> dts) {
  Row r;
  r.name = std::move(name);
  r.prim = "select_n";
  r.family = "select_convert";
  r.fn = [](const Args& x) { return lax::select_n(x[0], Args(x.begin() + 1, x.end())); };
  r.operands = {bool_which ? predicate() : index(ncases)};
  for (int k = 0; k < ncases; ++k) r.operands.push_back(any());
  // which: rank 0 or the cases' shape.
  for (const Shape& s : std::vector<Shape>{{3, 4}, {}, {0, 2}, {2, 1, 3}}) {
    std::vector<Shape> same(static_cast<size_t>(ncases) + 1, s), scalar_which = same;
    scalar_which[0] = {};
    r.shapes.push_back(same);
    if (!s.empty()) r.shapes.push_back(scalar_which);
  }
  r.dtypes = std::move(dts);
  r.oracle_op = "lax.select_n";
  return r;
}

Row convert(std::string name, DType to, std::vector<DType> from) {
  Row r;
  r.name = std::move(name);
  r.prim = "convert_element_type";
  r.family = "select_convert";
  r.fn = [to](const Args& x) { return lax::convert_element_type(x[0], to); };
  r.operands = {any()};
  r.shapes = kUnary;
  r.dtypes = std::move(from);
  r.oracle_op = "lax.convert_element_type";
  r.oracle_params = json_obj({{"new_dtype", json_str(dtype_name(to))}});
  r.needs_x64 = to == kF64;
  if (!is_floating(to)) r.deriv = Deriv::kZeroTangent;
  return r;
}

Row broadcast_in_dim(std::string name, Shape from, Shape to, Ints dims) {
  Row r;
  r.name = std::move(name);
  r.prim = "broadcast_in_dim";
  r.family = "shape";
  r.fn = [to, dims](const Args& x) { return lax::broadcast_in_dim(x[0], to, dims); };
  r.operands = {any()};
  r.shapes = {{from}};
  r.dtypes = all_types();
  r.oracle_op = "lax.broadcast_in_dim";
  r.oracle_params = json_obj({{"shape", json_ints(to)}, {"broadcast_dimensions", json_ints(dims)}});
  return r;
}

Row reshape(std::string name, Shape from, Shape to) {
  Row r;
  r.name = std::move(name);
  r.prim = "reshape";
  r.family = "shape";
  r.fn = [to](const Args& x) { return lax::reshape(x[0], to); };
  r.operands = {any()};
  r.shapes = {{from}};
  r.dtypes = all_types();
  r.oracle_op = "lax.reshape";
  r.oracle_params = json_obj({{"new_sizes", json_ints(to)}});
  return r;
}

Row transpose(std::string name, Shapes shapes, Ints perm) {
  Row r;
  r.name = std::move(name);
  r.prim = "transpose";
  r.family = "shape";
  r.fn = [perm](const Args& x) { return lax::transpose(x[0], perm); };
  r.operands = {any()};
  r.shapes = std::move(shapes);
  r.dtypes = all_types();
  r.oracle_op = "lax.transpose";
  r.oracle_params = json_obj({{"permutation", json_ints(perm)}});
  return r;
}

// Forward only: iota has no operands to differentiate or batch.
Row iota(std::string name, DType d, Shape shape, int64_t dim) {
  Row r;
  r.name = std::move(name);
  r.prim = "iota";
  r.family = "shape";
  r.fn = [d, shape, dim](const Args&) { return lax::broadcasted_iota(d, shape, dim); };
  r.shapes = {{}};
  r.oracle_op = "lax.iota";
  r.oracle_params = json_obj({{"dtype", json_str(dtype_name(d))},
                              {"shape", json_ints(shape)},
                              {"dimension", json_int(dim)}});
  r.deriv = Deriv::kNone;
  r.vmap = false;
  return r;
}

Row reduce(std::string name, bool is_max, Shapes shapes, Ints axes) {
  Row r;
  r.name = std::move(name);
  r.prim = is_max ? "reduce_max" : "reduce_sum";
  r.family = "reduce";
  r.fn = [is_max, axes](const Args& x) {
    return is_max ? lax::reduce_max(x[0], axes) : lax::reduce_sum(x[0], axes);
  };
  r.operands = {any()};
  r.shapes = std::move(shapes);
  r.dtypes = is_max ? all_types() : numbers();
  r.oracle_op = "lax." + r.prim;
  r.oracle_params = json_obj({{"axes", json_ints(axes)}});
  if (is_max) {
    r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };  // ties
  } else {
    r.vmap_exact = false;  // float sums may be blocked differently per batch layout
  }
  return r;
}

Row dot(std::string name, Shapes shapes, Ints lc, Ints rc, Ints lb = {}, Ints rb = {},
        std::optional<DType> preferred = std::nullopt) {
  Row r;
  r.name = std::move(name);
  r.prim = "dot_general";
  r.family = "dot";
  lax::DotDimensionNumbers dn{lc, rc, lb, rb};
  r.fn = [dn, preferred](const Args& x) { return lax::dot_general(x[0], x[1], dn, preferred); };
  r.operands = {any(), any()};
  r.shapes = std::move(shapes);
  r.dtypes = {kF32, kF64, kF16, kBF16, kI32};
  r.oracle_op = "lax.dot_general";
  r.oracle_params =
      json_obj({{"lc", json_ints(lc)},
                {"rc", json_ints(rc)},
                {"lb", json_ints(lb)},
                {"rb", json_ints(rb)},
                {"preferred", preferred ? json_str(dtype_name(*preferred)) : "null"}});
  r.vmap_exact = false;  // BLAS may block a batched product differently
  return r;
}

// ---------------------------------------------------------------- the table

std::vector<Row> make_table() {
  std::vector<Row> t;
  auto kink_xy = [](const Args& x) { return min_abs_diff(x[0], x[1]); };  // max/min ties
  // -- binary arithmetic
  t.push_back(binary("add", lax::add, numbers()));
  t.push_back(binary("sub", lax::sub, numbers()));
  t.push_back(binary("mul", lax::mul, numbers()));
  t.push_back(binary("div", lax::div, numbers(), any(), nonzero()));
  for (bool is_max : {true, false}) {
    Row r = binary(is_max ? "max" : "min", is_max ? lax::max : lax::min, all_types());
    r.kink = kink_xy;
    t.push_back(r);
  }
  t.push_back(binary("pow", lax::pow, floats(), positive(0.5, 2.0), any()));
  {
    // A weakly typed scalar operand (x * 2.0 in numpy code).
    Row r = binary("mul", lax::mul, {kF32, kF64, kBF16, kI32}, any(), weak(any()));
    r.name = "mul_weak_scalar";
    r.shapes = {{{3, 4}, {}}, {{}, {}}, {{0, 2}, {}}};
    t.push_back(r);
    r = binary("pow", lax::pow, {kF32, kF64, kF16}, positive(0.5, 2.0), weak(any()));
    r.name = "pow_weak_exponent";
    r.shapes = {{{3, 4}, {}}, {{}, {}}};
    t.push_back(r);
  }
  // -- unary
  t.push_back(unary("neg", lax::neg, numbers()));
  t.push_back(unary("exp", lax::exp, floats()));
  t.push_back(unary("log", lax::log, floats(), positive()));
  t.push_back(unary("sin", lax::sin, floats(), any(-3.0, 3.0)));
  t.push_back(unary("cos", lax::cos, floats(), any(-3.0, 3.0)));
  t.push_back(unary("tanh", lax::tanh, floats()));
  t.push_back(unary("logistic", lax::logistic, floats(), any(-4.0, 4.0)));
  t.push_back(unary("sqrt", lax::sqrt, floats(), positive()));
  for (int64_t y : {0, 1, 2, 3, 5, -1, -2, -3}) t.push_back(integer_pow(y));
  // -- comparisons: forward, vmap, zero tangents
  t.push_back(compare("eq", lax::eq));
  t.push_back(compare("ne", lax::ne));
  t.push_back(compare("lt", lax::lt));
  t.push_back(compare("le", lax::le));
  t.push_back(compare("gt", lax::gt));
  t.push_back(compare("ge", lax::ge));
  // -- select_n, convert_element_type
  t.push_back(select("select_n_bool", true, 2, all_types()));
  t.push_back(select("select_n_i32_2", false, 2, all_types()));
  t.push_back(select("select_n_i32_3", false, 3, {kF32, kF64, kBF16, kI32, kBool}));
  const std::vector<DType> srcs = {kF16, kBF16, kF32, kF64, kI32, kU8, kBool};
  t.push_back(convert("convert_to_f64", kF64, srcs));
  {
    // Lossy float targets: the finite differences see the output's rounding (half an ulp
    // of x +- h over 2h), hence larger steps and tolerances; the map is linear, so any wrong
    // rule still fails by O(1).
    Row r = convert("convert_to_f32", kF32, srcs);
    r.fd_h = 1e-2, r.jvp_rtol = 1e-4;
    t.push_back(r);
    r = convert("convert_to_f16", kF16, srcs);
    r.fd_h = 0.1, r.jvp_rtol = 5e-3;
    t.push_back(r);
    r = convert("convert_to_bf16", kBF16, srcs);
    r.fd_h = 0.25, r.jvp_rtol = 1e-2;
    t.push_back(r);
  }
  t.push_back(convert("convert_to_i32", kI32, {kF16, kBF16, kF32, kF64, kI8, kU32, kBool}));
  t.push_back(convert("convert_to_bool", kBool, {kF32, kF64, kBF16, kI32}));
  {
    // int -> float: the input has no tangent, so the float output's tangent is zero.
    Row r = convert("convert_i32_to_f32", kF32, {});
    r.operands = {of_dtype(kI32)};
    r.deriv = Deriv::kZeroTangent;
    t.push_back(r);
  }
  // -- structural
  t.push_back(broadcast_in_dim("broadcast_in_dim_row", {3}, {2, 3}, {1}));
  t.push_back(broadcast_in_dim("broadcast_in_dim_col", {3}, {3, 2}, {0}));
  t.push_back(broadcast_in_dim("broadcast_in_dim_size1", {3, 1}, {3, 4}, {0, 1}));
  t.push_back(broadcast_in_dim("broadcast_in_dim_scalar", {}, {2, 3}, {}));
  t.push_back(broadcast_in_dim("broadcast_in_dim_rank3", {2, 3}, {2, 4, 3}, {0, 2}));
  t.push_back(broadcast_in_dim("broadcast_in_dim_zero", {0}, {2, 0}, {1}));
  t.push_back(reshape("reshape_split", {3, 4}, {2, 6}));
  t.push_back(reshape("reshape_rank3", {2, 3, 2}, {3, 4}));
  t.push_back(reshape("reshape_flatten", {2, 3}, {6}));
  t.push_back(reshape("reshape_scalar", {}, {1, 1}));
  t.push_back(reshape("reshape_zero", {0, 3}, {3, 0}));
  t.push_back(transpose("transpose_2d", {{{3, 4}}, {{0, 3}}, {{1, 4}}}, {1, 0}));
  t.push_back(transpose("transpose_3d", {{{2, 3, 4}}}, {2, 0, 1}));
  t.push_back(transpose("transpose_identity", {{{2, 3, 4}}}, {0, 1, 2}));
  t.push_back(transpose("transpose_4d", {{{2, 3, 1, 2}}, {{2, 0, 1, 3}}}, {3, 1, 0, 2}));
  t.push_back(iota("iota_i32", kI32, {5}, 0));
  t.push_back(iota("iota_f32_2d", kF32, {3, 4}, 1));
  t.push_back(iota("iota_bf16_3d", kBF16, {2, 3, 2}, 0));
  t.push_back(iota("iota_zero", kI32, {0, 3}, 1));
  // -- reductions
  t.push_back(reduce("reduce_sum_axis0", false, {{{3, 4}}, {{0, 3}}, {{1, 4}}}, {0}));
  t.push_back(reduce("reduce_sum_axis1", false, {{{3, 4}}, {{3, 0}}}, {1}));
  t.push_back(reduce("reduce_sum_all", false, {{{3, 4}}, {{1, 1}}, {{0, 2}}}, {0, 1}));
  t.push_back(reduce("reduce_sum_none", false, {{{3, 4}}, {{0, 2}}}, {}));
  t.push_back(reduce("reduce_sum_scalar", false, {{{}}}, {}));
  t.push_back(reduce("reduce_sum_02", false, {{{2, 3, 4}}}, {0, 2}));
  t.push_back(reduce("reduce_sum_13", false, {{{2, 3, 1, 2}}, {{2, 0, 3, 2}}}, {1, 3}));
  t.push_back(reduce("reduce_max_axis1", true, {{{3, 4}}, {{0, 4}}, {{3, 1}}}, {1}));
  t.push_back(reduce("reduce_max_all", true, {{{3, 4}}, {{1, 1}}}, {0, 1}));
  t.push_back(reduce("reduce_max_02", true, {{{2, 3, 2}}}, {0, 2}));
  // -- dot_general
  t.push_back(dot("dot_matmul", {{{3, 4}, {4, 2}}, {{3, 0}, {0, 2}}, {{1, 4}, {4, 1}}}, {1}, {0}));
  t.push_back(dot("dot_batch_matmul", {{{2, 3, 4}, {2, 4, 2}}}, {2}, {1}, {0}, {0}));
  t.push_back(dot("dot_vector", {{{4}, {4}}, {{0}, {0}}}, {0}, {0}));
  t.push_back(dot("dot_matvec", {{{3, 4}, {4}}}, {1}, {0}));
  t.push_back(dot("dot_outer", {{{3}, {2}}}, {}, {}));
  t.push_back(dot("dot_contract_first", {{{4, 3}, {4, 2}}}, {0}, {0}));
  t.push_back(dot("dot_contract_middle", {{{3, 4, 2}, {2, 4}}}, {1}, {1}));
  t.push_back(dot("dot_batch_last", {{{3, 2}, {2, 4, 3}}}, {}, {}, {1}, {0}));
  t.push_back(dot("dot_two_batch", {{{2, 3, 2, 4}, {4, 2, 3, 2}}}, {3}, {0}, {0, 2}, {3, 1}));
  {
    // preferred_element_type: int8 x int8 -> int32 (no tangents), f32 x f32 -> f64 (the
    // transpose must give float32 cotangents; f32 inputs need larger difference steps).
    Row r = dot("dot_preferred_i8_i32", {{{3, 4}, {4, 2}}, {{4}, {4}}}, {0}, {0}, {}, {}, kI32);
    r.shapes = {{{4, 3}, {4, 2}}, {{4}, {4}}};
    r.operands = {of_dtype(kI8, any()), of_dtype(kI8, any())};
    r.dtypes = {};
    r.deriv = Deriv::kZeroTangent;
    t.push_back(r);
    r = dot("dot_preferred_f32_f64", {{{4, 3}, {4, 2}}, {{4}, {4}}}, {0}, {0}, {}, {}, kF64);
    r.operands = {of_dtype(kF32, any()), of_dtype(kF32, any())};
    r.dtypes = {};
    r.needs_x64 = true;
    r.fd_h = 1e-3, r.jvp_rtol = 1e-3, r.fd_h2 = 1e-2, r.jvp2_rtol = 1e-3;
    t.push_back(r);
  }
  // -- autodiff primitives
  {
    Row r;
    r.name = "stop_gradient";
    r.prim = "stop_gradient";
    r.family = "ad";
    r.fn = [](const Args& x) { return lax::stop_gradient(x[0]); };
    r.operands = {any()};
    r.shapes = kUnary;
    r.dtypes = {kF32, kF64, kBF16, kI32, kBool};
    r.ref = [](const std::vector<std::vector<double>>& v, const std::vector<Aval>& a) {
      return RefOut{a[0].shape, a[0].dtype, v[0]};  // the identity
    };
    r.deriv = Deriv::kZeroTangent;
    t.push_back(r);
  }
  for (auto rows : {rows_math, rows_special, rows_bitwise, rows_slicing, rows_reductions,
                    rows_cumulative, rows_gather, rows_sort, rows_linalg_solve,
                    rows_linalg_spectral, rows_linalg_qr, rows_window, rows_conv})
    for (Row& r : rows()) t.push_back(std::move(r));
  return t;
}

const std::vector<Row>& table() {
  static const std::vector<Row> t = make_table();
  return t;
}

// Primitives without a row, and why.
const std::map<std::string, std::string>& exempt() {
  static const std::map<std::string, std::string> m = {
      {"custom_jvp_call", "sub-jaxpr primitive: tested in test_custom_derivatives.cpp"},
      {"custom_vjp_call", "sub-jaxpr primitive: tested in test_custom_derivatives.cpp"},
      {"custom_lin",
       "staged only by linearize for VJP overrides; no forward rule (tested with custom_vjp)"},
      {"scan", "sub-jaxpr primitive: tested in test_scan.cpp"},
      {"cond", "sub-jaxpr primitive: tested in test_cond.cpp"},
      {"custom_linear_solve",
       "sub-jaxpr primitive: tested in test_custom_linear_solve.cpp and test_linalg_solve.cpp"},
      {"while", "sub-jaxpr primitive: tested in test_while.cpp"},
      {"checkpoint", "sub-jaxpr primitive: tested in test_checkpoint.cpp"},
      {"jit", "sub-jaxpr primitive: tested in test_jit.cpp (and every row runs under it)"},
      {"name", "checkpoint_name (identity with a name): tested in test_checkpoint.cpp"},
      {"debug_callback", "host callback with effects: tested in test_callbacks.cpp"},
      {"pure_callback", "host callback: tested in test_callbacks.cpp"},
      {"io_callback", "host callback with effects: tested in test_callbacks.cpp"},
      {"psum", "collective: needs a vmap binding its axis name; tested in test_collectives.cpp"},
      {"pmax", "collective: needs a vmap binding its axis name; tested in test_collectives.cpp"},
      {"pmin", "collective: needs a vmap binding its axis name; tested in test_collectives.cpp"},
      {"all_gather",
       "collective: needs a vmap binding its axis name; tested in test_collectives.cpp"}};
  return m;
}

template <class Pred>
std::vector<const Row*> rows_where(Pred p) {
  std::vector<const Row*> out;
  for (const Row& r : table())
    if (p(r)) out.push_back(&r);
  return out;
}

std::vector<std::string> families() {
  std::vector<std::string> out;
  for (const Row& r : table())
    if (std::find(out.begin(), out.end(), r.family) == out.end()) out.push_back(r.family);
  return out;
}

std::string row_name(const ::testing::TestParamInfo<const Row*>& info) { return info.param->name; }

void report(const Row& row, const char* check, const Stats& s) {
  std::cout << "[sweep] " << row.name << " " << check << ": " << s.cases << " cases\n";
  EXPECT_GT(s.cases, 0) << row.name << ": the " << check << " check compared nothing";
}

// ---------------------------------------------------------------- the table itself

TEST(SweepTable, RowsAreValidAndCoverEveryPrimitive) {
  register_all();
  std::set<std::string> names, covered;
  for (const Row& r : table()) {
    EXPECT_EQ(validate(r), "");
    EXPECT_TRUE(names.insert(r.name).second) << "duplicate row name " << r.name;
    std::vector<std::string> bound = bound_primitives(r);
    EXPECT_NE(std::find(bound.begin(), bound.end(), r.prim), bound.end())
        << r.name << ": its fn does not bind " << r.prim;
    covered.insert(r.prim);
  }
  for (const std::string& p : primitive_names()) {
    if (exempt().count(p)) continue;
    EXPECT_TRUE(covered.count(p)) << "primitive '" << p
                                  << "' has no row in test_sweep.cpp: add one (see util/sweep.h)";
  }
  for (const auto& [p, why] : exempt())
    std::cout << "[sweep] no row for " << p << ": " << why << "\n";
  std::cout << "[sweep] " << table().size() << " rows over " << covered.size() << " primitives\n";
}

// ---------------------------------------------------------------- the checks

class SweepForward : public ::testing::TestWithParam<std::string> {};
TEST_P(SweepForward, MatchesReference) {
  std::vector<const Row*> rows = rows_where([&](const Row& r) { return r.family == GetParam(); });
  bool oracle =
      std::any_of(rows.begin(), rows.end(), [](const Row* r) { return !r->oracle_op.empty(); });
  if (oracle) TESSERA_REQUIRE_ORACLE();
  Stats s = check_forward(rows, GetParam());
  std::cout << "[sweep] forward " << GetParam() << ": " << s.cases << " cases over " << rows.size()
            << " rows\n";
  EXPECT_GT(s.cases, 0);
}
INSTANTIATE_TEST_SUITE_P(Families, SweepForward, ::testing::ValuesIn(families()),
                         [](const auto& info) { return info.param; });

class SweepJvp : public ::testing::TestWithParam<const Row*> {};
TEST_P(SweepJvp, MatchesFiniteDifferences) { report(*GetParam(), "jvp", check_jvp(*GetParam())); }
INSTANTIATE_TEST_SUITE_P(Rows, SweepJvp, ::testing::ValuesIn(rows_where([](const Row& r) {
                           return r.deriv != Deriv::kNone;
                         })),
                         row_name);

class SweepVjp : public ::testing::TestWithParam<const Row*> {};
TEST_P(SweepVjp, IsTheAdjointOfJvp) { report(*GetParam(), "vjp", check_vjp(*GetParam())); }
INSTANTIATE_TEST_SUITE_P(Rows, SweepVjp, ::testing::ValuesIn(rows_where([](const Row& r) {
                           return r.deriv != Deriv::kNone;
                         })),
                         row_name);

class SweepVmap : public ::testing::TestWithParam<const Row*> {};
TEST_P(SweepVmap, MatchesLoopAndStack) { report(*GetParam(), "vmap", check_vmap(*GetParam())); }
INSTANTIATE_TEST_SUITE_P(Rows, SweepVmap,
                         ::testing::ValuesIn(rows_where([](const Row& r) { return r.vmap; })),
                         row_name);

class SweepJit : public ::testing::TestWithParam<const Row*> {};
TEST_P(SweepJit, EqualsEager) { report(*GetParam(), "jit", check_jit(*GetParam())); }
INSTANTIATE_TEST_SUITE_P(Rows, SweepJit,
                         ::testing::ValuesIn(rows_where([](const Row&) { return true; })),
                         row_name);

class SweepVmapOfAd : public ::testing::TestWithParam<const Row*> {};
TEST_P(SweepVmapOfAd, MatchesLoop) {
  report(*GetParam(), "vmap_of_ad", check_vmap_of_ad(*GetParam()));
}
INSTANTIATE_TEST_SUITE_P(Rows, SweepVmapOfAd, ::testing::ValuesIn(rows_where([](const Row& r) {
                           return r.deriv == Deriv::kSmooth && r.vmap;
                         })),
                         row_name);

// ---------------------------------------------------------------- the sweep catches bugs

const Row& row_named(const std::string& name) {
  for (const Row& r : table())
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

// Runs `check`, intercepting its gtest failures; returns their messages.
template <class F>
std::vector<std::string> failures_of(F&& check) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter rep(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check();
  }
  std::vector<std::string> out;
  for (int i = 0; i < results.size(); ++i) out.push_back(results.GetTestPartResult(i).message());
  return out;
}

bool mentions(const std::vector<std::string>& msgs, const std::string& s) {
  return std::any_of(msgs.begin(), msgs.end(),
                     [&](const std::string& m) { return m.find(s) != std::string::npos; });
}

// Replaces one rule of a primitive for a scope.
template <class Rule>
class RuleSwap {
 public:
  RuleSwap(Rule& slot, Rule replacement) : slot_(slot), saved_(slot) {
    slot_ = std::move(replacement);
  }
  ~RuleSwap() { slot_ = saved_; }
  RuleSwap(const RuleSwap&) = delete;
  RuleSwap& operator=(const RuleSwap&) = delete;
  const Rule& saved() const { return saved_; }

 private:
  Rule& slot_;
  Rule saved_;
};

TEST(SweepCatches, WrongForwardReference) {
  TESSERA_REQUIRE_ORACLE();
  Row r = row_named("add");
  r.fn = [](const Args& x) { return lax::sub(x[0], x[1]); };  // checked against lax.add
  r.dtypes = {kF32};
  auto msgs = failures_of([&] { check_forward({&r}, "selftest"); });
  EXPECT_FALSE(msgs.empty());
}

TEST(SweepCatches, WrongFirstOrderJvp) {
  register_all();
  // sin's tangent scaled by 1.001: a 0.1% error.
  RuleSwap<JvpRule> swap(prims::sin.jvp, nullptr);
  JvpRule orig = swap.saved();
  prims::sin.jvp = [orig](std::span<const Array> p, std::span<const Array> t, const Params& ps) {
    auto r = orig(p, t, ps);
    r.second[0] = lax::mul(r.second[0], numpy::full_like(r.second[0], 1.001));
    return r;
  };
  auto msgs = failures_of([] { check_jvp(row_named("sin")); });
  EXPECT_TRUE(mentions(msgs, ": jvp vs finite differences")) << msgs.size() << " failures";
}

TEST(SweepCatches, WrongSecondOrderJvp) {
  register_all();
  // cos(stop_gradient(x)) * t is right to first order only.
  RuleSwap<JvpRule> swap(prims::sin.jvp, nullptr);
  prims::sin.jvp = [](std::span<const Array> p, std::span<const Array> t, const Params&) {
    return std::make_pair(std::vector<Array>{lax::sin(p[0])},
                          std::vector<Array>{lax::mul(t[0], lax::cos(lax::stop_gradient(p[0])))});
  };
  auto msgs = failures_of([] { check_jvp(row_named("sin")); });
  EXPECT_FALSE(mentions(msgs, ": jvp vs finite differences"));
  EXPECT_TRUE(mentions(msgs, "second-order jvp")) << msgs.size() << " failures";
}

TEST(SweepCatches, WrongTranspose) {
  register_all();
  // mul's transpose doubled: vjp no longer matches jvp.
  RuleSwap<TransposeRule> swap(prims::mul.transpose, nullptr);
  TransposeRule orig = swap.saved();
  prims::mul.transpose = [orig](std::span<const Array> ct, std::span<const Array> args,
                                std::span<const Aval> avals, const Params& ps) {
    std::vector<Array> r = orig(ct, args, avals, ps);
    for (Array& c : r)
      if (c.defined()) c = lax::add(c, c);
    return r;
  };
  auto msgs = failures_of([] { check_vjp(row_named("mul")); });
  EXPECT_TRUE(mentions(msgs, "<u, J v>")) << msgs.size() << " failures";
}

TEST(SweepCatches, WrongBatchRule) {
  register_all();
  // add's batching rule reports its output batched along the wrong axis when it is not 0.
  RuleSwap<BatchRule> swap(prims::add.batch, nullptr);
  BatchRule orig = swap.saved();
  prims::add.batch = [orig](const BatchAxis& axis, std::span<const Array> args,
                            std::span<const int64_t> dims, const Params& ps) {
    auto r = orig(axis, args, dims, ps);
    if (r.second[0] > 0 && r.first[0].ndim() > 1) r.second[0] -= 1;
    return r;
  };
  Row r = row_named("add");
  r.dtypes = {kF32};
  auto msgs = failures_of([&] { check_vmap(r); });
  EXPECT_TRUE(mentions(msgs, "vmap vs loop-and-stack")) << msgs.size() << " failures";
}

TEST(SweepCatches, WrongBatchRuleInsideAJvpRule) {
  register_all();
  // add's batching rule doubles its result; mul's own rules are right, but its JVP rule adds
  // the two tangent terms, so vmap of mul's jvp differs from the loop.
  RuleSwap<BatchRule> swap(prims::add.batch, nullptr);
  BatchRule orig = swap.saved();
  prims::add.batch = [orig](const BatchAxis& axis, std::span<const Array> args,
                            std::span<const int64_t> dims, const Params& ps) {
    auto r = orig(axis, args, dims, ps);
    r.first[0] = lax::mul(r.first[0], numpy::full_like(r.first[0], 2.0));
    return r;
  };
  auto msgs = failures_of([] { check_vmap_of_ad(row_named("mul")); });
  EXPECT_TRUE(mentions(msgs, "jvp vmap of jvp/vjp")) << msgs.size() << " failures";
}

}  // namespace
}  // namespace tessera::sweep
