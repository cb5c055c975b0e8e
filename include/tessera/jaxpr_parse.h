// Reading jaxprs back from JAX's text format (the inverse of to_string in jaxpr.h):
//
//   Jaxpr j = parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }");
//
// Any layout is accepted (flat or broken over lines, as the printer or JAX writes it). Each
// equation's primitive is looked up by name and its output types are recomputed with the
// primitive's abstract_eval and checked against the printed ones; param values are read back
// into their ParamValue alternatives (True/False bool, integers int64, floats double, tuples of
// ints, dtype names DType, `{ lambda ...}` sub-jaxprs, tuples of sub-jaxprs, None, other words
// strings), consulting abstract_eval where the text is ambiguous. Opaque params (custom rules,
// callbacks, printed `<...>`) cannot be read back: ValueError. Weak types are not printed:
// equation outputs get theirs from abstract_eval, literals take the weak type of the equation's
// inputs of their dtype, sub-jaxpr inputs that of the operands they receive, and the jaxpr's
// own inputs are strong unless ParseJaxprOptions gives their types. Errors are ValueErrors
// "[parse_jaxpr] line:column: ..." naming what was expected. The result passes verify().
//
// JAX's own printed forms are read too: dot_general's
// `dimension_numbers=(([1], [0]), ([], []))` becomes the four *_dimensions params, nested int
// tuples such as pad's `padding_config=((1, 2, 0),)` are flattened where that reading type-checks,
// and params JAX prints at their default that Tessera does not model (`precision=None`,
// `out_sharding=None`, `preferred_element_type=None`, ...) are dropped.
//
// Limits (any text gets a ValueError rather than a crash, an overflow or a hang): at most
// kMaxParseNesting nested jaxprs and param tuples; types must pass check_shape (rank <= 64,
// dims >= 0, at most 2^62 bytes); integers must fit in int64. Parsing takes time near-linear in
// the text's size: each sub-jaxpr is elaborated once per reading of its inputs' weak types.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "tessera/jaxpr.h"

namespace tessera {

// The deepest nesting of `{ lambda ...}` jaxprs and `( ... )` param tuples the parser reads,
// each one level (the outer jaxpr is level 1; a cond's branches are level 3, inside the
// branches tuple). Deeper text raises ValueError "[parse_jaxpr] line:col: ... deeper than 100".
inline constexpr int kMaxParseNesting = 100;

struct ParseJaxprOptions {
  // The avals of the jaxpr's invars / constvars when the caller knows them (empty: read from
  // the text, strong). Shapes and dtypes must match the text; the weak flags are taken from here.
  std::vector<Aval> invar_avals;
  std::vector<Aval> constvar_avals;
};

// Parses one jaxpr; constvars come back as constvars (without values).
Jaxpr parse_jaxpr(std::string_view text, const ParseJaxprOptions& options = {});
// The same, interned (the form params hold sub-jaxprs in).
std::shared_ptr<const Jaxpr> parse_jaxpr_interned(std::string_view text,
                                                  const ParseJaxprOptions& options = {});

}  // namespace tessera
