// The cond primitive (JAX's cond_p): operands [index (int32 scalar), ops...], param
// `branches` (a JaxprList of const-free jaxprs with identical input and output types). It runs
// branches[clamp(index, 0, n - 1)] on ops. lax.cond binds index = int32(pred) with branches
// (false_fun, true_fun); lax.switch clamps its index. Closure constants of all branches are
// hoisted to leading ops, every branch taking all of them (each ignores the others').
//
// Also here: helpers shared with the while primitive and the flat API (src/api/lax_cond.cpp):
// staging several functions into branches with common constants, JAX's type-check messages.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/array_errors.h"
#include "tessera/jaxpr.h"
#include "tessera/primitive.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::prims {

extern Primitive cond;

// Params {branches}.
Params cond_params(JaxprList branches);

// Stages each function on arguments of in_avals into a branch; every branch's invars are
// [consts of branch 0..., consts of branch 1..., ..., the arguments...] (a branch ignores the
// other branches' constants, as JAX's _initial_style_jaxprs_with_common_consts). Functions are
// staged in order (errors raised while staging function k name what came before).
struct StagedBranches {
  JaxprList branches;
  std::vector<Array> consts;
};
StagedBranches stage_branches(std::span<const flat::Fun> funs, std::span<const Aval> in_avals);

// ---- Type checks with JAX's messages (shared by cond, switch and while_loop). ----
// (shaped_array_str, JAX's str(ShapedArray), is core/array_errors.h's.)
// "[ShapedArray(bool[3])]".
std::string shaped_array_list_str(std::span<const Aval> avals);
// Shape and dtype equal (weak types ignored, as JAX's typematch).
bool typematch(const Aval& a, const Aval& b);
// TypeError "[op] <what> must have same type structure, got PyTreeDef([*]) and PyTreeDef([*, *])."
// when the counts differ, "[op] <what> must have identical types, got\n<diff>." when a leaf
// differs (JAX's _check_tree_and_avals over flat lists).
void check_same_types(std::string_view op, std::string_view what, std::span<const Aval> a,
                      std::span<const Aval> b);

// A jaxpr with new invars (same equations and outvars), interned.
std::shared_ptr<const Jaxpr> with_invars(const Jaxpr& j, std::vector<Var> invars);

void register_cond();

}  // namespace tessera::prims
