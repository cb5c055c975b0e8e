// Function transformations with JAX's names and options, over C++ pytrees.
//
//   namespace tnp = tessera::numpy;
//   auto loss = [](const Params& p, const Batch& b) { ...; return tnp::mean(err * err); };
//   auto [value, grads] = tessera::value_and_grad(loss)(params, batch);  // grads: a Params
//   auto g01 = tessera::grad(f, tessera::argnums<0, 1>)(x, y);             // std::tuple
//   auto [g, aux] = tessera::grad(f, tessera::has_aux)(x);                 // f returns {loss, aux}
//   auto per_example = tessera::vmap(tessera::grad(f), {0, std::nullopt});
//   auto [y, t] = tessera::jvp(f, std::make_tuple(x), std::make_tuple(v));
//   auto [y2, f_vjp] = tessera::vjp(f, x);  auto [ct_x] = f_vjp(ct_y);
//   auto h = tessera::hessian(f)(x);
//   std::cout << tessera::make_jaxpr(f)(x);
//
// Functions receive their arguments as "traced" types: every scalar leaf (double, int ...)
// becomes an Array, so write them over Array (or `auto`). grad/vjp pass arguments that are not
// differentiated unchanged. Results are unflattened into the traced types.
//
// All of this flattens to the non-templated core in transforms_flat.h.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/jaxpr.h"
#include "tessera/transforms_flat.h"
#include "tessera/tree.h"

namespace tessera {

// ---- ShapeDtypeStruct: an abstract argument or result (make_jaxpr, eval_shape). ----
struct ShapeDtypeStruct {
  Shape shape;
  DType dtype = DType::kFloat32;
  bool weak_type = false;
  Aval aval() const { return Aval{shape, dtype, weak_type}; }
  bool operator==(const ShapeDtypeStruct& o) const = default;
  // "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
  std::string str() const;
};
std::ostream& operator<<(std::ostream& os, const ShapeDtypeStruct& s);

template <>
struct TreeTraits<ShapeDtypeStruct> {
  static TreeDef flatten(const ShapeDtypeStruct& s, std::vector<Array>& leaves) {
    leaves.push_back(flat::abstract_placeholder(s.aval()));
    return TreeDef::leaf();
  }
  static ShapeDtypeStruct unflatten(const TreeDef& node, LeafIter& it) {
    if (!node.is_leaf()) detail::throw_node_mismatch(node, type_str());
    const Aval& a = (it++)->aval();
    return ShapeDtypeStruct{a.shape, a.dtype, a.weak_type};
  }
  static std::string type_str() { return "*"; }
};

// ---- Options. ----
template <int... Is>
struct Argnums {
  static constexpr std::array<int, sizeof...(Is)> values{Is...};
};
// Which positional arguments to differentiate (default argnums<0>). One index: the result is
// that argument's type; several: a std::tuple.
template <int... Is>
inline constexpr Argnums<Is...> argnums{};
// The function returns {output, aux}; aux is returned beside the result, not differentiated.
struct HasAux {};
inline constexpr HasAux has_aux{};
// grad/value_and_grad accept integer and bool inputs; their gradients are float0 zeros.
struct AllowInt {};
inline constexpr AllowInt allow_int{};

// vmap's in_axes/out_axes: an int, None (std::nullopt), or a pytree prefix of them:
// {0, std::nullopt} for two arguments, VmapAxes::dict({{"w", 0}, {"b", std::nullopt}}) ...
class VmapAxes {
 public:
  VmapAxes(int axis) : leaf_(axis), is_leaf_(true) {}      // NOLINT(google-explicit-constructor)
  VmapAxes(int64_t axis) : leaf_(axis), is_leaf_(true) {}  // NOLINT
  VmapAxes(std::nullopt_t) : is_leaf_(true) {}             // NOLINT
  VmapAxes(std::optional<int64_t> axis) : leaf_(axis), is_leaf_(true) {}  // NOLINT
  // A tuple/list node: matches a tuple, list or registered struct with as many children.
  VmapAxes(std::initializer_list<VmapAxes> children) : children_(children) {}
  static VmapAxes list(std::vector<VmapAxes> children);
  static VmapAxes dict(std::map<std::string, VmapAxes> children);

  // One axis per leaf of `def`, of which this must be a prefix; ValueError showing both
  // otherwise. `what` names the option in messages ("in_axes").
  std::vector<std::optional<int64_t>> broadcast_to(const TreeDef& def, std::string_view what) const;
  std::string str() const;

 private:
  VmapAxes() = default;
  void broadcast_into(const TreeDef& def, std::string_view what, const TreeDef& whole,
                      std::vector<std::optional<int64_t>>& out) const;
  std::optional<int64_t> leaf_;
  bool is_leaf_ = false;
  std::vector<VmapAxes> children_;
  std::vector<std::string> keys_;  // dict nodes
};

struct VmapOptions {
  std::optional<int64_t> axis_size = std::nullopt;  // required when no argument is mapped
  std::string axis_name = "";                       // for collectives bound inside vmap
};

namespace detail {

// Rebuilds a C++ pytree type with every leaf type L replaced by LeafFn<L>::type, through the
// std containers that TreeTraits knows (registered structs are leaves here: they keep their
// type).
template <class T, template <class> class LeafFn>
struct MapLeafTypes {
  using type = typename LeafFn<T>::type;
};
template <class T, template <class> class F>
struct MapLeafTypes<std::vector<T>, F> {
  using type = std::vector<typename MapLeafTypes<T, F>::type>;
};
template <class T, size_t N, template <class> class F>
struct MapLeafTypes<std::array<T, N>, F> {
  using type = std::array<typename MapLeafTypes<T, F>::type, N>;
};
template <class... Ts, template <class> class F>
struct MapLeafTypes<std::tuple<Ts...>, F> {
  using type = std::tuple<typename MapLeafTypes<Ts, F>::type...>;
};
template <class A, class B, template <class> class F>
struct MapLeafTypes<std::pair<A, B>, F> {
  using type = std::pair<typename MapLeafTypes<A, F>::type, typename MapLeafTypes<B, F>::type>;
};
template <class T, template <class> class F>
struct MapLeafTypes<std::map<std::string, T>, F> {
  using type = std::map<std::string, typename MapLeafTypes<T, F>::type>;
};
template <class T, template <class> class F>
struct MapLeafTypes<std::optional<T>, F> {
  using type = std::optional<typename MapLeafTypes<T, F>::type>;
};

// Traced types: scalar leaves (and ShapeDtypeStruct placeholders) become Array.
template <class T>
struct ToTraced {
  using type = T;
};
template <class T>
requires(std::is_arithmetic_v<T>) struct ToTraced<T> {
  using type = Array;
};
template <>
struct ToTraced<ShapeDtypeStruct> {
  using type = Array;
};
template <class T>
using Traced = MapLeafTypes<T, ToTraced>;

}  // namespace detail

template <class T>
using traced_t = typename detail::Traced<std::remove_cvref_t<T>>::type;

namespace detail {

// eval_shape's results: Array leaves of std containers become ShapeDtypeStruct.
template <class T>
struct ToShaped {
  using type = T;
};
template <>
struct ToShaped<Array> {
  using type = ShapeDtypeStruct;
};
template <class T>
using Shaped = MapLeafTypes<T, ToShaped>;

template <class T>
struct IsPairLike : std::false_type {};
template <class A, class B>
struct IsPairLike<std::pair<A, B>> : std::true_type {};
template <class A, class B>
struct IsPairLike<std::tuple<A, B>> : std::true_type {};

template <class... Opts>
struct ArgnumsOf {
  using type = Argnums<0>;
};
template <int... Is, class... Rest>
struct ArgnumsOf<Argnums<Is...>, Rest...> {
  using type = Argnums<Is...>;
};
template <class First, class... Rest>
struct ArgnumsOf<First, Rest...> {
  using type = typename ArgnumsOf<Rest...>::type;
};
template <class T, class... Opts>
inline constexpr bool has_opt = (std::is_same_v<std::remove_cvref_t<Opts>, T> || ...);

template <class AN>
struct Sel;
template <int... Is>
struct Sel<Argnums<Is...>> {
  static constexpr size_t count = sizeof...(Is);
  template <size_t I>
  static constexpr bool has = ((Is == static_cast<int>(I)) || ...);
  static constexpr int max_index() {
    int m = -1;
    ((m = Is > m ? Is : m), ...);
    return m;
  }
};

// Flattens each argument; leaves concatenated, one TreeDef and leaf count per argument.
struct FlatArgs {
  std::vector<Array> leaves;
  std::vector<TreeDef> defs;
  std::vector<size_t> offsets;  // start of each argument's leaves (size = nargs + 1)
};
template <class... Args>
FlatArgs flatten_args(const Args&... args) {
  FlatArgs fa;
  fa.leaves.reserve(sizeof...(Args));  // one leaf per argument is the common case
  fa.defs.reserve(sizeof...(Args));
  fa.offsets.reserve(sizeof...(Args) + 1);
  fa.offsets.push_back(0);
  (
      [&] {
        using A = std::remove_cvref_t<Args>;
        if constexpr (Pytree<A>)
          fa.defs.push_back(TreeTraits<A>::flatten(args, fa.leaves));
        else
          ::tessera::detail::not_a_pytree<A>();
        fa.offsets.push_back(fa.leaves.size());
      }(),
      ...);
  return fa;
}
inline std::vector<Array> leaf_slice(std::span<const Array> xs, size_t a, size_t b) {
  return std::vector<Array>(xs.begin() + a, xs.begin() + b);
}
// Flattens a function result; records its structure.
template <class T>
std::vector<Array> flatten_out(const T& out, TreeDef& def) {
  using R = std::remove_cvref_t<T>;
  if constexpr (Pytree<R>) {
    std::vector<Array> leaves;
    def = TreeTraits<R>::flatten(out, leaves);
    return leaves;
  } else {
    ::tessera::detail::not_a_pytree<R>();
  }
}
template <class T>
T unflatten_as(const TreeDef& def, std::span<const Array> leaves) {
  if constexpr (Pytree<T>)
    return tree_unflatten<T>(def, std::vector<Array>(leaves.begin(), leaves.end()));
  else
    ::tessera::detail::not_a_pytree<T>();
}

// The leaves of the selected arguments (in argnums order) and where each starts.
template <class AN>
std::pair<std::vector<Array>, std::vector<size_t>> selected_leaves(const FlatArgs& fa) {
  std::vector<Array> out;
  std::vector<size_t> start(fa.defs.size(), 0);
  for (int i : AN::values) {
    start[i] = out.size();
    out.insert(out.end(), fa.leaves.begin() + fa.offsets[i], fa.leaves.begin() + fa.offsets[i + 1]);
  }
  return {std::move(out), std::move(start)};
}

// Calls f with each selected argument rebuilt (as its traced type) from `xs`, the selected
// leaves; the other arguments are passed as they are.
template <class AN, class F, class ArgsTuple, size_t... K>
decltype(auto) call_selected(const F& f, const ArgsTuple& args, const FlatArgs& fa,
                             const std::vector<size_t>& start, std::span<const Array> xs,
                             std::index_sequence<K...>) {
  auto pick = [&]<size_t I>(std::integral_constant<size_t, I>) -> decltype(auto) {
    using A = std::remove_cvref_t<std::tuple_element_t<I, ArgsTuple>>;
    if constexpr (Sel<AN>::template has<I>) {
      size_t count = fa.offsets[I + 1] - fa.offsets[I];
      return unflatten_as<traced_t<A>>(fa.defs[I], xs.subspan(start[I], count));
    } else {
      return static_cast<const A&>(std::get<I>(args));
    }
  };
  return f(pick(std::integral_constant<size_t, K>{})...);
}

// Calls f with every argument rebuilt as its traced type from `xs` (all leaves).
template <class F, class ArgsTuple, size_t... K>
decltype(auto) call_all(const F& f, const FlatArgs& fa, std::span<const Array> xs,
                        std::index_sequence<K...>) {
  return f(unflatten_as<traced_t<std::tuple_element_t<K, ArgsTuple>>>(
      fa.defs[K], xs.subspan(fa.offsets[K], fa.offsets[K + 1] - fa.offsets[K]))...);
}

// The gradient result for the selected arguments: one traced type, or a tuple of them.
template <class AN, class ArgsTuple>
struct GradResult;
template <int I, class ArgsTuple>
struct GradResult<Argnums<I>, ArgsTuple> {
  using type = traced_t<std::tuple_element_t<I, ArgsTuple>>;
};
template <int I0, int I1, int... Is, class ArgsTuple>
struct GradResult<Argnums<I0, I1, Is...>, ArgsTuple> {
  using type = std::tuple<traced_t<std::tuple_element_t<I0, ArgsTuple>>,
                          traced_t<std::tuple_element_t<I1, ArgsTuple>>,
                          traced_t<std::tuple_element_t<Is, ArgsTuple>>...>;
};

template <class AN, class ArgsTuple, size_t... J>
auto make_grad_result(const FlatArgs& fa, const std::vector<size_t>& start,
                      std::span<const Array> grads, std::index_sequence<J...>) {
  constexpr auto nums = AN::values;
  if constexpr (AN::values.size() == 1) {
    constexpr int I = nums[0];
    using A = std::tuple_element_t<I, ArgsTuple>;
    return unflatten_as<traced_t<A>>(fa.defs[I],
                                     grads.subspan(start[I], fa.offsets[I + 1] - fa.offsets[I]));
  } else {
    return typename GradResult<AN, ArgsTuple>::type(
        unflatten_as<traced_t<std::tuple_element_t<nums[J], ArgsTuple>>>(
            fa.defs[nums[J]],
            grads.subspan(start[nums[J]], fa.offsets[nums[J] + 1] - fa.offsets[nums[J]]))...);
  }
}

template <class AN, bool Aux, bool AllowIntV, class F, class... Args>
auto value_and_grad_impl(const F& f, std::string_view op, const Args&... args) {
  using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
  static_assert(Sel<AN>::max_index() < static_cast<int>(sizeof...(Args)),
                "argnums refers to an argument the call does not have");
  FlatArgs fa = flatten_args(args...);
  auto [xs0, start] = selected_leaves<AN>(fa);
  auto argref = std::forward_as_tuple(args...);
  using Raw = std::remove_cvref_t<decltype(call_selected<AN>(
      f, argref, fa, start, std::span<const Array>(), std::index_sequence_for<Args...>{}))>;
  TreeDef out_def, aux_def;
  size_t n_main = 0;
  flat::Fun fun = [&](std::span<const Array> xs) {
    Raw r = call_selected<AN>(f, argref, fa, start, xs, std::index_sequence_for<Args...>{});
    if constexpr (Aux) {
      static_assert(IsPairLike<Raw>::value,
                    "with has_aux the function must return a std::pair or 2-tuple {out, aux}");
      std::vector<Array> leaves = flatten_out(std::get<0>(r), out_def);
      n_main = leaves.size();
      std::vector<Array> aux = flatten_out(std::get<1>(r), aux_def);
      leaves.insert(leaves.end(), aux.begin(), aux.end());
      return leaves;
    } else {
      std::vector<Array> leaves = flatten_out(r, out_def);
      n_main = leaves.size();
      return leaves;
    }
  };
  flat::ValueAndGrad vg = flat::value_and_grad(fun, xs0, AllowIntV, op);
  if (n_main != 1)
    throw TypeError(op_message(op,
                               "gradient only defined for scalar-output functions; the "
                               "output has structure " +
                                   out_def.str()));
  auto grads = make_grad_result<AN, ArgsTuple>(fa, start, vg.grads,
                                               std::make_index_sequence<AN::values.size()>{});
  std::span<const Array> outs(vg.outs);
  if constexpr (Aux) {
    using O = traced_t<std::tuple_element_t<0, Raw>>;
    using X = traced_t<std::tuple_element_t<1, Raw>>;
    return std::make_pair(std::make_pair(unflatten_as<O>(out_def, outs.subspan(0, 1)),
                                         unflatten_as<X>(aux_def, outs.subspan(1))),
                          std::move(grads));
  } else {
    return std::make_pair(unflatten_as<traced_t<Raw>>(out_def, outs), std::move(grads));
  }
}

}  // namespace detail
}  // namespace tessera

namespace tessera {

// ---- grad and value_and_grad ----
// value_and_grad(f, opts...)(args...) -> {value, grads}; with has_aux -> {{value, aux}, grads}.
// opts: argnums<i...>, has_aux, allow_int (any order).
template <class F, class... Opts>
auto value_and_grad(F f, Opts...) {
  using AN = typename detail::ArgnumsOf<std::remove_cvref_t<Opts>...>::type;
  [[maybe_unused]] constexpr bool kAux = detail::has_opt<HasAux, Opts...>;
  [[maybe_unused]] constexpr bool kInt = detail::has_opt<AllowInt, Opts...>;
  return [f = std::move(f)](const auto&... args) {
    return detail::value_and_grad_impl<AN, kAux, kInt>(f, "value_and_grad", args...);
  };
}

// grad(f, opts...)(args...) -> grads (the type of the argument, or a tuple for several
// argnums); with has_aux -> {grads, aux}.
template <class F, class... Opts>
auto grad(F f, Opts...) {
  using AN = typename detail::ArgnumsOf<std::remove_cvref_t<Opts>...>::type;
  [[maybe_unused]] constexpr bool kAux = detail::has_opt<HasAux, Opts...>;
  [[maybe_unused]] constexpr bool kInt = detail::has_opt<AllowInt, Opts...>;
  return [f = std::move(f)](const auto&... args) {
    auto r = detail::value_and_grad_impl<AN, kAux, kInt>(f, "grad", args...);
    if constexpr (kAux) {
      return std::make_pair(std::move(r.second), std::move(r.first.second));
    } else {
      return std::move(r.second);
    }
  };
}

namespace detail {
template <class T>
struct IsTuple : std::false_type {};
template <class... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};
// jvp's primals/tangents: a std::tuple of arguments, or a single argument.
template <class P>
auto as_args_tuple(const P& p) {
  if constexpr (IsTuple<P>::value) {
    return p;
  } else {
    return std::tuple<P>(p);
  }
}
template <class Tuple>
FlatArgs flatten_tuple(const Tuple& t) {
  return std::apply([](const auto&... a) { return flatten_args(a...); }, t);
}
template <class Tuple, size_t... K>
auto unflatten_args(const FlatArgs& fa, std::span<const Array> leaves, std::index_sequence<K...>) {
  return std::tuple<traced_t<std::tuple_element_t<K, Tuple>>...>(
      unflatten_as<traced_t<std::tuple_element_t<K, Tuple>>>(
          fa.defs[K], leaves.subspan(fa.offsets[K], fa.offsets[K + 1] - fa.offsets[K]))...);
}
template <class F, class Tuple>
using RawOut = std::remove_cvref_t<decltype(std::apply(
    std::declval<const F&>(), std::declval<typename Traced<std::remove_cvref_t<Tuple>>::type>()))>;

template <bool Aux, class Raw>
struct MainOut {
  using type = Raw;
};
template <class Raw>
struct MainOut<true, Raw> {
  using type = std::tuple_element_t<0, Raw>;
};

template <bool Aux, class F, class... Args>
auto vjp_impl(const F& f, const Args&... args) {
  using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
  FlatArgs fa = flatten_args(args...);
  using Raw = RawOut<F, ArgsTuple>;
  auto out_def = std::make_shared<TreeDef>();
  TreeDef aux_def;
  size_t n_main = 0;
  flat::Fun fun = [&](std::span<const Array> xs) {
    auto targs = unflatten_args<ArgsTuple>(fa, xs, std::index_sequence_for<Args...>{});
    if constexpr (Aux) {
      static_assert(IsPairLike<Raw>::value,
                    "with has_aux the function must return a std::pair or 2-tuple {out, aux}");
      Raw r = std::apply(f, targs);
      std::vector<Array> leaves = flatten_out(std::get<0>(r), *out_def);
      n_main = leaves.size();
      std::vector<Array> aux = flatten_out(std::get<1>(r), aux_def);
      leaves.insert(leaves.end(), aux.begin(), aux.end());
      return leaves;
    } else {
      std::vector<Array> leaves = flatten_out(std::apply(f, targs), *out_def);
      n_main = leaves.size();
      return leaves;
    }
  };
  auto lin = std::make_shared<flat::Linearized>(flat::linearize(fun, fa.leaves));
  std::span<const Array> outs(lin->outs());
  using O = traced_t<typename MainOut<Aux, Raw>::type>;
  O out = unflatten_as<O>(*out_def, outs.subspan(0, n_main));
  size_t n_all = outs.size();
  auto f_vjp = [lin, fa, out_def, n_main, n_all](const O& ct) {
    TreeDef d;
    std::vector<Array> cts = flatten_out(ct, d);
    check_same_structure(*out_def, d, "vjp", "between the output and the cotangent");
    cts.resize(n_all);  // aux outputs get zero cotangents
    std::vector<Array> in = lin->vjp(cts);
    return unflatten_args<ArgsTuple>(fa, in, std::index_sequence_for<Args...>{});
  };
  if constexpr (Aux) {
    using X = traced_t<std::tuple_element_t<1, Raw>>;
    return std::make_tuple(std::move(out), std::move(f_vjp),
                           unflatten_as<X>(aux_def, outs.subspan(n_main)));
  } else {
    return std::make_pair(std::move(out), std::move(f_vjp));
  }
}

}  // namespace detail

// ---- jvp ----
// jvp(f, primals, tangents) -> {f(primals...), tangent of the output}. primals/tangents are
// std::tuples of the arguments (or a single argument), with equal structure.
template <class F, class P, class T>
auto jvp(const F& f, const P& primals, const T& tangents) {
  auto pt = detail::as_args_tuple(primals);
  auto tt = detail::as_args_tuple(tangents);
  using PT = decltype(pt);
  static_assert(std::tuple_size_v<PT> == std::tuple_size_v<decltype(tt)>,
                "jvp: primals and tangents must have the same number of arguments");
  constexpr size_t N = std::tuple_size_v<PT>;
  detail::FlatArgs fp = detail::flatten_tuple(pt);
  detail::FlatArgs ft = detail::flatten_tuple(tt);
  for (size_t i = 0; i < N; ++i)
    check_same_structure(fp.defs[i], ft.defs[i], "jvp",
                         "between primal and tangent argument " + std::to_string(i));
  using Out = detail::RawOut<F, PT>;
  TreeDef out_def;
  flat::Fun fun = [&](std::span<const Array> xs) {
    auto args = detail::unflatten_args<PT>(fp, xs, std::make_index_sequence<N>{});
    return detail::flatten_out(std::apply(f, args), out_def);
  };
  auto [po, to] = flat::jvp(fun, fp.leaves, ft.leaves);
  return std::make_pair(detail::unflatten_as<traced_t<Out>>(out_def, po),
                        detail::unflatten_as<traced_t<Out>>(out_def, to));
}

// ---- vjp ----
// vjp(f, args...) -> {f(args...), f_vjp} with f_vjp(ct) -> std::tuple of one cotangent per
// argument. vjp(f, has_aux, args...) -> {out, f_vjp, aux}.
template <class F, class... Args>
auto vjp(const F& f, const Args&... args) {
  if constexpr (sizeof...(Args) > 0 &&
                std::is_same_v<std::remove_cvref_t<std::tuple_element_t<0, std::tuple<Args...>>>,
                               HasAux>) {
    return [&]<size_t... K>(std::index_sequence<K...>) {
      auto all = std::forward_as_tuple(args...);
      return detail::vjp_impl<true>(f, std::get<K + 1>(all)...);
    }
    (std::make_index_sequence<sizeof...(Args) - 1>{});
  } else {
    return detail::vjp_impl<false>(f, args...);
  }
}

// ---- linearize ----
// linearize(f, args...) -> {f(args...), f_jvp} with f_jvp(tangents...) -> output tangent.
// The output is computed once, now; f_jvp only evaluates the linear map.
template <class F, class... Args>
auto linearize(const F& f, const Args&... args) {
  using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
  detail::FlatArgs fa = detail::flatten_args(args...);
  using Out = detail::RawOut<F, ArgsTuple>;
  TreeDef out_def;
  flat::Fun fun = [&](std::span<const Array> xs) {
    auto targs = detail::unflatten_args<ArgsTuple>(fa, xs, std::index_sequence_for<Args...>{});
    return detail::flatten_out(std::apply(f, targs), out_def);
  };
  auto lin = std::make_shared<flat::Linearized>(flat::linearize(fun, fa.leaves));
  auto out = detail::unflatten_as<traced_t<Out>>(out_def, lin->outs());
  auto f_jvp = [lin, fa, out_def](const traced_t<Args>&... tangents) {
    detail::FlatArgs ft = detail::flatten_args(tangents...);
    for (size_t i = 0; i < fa.defs.size(); ++i)
      check_same_structure(fa.defs[i], ft.defs[i], "linearize",
                           "between primal and tangent argument " + std::to_string(i));
    std::vector<Array> to = lin->jvp(ft.leaves);
    return detail::unflatten_as<traced_t<Out>>(out_def, to);
  };
  return std::make_pair(std::move(out), std::move(f_jvp));
}

// ---- linear_transpose ----
// linear_transpose(f, primals...) -> f_t with f_t(ct) -> std::tuple of one cotangent per
// argument; f must be linear in its arguments (primals give their shapes and dtypes).
template <class F, class... Args>
auto linear_transpose(const F& f, const Args&... primals) {
  using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
  detail::FlatArgs fa = detail::flatten_args(primals...);
  using Out = detail::RawOut<F, ArgsTuple>;
  auto out_def = std::make_shared<TreeDef>();
  flat::Fun fun = [&](std::span<const Array> xs) {
    auto targs = detail::unflatten_args<ArgsTuple>(fa, xs, std::index_sequence_for<Args...>{});
    return detail::flatten_out(std::apply(f, targs), *out_def);
  };
  auto ft = flat::linear_transpose(fun, fa.leaves);
  return [ft, fa, out_def](const traced_t<Out>& ct) {
    TreeDef d;
    std::vector<Array> cts = detail::flatten_out(ct, d);
    check_same_structure(*out_def, d, "linear_transpose", "in the cotangent");
    std::vector<Array> in = ft(cts);
    return detail::unflatten_args<ArgsTuple>(fa, in, std::index_sequence_for<Args...>{});
  };
}

// ---- vmap ----
// vmap(f, in_axes = 0, out_axes = 0, {axis_size, axis_name})(args...). in_axes is an int,
// std::nullopt, or a prefix of the arguments' tuple ({0, std::nullopt} for two arguments);
// out_axes likewise for the output.
template <class F>
auto vmap(F f, VmapAxes in_axes = 0, VmapAxes out_axes = 0, VmapOptions options = {}) {
  return [f = std::move(f), in_axes, out_axes, options](const auto&... args) {
    using ArgsTuple = std::tuple<std::remove_cvref_t<decltype(args)>...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    std::vector<TreeDef> children = fa.defs;
    TreeDef args_def = TreeDef::tuple(children);
    std::vector<std::optional<int64_t>> axes = in_axes.broadcast_to(args_def, "in_axes");
    using Out = detail::RawOut<F, ArgsTuple>;
    TreeDef out_def;
    flat::Fun fun = [&](std::span<const Array> xs) {
      auto targs =
          detail::unflatten_args<ArgsTuple>(fa, xs, std::make_index_sequence<sizeof...(args)>{});
      return detail::flatten_out(std::apply(f, targs), out_def);
    };
    std::vector<Array> outs = flat::vmap(
        fun, fa.leaves, axes, [&](size_t) { return out_axes.broadcast_to(out_def, "out_axes"); },
        options.axis_size, options.axis_name);
    return detail::unflatten_as<traced_t<Out>>(out_def, outs);
  };
}

// ---- Jacobians ----
namespace detail {
// The jacobian's C++ type: the output's structure when the input is one Array; the input's
// structure when the output is one Array.
template <class In, class Out>
struct JacResult {
  static_assert(std::is_same_v<In, Array> || std::is_same_v<Out, Array>,
                "jacfwd/jacrev/hessian in C++ need an Array input or an Array output (the "
                "jacobian of a pytree by a pytree is a pytree of pytrees); flatten one side "
                "with tree_flatten, or use tessera::flat::jacfwd");
  using type = std::conditional_t<std::is_same_v<In, Array>, Out, In>;
};
template <bool Fwd, class AN, class F, class... Args>
auto jacobian_impl(const F& f, const Args&... args) {
  static_assert(AN::values.size() == 1, "jacfwd/jacrev take a single argnums index");
  constexpr int I = AN::values[0];
  static_assert(I < static_cast<int>(sizeof...(Args)), "argnums is out of range");
  using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
  using In = traced_t<std::tuple_element_t<I, ArgsTuple>>;
  FlatArgs fa = flatten_args(args...);
  auto [xs0, start] = selected_leaves<AN>(fa);
  auto argref = std::forward_as_tuple(args...);
  using Raw = std::remove_cvref_t<decltype(call_selected<AN>(
      f, argref, fa, start, std::span<const Array>(), std::index_sequence_for<Args...>{}))>;
  using Out = traced_t<Raw>;
  TreeDef out_def;
  flat::Fun fun = [&](std::span<const Array> xs) {
    return flatten_out(
        call_selected<AN>(f, argref, fa, start, xs, std::index_sequence_for<Args...>{}), out_def);
  };
  std::vector<Array> jac = Fwd ? flat::jacfwd(fun, xs0) : flat::jacrev(fun, xs0);
  using R = typename JacResult<In, Out>::type;
  if constexpr (std::is_same_v<In, Array>) {
    return unflatten_as<R>(out_def, jac);
  } else {
    return unflatten_as<R>(fa.defs[I], jac);
  }
}
}  // namespace detail

// jacfwd(f, argnums<i>)(args...): forward-mode jacobian, shape out.shape + in.shape.
template <class F, class... Opts>
auto jacfwd(F f, Opts...) {
  using AN = typename detail::ArgnumsOf<std::remove_cvref_t<Opts>...>::type;
  return [f = std::move(f)](const auto&... args) {
    return detail::jacobian_impl<true, AN>(f, args...);
  };
}
// jacrev(f, argnums<i>)(args...): reverse-mode jacobian.
template <class F, class... Opts>
auto jacrev(F f, Opts...) {
  using AN = typename detail::ArgnumsOf<std::remove_cvref_t<Opts>...>::type;
  return [f = std::move(f)](const auto&... args) {
    return detail::jacobian_impl<false, AN>(f, args...);
  };
}
// hessian(f, argnums<i>) = jacfwd(jacrev(f, argnums<i>), argnums<i>).
template <class F, class... Opts>
auto hessian(F f, Opts... opts) {
  return jacfwd(jacrev(std::move(f), opts...), opts...);
}

// ---- Staging ----
// make_jaxpr(f)(args...) -> the ClosedJaxpr of f on abstract arguments with the avals of args
// (Arrays, scalars or ShapeDtypeStructs). Prints in JAX's format.
template <class F>
auto make_jaxpr(F f) {
  return [f = std::move(f)](const auto&... args) {
    using ArgsTuple = std::tuple<std::remove_cvref_t<decltype(args)>...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    TreeDef out_def;
    flat::Fun fun = [&](std::span<const Array> xs) {
      auto targs =
          detail::unflatten_args<ArgsTuple>(fa, xs, std::make_index_sequence<sizeof...(args)>{});
      return detail::flatten_out(std::apply(f, targs), out_def);
    };
    return flat::make_jaxpr(fun, fa.leaves);
  };
}

// eval_shape(f)(args...) -> the output's shapes and dtypes, computing nothing: Array leaves of
// the output's std containers become ShapeDtypeStruct (registered structs keep their type,
// with abstract Array leaves that have .shape() and .dtype() but no data).
template <class F>
auto eval_shape(F f) {
  return [f = std::move(f)](const auto&... args) {
    using ArgsTuple = std::tuple<std::remove_cvref_t<decltype(args)>...>;
    using Out = traced_t<detail::RawOut<F, ArgsTuple>>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    TreeDef out_def;
    flat::Fun fun = [&](std::span<const Array> xs) {
      auto targs =
          detail::unflatten_args<ArgsTuple>(fa, xs, std::make_index_sequence<sizeof...(args)>{});
      return detail::flatten_out(std::apply(f, targs), out_def);
    };
    ClosedJaxpr j = flat::make_jaxpr(fun, fa.leaves);
    std::vector<Array> outs;
    for (const Atom& a : j.jaxpr->outvars) outs.push_back(flat::abstract_placeholder(atom_aval(a)));
    return detail::unflatten_as<typename detail::Shaped<Out>::type>(out_def, outs);
  };
}

// ---- stop_gradient ----
// The identity on every leaf, whose derivative is zero (lax.stop_gradient).
Array stop_gradient(const Array& x);
template <Pytree T>
requires(!std::is_same_v<std::remove_cvref_t<T>, Array>) traced_t<T> stop_gradient(const T& tree) {
  auto [leaves, def] = tree_flatten(tree);
  for (Array& l : leaves) l = stop_gradient(l);
  return tree_unflatten<traced_t<T>>(def, leaves);
}

}  // namespace tessera
