// lax.custom_linear_solve and lax.custom_root (JAX's control_flow/solves.py), over flat lists of
// arrays (tessera::flat, what the Python package calls) and over C++ pytrees (tessera::lax):
//
//   // x = A⁻¹ b through a factorization, differentiated implicitly (forward and reverse mode):
//   Array x = lax::custom_linear_solve(
//       [&](const Array& v) { return numpy::matmul(a, v); }, b,
//       [&](const auto& /*matvec*/, const Array& r) { return lu_solve(lu, perm, r, 0); },
//       [&](const auto& /*vecmat*/, const Array& r) { return lu_solve(lu, perm, r, 1); });
//   // A root of f with implicit derivatives in what f closes over:
//   Array r = lax::custom_root(f, x0, newton, [](const auto& g, const Array& y) {
//     return y / g(Array(1.0)); });
//
// custom_linear_solve(matvec, b, solve, transpose_solve, symmetric, has_aux): b is any pytree
// of arrays; matvec maps a b-shaped pytree to one of the same structure, shapes and dtypes
// (linear, differentiable); solve(matvec, b) returns x with matvec(x) = b (never differentiated:
// the values it closes over carry no derivative). One primitive, custom_linear_solve, carries
// the four functions as jaxprs: its JVP is ẋ = solve(ḃ − Ȧ·x), its transpose solves the
// transposed system with transpose_solve(vecmat, ·), vecmat being matvec's transpose, so
// jvp, vjp, grad, linearize and their compositions all work; without transpose_solve (and not
// symmetric) reverse mode raises JAX's TypeError. symmetric: vecmat = matvec, and
// transpose_solve defaults to solve. has_aux: solve (and transpose_solve) return {x, aux}; the
// result is {x, aux}, aux carrying no derivative.
//
// custom_root(f, initial_guess, solve, tangent_solve, has_aux): solve(f, initial_guess) returns
// a root of f (never differentiated); its derivatives in the values f closes over come from the
// implicit function theorem, ẋ = −tangent_solve(∂f/∂x, ∂f/∂θ·θ̇), where tangent_solve(g, y)
// solves the linear g(x) = y (y / g(1.0) for a scalar; a linear solve with g's Jacobian for
// a vector). Reverse mode transposes tangent_solve, so it must be linear in y (it is, for both).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/errors.h"
#include "tessera/flat_fun.h"
#include "tessera/transforms.h"
#include "tessera/tree.h"

namespace tessera::flat {

// solve(matvec, b) / transpose_solve(vecmat, b) / custom_root's solve(f, guess) and
// tangent_solve(g, y): the result's leaves (b's or the guess's count), then aux leaves.
using SolveFun = std::function<std::vector<Array>(const Fun& op, std::span<const Array> b)>;

struct LinearSolveOptions {
  bool symmetric = false;
  bool has_aux = false;
};

// x's leaves, then the aux leaves when has_aux. An empty transpose_solve means none.
// Errors (JAX's): ValueError "matvec() output shapes must match b, got [...] and [...]" (also
// for solve and transpose_solve); TypeError when a function returns another leaf count or
// other dtypes than b.
std::vector<Array> custom_linear_solve(const Fun& matvec, std::span<const Array> b,
                                       const SolveFun& solve, const SolveFun& transpose_solve = {},
                                       const LinearSolveOptions& options = {});

// The root's leaves, then the aux leaves when has_aux.
std::vector<Array> custom_root(const Fun& f, std::span<const Array> initial_guess,
                               const SolveFun& solve, const SolveFun& tangent_solve,
                               bool has_aux = false);

}  // namespace tessera::flat

namespace tessera::lax {

using flat::LinearSolveOptions;

namespace solve_detail {

template <class T>
std::vector<Array> flatten_checked(const T& x, const TreeDef& want, const char* fn,
                                   const char* expected) {
  auto [leaves, def] = tessera::tree_flatten(x);
  if (def != want)
    throw TypeError(std::string(std::string_view(expected) == "b" ? "[custom_linear_solve] "
                                                                  : "[custom_root] ") +
                    fn + "() output pytree structure must match " + expected + ", got " +
                    def.str() + " and " + want.str() + ".");
  return leaves;
}

// A flat operator as a function of T.
template <class T>
std::function<T(const T&)> typed_op(const flat::Fun& op, const TreeDef& def) {
  return [op, def](const T& v) {
    auto [leaves, d] = tessera::tree_flatten(v);
    return tessera::tree_unflatten<T>(def, op(leaves));
  };
}

template <class T>
flat::Fun flat_op(const std::function<T(const T&)>& f, const TreeDef& def, const char* fn,
                  const char* expected) {
  return [f, def, fn, expected](std::span<const Array> xs) {
    T v = tessera::tree_unflatten<T>(def, std::vector<Array>(xs.begin(), xs.end()));
    return flatten_checked(f(v), def, fn, expected);
  };
}

// A typed solve(op, b) -> T (or {T, Aux} when Aux is not void) as a flat SolveFun; the aux
// structure is recorded in *aux_def.
template <class T, class Aux, class S>
flat::SolveFun flat_solve(const S& solve, const TreeDef& def, const char* fn, const char* expected,
                          TreeDef* aux_def) {
  return [&solve, def, fn, expected, aux_def](const flat::Fun& op, std::span<const Array> b) {
    T v = tessera::tree_unflatten<T>(def, std::vector<Array>(b.begin(), b.end()));
    std::function<T(const T&)> typed = typed_op<T>(op, def);
    if constexpr (std::is_void_v<Aux>) {
      (void)aux_def;  // no aux structure to record
      return flatten_checked(solve(typed, v), def, fn, expected);
    } else {
      auto [x, aux] = solve(typed, v);
      std::vector<Array> out = flatten_checked(x, def, fn, expected);
      auto [al, ad] = tessera::tree_flatten(aux);
      *aux_def = ad;
      out.insert(out.end(), al.begin(), al.end());
      return out;
    }
  };
}

template <class B, class Aux, class MV, class S, class TS>
auto linear_solve(const MV& matvec, const B& b, const S& solve, const TS* transpose_solve,
                  const LinearSolveOptions& opts) {
  auto [leaves, def] = tessera::tree_flatten(b);
  std::function<B(const B&)> mv = [&matvec](const B& v) -> B { return matvec(v); };
  TreeDef aux_def;
  flat::SolveFun ts;
  if (transpose_solve != nullptr)
    ts = flat_solve<B, Aux>(*transpose_solve, def, "transpose_solve", "b", &aux_def);
  LinearSolveOptions o = opts;
  o.has_aux = !std::is_void_v<Aux>;
  std::vector<Array> out =
      flat::custom_linear_solve(flat_op<B>(mv, def, "matvec", "b"), leaves,
                                flat_solve<B, Aux>(solve, def, "solve", "b", &aux_def), ts, o);
  const size_t n = leaves.size();
  B x = tessera::tree_unflatten<B>(def, std::vector<Array>(out.begin(), out.begin() + n));
  if constexpr (std::is_void_v<Aux>) {
    return x;
  } else {
    return std::pair<B, Aux>(
        std::move(x),
        tessera::tree_unflatten<Aux>(aux_def, std::vector<Array>(out.begin() + n, out.end())));
  }
}

template <class B, class S>
using SolveResult = std::remove_cvref_t<
    std::invoke_result_t<const S&, const std::function<B(const B&)>&, const B&>>;

template <class T>
concept NotOptions = !std::is_same_v<std::remove_cvref_t<T>, LinearSolveOptions>;

template <class X, class Aux, class F, class S, class TS>
auto root(const F& f, const X& guess, const S& solve, const TS& tangent_solve) {
  auto [leaves, def] = tessera::tree_flatten(guess);
  std::function<X(const X&)> ft = [&f](const X& v) -> X { return f(v); };
  TreeDef aux_def;
  std::vector<Array> out = flat::custom_root(
      flat_op<X>(ft, def, "f", "initial_guess"), leaves,
      flat_solve<X, Aux>(solve, def, "solve", "initial_guess", &aux_def),
      flat_solve<X, void>(tangent_solve, def, "tangent_solve", "x", nullptr), !std::is_void_v<Aux>);
  const size_t n = leaves.size();
  X x = tessera::tree_unflatten<X>(def, std::vector<Array>(out.begin(), out.begin() + n));
  if constexpr (std::is_void_v<Aux>) {
    return x;
  } else {
    return std::pair<X, Aux>(
        std::move(x),
        tessera::tree_unflatten<Aux>(aux_def, std::vector<Array>(out.begin() + n, out.end())));
  }
}

}  // namespace solve_detail

// custom_linear_solve(matvec, b, solve[, options]): no transpose_solve (reverse mode needs
// options.symmetric). solve is called as solve(matvec, b) with matvec a std::function<B(B)>.
template <class MV, class B, class S>
B custom_linear_solve(const MV& matvec, const B& b, const S& solve,
                      const LinearSolveOptions& options = {}) {
  const S* ts = options.symmetric ? &solve : nullptr;
  return solve_detail::linear_solve<B, void>(matvec, b, solve, ts, options);
}

// custom_linear_solve(matvec, b, solve, transpose_solve[, options]).
template <class MV, class B, class S, solve_detail::NotOptions TS>
B custom_linear_solve(const MV& matvec, const B& b, const S& solve, const TS& transpose_solve,
                      const LinearSolveOptions& options = {}) {
  return solve_detail::linear_solve<B, void>(matvec, b, solve, &transpose_solve, options);
}

// has_aux: solve (and transpose_solve) return {x, aux}; the result is {x, aux}.
template <class MV, class B, class S>
auto custom_linear_solve(HasAux, const MV& matvec, const B& b, const S& solve,
                         const LinearSolveOptions& options = {}) {
  using R = solve_detail::SolveResult<B, S>;
  const S* ts = options.symmetric ? &solve : nullptr;
  return solve_detail::linear_solve<B, typename R::second_type>(matvec, b, solve, ts, options);
}
template <class MV, class B, class S, solve_detail::NotOptions TS>
auto custom_linear_solve(HasAux, const MV& matvec, const B& b, const S& solve,
                         const TS& transpose_solve, const LinearSolveOptions& options = {}) {
  using R = solve_detail::SolveResult<B, S>;
  return solve_detail::linear_solve<B, typename R::second_type>(matvec, b, solve, &transpose_solve,
                                                                options);
}

// custom_root(f, initial_guess, solve, tangent_solve): solve(f, guess) and tangent_solve(g, y)
// are called with f and g as std::function<X(X)>.
template <class F, class X, class S, class TS>
X custom_root(const F& f, const X& initial_guess, const S& solve, const TS& tangent_solve) {
  return solve_detail::root<X, void>(f, initial_guess, solve, tangent_solve);
}
// has_aux: solve returns {root, aux}; the result is {root, aux}.
template <class F, class X, class S, class TS>
auto custom_root(HasAux, const F& f, const X& initial_guess, const S& solve,
                 const TS& tangent_solve) {
  using R = solve_detail::SolveResult<X, S>;
  return solve_detail::root<X, typename R::second_type>(f, initial_guess, solve, tangent_solve);
}

}  // namespace tessera::lax
