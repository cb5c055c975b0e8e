// Sweep rows of the reductions family (src/prims/reductions.cpp, argminmax.cpp,
// reduce_generic.cpp): reduce_prod, reduce_min, reduce_and/or/xor over several axis sets and
// shapes (zero-size: identity results; rank 0), argmax/argmin along each axis with ties and NaNs,
// and lax.reduce with computations that are not monoids (log-add-exp, a + x + a x, a variadic
// (value, index) argmax and complex products, a closed-over traced scale, traced init values)
// and with monoids (which bind reduce_sum / reduce_max). Forward references come from
// tests/oracle/oracle_reductions.py.
#include <cmath>

#include "util/oracle.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::json_bool;
using testing::json_int;
using testing::json_ints;
using testing::json_obj;
using testing::json_str;
using Ints = std::vector<int64_t>;
using Shapes = std::vector<std::vector<Shape>>;
using ReduceFn = Array (*)(const Array&, const std::vector<int64_t>&);

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kBool = DType::kBool,
                kI8 = DType::kInt8, kI32 = DType::kInt32, kI64 = DType::kInt64, kU8 = DType::kUInt8,
                kU32 = DType::kUInt32;

std::vector<DType> logical_types() { return {kBool, kI8, kI32, kI64, kU8, kU32}; }

Row reduction(std::string name, std::string prim, ReduceFn op, Shapes shapes, Ints axes) {
  Row r;
  r.name = std::move(name);
  r.prim = prim;
  r.family = "reductions";
  r.fn = [op, axes](const Args& x) { return op(x[0], axes); };
  r.operands = {any()};
  r.shapes = std::move(shapes);
  r.oracle_op = "lax." + prim;
  r.oracle_params = json_obj({{"axes", json_ints(axes)}});
  return r;
}

Row prod(std::string name, Shapes shapes, Ints axes) {
  Row r = reduction(std::move(name), "reduce_prod", lax::reduce_prod, std::move(shapes), axes);
  r.dtypes = numbers();
  r.vmap_exact = false;  // float products may be paired differently per batch layout
  return r;
}

Row min(std::string name, Shapes shapes, Ints axes) {
  Row r = reduction(std::move(name), "reduce_min", lax::reduce_min, std::move(shapes), axes);
  r.dtypes = all_types();
  r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };  // ties
  return r;
}

// Bool and integer operands: forward and vmap (the derivative checks draw floats).
Row logical(std::string name, std::string prim, ReduceFn op, Shapes shapes, Ints axes) {
  Row r = reduction(std::move(name), prim, op, std::move(shapes), axes);
  r.dtypes = logical_types();
  r.deriv = Deriv::kNone;
  return r;
}

// The same on bool operands with the zero-tangent check.
Row logical_bool(std::string name, std::string prim, ReduceFn op, Ints axes) {
  Row r = reduction(std::move(name), prim, op, {{{3, 4}}, {{1, 3}}, {{0, 2}}}, axes);
  r.operands = {predicate()};
  r.dtypes = {};
  r.deriv = Deriv::kZeroTangent;
  return r;
}

// argmax/argmin along `axis`. Float inputs become trunc(4 x) with NaN where x > 1.5 (many
// ties, some NaNs; the oracle applies the same map); integers are drawn from [-3, 3].
Row arg(std::string name, bool is_max, Shapes shapes, int64_t axis, DType index_dtype = kI32) {
  Row r;
  r.name = std::move(name);
  r.prim = is_max ? "argmax" : "argmin";
  r.family = "reductions";
  r.fn = [is_max, axis, index_dtype](const Args& a) {
    Array x = a[0];
    if (is_floating(x.dtype())) {
      Array q = lax::convert_element_type(
          lax::convert_element_type(lax::mul(x, numpy::full_like(x, 4.0)), kI32), x.dtype());
      x = lax::select_n(lax::gt(x, numpy::full_like(x, 1.5)), {q, numpy::full_like(x, NAN)});
    }
    return is_max ? lax::argmax(x, axis, index_dtype) : lax::argmin(x, axis, index_dtype);
  };
  Operand o = any();
  o.int_lo = -3, o.int_hi = 3;
  r.operands = {o};
  r.shapes = std::move(shapes);
  r.dtypes = all_types();
  r.oracle_op = "lax." + r.prim;
  r.oracle_params = json_obj({{"axis", json_int(axis)},
                              {"index_dtype", json_str(dtype_name(index_dtype))},
                              {"nan_ties", json_bool(true)}});
  r.deriv = Deriv::kZeroTangent;
  return r;
}

// ---- lax.reduce rows (the oracle's "lax.reduce_generic" knows each body by name)

Array scalar_like(double v, const Array& x) { return numpy::scalar(v, x.dtype()); }

Row generic(std::string name, std::string body, Shapes shapes, Ints dims) {
  Row r;
  r.name = std::move(name);
  r.prim = "reduce";
  r.family = "reductions";
  r.operands = {any()};
  r.shapes = std::move(shapes);
  r.dtypes = floats();
  r.oracle_op = "lax.reduce_generic";
  r.oracle_params = json_obj({{"body", json_str(body)}, {"dims", json_ints(dims)}});
  r.vmap_exact = false;  // the tree pairs rows differently per batch layout
  return r;
}

// logaddexp(a, x) = m + log(exp(a - m) + exp(x - m)), m = max(a, x): associative, smooth (the
// max's choice cancels in every derivative), identity -inf.
Array logaddexp(const Array& a, const Array& x) {
  Array m = lax::max(a, x);
  return lax::add(m, lax::log(lax::add(lax::exp(lax::sub(a, m)), lax::exp(lax::sub(x, m)))));
}

Row logaddexp_row(std::string name, Shapes shapes, Ints dims) {
  Row r = generic(std::move(name), "logaddexp", std::move(shapes), dims);
  r.fn = [dims](const Args& x) {
    return lax::reduce(x[0], scalar_like(-INFINITY, x[0]), logaddexp, dims);
  };
  return r;
}

// a + x + a x = (1 + a)(1 + x) - 1: associative and exact in wrapping integers, identity 0.
Row affine_row(std::string name, Shapes shapes, Ints dims) {
  Row r = generic(std::move(name), "affine", std::move(shapes), dims);
  r.fn = [dims](const Args& x) {
    return lax::reduce(
        x[0], scalar_like(0.0, x[0]),
        [](const Array& a, const Array& v) { return lax::add(lax::add(a, v), lax::mul(a, v)); },
        dims);
  };
  r.operands = {any(-0.5, 0.5)};
  r.dtypes = numbers();
  return r;
}

}  // namespace

std::vector<Row> rows_reductions() {
  std::vector<Row> t;
  // -- reduce_prod
  t.push_back(prod("reduce_prod_axis1", {{{3, 4}}, {{0, 4}}, {{3, 0}}, {{3, 1}}}, {1}));
  t.push_back(prod("reduce_prod_all", {{{3, 4}}, {{1, 1}}, {{0, 2}}}, {0, 1}));
  t.push_back(prod("reduce_prod_none", {{{3, 4}}, {{0, 2}}}, {}));
  t.push_back(prod("reduce_prod_scalar", {{{}}}, {}));
  t.push_back(prod("reduce_prod_02", {{{2, 3, 4}}}, {0, 2}));
  t.push_back(prod("reduce_prod_13", {{{2, 3, 1, 2}}, {{2, 0, 3, 2}}}, {1, 3}));
  // -- reduce_min
  t.push_back(min("reduce_min_axis0", {{{3, 4}}, {{3, 0}}}, {0}));
  t.push_back(min("reduce_min_axis1", {{{3, 4}}, {{0, 4}}, {{3, 1}}}, {1}));
  t.push_back(min("reduce_min_all", {{{3, 4}}, {{1, 1}}}, {0, 1}));
  {
    // Empty reduced axes give the identity (+inf, INT_MAX, true): forward and vmap only (the
    // derivative of a constant infinity is not a finite difference).
    Row r = min("reduce_min_empty", {{{0, 4}}, {{0}}}, {0});
    r.deriv = Deriv::kNone;
    t.push_back(r);
  }
  t.push_back(min("reduce_min_scalar", {{{}}}, {}));
  t.push_back(min("reduce_min_02", {{{2, 3, 2}}}, {0, 2}));
  // -- reduce_and / reduce_or / reduce_xor
  const std::vector<std::pair<std::string, ReduceFn>> logicals = {{"reduce_and", lax::reduce_and},
                                                                  {"reduce_or", lax::reduce_or},
                                                                  {"reduce_xor", lax::reduce_xor}};
  for (const auto& [prim, op] : logicals) {
    t.push_back(logical(prim + "_axis1", prim, op, {{{3, 4}}, {{0, 4}}, {{3, 0}}, {{3, 1}}}, {1}));
    t.push_back(logical(prim + "_all", prim, op, {{{3, 4}}, {{1, 1}}, {{0, 2}}}, {0, 1}));
    t.push_back(logical(prim + "_02", prim, op, {{{2, 3, 4}}, {{2, 0, 2}}}, {0, 2}));
    t.push_back(logical(prim + "_scalar", prim, op, {{{}}}, {}));
    t.push_back(logical_bool(prim + "_bool", prim, op, {0, 1}));
  }
  // -- argmax / argmin along each axis
  for (bool is_max : {true, false}) {
    const std::string p = is_max ? "argmax" : "argmin";
    t.push_back(arg(p + "_axis0", is_max, {{{4, 3}}, {{1, 3}}, {{4, 0}}}, 0));
    t.push_back(arg(p + "_axis1", is_max, {{{3, 6}}, {{0, 6}}, {{3, 1}}}, 1));
    t.push_back(arg(p + "_rank1", is_max, {{{7}}, {{1}}}, 0));
    t.push_back(arg(p + "_3d_axis1", is_max, {{{2, 5, 3}}, {{2, 5, 0}}}, 1));
    t.push_back(arg(p + "_3d_axis2", is_max, {{{2, 3, 5}}}, 2, DType::kUInt8));
  }
  {
    // An int64 index under x64.
    Row r = arg("argmax_index_i64", true, {{{3, 4}}}, 1, kI64);
    r.needs_x64 = true;
    t.push_back(r);
  }
  // -- lax.reduce with computations that are not monoids
  t.push_back(logaddexp_row("reduce_generic_logaddexp_axis1", {{{3, 4}}, {{0, 4}}, {{3, 1}}}, {1}));
  t.push_back(logaddexp_row("reduce_generic_logaddexp_02", {{{2, 3, 5}}}, {0, 2}));
  t.push_back(logaddexp_row("reduce_generic_logaddexp_long", {{{37}}}, {0}));
  t.push_back(logaddexp_row("reduce_generic_logaddexp_scalar", {{{}}}, {}));
  t.push_back(affine_row("reduce_generic_affine_axis1", {{{3, 4}}, {{3, 0}}, {{1, 4}}}, {1}));
  t.push_back(affine_row("reduce_generic_affine_all", {{{3, 5}}, {{0, 2}}}, {0, 1}));
  t.push_back(affine_row("reduce_generic_affine_02", {{{2, 3, 2}}}, {0, 2}));
  t.push_back(affine_row("reduce_generic_affine_scalar", {{{}}}, {}));
  {
    // Variadic: (value, index) pairs, the first maximum; returns value + index.
    Row r = generic("reduce_generic_argmax_pair", "argmax_pair", {{{3, 5}}, {{2, 4, 3}}, {{1, 1}}},
                    {1});
    r.fn = [](const Args& a) {
      const Array& x = a[0];
      Array idx = lax::broadcasted_iota(kI32, x.shape(), 1);
      auto body = [](const std::vector<Array>& acc, const std::vector<Array>& v) {
        Array pick =
            lax::select_n(lax::eq(acc[0], v[0]), {lax::gt(acc[0], v[0]), lax::lt(acc[1], v[1])});
        return std::vector<Array>{lax::select_n(pick, {v[0], acc[0]}),
                                  lax::select_n(pick, {v[1], acc[1]})};
      };
      auto r =
          lax::reduce({x, idx}, {scalar_like(-INFINITY, x), numpy::scalar(0, kI32)}, body, {1});
      return lax::add(r[0], lax::convert_element_type(r[1], x.dtype()));
    };
    r.oracle_params = json_obj({{"body", json_str("argmax_pair")}, {"dims", json_ints({1})}});
    r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };
    t.push_back(r);
  }
  {
    // Variadic with two float operands: complex products (re, im), init (1, 0); re - im.
    Row r = generic("reduce_generic_complex_mul", "complex_mul",
                    {{{3, 4}, {3, 4}}, {{2, 5}, {2, 5}}, {{0, 3}, {0, 3}}, {{4, 1}, {4, 1}}}, {1});
    r.operands = {any(-1.0, 1.0), any(-1.0, 1.0)};
    r.fn = [](const Args& a) {
      auto body = [](const std::vector<Array>& acc, const std::vector<Array>& v) {
        return std::vector<Array>{lax::sub(lax::mul(acc[0], v[0]), lax::mul(acc[1], v[1])),
                                  lax::add(lax::mul(acc[0], v[1]), lax::mul(acc[1], v[0]))};
      };
      auto r =
          lax::reduce({a[0], a[1]}, {scalar_like(1.0, a[0]), scalar_like(0.0, a[0])}, body, {1});
      return lax::sub(r[0], r[1]);
    };
    t.push_back(r);
  }
  {
    // Not commutative: affine maps x -> m x + c composed in order, (m1, c1) then (m2, c2) is
    // (m1 m2, m2 c1 + c2), init (1, 0); returns c - m. Checks that the tree keeps the order.
    Row r = generic("reduce_generic_affine_compose", "affine_compose",
                    {{{3, 7}, {3, 7}}, {{2, 4}, {2, 4}}, {{1, 1}, {1, 1}}, {{2, 0}, {2, 0}}}, {1});
    r.operands = {any(-1.2, 1.2), any()};
    r.fn = [](const Args& a) {
      auto body = [](const std::vector<Array>& acc, const std::vector<Array>& v) {
        return std::vector<Array>{lax::mul(acc[0], v[0]), lax::add(lax::mul(v[0], acc[1]), v[1])};
      };
      auto r =
          lax::reduce({a[0], a[1]}, {scalar_like(1.0, a[0]), scalar_like(0.0, a[0])}, body, {1});
      return lax::sub(r[1], r[0]);
    };
    t.push_back(r);
  }
  {
    // The computation closes over a traced s (a constant of the body: a trailing operand of
    // `reduce`, batched under vmap, differentiated under jvp): a + v + s is associative, and
    // with the init folded in once the result is sum(x) + n s.
    Row r = generic("reduce_generic_closure", "shifted_sum", {{{3, 4}, {}}, {{0, 4}, {}}}, {1});
    r.operands = {any(), any()};
    r.fn = [](const Args& a) {
      const Array s = a[1];
      return lax::reduce(
          a[0], scalar_like(0.0, a[0]),
          [s](const Array& acc, const Array& v) { return lax::add(lax::add(acc, v), s); }, {1});
    };
    t.push_back(r);
  }
  {
    // add with a traced init value (not the identity): generic; init batched under vmap.
    Row r = generic("reduce_generic_add_init", "add_init", {{{3, 4}, {}}, {{3, 0}, {}}}, {1});
    r.operands = {any(), any()};
    r.fn = [](const Args& a) { return lax::reduce(a[0], a[1], lax::add, {1}); };
    t.push_back(r);
    r = generic("reduce_generic_logaddexp_init", "logaddexp_init", {{{3, 4}, {}}, {{1, 4}, {}}},
                {1});
    r.operands = {any(), any()};
    r.fn = [](const Args& a) { return lax::reduce(a[0], a[1], logaddexp, {1}); };
    t.push_back(r);
  }
  // -- monoid computations bind the monoid's primitive
  {
    Row r = reduction("reduce_generic_monoid_add", "reduce_sum", nullptr,
                      {{{3, 4}}, {{0, 4}}, {{3, 0}}}, {1});
    r.fn = [](const Args& x) { return lax::reduce(x[0], scalar_like(0.0, x[0]), lax::add, {1}); };
    r.dtypes = numbers();
    r.vmap_exact = false;
    t.push_back(r);
    r = reduction("reduce_generic_monoid_max", "reduce_max", nullptr, {{{3, 4}}, {{1, 1}}}, {0, 1});
    r.fn = [](const Args& x) {
      return lax::reduce(x[0], scalar_like(-INFINITY, x[0]), lax::max, {0, 1});
    };
    r.dtypes = floats();
    r.kink = [](const Args& x) { return min_pairwise_gap(x[0]); };
    t.push_back(r);
  }
  return t;
}

}  // namespace tessera::sweep
