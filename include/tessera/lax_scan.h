// lax::scan / lax::fori_loop / lax::map over pytrees, with JAX's API, written over the flat core
// of control_flow_flat.h (the scan primitive):
//
//   // carry: any pytree; xs: a pytree of arrays scanned along their leading axis.
//   auto [h, hs] = lax::scan([&](const Array& h, const Array& x) {
//     Array h2 = tnp::tanh(tnp::matmul(W, h) + tnp::matmul(U, x));
//     return std::make_pair(h2, h2);
//   }, h0, xs);
//   // no xs: pass std::nullopt and the length.
//   auto [c, ys] = lax::scan(f, c0, std::nullopt, {.length = 5, .reverse = true});
//   auto acc = lax::fori_loop(0, 10, [](const Array& i, const Array& acc) { return acc + i; },
//   acc0); auto ys = lax::map([](const Array& x) { return tnp::sin(x); }, xs, /*batch_size=*/4);
//
// The body f(carry, x) returns a std::pair (or 2-tuple) {new carry, y}; the new carry must have
// the structure, shapes and dtypes of the initial carry. Scalars in pytrees are passed to the
// functions as rank-0 Arrays (their traced types).
#pragma once

#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/control_flow_flat.h"
#include "tessera/errors.h"
#include "tessera/transforms.h"

namespace tessera::lax {

using flat::ScanOptions;

namespace detail_scan {

template <class T>
constexpr bool is_no_xs = std::is_same_v<std::remove_cvref_t<T>, std::nullopt_t>;

// The traced type of an xs argument (std::nullopt stays std::nullopt_t).
template <class X>
struct XsTraced {
  using type = traced_t<X>;
};
template <>
struct XsTraced<std::nullopt_t> {
  using type = std::nullopt_t;
};

// A scalar or an Array as a rank-0 Array (scalars are weakly typed, as jnp.asarray).
template <class T>
Array as_array(const T& x) {
  if constexpr (std::is_same_v<std::remove_cvref_t<T>, Array>) {
    return x;
  } else {
    return tree_leaves(x).at(0);
  }
}

}  // namespace detail_scan

// lax.scan: returns {final carry, stacked ys}.
template <class F, class C, class X>
auto scan(const F& f, const C& init, const X& xs, const ScanOptions& options = {}) {
  using Carry = traced_t<C>;
  using XT = typename detail_scan::XsTraced<std::remove_cvref_t<X>>::type;
  using Raw = std::remove_cvref_t<std::invoke_result_t<const F&, const Carry&, const XT&>>;
  static_assert(detail::IsPairLike<Raw>::value,
                "scan: the body function must return a std::pair (or 2-tuple) {carry, y}");
  using Y = traced_t<std::tuple_element_t<1, Raw>>;

  std::vector<Array> init_leaves;
  const TreeDef init_def =
      ::tessera::detail::flatten_into<std::remove_cvref_t<C>>(init, init_leaves);
  std::vector<Array> xs_leaves;
  TreeDef xs_def;
  if constexpr (!detail_scan::is_no_xs<X>)
    xs_def = ::tessera::detail::flatten_into<std::remove_cvref_t<X>>(xs, xs_leaves);
  const size_t nc = init_leaves.size();
  TreeDef y_def;
  flat::Fun fun = [&](std::span<const Array> v) {
    Carry c = detail::unflatten_as<Carry>(init_def, v.first(nc));
    Raw r = [&] {
      if constexpr (detail_scan::is_no_xs<X>) {
        return f(c, std::nullopt);
      } else {
        return f(c, detail::unflatten_as<XT>(xs_def, v.subspan(nc)));
      }
    }();
    TreeDef c_def;
    std::vector<Array> out = detail::flatten_out(std::get<0>(r), c_def);
    if (c_def != init_def)
      throw TypeError(
          op_message("scan",
                     "scan body function carry input and carry output must have the same pytree "
                     "structure, but they differ: the input carry is a " +
                         init_def.str() + " but the output carry is a " + c_def.str()));
    std::vector<Array> ys = detail::flatten_out(std::get<1>(r), y_def);
    out.insert(out.end(), ys.begin(), ys.end());
    return out;
  };
  flat::ScanResult r = flat::scan(fun, init_leaves, xs_leaves, options);
  return std::make_pair(detail::unflatten_as<Carry>(init_def, r.carry),
                        detail::unflatten_as<Y>(y_def, r.ys));
}

// lax.fori_loop: body(i, carry) -> carry for i in [lower, upper). A scan (reverse-mode
// differentiable) when both bounds are concrete, a while_loop otherwise.
template <class L, class U, class F, class C>
traced_t<C> fori_loop(const L& lower, const U& upper, const F& body, const C& init,
                      int64_t unroll = 1) {
  using Carry = traced_t<C>;
  std::vector<Array> init_leaves;
  const TreeDef init_def =
      ::tessera::detail::flatten_into<std::remove_cvref_t<C>>(init, init_leaves);
  flat::Fun fun = [&](std::span<const Array> v) {
    Carry c = detail::unflatten_as<Carry>(init_def, v.subspan(1));
    TreeDef c_def;
    std::vector<Array> out = detail::flatten_out(body(v[0], c), c_def);
    if (c_def != init_def)
      throw TypeError(
          op_message("fori_loop",
                     "body_fun output and input must have identical types: the input carry is a " +
                         init_def.str() + " but the output carry is a " + c_def.str()));
    return out;
  };
  std::vector<Array> outs = flat::fori_loop(detail_scan::as_array(lower),
                                            detail_scan::as_array(upper), fun, init_leaves, unroll);
  return detail::unflatten_as<Carry>(init_def, outs);
}

// lax.map: f over the leading axis of every leaf of xs, as a scan (batch_size: chunks of
// vmapped steps, the remainder vmapped once more, as JAX).
template <class F, class X>
auto map(const F& f, const X& xs, std::optional<int64_t> batch_size = std::nullopt) {
  using XT = traced_t<X>;
  using Y = traced_t<std::remove_cvref_t<std::invoke_result_t<const F&, const XT&>>>;
  std::vector<Array> xs_leaves;
  const TreeDef xs_def = ::tessera::detail::flatten_into<std::remove_cvref_t<X>>(xs, xs_leaves);
  TreeDef y_def;
  flat::Fun fun = [&](std::span<const Array> v) {
    return detail::flatten_out(f(detail::unflatten_as<XT>(xs_def, v)), y_def);
  };
  std::vector<Array> ys = flat::map(fun, xs_leaves, batch_size);
  return detail::unflatten_as<Y>(y_def, ys);
}

}  // namespace tessera::lax
