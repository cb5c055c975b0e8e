// jit: JAX's just-in-time compilation. jit(f)(args...) stages f once per abstract signature into
// a `jit` equation carrying a closed jaxpr (make_jaxpr(jit(f)) prints `jit[name=f jaxpr={...}]`)
// and runs it as a compiled executable; under other transformations (grad(jit(f)), vmap, a jit
// inside a scan body or another jit) the `jit` primitive's rules transform the call as one
// equation.
//
//   auto f = tessera::jit([](const Array& x, const Array& y) { return x * y + 1.0; });
//   Array z = f(x, y);          // traces and compiles
//   Array w = f(x2, y2);        // same shapes and dtypes: neither retraces nor recompiles
//
// The trace cache is keyed on the arguments' tree structure, avals (shape, dtype, weak type: a
// C++ scalar is a weakly typed argument) and jax_enable_x64. Values f captures are read when it
// is traced: arrays it closes over become constants passed to the executable as arguments, and a
// `[&]` capture that changes later is not seen by cached calls (as a Python closure over a
// global is not, in JAX). With jax_disable_jit, calls run f eagerly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/transforms.h"

namespace tessera {

struct JitOptions {
  std::string name = "fn";   // the equation's name (C++ lambdas have none)
  bool keep_unused = false;  // keep operands the program does not read (DCE drops them)
  bool inline_call = false;  // JAX's inline=True: staging inlines the call instead of binding it
};

namespace flat {

// The cache of one jitted function: one staged program per abstract signature.
class JitCache {
 public:
  explicit JitCache(JitOptions options);
  // The jitted call of `fun` on `args` (whose structure is in_def): on a miss fun is staged
  // (filling out_def while it runs) and the entry kept; on a hit out_def is the entry's.
  std::vector<Array> call(const TreeDef& in_def, std::span<const Array> args, const Fun& fun,
                          TreeDef& out_def);
  // The staged program of a signature (staging on a miss), as jit(f).trace(...).jaxpr.
  ClosedJaxpr trace(const TreeDef& in_def, std::span<const Array> args, const Fun& fun,
                    TreeDef& out_def);
  // How many times a function was staged (tests count retraces).
  int64_t trace_count() const;
  const JitOptions& options() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The number of executables the eager path has compiled so far (tests count recompiles).
int64_t jit_compile_count();
// The executable plan and the optimized program jit runs for a closed jaxpr (Compiled.as_text).
std::string compiled_text(const ClosedJaxpr& j);

}  // namespace flat

// The callable jit(f) returns.
template <class F>
class Jitted {
 public:
  Jitted(F f, JitOptions options)
      : f_(std::move(f)), cache_(std::make_shared<flat::JitCache>(std::move(options))) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    using Out = traced_t<detail::RawOut<F, ArgsTuple>>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    TreeDef out_def;
    flat::Fun fun = make_fun<ArgsTuple>(fa, out_def, std::index_sequence_for<Args...>{});
    std::vector<Array> outs = cache_->call(TreeDef::tuple(fa.defs), fa.leaves, fun, out_def);
    return detail::unflatten_as<Out>(out_def, outs);
  }
  // JAX's jit(f).trace(args...).jaxpr: the closed jaxpr of f on these arguments' signature.
  template <class... Args>
  ClosedJaxpr trace(const Args&... args) const {
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    TreeDef out_def;
    flat::Fun fun = make_fun<ArgsTuple>(fa, out_def, std::index_sequence_for<Args...>{});
    return cache_->trace(TreeDef::tuple(fa.defs), fa.leaves, fun, out_def);
  }
  int64_t trace_count() const { return cache_->trace_count(); }

 private:
  template <class ArgsTuple, size_t... K>
  flat::Fun make_fun(const detail::FlatArgs& fa, TreeDef& out_def,
                     std::index_sequence<K...> seq) const {
    return [this, &fa, &out_def, seq](std::span<const Array> xs) {
      auto targs = detail::unflatten_args<ArgsTuple>(fa, xs, seq);
      return detail::flatten_out(std::apply(f_, targs), out_def);
    };
  }
  F f_;
  std::shared_ptr<flat::JitCache> cache_;
};

// jit(f, options): see the top of this file.
template <class F>
Jitted<F> jit(F f, JitOptions options = {}) {
  return Jitted<F>(std::move(f), std::move(options));
}

}  // namespace tessera
