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
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/debug_info.h"
#include "tessera/transforms.h"

namespace tessera {

struct JitOptions {
  std::string name = "fn";   // the equation's name (C++ lambdas have none)
  bool keep_unused = false;  // keep operands the program does not read (DCE drops them)
  bool inline_call = false;  // JAX's inline=True: staging inlines the call instead of binding it
  // JAX's donate_argnums: the arrays of these arguments are donated to the call and deleted
  // after it (using one afterwards raises "Array has been deleted"). Negative counts from the end.
  std::vector<int> donate_argnums = {};
};

namespace flat {

// What a miss stages for error messages (called only on a miss). Without one, the function is
// named by JitOptions::name and the arguments by their key paths ("args[0]", "args[1]['w']").
using DebugInfoFn = std::function<DebugInfo()>;

// The cache of one jitted function: one staged program per abstract signature.
class JitCache {
 public:
  explicit JitCache(JitOptions options);
  // The jitted call of `fun` on `args` (whose structure is in_def): on a miss fun is staged
  // (filling out_def while it runs) and the entry kept; on a hit out_def is the entry's.
  // `donated` (one flag per arg, or empty) marks donated arguments: the equation's
  // donated_invars say so, and after the call each flagged concrete argument is deleted (an
  // output that is the same array gets a handle of its own).
  std::vector<Array> call(const TreeDef& in_def, std::span<const Array> args, const Fun& fun,
                          TreeDef& out_def, const DebugInfoFn& debug = nullptr,
                          const std::vector<bool>& donated = {});
  // The staged program of a signature (staging on a miss), as jit(f).trace(...).jaxpr.
  ClosedJaxpr trace(const TreeDef& in_def, std::span<const Array> args, const Fun& fun,
                    TreeDef& out_def, const DebugInfoFn& debug = nullptr);
  // How many times a function was staged (tests count retraces).
  int64_t trace_count() const;
  const JitOptions& options() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// One flag per leaf of the arguments (whose structures are arg_defs): whether its argument is
// in options.donate_argnums (empty when none is).
std::vector<bool> donation_mask(const JitOptions& options, const std::vector<TreeDef>& arg_defs);
// The number of executables the eager path has compiled so far (tests count recompiles).
int64_t jit_compile_count();
// XLA's cost analysis of the optimized program of a closed jaxpr, with JAX's keys: "flops" and
// "bytes accessed" (compiler::cost_analysis says how each equation and fused kernel is
// counted), plus "<kernel> flops" / "<kernel> bytes accessed" per fused kernel ("fusion.0").
std::map<std::string, double> cost_analysis(const ClosedJaxpr& j);
// JAX's TypeError when a Compiled is called with another structure or other avals than it was
// compiled for ("Argument types differ from the types for which this computation was compiled").
void check_compiled_signature(const TreeDef& compiled_def, std::span<const Aval> compiled_avals,
                              const TreeDef& def, std::span<const Array> args);
// The executable plan and the optimized program jit runs for a closed jaxpr (Compiled.as_text).
std::string compiled_text(const ClosedJaxpr& j);

}  // namespace flat

template <class F>
class Jitted;

// JAX's stages.Compiled: jit(f).lower(args...).compile(). Callable on arguments of the
// signature it was compiled for (others raise TypeError); runs through the jitted function's
// cache (the same entry, so no retrace). as_text(): the optimized program and executable plan.
template <class F>
class Compiled {
 public:
  Compiled(Jitted<F> jitted, TreeDef in_def, std::vector<Aval> in_avals, ClosedJaxpr jaxpr)
      : jitted_(std::move(jitted)),
        in_def_(std::move(in_def)),
        in_avals_(std::move(in_avals)),
        jaxpr_(std::move(jaxpr)),
        text_(flat::compiled_text(jaxpr_)) {}
  template <class... Args>
  auto operator()(const Args&... args) const {
    detail::FlatArgs fa = detail::flatten_args(args...);
    flat::check_compiled_signature(in_def_, in_avals_, TreeDef::tuple(fa.defs), fa.leaves);
    return jitted_(args...);
  }
  const std::string& as_text() const { return text_; }
  std::map<std::string, double> cost_analysis() const { return flat::cost_analysis(jaxpr_); }
  const std::vector<Aval>& in_avals() const { return in_avals_; }

 private:
  Jitted<F> jitted_;
  TreeDef in_def_;
  std::vector<Aval> in_avals_;
  ClosedJaxpr jaxpr_;
  std::string text_;
};

// JAX's stages.Lowered: jit(f).lower(args...). as_text(): the staged program before the
// compiler's passes; compile() -> Compiled.
template <class F>
class Lowered {
 public:
  Lowered(Jitted<F> jitted, TreeDef in_def, std::vector<Aval> in_avals, ClosedJaxpr jaxpr)
      : jitted_(std::move(jitted)),
        in_def_(std::move(in_def)),
        in_avals_(std::move(in_avals)),
        jaxpr_(std::move(jaxpr)) {}
  std::string as_text() const { return to_string(jaxpr_); }
  const ClosedJaxpr& jaxpr() const { return jaxpr_; }
  Compiled<F> compile() const { return Compiled<F>(jitted_, in_def_, in_avals_, jaxpr_); }

 private:
  Jitted<F> jitted_;
  TreeDef in_def_;
  std::vector<Aval> in_avals_;
  ClosedJaxpr jaxpr_;
};

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
    const FunState st{this, &fa, &out_def};
    flat::Fun fun = make_fun<ArgsTuple>(st, std::index_sequence_for<Args...>{});
    std::vector<Array> outs =
        cache_->call(TreeDef::tuple(fa.defs), fa.leaves, fun, out_def, nullptr,
                     flat::donation_mask(cache_->options(), fa.defs));
    return detail::unflatten_as<Out>(out_def, outs);
  }
  // JAX's jit(f).trace(args...).jaxpr: the closed jaxpr of f on these arguments' signature.
  template <class... Args>
  ClosedJaxpr trace(const Args&... args) const {
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    TreeDef out_def;
    const FunState st{this, &fa, &out_def};
    flat::Fun fun = make_fun<ArgsTuple>(st, std::index_sequence_for<Args...>{});
    return cache_->trace(TreeDef::tuple(fa.defs), fa.leaves, fun, out_def);
  }
  // JAX's jit(f).lower(args...): the Lowered program of this signature (arguments may be
  // abstract_placeholder arrays, JAX's ShapeDtypeStructs).
  template <class... Args>
  Lowered<F> lower(const Args&... args) const {
    detail::FlatArgs fa = detail::flatten_args(args...);
    TreeDef out_def;
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    const FunState st{this, &fa, &out_def};
    flat::Fun fun = make_fun<ArgsTuple>(st, std::index_sequence_for<Args...>{});
    TreeDef in_def = TreeDef::tuple(fa.defs);
    ClosedJaxpr j = cache_->trace(in_def, fa.leaves, fun, out_def);
    std::vector<Aval> avals;
    for (const Array& a : fa.leaves) avals.push_back(a.aval());
    return Lowered<F>(*this, std::move(in_def), std::move(avals), std::move(j));
  }
  int64_t trace_count() const { return cache_->trace_count(); }

 private:
  // What the traced function reads, in the caller's frame: the function object captures one
  // pointer to it, so it is stored inline (no allocation on a cached call).
  struct FunState {
    const Jitted* self;
    const detail::FlatArgs* fa;
    TreeDef* out_def;
  };
  template <class ArgsTuple, size_t... K>
  static flat::Fun make_fun(const FunState& st, std::index_sequence<K...>) {
    return [s = &st](std::span<const Array> xs) {
      auto targs = detail::unflatten_args<ArgsTuple>(*s->fa, xs, std::index_sequence<K...>{});
      return detail::flatten_out(std::apply(s->self->f_, targs), *s->out_def);
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
