// The jaxpr IR: typed SSA in JAX's form. A Jaxpr has constvars and invars (binders),
// equations `outs = prim[params] ins` and outvars; sub-jaxprs appear as interned params.
// Printed in JAX's exact text format so that anyone who knows JAX reads it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/primitive.h"

namespace tessera {

// A variable: a unique id (from a global counter) and an aval. Compared by id; cheap to copy.
// A dropped var is a binder whose value is never read (JAX's DropVar, printed `_`).
class Var {
 public:
  Var() = default;  // an invalid var (id 0); only for containers
  explicit Var(Aval aval);
  // A fresh dropped binder of this aval.
  static Var dropped(Aval aval);

  uint64_t id() const { return id_; }
  bool valid() const { return id_ != 0; }
  bool is_dropped() const { return dropped_; }
  const Aval& aval() const { return *aval_; }

  bool operator==(const Var& o) const { return id_ == o.id_; }
  bool operator<(const Var& o) const { return id_ < o.id_; }

 private:
  uint64_t id_ = 0;
  bool dropped_ = false;
  std::shared_ptr<const Aval> aval_;
};

// A concrete rank-0 value inlined into an equation (printed `2.0:f32[]`, `1:i32[]`,
// `True:bool[]`).
class Literal {
 public:
  // `value` must be concrete; the verifier checks that it has rank 0.
  explicit Literal(Array value);
  const Array& value() const { return value_; }
  const Aval& aval() const { return value_.aval(); }
  // The value as JAX prints it: "2.0", "1", "True", "nan", "inf".
  std::string value_str() const;
  // Same aval and same bits.
  bool operator==(const Literal& o) const;
  size_t hash() const;

 private:
  Array value_;
};

using Atom = std::variant<Var, Literal>;
const Aval& atom_aval(const Atom& a);
inline bool is_var(const Atom& a) { return std::holds_alternative<Var>(a); }

// A side effect of an equation (JAX's Effect): equations with effects survive DCE; ordered
// effects also fix their relative order.
struct Effect {
  std::string name;
  bool ordered = false;
  bool operator==(const Effect& o) const { return name == o.name && ordered == o.ordered; }
  bool operator<(const Effect& o) const {
    return name != o.name ? name < o.name : ordered < o.ordered;
  }
  size_t hash() const;
};
// A sorted set without duplicates (usually empty or one element).
using Effects = std::vector<Effect>;
Effects effects_union(const Effects& a, const Effects& b);
// Sorts and removes duplicates.
Effects make_effects(std::vector<Effect> effs);

// The fixed effects every equation of `p` carries (kept beside the Primitive so that tests and
// user primitives can set them without a rule); the params-dependent ones come from
// Primitive::effects. Whoever builds an equation for `p` attaches both.
void set_primitive_effects(const Primitive& p, Effects effs);
Effects primitive_effects(const Primitive& p);

struct JaxprEqn {
  std::vector<Atom> invars;
  std::vector<Var> outvars;  // dropped vars for outputs that are never read
  const Primitive* primitive = nullptr;
  Params params;
  Effects effects;
};

struct Jaxpr {
  std::vector<Var> constvars;
  std::vector<Var> invars;
  std::vector<Atom> outvars;
  std::vector<JaxprEqn> eqns;
  Effects effects;

  // Structural hash, invariant under renaming of vars (alpha-equivalence). Interned jaxprs
  // carry it precomputed; others compute it on each call.
  size_t hash() const;
  size_t cached_hash = 0;  // set by intern(); 0 = not cached
};

// Structural equality up to renaming of vars (binders matched in order of definition);
// sub-jaxpr params compare by identity (they are interned), literals by value.
bool structurally_equal(const Jaxpr& a, const Jaxpr& b);
size_t structural_hash(const Jaxpr& j);

// Returns the one shared instance of every structurally equal jaxpr (a global table, weakly
// held): identical sub-jaxprs share one pointer, so params compare them by identity.
std::shared_ptr<const Jaxpr> intern(Jaxpr j);

// A jaxpr with its constants bound (one Array per constvar).
struct ClosedJaxpr {
  std::shared_ptr<const Jaxpr> jaxpr;
  std::vector<Array> consts;
};

// ---- Printing (JAX's format and line breaking, width 80). ----
std::string to_string(const Jaxpr& j, int width = 80);
std::string to_string(const ClosedJaxpr& j, int width = 80);
// One equation of `j`, with the names it has when the whole of `j` is printed.
std::string eqn_to_string(const Jaxpr& j, size_t eqn_index);
std::ostream& operator<<(std::ostream& os, const Jaxpr& j);
std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j);
// JAX's variable names: 0 -> "a", 25 -> "z", 26 -> "ba", 27 -> "bb".
std::string var_name_for_index(uint64_t index);
// The names to_string(j) gives the vars of j and of its sub-jaxprs, by Var::id.
std::unordered_map<uint64_t, std::string> var_names(const Jaxpr& j);

// ---- Checking. ----
// Throws InternalError ("internal error in ir/verifier: ...", naming the equation) unless
// every var is defined once before use, each equation's outvar avals equal its primitive's
// abstract_eval on its input avals, outvars are defined, literals have rank 0, and equation
// effects are declared by the jaxpr. Recurses into sub-jaxpr params.
void verify(const Jaxpr& j);

// ---- Evaluation. ----
// Evaluates `j` by binding each equation's primitive through the current trace (eagerly at
// the eval trace, staged or transformed under others). consts bind constvars, args invars.
std::vector<Array> eval_jaxpr(const Jaxpr& j, std::span<const Array> consts,
                              std::span<const Array> args);
std::vector<Array> eval_jaxpr(const ClosedJaxpr& j, std::span<const Array> args);

}  // namespace tessera
