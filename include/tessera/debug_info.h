// DebugInfo: what a staged function is, for error messages (JAX's api_util.debug_info). A
// concretization error on a traced value names the function being traced, the transformation
// tracing it, and the arguments the value depends on:
//   "The error occurred while tracing the function f at x.py:3 for jit. This concrete value
//    was not available in Python because it depends on the value of the argument x."
// (JAX's text; "in C++" for functions traced from C++.)
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct DebugInfo {
  std::string traced_for;              // "jit", "make_jaxpr", ...
  std::string func_src_info;           // "f at x.py:3"; the name alone when no source is known
  std::vector<std::string> arg_names;  // one per flat input of the staged function; may be empty
  std::string language = "C++";        // where the value was needed ("Python" from the package)
};

// JAX's origin message for a value that depends on the flat inputs `positions` of the function
// `d` describes (no positions: a value made from constants only).
std::string origin_message(const DebugInfo& d, const std::vector<size_t>& positions);

}  // namespace tessera
