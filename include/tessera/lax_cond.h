// lax::cond / switch_ / while_loop over pytrees, with JAX's API (written with the cond and
// while primitives through control_flow_flat.h):
//
//   Array y = lax::cond(x > 0, [](const Array& v) { return v * 2.0; },
//                       [](const Array& v) { return -v; }, x);
//   auto r = lax::switch_(i, std::vector<std::function<Array(Array)>>{f0, f1, f2}, x);
//   auto r = lax::switch_(i, std::make_tuple(f0, f1, f2), x);      // heterogeneous callables
//   auto [k, v] = lax::while_loop([](const auto& c) { return std::get<0>(c) < 10; },
//                                 [](const auto& c) { ... return c2; }, std::make_tuple(0, x));
//
// Branches receive the operands (any pytrees; scalars as rank-0 Arrays) and must return
// outputs of one structure and identical types; the result has that structure. pred is a bool
// scalar (numbers are compared with zero); switch's index is an integer scalar clamped into
// [0, branches - 1]. while_loop's cond_fun(carry) returns a bool scalar and body_fun(carry) a
// carry of init's structure and types. The functions are staged once (not called per step), so
// they must not branch on traced values with C++ control flow.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/control_flow_flat.h"
#include "tessera/errors.h"
#include "tessera/transforms.h"
#include "tessera/tree.h"

namespace tessera::lax {

namespace cond_detail {

// A scalar argument (Array, C++ number or bool) as an Array.
template <class P>
Array scalar_arg(const P& p, const char* op) {
  if constexpr (std::is_same_v<std::remove_cvref_t<P>, Array>) {
    return p;
  } else {
    std::vector<Array> leaves;
    TreeDef d = ::tessera::detail::flatten_into<std::remove_cvref_t<P>>(p, leaves);
    if (!d.is_leaf()) throw TypeError(op_message(op, "expected a scalar, got a pytree " + d.str()));
    return leaves[0];
  }
}

// The output type of branch F called on the operands.
template <class F, class ArgsTuple, size_t... K>
auto call_type(const F& f, std::index_sequence<K...> idx) {
  using R = std::remove_cvref_t<decltype(tessera::detail::call_all<F, ArgsTuple>(
      f, std::declval<const tessera::detail::FlatArgs&>(), std::span<const Array>(), idx))>;
  return std::type_identity<R>{};
}

// A branch as a flat function that records its output structure in *def and checks it against
// the first branch's (`first`, null for the first branch).
template <class F, class ArgsTuple, class Idx>
flat::Fun flat_branch(const F& f, const tessera::detail::FlatArgs& fa, TreeDef* def,
                      const TreeDef* first, const char* op, std::string what) {
  return [&f, &fa, def, first, op, what = std::move(what)](std::span<const Array> xs) {
    std::vector<Array> out = tessera::detail::flatten_out(
        tessera::detail::call_all<F, ArgsTuple>(f, fa, xs, Idx{}), *def);
    if (first != nullptr && *def != *first)
      throw TypeError(op_message(op, what + " must have same type structure, got " + first->str() +
                                         " and " + def->str() + "."));
    return out;
  };
}

}  // namespace cond_detail

// lax.cond(pred, true_fun, false_fun, *operands).
template <class P, class TF, class FF, class... Ops>
auto cond(const P& pred, const TF& true_fun, const FF& false_fun, const Ops&... operands) {
  using ArgsTuple = std::tuple<std::remove_cvref_t<Ops>...>;
  using Idx = std::index_sequence_for<Ops...>;
  using Raw = typename decltype(cond_detail::call_type<TF, ArgsTuple>(true_fun, Idx{}))::type;
  tessera::detail::FlatArgs fa = tessera::detail::flatten_args(operands...);
  TreeDef true_def, false_def;
  flat::Fun tf =
      cond_detail::flat_branch<TF, ArgsTuple, Idx>(true_fun, fa, &true_def, nullptr, "cond", "");
  flat::Fun ff = cond_detail::flat_branch<FF, ArgsTuple, Idx>(
      false_fun, fa, &false_def, &true_def, "cond", "true_fun and false_fun output");
  std::vector<Array> outs = flat::cond(cond_detail::scalar_arg(pred, "cond"), tf, ff, fa.leaves);
  return tessera::detail::unflatten_as<traced_t<Raw>>(true_def, outs);
}

// lax.switch(index, branches, *operands) with a std::vector (or std::array) of callables of
// one type (e.g. std::function).
template <class I, class Seq, class... Ops>
requires requires(const Seq& s) {
  s.size();
  s.begin();
  s[0];
}
auto switch_(const I& index, const Seq& branches, const Ops&... operands) {
  using F = std::remove_cvref_t<decltype(branches[0])>;
  using ArgsTuple = std::tuple<std::remove_cvref_t<Ops>...>;
  using Idx = std::index_sequence_for<Ops...>;
  using Raw = typename decltype(cond_detail::call_type<F, ArgsTuple>(std::declval<const F&>(),
                                                                     Idx{}))::type;
  tessera::detail::FlatArgs fa = tessera::detail::flatten_args(operands...);
  std::vector<TreeDef> defs(branches.size());
  std::vector<flat::Fun> funs;
  for (size_t k = 0; k < branches.size(); ++k)
    funs.push_back(cond_detail::flat_branch<F, ArgsTuple, Idx>(
        branches[k], fa, &defs[k], k == 0 ? nullptr : &defs[0], "switch",
        "branch 0 and " + std::to_string(k) + " outputs"));
  std::vector<Array> outs =
      flat::switch_(cond_detail::scalar_arg(index, "switch"), funs, fa.leaves);
  return tessera::detail::unflatten_as<traced_t<Raw>>(defs[0], outs);
}

// lax.switch with a std::tuple of callables (each its own type; e.g. distinct lambdas).
template <class I, class... Fs, class... Ops>
auto switch_(const I& index, const std::tuple<Fs...>& branches, const Ops&... operands) {
  static_assert(sizeof...(Fs) > 0, "lax::switch_: Empty branch sequence");
  using ArgsTuple = std::tuple<std::remove_cvref_t<Ops>...>;
  using Idx = std::index_sequence_for<Ops...>;
  using F0 = std::tuple_element_t<0, std::tuple<Fs...>>;
  using Raw =
      typename decltype(cond_detail::call_type<F0, ArgsTuple>(std::get<0>(branches), Idx{}))::type;
  tessera::detail::FlatArgs fa = tessera::detail::flatten_args(operands...);
  std::vector<TreeDef> defs(sizeof...(Fs));
  std::vector<flat::Fun> funs;
  [&]<size_t... K>(std::index_sequence<K...>) {
    (funs.push_back(
         cond_detail::flat_branch<std::tuple_element_t<K, std::tuple<Fs...>>, ArgsTuple, Idx>(
             std::get<K>(branches), fa, &defs[K], K == 0 ? nullptr : &defs[0], "switch",
             "branch 0 and " + std::to_string(K) + " outputs")),
     ...);
  }
  (std::index_sequence_for<Fs...>{});
  std::vector<Array> outs =
      flat::switch_(cond_detail::scalar_arg(index, "switch"), funs, fa.leaves);
  return tessera::detail::unflatten_as<traced_t<Raw>>(defs[0], outs);
}

// lax.while_loop(cond_fun, body_fun, init_val): the carry has init's structure (its scalars
// become Arrays).
template <class C, class B, class T>
traced_t<T> while_loop(const C& cond_fun, const B& body_fun, const T& init_val) {
  using Carry = traced_t<T>;
  std::vector<Array> leaves;
  TreeDef def = ::tessera::detail::flatten_into<std::remove_cvref_t<T>>(init_val, leaves);
  flat::Fun cf = [&](std::span<const Array> xs) {
    TreeDef d;
    std::vector<Array> out =
        tessera::detail::flatten_out(cond_fun(tessera::detail::unflatten_as<Carry>(def, xs)), d);
    if (!d.is_leaf())
      throw TypeError(op_message(
          "while_loop", "cond_fun must return a boolean scalar, but got pytree " + d.str() + "."));
    return out;
  };
  flat::Fun bf = [&](std::span<const Array> xs) {
    TreeDef d;
    std::vector<Array> out =
        tessera::detail::flatten_out(body_fun(tessera::detail::unflatten_as<Carry>(def, xs)), d);
    if (d != def)
      throw TypeError(
          op_message("while_loop", "body_fun output and input must have same type structure, got " +
                                       d.str() + " and " + def.str() + "."));
    return out;
  };
  std::vector<Array> outs = flat::while_loop(cf, bf, leaves);
  return tessera::detail::unflatten_as<Carry>(def, outs);
}

}  // namespace tessera::lax
