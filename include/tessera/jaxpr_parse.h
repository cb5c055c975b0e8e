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
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "tessera/jaxpr.h"

namespace tessera {

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
