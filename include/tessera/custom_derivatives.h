// custom_jvp and custom_vjp over C++ pytrees, with JAX's model:
//
//   auto log1pexp = tessera::custom_jvp([](const Array& x) { return tnp::log1p(tnp::exp(x)); })
//       .defjvp([](auto primals, auto tangents) {
//         auto [x] = primals;  auto [t] = tangents;
//         return std::make_pair(tnp::log1p(tnp::exp(x)), t * sigmoid(x));
//       });
//   auto clip = tessera::custom_vjp([](const Array& x) { return x; })
//       .defvjp([](const Array& x) { return std::make_pair(x, std::make_tuple()); },  // fwd
//               [](auto res, const Array& ct) { return std::make_tuple(clamp(ct)); });  // bwd
//
// defjvp/defvjp return the function with its rule (C++ cannot change an object's type in place,
// so unlike JAX's decorator they do not mutate). The jvp rule takes (primals tuple, tangents
// tuple) and returns {out, tangent_out}; fwd takes the arguments and returns {out, residuals}
// (any pytree); bwd takes (residuals, output cotangent) and returns a std::tuple with one
// cotangent per argument. Arguments are passed as their traced types (scalars become Array).
// Functions closing over traced values raise TypeError: pass such values as arguments.
#pragma once

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/custom_derivatives_flat.h"
#include "tessera/errors.h"
#include "tessera/transforms.h"

namespace tessera {

namespace detail {

struct NoRule {};

// The arguments rebuilt (as traced types) from all leaves xs, as a std::tuple.
template <class ArgsTuple, size_t... K>
auto unflatten_args_tuple(const FlatArgs& fa, std::span<const Array> xs,
                          std::index_sequence<K...>) {
  return std::make_tuple(unflatten_as<traced_t<std::tuple_element_t<K, ArgsTuple>>>(
      fa.defs[K], xs.subspan(fa.offsets[K], fa.offsets[K + 1] - fa.offsets[K]))...);
}

template <class T>
struct TupleSize : std::integral_constant<size_t, 1> {};
template <class... Ts>
struct TupleSize<std::tuple<Ts...>> : std::integral_constant<size_t, sizeof...(Ts)> {};

inline std::string tuple_structure_str(const std::vector<TreeDef>& defs) {
  return TreeDef::tuple(defs).str();
}

}  // namespace detail

template <class F, class J = detail::NoRule>
class CustomJvp {
 public:
  explicit CustomJvp(F f, J jvp = {}, bool symbolic_zeros = false)
      : f_(std::move(f)), jvp_(std::move(jvp)), symbolic_zeros_(symbolic_zeros) {}

  // The function with its JVP rule. symbolic_zeros: zero tangents reach the rule as undefined
  // Arrays instead of instantiated zeros.
  template <class J2>
  [[nodiscard]] CustomJvp<F, J2> defjvp(J2 jvp, bool symbolic_zeros = false) const {
    return CustomJvp<F, J2>(f_, std::move(jvp), symbolic_zeros);
  }

  template <class... Args>
  auto operator()(const Args&... args) const {
    static_assert(!std::is_same_v<J, detail::NoRule>,
                  "custom_jvp: call defjvp before calling the function");
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    using Idx = std::index_sequence_for<Args...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    using Raw = std::remove_cvref_t<decltype(detail::call_all<F, ArgsTuple>(
        f_, fa, std::span<const Array>(), Idx{}))>;
    TreeDef out_def;
    flat::Fun fun = [&](std::span<const Array> xs) {
      return detail::flatten_out(detail::call_all<F, ArgsTuple>(f_, fa, xs, Idx{}), out_def);
    };
    // The rules outlive this call inside staged equations: they keep the argument structure
    // only, never the argument values (tracers would make a reference cycle with their trace).
    const detail::FlatArgs meta{{}, fa.defs, fa.offsets};
    flat::JvpFun jf = [fa = meta, jvp = jvp_](std::span<const Array> ps,
                                              std::span<const Array> ts) {
      auto r = jvp(detail::unflatten_args_tuple<ArgsTuple>(fa, ps, Idx{}),
                   detail::unflatten_args_tuple<ArgsTuple>(fa, ts, Idx{}));
      TreeDef d1, d2;
      std::vector<Array> po = detail::flatten_out(std::get<0>(r), d1);
      std::vector<Array> to = detail::flatten_out(std::get<1>(r), d2);
      if (d1.str() != d2.str())
        throw TypeError(op_message("custom_jvp",
                                   "Custom JVP rule must produce primal and tangent outputs "
                                   "with equal container (pytree) structures, but got " +
                                       d1.str() + " and " + d2.str() + " respectively."));
      return std::make_pair(std::move(po), std::move(to));
    };
    std::vector<Array> outs = flat::custom_jvp_call(fun, jf, fa.leaves, symbolic_zeros_);
    return detail::unflatten_as<traced_t<Raw>>(out_def, outs);
  }

 private:
  F f_;
  J jvp_;
  bool symbolic_zeros_;
};

template <class F, class Fwd = detail::NoRule, class Bwd = detail::NoRule>
class CustomVjp {
 public:
  explicit CustomVjp(F f, Fwd fwd = {}, Bwd bwd = {})
      : f_(std::move(f)), fwd_(std::move(fwd)), bwd_(std::move(bwd)) {}

  template <class Fwd2, class Bwd2>
  [[nodiscard]] CustomVjp<F, Fwd2, Bwd2> defvjp(Fwd2 fwd, Bwd2 bwd) const {
    return CustomVjp<F, Fwd2, Bwd2>(f_, std::move(fwd), std::move(bwd));
  }

  template <class... Args>
  auto operator()(const Args&... args) const {
    static_assert(!std::is_same_v<Fwd, detail::NoRule>,
                  "custom_vjp: call defvjp before calling the function");
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    using Idx = std::index_sequence_for<Args...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    using Raw = std::remove_cvref_t<decltype(detail::call_all<F, ArgsTuple>(
        f_, fa, std::span<const Array>(), Idx{}))>;
    using FwdRaw = std::remove_cvref_t<decltype(detail::call_all<Fwd, ArgsTuple>(
        fwd_, fa, std::span<const Array>(), Idx{}))>;
    using Out = traced_t<Raw>;
    using Res = traced_t<std::tuple_element_t<1, FwdRaw>>;
    auto out_def = std::make_shared<TreeDef>();
    auto res_def = std::make_shared<TreeDef>();
    flat::Fun fun = [&](std::span<const Array> xs) {
      return detail::flatten_out(detail::call_all<F, ArgsTuple>(f_, fa, xs, Idx{}), *out_def);
    };
    // As in CustomJvp: the rules keep the argument structure only, never the values.
    const detail::FlatArgs meta{{}, fa.defs, fa.offsets};
    flat::FwdFun ffwd = [fa = meta, fwd = fwd_, res_def](std::span<const Array> xs) {
      FwdRaw r = detail::call_all<Fwd, ArgsTuple>(fwd, fa, xs, Idx{});
      TreeDef od;
      std::vector<Array> outs = detail::flatten_out(std::get<0>(r), od);
      std::vector<Array> res = detail::flatten_out(std::get<1>(r), *res_def);
      return std::make_pair(std::move(outs), std::move(res));
    };
    flat::BwdFun fbwd = [fa = meta, bwd = bwd_, res_def, out_def](std::span<const Array> res,
                                                                  std::span<const Array> cts) {
      auto r =
          bwd(detail::unflatten_as<Res>(*res_def, res), detail::unflatten_as<Out>(*out_def, cts));
      using R = std::remove_cvref_t<decltype(r)>;
      std::vector<Array> leaves;
      std::vector<TreeDef> defs;
      if constexpr (detail::IsTuple<R>::value) {
        std::apply(
            [&](const auto&... c) {
              (defs.push_back(
                   ::tessera::detail::flatten_into<std::remove_cvref_t<decltype(c)>>(c, leaves)),
               ...);
            },
            r);
      } else {
        defs.push_back(::tessera::detail::flatten_into<R>(r, leaves));
      }
      bool ok = defs.size() == fa.defs.size();
      for (size_t i = 0; ok && i < defs.size(); ++i)
        ok = defs[i].num_leaves() == fa.defs[i].num_leaves();
      if (!ok)
        throw TypeError(
            op_message("custom_vjp",
                       "Custom VJP bwd rule must produce an output with the same container (tuple) "
                       "structure as the args tuple of the primal function, and in particular must "
                       "produce a tuple of length equal to the number of arguments to the primal "
                       "function, but got bwd output structure " +
                           detail::tuple_structure_str(defs) + " for primal input structure " +
                           detail::tuple_structure_str(fa.defs) + "."));
      return leaves;
    };
    std::vector<Array> outs = flat::custom_vjp_call(fun, ffwd, fbwd, fa.leaves);
    return detail::unflatten_as<Out>(*out_def, outs);
  }

 private:
  F f_;
  Fwd fwd_;
  Bwd bwd_;
};

// custom_jvp(f).defjvp(rule): f with a custom forward-mode derivative (see above).
template <class F>
CustomJvp<F> custom_jvp(F f) {
  return CustomJvp<F>(std::move(f));
}

// custom_vjp(f).defvjp(fwd, bwd): f with a custom reverse-mode derivative (see above).
template <class F>
CustomVjp<F> custom_vjp(F f) {
  return CustomVjp<F>(std::move(f));
}

}  // namespace tessera
