// The jaxpr parser: parse(print(j)) is structurally equal to j and prints back to the same text
// for a corpus of programs over the whole primitive set (transformed programs, control flow with
// nested sub-jaxprs, literals, dropped vars, odd dtypes, wrapped lines); hand-written texts in
// JAX's style evaluate (eval_jaxpr) to the eager result on fresh random inputs; malformed texts
// raise ValueError naming line:column.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "tessera/control_flow_flat.h"
#include "tessera/custom_derivatives.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/lax_assoc_scan.h"
#include "tessera/numpy_cumulative.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::to_doubles;
using Arrs = std::vector<Array>;
using Fn = std::function<Arrs(std::span<const Array>)>;

constexpr DType F32 = DType::kFloat32, I32 = DType::kInt32, BOOL = DType::kBool;

Aval A(Shape s, DType d = F32) { return Aval{std::move(s), d, false}; }

ClosedJaxpr mk(const Fn& f, const std::vector<Aval>& avals) {
  Arrs args;
  for (const Aval& a : avals) args.push_back(flat::abstract_placeholder(a));
  return flat::make_jaxpr(f, args);
}

Array f32s(double v) { return tnp::scalar(v, F32); }
Array i32s(double v) { return tnp::scalar(v, I32); }

// The first difference between two jaxprs that print alike (weak types, param types/order).
std::string explain(const Jaxpr& a, const Jaxpr& b) {
  auto avs = [](const std::vector<Var>& vs) {
    std::string s;
    for (const Var& v : vs) s += v.aval().str() + (v.aval().weak_type ? "{weak} " : " ");
    return s;
  };
  if (avs(a.invars) != avs(b.invars)) return "invars " + avs(a.invars) + "vs " + avs(b.invars);
  for (size_t k = 0; k < std::min(a.eqns.size(), b.eqns.size()); ++k) {
    const JaxprEqn &x = a.eqns[k], &y = b.eqns[k];
    if (!(x.params == y.params)) {
      std::string s = "eqn " + std::to_string(k) + " params differ:";
      for (size_t i = 0; i < std::min(x.params.size(), y.params.size()); ++i)
        s += " " + x.params.items()[i].first + "#" +
             std::to_string(x.params.items()[i].second.index()) + "/" + y.params.items()[i].first +
             "#" + std::to_string(y.params.items()[i].second.index());
      return s;
    }
    for (size_t i = 0; i < std::min(x.invars.size(), y.invars.size()); ++i)
      if (atom_aval(x.invars[i]).weak_type != atom_aval(y.invars[i]).weak_type)
        return "eqn " + std::to_string(k) + " (" + x.primitive->name() + ") input " +
               std::to_string(i) + " weak_type differs";
    if (x.effects != y.effects) return "eqn " + std::to_string(k) + " effects differ";
  }
  if (a.effects != b.effects) return "jaxpr effects differ";
  return "no difference found at the top level (a sub-jaxpr differs)";
}

// parse(print(j)) == j and print(parse(print(j))) == print(j). Input avals are passed only
// when one is weak (weak types are not printed).
void round_trip(const std::string& name, const Jaxpr& j, bool exact = true) {
  SCOPED_TRACE(name);
  verify(j);
  const std::string text = to_string(j);
  ParseJaxprOptions opt;
  bool weak = false;
  for (const Var& v : j.invars) weak = weak || v.aval().weak_type;
  for (const Var& v : j.constvars) weak = weak || v.aval().weak_type;
  if (weak) {
    for (const Var& v : j.invars) opt.invar_avals.push_back(v.aval());
    for (const Var& v : j.constvars) opt.constvar_avals.push_back(v.aval());
  }
  Jaxpr p;
  try {
    p = parse_jaxpr(text, opt);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "parse failed: " << e.what() << "\n" << text;
    return;
  }
  EXPECT_EQ(to_string(p), text);
  if (!exact) {
    // Weak literals passed straight into control flow read back strong (weak types are not
    // printed); everything else agrees.
    EXPECT_FALSE(structurally_equal(p, j));
    EXPECT_TRUE(structurally_equal(parse_jaxpr(to_string(p)), p));
    return;
  }
  EXPECT_TRUE(structurally_equal(p, j)) << explain(j, p) << "\n" << text;
  EXPECT_TRUE(structurally_equal(*parse_jaxpr_interned(text, opt), j));
  // Other layouts of the same jaxpr: one line with single spaces, and a wide page.
  std::string flat;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)) || (!flat.empty() && flat.back() != ' '))
      flat += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
  EXPECT_TRUE(structurally_equal(parse_jaxpr(flat, opt), j));
  EXPECT_TRUE(structurally_equal(parse_jaxpr(to_string(j, 200), opt), j));
}

void collect_prims(const Jaxpr& j, std::set<std::string>& out) {
  for (const JaxprEqn& e : j.eqns) {
    out.insert(e.primitive->name());
    for (const auto& kv : e.params.items()) {
      if (auto* s = std::get_if<std::shared_ptr<const Jaxpr>>(&kv.second))
        if (*s) collect_prims(**s, out);
      if (auto* l = std::get_if<JaxprList>(&kv.second))
        for (const auto& s : *l)
          if (s) collect_prims(*s, out);
    }
  }
}

struct Case {
  std::string name;
  std::function<ClosedJaxpr()> make;
  bool exact = true;
};

Arrs one(Array a) { return {std::move(a)}; }

std::vector<Case> corpus() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Case> cs;
  auto add = [&](std::string n, Fn f, std::vector<Aval> avals) {
    cs.push_back({std::move(n), [f, avals] { return mk(f, avals); }});
  };
  // ---- elementwise ----
  add("sin_times_2", [](auto x) { return one(tnp::multiply(tnp::sin(x[0]), 2.0)); }, {A({3})});
  add("arith",
      [](auto x) {
        return one(
            lax::max(lax::div(lax::sub(lax::add(x[0], x[1]), x[1]), x[0]), lax::min(x[0], x[1])));
      },
      {A({2, 3}), A({2, 3})});
  add("transcendental",
      [](auto x) { return one(lax::sqrt(lax::logistic(lax::tanh(lax::log(lax::exp(x[0])))))); },
      {A({4})});
  add("pow_atan2_rem",
      [](auto x) {
        return one(lax::nextafter(lax::rem(lax::atan2(lax::pow(x[0], x[1]), x[1]), x[0]), x[1]));
      },
      {A({3}), A({3})});
  add("rounding",
      [](auto x) {
        return one(lax::add(lax::round(lax::floor(lax::ceil(lax::sign(lax::abs(x[0]))))),
                            lax::round(x[0], lax::RoundingMethod::kToNearestEven)));
      },
      {A({5})});
  add("more_unary",
      [](auto x) {
        return one(lax::tan(lax::cbrt(lax::rsqrt(lax::log1p(lax::expm1(lax::exp2(x[0])))))));
      },
      {A({3})});
  add("inverse_trig",
      [](auto x) {
        Array y = lax::add(lax::asin(x[0]), lax::acos(x[0]));
        y = lax::add(y, lax::atan(lax::sinh(lax::cosh(x[0]))));
        return one(lax::add(lax::asinh(y), lax::atanh(lax::acosh(y))));
      },
      {A({3})});
  add("special",
      [](auto x) {
        Array y = lax::add(lax::erf(x[0]), lax::erfc(x[0]));
        y = lax::add(y, lax::erf_inv(lax::lgamma(lax::digamma(y))));
        return Arrs{y,
                    lax::is_finite(y),
                    lax::igamma(x[0], y),
                    lax::igammac(y, x[0]),
                    lax::zeta(x[0], y),
                    lax::igamma_grad_a(x[0], y)};
      },
      {A({2})});
  add("compare_select",
      [](auto x) {
        Array a = lax::select_n(lax::lt(x[0], x[1]), {x[0], x[1]});
        Array b = lax::select_n(lax::ge(x[0], x[1]), {a, x[1]});
        return Arrs{lax::eq(a, b), lax::ne(a, b), lax::le(a, b), lax::gt(a, b),
                    lax::select_n(lax::convert_element_type(lax::gt(a, b), I32), {a, b})};
      },
      {A({4}), A({4})});
  add("select_n_3way",
      [](auto x) {
        return one(lax::select_n(x[0], {x[1], x[2], x[1]}));
      },
      {A({3}, I32), A({3}), A({3})});
  add("bitwise_i32",
      [](auto x) {
        Array y = lax::bitwise_xor(lax::bitwise_or(lax::bitwise_and(x[0], x[1]), x[0]), x[1]);
        y = lax::shift_right_arithmetic(lax::shift_left(y, x[1]), x[1]);
        return Arrs{lax::bitwise_not(lax::shift_right_logical(y, x[0])), lax::population_count(y),
                    lax::clz(y)};
      },
      {A({3}, I32), A({3}, I32)});
  add("u8_arith", [](auto x) { return one(tnp::add(tnp::multiply(x[0], x[1]), 3)); },
      {A({4}, DType::kUInt8), A({4}, DType::kUInt8)});
  add("bool_ops",
      [](auto x) {
        return Arrs{lax::bitwise_and(x[0], lax::bitwise_not(x[1])), tnp::logical_or(x[0], x[1])};
      },
      {A({3}, BOOL), A({3}, BOOL)});
  add("bool_scalar_literal",
      [](auto x) { return one(lax::bitwise_or(x[0], tnp::scalar(1.0, BOOL))); }, {A({}, BOOL)});
  add("convert_weak", [](auto x) { return one(tnp::add(tnp::multiply(x[0], 2), 1.5)); },
      {A({3}, I32)});
  add("convert_dtypes",
      [](auto x) {
        Array h = lax::convert_element_type(x[0], DType::kFloat16);
        Array b = lax::convert_element_type(x[0], DType::kBFloat16);
        return Arrs{lax::convert_element_type(h, I32), lax::convert_element_type(b, DType::kUInt8),
                    lax::convert_element_type(x[0], BOOL)};
      },
      {A({3})});
  add("bf16_math", [](auto x) { return one(tnp::add(lax::mul(lax::exp(x[0]), x[0]), 0.1)); },
      {A({3}, DType::kBFloat16)});
  add("f16_math", [](auto x) { return one(tnp::subtract(lax::tanh(x[0]), 1.0 / 3.0)); },
      {A({2, 2}, DType::kFloat16)});
  add("clamp", [](auto x) { return one(lax::clamp(f32s(-0.5), x[0], f32s(0.5))); }, {A({4})});
  add("integer_pow",
      [](auto x) {
        return Arrs{lax::integer_pow(x[0], 3), lax::integer_pow(x[0], -2), lax::square(x[0]),
                    lax::reciprocal(x[0])};
      },
      {A({3})});
  add("literals_inf_nan_negzero",
      [inf, nan](auto x) {
        Array y = tnp::add(x[0], f32s(inf));
        y = tnp::maximum(y, f32s(-inf));
        y = tnp::multiply(y, f32s(-0.0));
        return Arrs{tnp::add(y, f32s(nan)), tnp::multiply(x[0], f32s(1e-30)),
                    tnp::multiply(x[0], f32s(3.4e38))};
      },
      {A({2})});
  add("int_literals",
      [](auto x) { return one(lax::add(lax::mul(x[0], i32s(-7)), i32s(2147483647))); },
      {A({2}, I32)});
  // ---- structural ----
  add("broadcast_reshape_transpose",
      [](auto x) {
        Array b = lax::broadcast_in_dim(x[0], {2, 3, 4}, {1});
        Array r = lax::reshape(b, {6, 4});
        return Arrs{lax::transpose(r, {1, 0}), lax::broadcast(x[0], {5})};
      },
      {A({3})});
  add("broadcast_scalar",
      [](auto x) {
        return one(lax::broadcast_in_dim(x[0], {2, 2}, {}));
      },
      {A({})});
  add("dot_general_batch",
      [](auto x) {
        return one(lax::dot_general(x[0], x[1], {{2}, {1}, {0}, {0}}));
      },
      {A({2, 3, 4}), A({2, 4, 5})});
  add("dot_general_preferred",
      [](auto x) {
        return one(lax::dot_general(x[0], x[1], {{1}, {0}, {}, {}}, F32));
      },
      {A({2, 3}, DType::kBFloat16), A({3, 2}, DType::kBFloat16)});
  add("dot_int8_preferred", [](auto x) { return one(lax::dot(x[0], x[1], I32)); },
      {A({4}, DType::kInt8), A({4}, DType::kInt8)});
  add("matmul", [](auto x) { return one(tnp::matmul(x[0], x[1])); }, {A({3, 4}), A({4, 2})});
  add("reductions",
      [](auto x) {
        return Arrs{lax::reduce_sum(x[0], {0, 2}), lax::reduce_max(x[0], {1}),
                    lax::reduce_min(x[0], {0, 1, 2}), lax::reduce_prod(x[0], {2})};
      },
      {A({2, 3, 4})});
  add("bool_reductions",
      [](auto x) {
        return Arrs{lax::reduce_and(x[0], {0}), lax::reduce_or(x[0], {1}),
                    lax::reduce_xor(x[0], {0, 1})};
      },
      {A({3, 2}, BOOL)});
  add("argmax_argmin",
      [](auto x) {
        return Arrs{lax::argmax(x[0], 1, I32), lax::argmin(x[0], 0, DType::kInt16),
                    lax::argmax(x[0], 0, DType::kUInt8)};
      },
      {A({3, 4})});
  add("reduce_generic",
      [](auto x) {
        return one(lax::reduce(
            x[0], f32s(1.0),
            [](const Array& a, const Array& b) { return lax::add(lax::mul(a, f32s(0.5)), b); },
            {0}));
      },
      {A({5, 2})});
  add("reduce_generic_variadic",
      [](auto x) {
        return lax::reduce(
            {x[0], x[1]}, {f32s(-1.0), i32s(0)},
            [](const std::vector<Array>& acc, const std::vector<Array>& v) {
              Array take = lax::gt(v[0], acc[0]);
              return Arrs{lax::select_n(take, {acc[0], v[0]}), lax::select_n(take, {acc[1], v[1]})};
            },
            {1});
      },
      {A({2, 6}), A({2, 6}, I32)});
  add("slicing",
      [](auto x) {
        return Arrs{lax::slice(x[0], {0, 1}, {4, 5}, {2, 3}), lax::rev(x[0], {0, 1}),
                    lax::squeeze(lax::slice(x[0], {1, 0}, {2, 5}, {1, 1}), {0}),
                    lax::expand_dims(x[0], {0, 3})};
      },
      {A({4, 5})});
  add("pad_concat",
      [](auto x) {
        Array p = lax::pad(x[0], f32s(0.0), {{1, -1, 2}, {0, 2, 0}});
        return Arrs{p, lax::concatenate({x[0], x[0], x[1]}, 1)};
      },
      {A({3, 2}), A({3, 1})});
  add("dynamic_slice",
      [](auto x) {
        Array s = lax::dynamic_slice(x[0], {x[1], i32s(1)}, {2, 2});
        Array u = lax::dynamic_update_slice(x[0], s, {i32s(0), x[1]});
        return Arrs{s, u, lax::dynamic_index_in_dim(x[0], x[1], 1, false)};
      },
      {A({4, 4}), A({}, I32)});
  add("iota",
      [](auto x) {
        return Arrs{lax::add(x[0], lax::convert_element_type(lax::iota(I32, 3), F32)),
                    lax::broadcasted_iota(DType::kInt16, {2, 3}, 1)};
      },
      {A({3})});
  add("reduce_precision_bitcast",
      [](auto x) {
        return Arrs{lax::reduce_precision(x[0], 5, 10), lax::bitcast_convert_type(x[0], I32),
                    lax::bitcast_convert_type(x[0], DType::kUInt8)};
      },
      {A({3})});
  add("zero_size",
      [](auto x) {
        return Arrs{lax::reduce_sum(x[0], {0}), lax::concatenate({x[0], x[0]}, 0),
                    lax::reshape(x[0], {3, 0})};
      },
      {A({0, 3})});
  add("stop_gradient", [](auto x) { return one(lax::mul(lax::stop_gradient(x[0]), x[0])); },
      {A({2})});
  add("no_eqns_literal_out", [](auto x) { return Arrs{x[0], f32s(2.5), x[0]}; }, {A({2})});
  add(
      "many_inputs_wrap",
      [](auto x) {
        Array s = x[0];
        for (size_t i = 1; i < x.size(); ++i) s = lax::add(s, x[i]);
        return Arrs{s, lax::concatenate(Arrs(x.begin(), x.end()), 0)};
      },
      std::vector<Aval>(24, A({2})));
  add("numpy_mix",
      [](auto x) {
        Array m = tnp::mean(x[0], 0);
        Array v = tnp::var(x[0], 1);
        return Arrs{m, v, tnp::where(tnp::greater(x[0], 0.0), x[0], 0.0),
                    tnp::clip(x[0], -1.0, 1.0)};
      },
      {A({3, 4})});
  add("numpy_cumsum", [](auto x) { return one(tnp::cumsum(x[0], 0)); }, {A({4, 2})});
  // ---- transformed programs ----
  auto loss = [](std::span<const Array> x) {
    return one(tnp::sum(tnp::tanh(tnp::matmul(x[1], x[0]))));
  };
  add("grad_tanh_dot", [loss](auto x) { return one(flat::value_and_grad(loss, x, {0}).grads[0]); },
      {A({3, 2}), A({4, 3})});
  cs.push_back({"grad_sin_weak_input",
                [] { return make_jaxpr(grad([](const Array& x) { return lax::sin(x); }))(1.0f); }});
  cs.push_back({"grad_mean_square", [] {
                  return make_jaxpr(grad([](const Array& x) {
                    return tnp::mean(tnp::multiply(x, x));
                  }))(ShapeDtypeStruct{{4}, F32});
                }});
  cs.push_back({"hessian", [] {
                  return make_jaxpr(hessian([](const Array& x) {
                    return tnp::sum(tnp::sin(tnp::multiply(x, x)));
                  }))(ShapeDtypeStruct{{2}, F32});
                }});
  cs.push_back({"vmap_dot", [] {
                  auto f = [](const Array& w, const Array& x) { return tnp::dot(x, w); };
                  return make_jaxpr(vmap(f, {std::nullopt, 0}))(ShapeDtypeStruct{{3, 2}, F32},
                                                                ShapeDtypeStruct{{5, 3}, F32});
                }});
  cs.push_back({"vmap_grad", [] {
                  auto l = [](const Array& w, const Array& x) {
                    return tnp::sum(tnp::tanh(tnp::dot(x, w)));
                  };
                  return make_jaxpr(vmap(grad(l), {std::nullopt, 0}))(
                      ShapeDtypeStruct{{2, 3}, F32}, ShapeDtypeStruct{{4, 2}, F32});
                }});
  cs.push_back({"vmap_reductions_slices", [] {
                  auto f = [](const Array& x) {
                    return tnp::add(lax::reduce_max(lax::rev(x, {0}), {0}),
                                    lax::convert_element_type(lax::argmax(x, 0, I32), F32));
                  };
                  return make_jaxpr(vmap(f, 1))(ShapeDtypeStruct{{3, 5}, F32});
                }});
  add("jvp_program",
      [](auto x) {
        Fn f = [](std::span<const Array> a) { return one(lax::mul(lax::sin(a[0]), a[0])); };
        auto [po, to] = flat::jvp(f, Arrs{x[0]}, Arrs{x[1]});
        return Arrs{po[0], to[0]};
      },
      {A({3}), A({3})});
  add("jvp_of_grad",
      [loss](auto x) {
        Fn g = [loss](std::span<const Array> a) {
          return one(flat::value_and_grad(loss, a, {0}).grads[0]);
        };
        auto [po, to] = flat::jvp(g, Arrs{x[0], x[1]}, Arrs{x[0], x[1]});
        return Arrs{to[0]};
      },
      {A({3, 2}), A({4, 3})});
  add("grad_of_structural",
      [](auto x) {
        Fn l = [](std::span<const Array> a) {
          Array p = lax::pad(a[0], f32s(0.0), {{1, 1, 1}});
          Array s = lax::dynamic_slice(p, {i32s(2)}, {3});
          Array c = lax::concatenate({s, lax::rev(a[0], {0})}, 0);
          return one(lax::reduce_sum(lax::mul(c, lax::cumsum(c, 0, false)), {0}));
        };
        return one(flat::value_and_grad(l, x, {0}).grads[0]);
      },
      {A({4})});
  add("grad_integer_pow_select",
      [](auto x) {
        Fn l = [](std::span<const Array> a) {
          Array y = lax::select_n(lax::gt(a[0], f32s(0.0)), {lax::integer_pow(a[0], 3), a[0]});
          return one(lax::reduce_sum(lax::div(y, lax::add(lax::abs(a[0]), f32s(1.0))), {0}));
        };
        return one(flat::value_and_grad(l, x, {0}).grads[0]);
      },
      {A({3})});
  add("linearize_jaxpr",
      [](auto x) {
        Fn f = [](std::span<const Array> a) { return one(lax::mul(lax::exp(a[0]), a[0])); };
        Arrs tangents{x[1]};
        return flat::jvp(f, Arrs{x[0]}, tangents).second;
      },
      {A({2}), A({2})});
  // ---- control flow (nested sub-jaxprs) ----
  add("scan_cumulative",
      [](auto x) {
        Fn body = [](std::span<const Array> a) {
          Array c = lax::add(a[0], a[1]);
          return Arrs{c, lax::mul(c, a[1])};
        };
        auto r = flat::scan(body, Arrs{f32s(0.0)}, Arrs{x[0]});
        return Arrs{r.carry[0], r.ys[0]};
      },
      {A({5})});
  add("scan_reverse_unroll_consts",
      [](auto x) {
        Array w = x[1];
        Fn body = [w](std::span<const Array> a) {
          return Arrs{lax::add(lax::mul(a[0], w), a[1]), a[0]};
        };
        flat::ScanOptions o;
        o.reverse = true;
        o.unroll = 2;
        auto r = flat::scan(body, Arrs{x[2]}, Arrs{x[0]}, o);
        return Arrs{r.carry[0], r.ys[0]};
      },
      {A({4, 3}), A({3}), A({3})});
  add("cond",
      [](auto x) {
        Fn t = [](std::span<const Array> a) { return one(lax::sin(a[0])); };
        Fn f = [](std::span<const Array> a) { return one(lax::mul(a[0], a[1])); };
        return flat::cond(lax::gt(x[1], f32s(0.0)), t, f, Arrs{x[0], x[1]});
      },
      {A({3}), A({})});
  add("switch3",
      [](auto x) {
        std::vector<Fn> bs{[](std::span<const Array> a) { return one(lax::neg(a[0])); },
                           [](std::span<const Array> a) { return one(lax::exp(a[0])); },
                           [](std::span<const Array> a) { return one(lax::tanh(a[0])); }};
        return flat::switch_(x[1], bs, Arrs{x[0]});
      },
      {A({2}), A({}, I32)});
  add("while_loop",
      [](auto x) {
        Fn c = [](std::span<const Array> a) { return one(lax::lt(a[0], i32s(10))); };
        Fn b = [](std::span<const Array> a) {
          return Arrs{lax::add(a[0], i32s(1)), lax::mul(a[1], f32s(1.5))};
        };
        return flat::while_loop(c, b, Arrs{x[1], x[0]});
      },
      {A({3}), A({}, I32)});
  add("fori_nested_cond",
      [](auto x) {
        Fn body = [](std::span<const Array> a) {
          Fn t = [](std::span<const Array> b) { return one(lax::add(b[0], f32s(1.0))); };
          Fn f = [](std::span<const Array> b) { return one(lax::mul(b[0], f32s(2.0))); };
          return flat::cond(lax::eq(lax::rem(a[0], i32s(2)), i32s(0)), t, f, Arrs{a[1]});
        };
        return flat::fori_loop(i32s(0), i32s(4), body, Arrs{x[0]});
      },
      {A({2})});
  add("grad_scan",
      [](auto x) {
        Fn l = [](std::span<const Array> a) {
          Fn body = [](std::span<const Array> s) {
            Array c = lax::sin(lax::mul(s[0], s[1]));
            return Arrs{c, c};
          };
          auto r = flat::scan(body, Arrs{f32s(1.0)}, Arrs{a[0]});
          return one(lax::add(r.carry[0], lax::reduce_sum(r.ys[0], {0})));
        };
        return one(flat::value_and_grad(l, x, {0}).grads[0]);
      },
      {A({4})});
  add("grad_cond",
      [](auto x) {
        Fn l = [](std::span<const Array> a) {
          Fn t = [](std::span<const Array> b) { return one(lax::reduce_sum(lax::sin(b[0]), {0})); };
          Fn f = [](std::span<const Array> b) { return one(lax::reduce_sum(lax::exp(b[0]), {0})); };
          return flat::cond(lax::gt(lax::reduce_sum(a[0], {0}), f32s(0.0)), t, f, Arrs{a[0]});
        };
        return one(flat::value_and_grad(l, x, {0}).grads[0]);
      },
      {A({3})});
  add("vmap_while",
      [](auto x) {
        Fn f = [](std::span<const Array> a) {
          Fn c = [](std::span<const Array> s) { return one(lax::lt(s[0], f32s(5.0))); };
          Fn b = [](std::span<const Array> s) { return one(lax::add(s[0], f32s(1.0))); };
          return flat::while_loop(c, b, Arrs{a[0]});
        };
        std::vector<std::optional<int64_t>> ax{0};
        return flat::vmap(f, x, ax,
                          [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
      },
      {A({3})});
  // Weak-typed carries and operands: sub-jaxpr inputs take the operands' weak types.
  add("scan_weak_carry",
      [](auto x) {
        Fn body = [](std::span<const Array> a) {
          return Arrs{lax::add(a[0], f32s(1.0)), lax::mul(a[0], a[1])};
        };
        auto r = flat::scan(body, Arrs{tnp::weak_scalar(0.0)}, Arrs{x[0]});
        return Arrs{r.carry[0], r.ys[0]};
      },
      {A({3})});
  add("while_weak_counter",
      [](auto x) {
        Fn c = [](std::span<const Array> a) { return one(lax::lt(a[0], tnp::weak_scalar_int(4))); };
        Fn b = [](std::span<const Array> a) {
          return Arrs{lax::add(a[0], tnp::weak_scalar_int(1)), lax::sin(a[1])};
        };
        return flat::while_loop(c, b, Arrs{tnp::weak_scalar_int(0), x[0]});
      },
      {A({2})});
  add("cond_weak_operand",
      [](auto x) {
        Fn t = [](std::span<const Array> a) { return Arrs{lax::add(a[0], a[1])}; };
        Fn f = [](std::span<const Array> a) { return Arrs{lax::sub(a[0], a[1])}; };
        return flat::cond(x[1], t, f, Arrs{tnp::weak_scalar(2.0), tnp::weak_scalar(3.0)});
      },
      {A({2}), A({}, BOOL)});
  add("vmap_scan",
      [](auto x) {
        Fn f = [](std::span<const Array> a) {
          Fn body = [](std::span<const Array> s) {
            Array c = lax::add(lax::mul(s[0], f32s(0.9)), s[1]);
            return Arrs{c, lax::tanh(c)};
          };
          auto r = flat::scan(body, Arrs{f32s(0.0)}, Arrs{a[0]});
          return Arrs{r.carry[0], r.ys[0]};
        };
        std::vector<std::optional<int64_t>> ax{1};
        return flat::vmap(f, x, ax,
                          [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
      },
      {A({4, 3})});
  add("vmap_cond_batched_pred",
      [](auto x) {
        Fn f = [](std::span<const Array> a) {
          Fn t = [](std::span<const Array> b) { return one(lax::sin(b[0])); };
          Fn e = [](std::span<const Array> b) { return one(lax::cos(b[0])); };
          return flat::cond(lax::gt(a[0], f32s(0.0)), t, e, Arrs{a[0]});
        };
        std::vector<std::optional<int64_t>> ax{0};
        return flat::vmap(f, x, ax,
                          [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
      },
      {A({5})});
  add("jvp_cond_and_while",
      [](auto x) {
        Fn f = [](std::span<const Array> a) {
          Fn t = [](std::span<const Array> b) { return one(lax::mul(b[0], b[0])); };
          Fn e = [](std::span<const Array> b) { return one(lax::exp(b[0])); };
          Array y = flat::cond(lax::gt(lax::reduce_sum(a[0], {0}), f32s(0.0)), t, e, Arrs{a[0]})[0];
          Fn c = [](std::span<const Array> s) {
            return one(lax::lt(lax::reduce_sum(lax::abs(s[0]), {0}), f32s(10.0)));
          };
          Fn b = [](std::span<const Array> s) { return one(lax::mul(s[0], f32s(2.0))); };
          return flat::while_loop(c, b, Arrs{lax::add(y, f32s(0.1))});
        };
        return flat::jvp(f, Arrs{x[0]}, Arrs{x[1]}).second;
      },
      {A({3}), A({3})});
  add("grad_fori",
      [](auto x) {
        Fn l = [](std::span<const Array> a) {
          Fn body = [](std::span<const Array> s) { return one(lax::sin(lax::mul(s[1], s[1]))); };
          return one(lax::reduce_sum(flat::fori_loop(i32s(0), i32s(3), body, Arrs{a[0]})[0], {0}));
        };
        return one(flat::value_and_grad(l, x, {0}).grads[0]);
      },
      {A({2})});
  // Weak inputs (C++ scalars) flowing into sub-jaxprs: their inputs are weak too.
  cs.push_back({"cond_scan_weak_input", [] {
                  return make_jaxpr([](const Array& x) {
                    Fn t = [](std::span<const Array> a) { return one(lax::sin(a[0])); };
                    Fn f = [](std::span<const Array> a) { return one(lax::mul(a[0], a[0])); };
                    Array y = flat::cond(lax::gt(x, tnp::weak_scalar(0.0)), t, f, Arrs{x})[0];
                    Fn body = [](std::span<const Array> a) {
                      return Arrs{lax::add(a[0], tnp::weak_scalar(1.0)), a[0]};
                    };
                    return flat::scan(body, Arrs{y}, {}, {.length = 3}).ys[0];
                  })(1.0f);
                }});
  // The weak literals these pass into while/cond are the documented inexact case.
  for (Case& c : cs)
    if (c.name == "while_weak_counter" || c.name == "cond_weak_operand") c.exact = false;
  return cs;
}

TEST(JaxprParse, CorpusRoundTrips) {
  std::vector<Case> cs = corpus();
  EXPECT_GE(cs.size(), 60u);
  std::set<std::string> prims;
  for (const Case& c : cs) {
    ClosedJaxpr j;
    try {
      j = c.make();
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": building the program failed: " << e.what();
      continue;
    }
    round_trip(c.name, *j.jaxpr, c.exact);
    collect_prims(*j.jaxpr, prims);
  }
  // The corpus covers the primitive set, control flow included.
  for (const char* p : {"scan",
                        "cond",
                        "while",
                        "reduce",
                        "dot_general",
                        "dynamic_slice",
                        "dynamic_update_slice",
                        "select_n",
                        "argmax",
                        "argmin",
                        "pad",
                        "concatenate",
                        "rev",
                        "iota",
                        "reduce_precision",
                        "bitcast_convert_type",
                        "integer_pow",
                        "convert_element_type",
                        "transpose",
                        "reshape",
                        "broadcast_in_dim",
                        "cumsum",
                        "squeeze",
                        "slice",
                        "clamp"})
    EXPECT_TRUE(prims.count(p)) << p;
  EXPECT_GE(prims.size(), 80u);
}

// Dropped vars (`_`) and constvars: built by hand, as DCE and closures leave them.
TEST(JaxprParse, DroppedVarsAndConstvars) {
  ClosedJaxpr base = mk([](auto x) { return Arrs{lax::argmax(x[0], 0, I32)}; }, {A({3, 2})});
  ClosedJaxpr two = mk(
      [](auto x) {
        return lax::reduce({x[0], x[1]}, {f32s(0.0), i32s(0)},
                           [](const std::vector<Array>& a, const std::vector<Array>& v) {
                             return Arrs{lax::add(a[0], v[0]), lax::max(a[1], v[1])};
                           },
                           {0});
      },
      {A({4}), A({4}, I32)});
  Jaxpr j = *two.jaxpr;
  ASSERT_EQ(j.eqns.back().outvars.size(), 2u);
  j.eqns.back().outvars[1] = Var::dropped(j.eqns.back().outvars[1].aval());
  j.outvars.resize(1);
  round_trip("dropped", j);
  EXPECT_NE(to_string(j).find("_:i32[]"), std::string::npos);
  const Array c = random_array({3}, F32);
  ClosedJaxpr closed = make_jaxpr([c](const Array& x) { return tnp::add(tnp::sin(x), c); })(
      ShapeDtypeStruct{{3}, F32});
  ASSERT_EQ(closed.jaxpr->constvars.size(), 1u);
  round_trip("constvar", *closed.jaxpr);
  round_trip("argmax", *base.jaxpr);
}

// Thousands of vars: names such as `in`, `inf`, `nan`, `sin` and `neg` are both vars and
// keywords, literals or primitives; the reader tells them apart.
TEST(JaxprParse, VarNamesThatLookLikeKeywords) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ClosedJaxpr j = mk(
      [inf, nan](auto x) {
        Array y = x[0];
        for (int i = 0; i < 12500; ++i) {
          if (i % 3 == 0) y = lax::max(y, f32s(-inf));
          if (i % 3 == 1) y = lax::min(f32s(inf), y);
          if (i % 3 == 2) y = lax::add(y, (i % 2) ? f32s(nan) : x[0]);
        }
        return Arrs{y, x[0]};
      },
      {A({})});
  const std::string text = to_string(*j.jaxpr);
  for (const char* name : {"    in:f32[] =", " in (", "    inf:f32[] =", " nan:f32[]",
                           "    nan:f32[] =", "    sin:f32[] ="})
    EXPECT_NE(text.find(name), std::string::npos) << name;
  round_trip("keywords", *j.jaxpr);
}

TEST(JaxprParse, OpaqueCustomJvpIsAnError) {
  auto f = custom_jvp([](const Array& x) {
             return tnp::log1p(tnp::exp(x));
           }).defjvp([](auto primals, auto tangents) {
    auto [x] = primals;
    auto [t] = tangents;
    return std::make_pair(tnp::log1p(tnp::exp(x)), tnp::multiply(t, lax::logistic(x)));
  });
  ClosedJaxpr j = make_jaxpr(f)(ShapeDtypeStruct{{3}, F32});
  const std::string text = to_string(j);
  ASSERT_NE(text.find("custom_jvp_call"), std::string::npos) << text;
  EXPECT_ERROR(ValueError, parse_jaxpr(text), "is opaque");
  EXPECT_ERROR(ValueError, parse_jaxpr(text), "cannot be parsed");
}

// Hand-written texts in JAX's style, evaluated against the eager computation.
struct Handwritten {
  const char* text;
  std::vector<Aval> avals;
  Fn eager;
};

TEST(JaxprParse, HandwrittenTextsEvaluate) {
  const std::vector<Handwritten> hs = {
      {"{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul a b; d:f32[3] = sin c; "
       "e:f32[] = reduce_sum[axes=(0,)] d in (e, c) }",
       {A({3}), A({3})},
       [](auto x) {
         Array c = lax::mul(x[0], x[1]);
         return Arrs{lax::reduce_sum(lax::sin(c), {0}), c};
       }},
      {R"({ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=None
      preferred_element_type=float32
    ] a b
  in (c,) })",
       {A({2, 3}), A({3, 4})},
       [](auto x) {
         return one(lax::dot_general(x[0], x[1], {{1}, {0}, {}, {}}, F32));
       }},
      {R"({ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      lhs_batch_dimensions=()
      lhs_contracting_dimensions=(1,)
      rhs_batch_dimensions=()
      rhs_contracting_dimensions=(0,)
    ] a b
    d:f32[4,2] = transpose[permutation=(1, 0)] c
    e:bool[4,2] = gt d 0.0:f32[]
    f:f32[4,2] = broadcast_in_dim[broadcast_dimensions=() shape=(4, 2)] 0.0:f32[]
    g:f32[4,2] = select_n e f d
  in (g,) })",
       {A({2, 3}), A({3, 4})},
       [](auto x) {
         Array d = lax::transpose(lax::dot(x[0], x[1]), {1, 0});
         return one(tnp::where(tnp::greater(d, 0.0), d, 0.0));
       }},
      {"{ lambda ; a:f32[4] b:i32[]. let\n"
       "    c:f32[2] = dynamic_slice[slice_sizes=(2,)] a b\n"
       "    d:f32[2] = integer_pow[y=2] c\n"
       "    e:f32[6] = pad[padding_config=(1, 3, 0)] d -1.5:f32[]\n"
       "    f:f32[6] = cumsum[axis=0 reverse=True] e\n"
       "  in (f,) }",
       {A({4}), A({}, I32)},
       [](auto x) {
         Array d = lax::integer_pow(lax::dynamic_slice(x[0], {x[1]}, {2}), 2);
         return one(lax::cumsum(lax::pad(d, f32s(-1.5), {{1, 3, 0}}), 0, true));
       }},
      {"{ lambda ; a:f32[5]. let b:f32[] = reduce[computation={ lambda ; c:f32[] d:f32[]. let "
       "e:f32[] = max c d in (e,) } dimensions=(0,)] a -inf:f32[] in (b,) }",
       {A({5})},
       [](auto x) { return one(lax::reduce_max(x[0], {0})); }},
      {"{ lambda ; a:f32[3]. let\n"
       "    b:i32[] = argmax[axes=(0,) index_dtype=int32] a\n"
       "    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
       "    d:f32[3] = add a c\n"
       "    e:f32[3] = exp d\n"
       "  in (e, b) }",
       {A({3})},
       [](auto x) {
         Array b = lax::argmax(x[0], 0, I32);
         return Arrs{lax::exp(lax::add(x[0], lax::convert_element_type(b, F32))), b};
       }},
  };
  for (size_t k = 0; k < hs.size(); ++k) {
    SCOPED_TRACE(hs[k].text);
    Jaxpr j = parse_jaxpr(hs[k].text);
    for (int trial = 0; trial < 2; ++trial) {
      Arrs args;
      for (const Aval& a : hs[k].avals)
        args.push_back(a.dtype == I32 ? tnp::scalar(static_cast<double>(trial), I32)
                                      : random_array(a.shape, a.dtype));
      Arrs got = eval_jaxpr(j, {}, args);
      Arrs want = hs[k].eager(args);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].aval().str(), want[i].aval().str());
        EXPECT_EQ(compare(to_doubles(got[i]), to_doubles(want[i]), 1e-6, 1e-6), "");
      }
    }
    // The printed form of the parsed jaxpr parses to the same jaxpr.
    EXPECT_TRUE(structurally_equal(parse_jaxpr(to_string(j)), j));
  }
}

TEST(JaxprParse, HandwrittenMatchesStagedProgram) {
  // JAX prints this for jnp.sin(x) * 2.0 + 1 at f32[3]; the staged program is the same jaxpr.
  Jaxpr p = parse_jaxpr(
      "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = mul b 2.0:f32[]\n"
      "    d:f32[3] = add c 1.0:f32[]\n  in (d,) }");
  ClosedJaxpr j = make_jaxpr([](const Array& x) {
    return tnp::add(tnp::multiply(tnp::sin(x), 2.0), 1);
  })(ShapeDtypeStruct{{3}, F32});
  EXPECT_TRUE(structurally_equal(p, *j.jaxpr)) << to_string(*j.jaxpr);
}

TEST(JaxprParse, MalformedTextsNamePositions) {
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,)"),
               "1:50: expected '}' to close the jaxpr, got the end of the text");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sine a in (b,) }"),
               "1:37: unknown primitive 'sine'");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let\n  b:f32[3] = sin c\n in (b,) }"),
               "2:18: the variable 'c' is used before it is defined");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f33[3]. let in (a,) }"),
               "1:14: unknown dtype 'f33'");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3. let in (a,) }"),
               "1:19: expected ',' or ']' in a shape, got '.'");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }"),
               "1:26: the equation does not type-check: 'sin' produces f32[3] for output 0 but the "
               "text types it f32[4]");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let b:i32[3] = add a a in (b,) }"),
               "does not type-check");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[2] in (b,) }"),
               "1:47: a literal must have a scalar type");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:i32[3]. let b:i32[3] = mul a 2.5:i32[] in (b,) }"),
               "1:43: '2.5' is not an integer");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:u8[3]. let b:u8[3] = add a 300:u8[] in (b,) }"),
               "is not in range of its dtype");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let a:f32[3] = sin a in (a,) }"),
               "1:26: the variable 'a' is defined twice");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[] = reduce_sum[axes=(0,) a in (b,) }"),
               "expected '=' after the param name 'a'");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[] = reduce_sum[axes=(5,)] a in (b,) }"),
               "does not type-check");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a in b }"),
               "1:48: expected an equation or 'in (' and the outputs, got '}'");
  EXPECT_ERROR(ValueError, parse_jaxpr("lambda ; a:f32[3]. let in (a,) }"),
               "1:1: expected '{' to open a jaxpr");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let in (a,) } extra"),
               "1:36: expected the end of the text");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = custom_jvp_call[jvp=<custom_jvp "
                           "rule>] a in (b,) }"),
               "1:57: the param 'jvp' of 'custom_jvp_call' is opaque");
  EXPECT_ERROR(ValueError, parse_jaxpr(""), "1:1: expected '{'");
  EXPECT_ERROR(ValueError,
               parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] c:f32[3] = sin a in (b,) }"),
               "'sin' produces 1 outputs");
  EXPECT_ERROR(ValueError, parse_jaxpr("{ lambda ; a:f32[3]. let in (a,) }", {{A({4})}, {}}),
               "but the text says f32[3]");
}

TEST(JaxprParse, AmbiguousParamsResolvedByAbstractEval) {
  // `()` is an empty tuple of ints for broadcast_in_dim, an empty tuple of axes for reduce_sum.
  Jaxpr j = parse_jaxpr(
      "{ lambda ; a:f32[]. let b:f32[2] = broadcast_in_dim[broadcast_dimensions=() "
      "shape=(2,)] a; c:f32[2] = reduce_sum[axes=()] b in (c,) }");
  EXPECT_EQ(j.eqns[0].params.get_ints("broadcast_dimensions").size(), 0u);
  EXPECT_EQ(j.eqns[1].params.get_ints("axes").size(), 0u);
  // Params are kept sorted by key (they compare as dicts, like JAX's).
  EXPECT_EQ(j.eqns[0].params.items()[0].first, "broadcast_dimensions");
  // Weak types: a literal meeting a weak input is weak; sub-jaxpr inputs follow operands.
  Jaxpr w = parse_jaxpr("{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }",
                        {{Aval{{}, F32, true}}, {}});
  EXPECT_TRUE(atom_aval(w.eqns[0].invars[1]).weak_type);
  EXPECT_TRUE(w.eqns[0].outvars[0].aval().weak_type);
  Jaxpr s = parse_jaxpr("{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }");
  EXPECT_FALSE(atom_aval(s.eqns[0].invars[1]).weak_type);
}

}  // namespace
}  // namespace tessera
