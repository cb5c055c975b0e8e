// Host callbacks that work under every transformation (JAX's jax.debug.callback /
// jax.debug.print, jax.pure_callback, jax.experimental.io_callback).
//
//   tessera::debug::print("x = {} and y = {}", x, y);            // NumPy's printing of arrays
//   tessera::debug::print("step {}", i, tessera::debug::ordered); // an ordered effect
//   tessera::debug::callback([](const Array& x) { log(x); }, x);
//   Array y = tessera::pure_callback([](const Array& x) { return host_fn(x); },
//                                    flat::abstract_placeholder(x.aval()), x,
//                                    VmapMethod::kSequential);
//
// A callback's host function always receives concrete arrays (its arguments' values at run
// time; under vmap one batch member at a time, or the batched values for the vectorized vmap
// methods of pure_callback), and runs when the staged program runs, not when it is traced.
// debug callbacks carry an effect, so they survive DCE; under grad/jvp they see the primal
// values, once. pure_callback results are checked against the declared shapes/dtypes.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/errors.h"
#include "tessera/tree.h"

namespace tessera {

// A host function over concrete arrays: the callback's flat operands in, its flat results out
// (debug callbacks return nothing).
using HostFun = std::function<std::vector<Array>(std::span<const Array>)>;

// How pure_callback behaves under vmap (JAX's vmap_method).
enum class VmapMethod {
  kUnspecified,         // vmap raises NotImplementedError (JAX's vmap_method=None)
  kSequential,          // one call per batch member, in order
  kSequentialUnrolled,  // the same, unrolled
  kExpandDims,          // one call; unbatched args get a leading axis of size 1
  kBroadcastAll,        // one call; unbatched args are broadcast to the batch size
  kLegacyVectorized,    // one call; unbatched args as they are (the removed vectorized=True)
};
// "sequential", ..., "legacy_vectorized"; "None" for kUnspecified.
const char* vmap_method_name(VmapMethod m);
// The inverse; "None" or "" give kUnspecified; anything else raises ValueError (JAX's message).
VmapMethod parse_vmap_method(std::string_view name);

namespace flat {
// The flat cores (the Python package calls these). `name` is how the callback prints in jaxprs.
// jax.debug.callback: fn(args) when the program runs; its results are ignored.
void debug_callback(HostFun fn, std::span<const Array> args, bool ordered = false,
                    std::string name = "debug_callback.<locals>._flat_callback");
// jax.pure_callback: results of the declared avals (weak_type is ignored).
std::vector<Array> pure_callback(HostFun fn, std::vector<Aval> result_avals,
                                 std::span<const Array> args,
                                 VmapMethod vmap_method = VmapMethod::kUnspecified,
                                 std::string name = "pure_callback");
// jax.experimental.io_callback.
std::vector<Array> io_callback(HostFun fn, std::vector<Aval> result_avals,
                               std::span<const Array> args, bool ordered = false,
                               std::string name = "io_callback");
}  // namespace flat

namespace debug {

// Pass as the last argument of debug::print / debug::callback for an ordered effect.
struct Ordered {};
inline constexpr Ordered ordered{};

// Where debug::print writes its lines (each ends with '\n'); the default (a null sink) writes
// to std::cout and flushes. Returns the previous sink. Thread-safe.
using PrintSink = std::function<void(const std::string&)>;
PrintSink set_print_sink(PrintSink sink);

// Formats concrete arrays into fmt: "{}" takes the next argument, "{0}" a given one, "{{" and
// "}}" are literal braces; arrays print as NumPy prints them (Array::str()). Raises ValueError
// for malformed formats, IndexError for a missing argument, and ValueError (JAX's message) for
// unused arguments.
std::string format(std::string_view fmt, std::span<const Array> args);
// Checks fmt against an argument count (the errors of format), without formatting.
void check_format(std::string_view fmt, size_t num_args);
// debug::print over flat arrays.
void print_flat(std::string fmt, std::span<const Array> args, bool ordered = false);

namespace detail {
template <class... Args>
constexpr bool last_is_ordered() {
  if constexpr (sizeof...(Args) == 0) {
    return false;
  } else {
    using Last = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>;
    return std::is_same_v<std::remove_cvref_t<Last>, Ordered>;
  }
}

template <class... Args>
constexpr size_t num_values() {
  return sizeof...(Args) - (last_is_ordered<Args...>() ? 1 : 0);
}

template <class F, class Tuple, size_t... I>
void callback_impl(F fn, const Tuple& all, std::index_sequence<I...>, bool ordered) {
  using Values = std::tuple<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>...>;
  Values values{std::get<I>(all)...};
  auto [leaves, def] = tree_flatten(values);
  HostFun host = [fn = std::move(fn), def = def](std::span<const Array> xs) {
    Values v = tree_unflatten<Values>(def, std::vector<Array>(xs.begin(), xs.end()));
    std::apply(fn, v);
    return std::vector<Array>{};
  };
  flat::debug_callback(std::move(host), leaves, ordered);
}

template <class Tuple, size_t... I>
std::vector<Array> print_args(const Tuple& all, std::index_sequence<I...>) {
  std::vector<Array> out;
  (out.push_back(numpy::asarray(numpy::ArrayLike(std::get<I>(all)))), ...);
  return out;
}
}  // namespace detail

// jax.debug.callback: fn(args...) with the arguments' values when the program runs (pytree
// arguments are rebuilt with their C++ types). Add debug::ordered last for an ordered effect.
template <class F, class... Args>
void callback(F fn, const Args&... args) {
  constexpr bool is_ordered = detail::last_is_ordered<Args...>();
  detail::callback_impl(std::move(fn), std::forward_as_tuple(args...),
                        std::make_index_sequence<detail::num_values<Args...>()>{}, is_ordered);
}

// jax.debug.print: formats the arguments (arrays or C++ scalars) into fmt when the program runs
// and writes the line to the print sink. Add debug::ordered last for an ordered effect.
template <class... Args>
void print(std::string fmt, const Args&... args) {
  constexpr bool is_ordered = detail::last_is_ordered<Args...>();
  std::vector<Array> xs = detail::print_args(
      std::forward_as_tuple(args...), std::make_index_sequence<detail::num_values<Args...>()>{});
  print_flat(std::move(fmt), xs, is_ordered);
}

}  // namespace debug

// jax.pure_callback over pytrees: fn(args) -> R, whose leaves must have the shapes and dtypes
// of result_shape_dtypes' leaves (concrete arrays or flat::abstract_placeholder(aval)).
template <Pytree R, Pytree A, class F>
R pure_callback(F fn, const R& result_shape_dtypes, const A& args,
                VmapMethod vmap_method = VmapMethod::kUnspecified) {
  auto [res_leaves, res_def] = tree_flatten(result_shape_dtypes);
  std::vector<Aval> avals;
  for (const Array& r : res_leaves) avals.push_back(r.aval());
  auto [leaves, def] = tree_flatten(args);
  HostFun host = [fn = std::move(fn), def = def](std::span<const Array> xs) {
    return tree_leaves(fn(tree_unflatten<A>(def, std::vector<Array>(xs.begin(), xs.end()))));
  };
  return tree_unflatten<R>(
      res_def, flat::pure_callback(std::move(host), std::move(avals), leaves, vmap_method));
}

// jax.experimental.io_callback over pytrees (as pure_callback, with an IO effect).
template <Pytree R, Pytree A, class F>
R io_callback(F fn, const R& result_shape_dtypes, const A& args, bool ordered = false) {
  auto [res_leaves, res_def] = tree_flatten(result_shape_dtypes);
  std::vector<Aval> avals;
  for (const Array& r : res_leaves) avals.push_back(r.aval());
  auto [leaves, def] = tree_flatten(args);
  HostFun host = [fn = std::move(fn), def = def](std::span<const Array> xs) {
    return tree_leaves(fn(tree_unflatten<A>(def, std::vector<Array>(xs.begin(), xs.end()))));
  };
  return tree_unflatten<R>(res_def,
                           flat::io_callback(std::move(host), std::move(avals), leaves, ordered));
}

}  // namespace tessera
