// jax.checkpoint / jax.remat, checkpoint_name and the rematerialization policies
// (jax.checkpoint_policies), over C++ pytrees:
//
//   auto f = tessera::checkpoint([](const Array& x) { return tnp::sin(tnp::sin(x)); });
//   auto g = tessera::grad(f)(x);   // the backward pass recomputes sin(x) instead of saving it
//
//   auto h = tessera::checkpoint(layer, tessera::checkpoint_policies::dots_saveable());
//   auto y = tessera::checkpoint_name(tnp::tanh(z), "act");   // a value policies can name
//
// The function is staged once into a `checkpoint` equation (JAX's remat primitive) holding its
// body. Evaluating it runs the body; differentiating it (grad, vjp, linearize) saves as residuals
// only the values the policy allows (plus the inputs) and recomputes the rest on the backward
// pass. The default policy (none) saves nothing but the inputs, as JAX's.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/transforms.h"

namespace tessera {

// A rematerialization policy: whether the outputs of one primitive application (given the
// primitive, its input avals and params) may be saved as residuals (JAX's policy(prim, *avals,
// **params)). Compared by identity when it is a param; printed by its name.
using PolicyFn = std::function<bool(const Primitive&, std::span<const Aval>, const Params&)>;
class RematPolicy final : public OpaqueParam {
 public:
  RematPolicy(std::string name, PolicyFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string str() const override { return name_; }
  const std::string& name() const { return name_; }
  // False without a predicate (the default policy, printed None: nothing is saveable).
  bool saveable(const Primitive& p, std::span<const Aval> in_avals, const Params& params) const {
    return fn_ && fn_(p, in_avals, params);
  }

 private:
  std::string name_;
  PolicyFn fn_;
};
using CheckpointPolicy = std::shared_ptr<const RematPolicy>;

namespace checkpoint_policies {
// Every value may be saved (what differentiation without checkpoint does).
CheckpointPolicy everything_saveable();
// Nothing but the inputs is saved (the default of checkpoint).
CheckpointPolicy nothing_saveable();
// The outputs of dot_general (matrix multiplies) are saved, nothing else.
CheckpointPolicy dots_saveable();
CheckpointPolicy checkpoint_dots();  // = dots_saveable
// The outputs of dot_generals without batch dimensions are saved, nothing else.
CheckpointPolicy dots_with_no_batch_dims_saveable();
CheckpointPolicy checkpoint_dots_with_no_batch_dims();  // = dots_with_no_batch_dims_saveable
// Only the values named (checkpoint_name) with one of `names`.
CheckpointPolicy save_only_these_names(std::vector<std::string> names);
// Only named values, except those named with one of `names`.
CheckpointPolicy save_any_names_but_these(std::vector<std::string> names);
// Anything, except the values named with one of `names`.
CheckpointPolicy save_anything_except_these_names(std::vector<std::string> names);
// What either policy saves.
CheckpointPolicy save_from_both_policies(CheckpointPolicy p1, CheckpointPolicy p2);
// A policy from a predicate (named for printing).
CheckpointPolicy custom(std::string name, PolicyFn fn);
}  // namespace checkpoint_policies

struct CheckpointOptions {
  CheckpointPolicy policy;  // null: nothing saveable
  bool prevent_cse = true;  // kept as a param (it matters to compilers, not to eager execution)
};

// One saved residual of a linearization (JAX's saved_residuals): its aval and where it comes
// from ("from the argument 0", "named 'act'", "output of sin", "from a constant").
struct SavedResidual {
  enum class Kind { kArgument, kNamed, kOutput, kConstant, kLiteral };
  Aval aval;
  Kind kind = Kind::kOutput;
  int64_t arg_index = -1;  // kArgument: the flat argument index
  std::string name;        // kNamed: the checkpoint_name; kOutput: the primitive's name
  std::string where;
};

namespace flat {
// f(args) staged as one `checkpoint` equation (closure constants become leading operands).
std::vector<Array> checkpoint(const Fun& f, std::span<const Array> args,
                              const CheckpointOptions& options = {});
// x, marked with `name` for the policies (a `name` equation; identity otherwise).
Array checkpoint_name(const Array& x, const std::string& name);
// The residuals that linearize(f, args) keeps (the consts of its linear jaxpr), with their
// sources.
std::vector<SavedResidual> saved_residuals(const Fun& f, std::span<const Array> args);
}  // namespace flat

template <class F>
class Checkpointed {
 public:
  Checkpointed(F f, CheckpointOptions options) : f_(std::move(f)), options_(std::move(options)) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
    using Idx = std::index_sequence_for<Args...>;
    detail::FlatArgs fa = detail::flatten_args(args...);
    using Raw = std::remove_cvref_t<decltype(detail::call_all<F, ArgsTuple>(
        f_, fa, std::span<const Array>(), Idx{}))>;
    TreeDef out_def;
    flat::Fun fun = [&](std::span<const Array> xs) {
      return detail::flatten_out(detail::call_all<F, ArgsTuple>(f_, fa, xs, Idx{}), out_def);
    };
    std::vector<Array> outs = flat::checkpoint(fun, fa.leaves, options_);
    return detail::unflatten_as<traced_t<Raw>>(out_def, outs);
  }

 private:
  F f_;
  CheckpointOptions options_;
};

// jax.checkpoint(f, policy=..., prevent_cse=...): f whose differentiation recomputes the values
// the policy does not save.
template <class F>
Checkpointed<F> checkpoint(F f, CheckpointPolicy policy = nullptr, bool prevent_cse = true) {
  return Checkpointed<F>(std::move(f), CheckpointOptions{std::move(policy), prevent_cse});
}
// jax.remat: an alias of checkpoint.
template <class F>
Checkpointed<F> remat(F f, CheckpointPolicy policy = nullptr, bool prevent_cse = true) {
  return checkpoint(std::move(f), std::move(policy), prevent_cse);
}

// jax.ad_checkpoint.checkpoint_name over a pytree: every leaf named `name`.
template <class T>
traced_t<T> checkpoint_name(const T& x, const std::string& name) {
  TreeDef def;
  std::vector<Array> leaves = detail::flatten_out(x, def);
  for (Array& l : leaves) l = flat::checkpoint_name(l, name);
  return detail::unflatten_as<traced_t<T>>(def, leaves);
}

// jax.ad_checkpoint.saved_residuals(f, *args): what grad/vjp of f at args saves.
template <class F, class... Args>
std::vector<SavedResidual> saved_residuals(const F& f, const Args&... args) {
  using ArgsTuple = std::tuple<std::remove_cvref_t<Args>...>;
  using Idx = std::index_sequence_for<Args...>;
  detail::FlatArgs fa = detail::flatten_args(args...);
  flat::Fun fun = [&](std::span<const Array> xs) {
    TreeDef d;
    return detail::flatten_out(detail::call_all<F, ArgsTuple>(f, fa, xs, Idx{}), d);
  };
  return flat::saved_residuals(fun, fa.leaves);
}

// Writes one line per saved residual, "f32[3] from the argument 0" (JAX's print_saved_residuals).
void print_saved_residuals(std::ostream& os, std::span<const SavedResidual> residuals);

}  // namespace tessera
