// The concretization errors' texts (core/array_errors.h) and JAX's origin message
// (tessera/debug_info.h).
#include <string>

#include "core/array_errors.h"
#include "tessera/debug_info.h"

namespace tessera {

namespace {

// JAX's ShapedArray.str_short: "float32[3,4]".
std::string short_str(const Aval& a) {
  std::string s(dtype_name(a.dtype));
  s += '[';
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(a.shape[i]);
  }
  s += ']';
  return s;
}

// JAX's Tracer._error_repr: "traced array with shape float32[3]".
std::string traced_repr(const Tracer& t) {
  std::string s = "traced array with shape ";
  s += short_str(t.aval());
  return s;
}

std::string with_origin(std::string head, const Tracer& t, std::string_view fix) {
  std::string origin = t.origin();
  if (!origin.empty()) {
    head += '\n';
    head += origin;
  }
  head += '\n';
  head += fix;
  return head;
}

constexpr std::string_view kControlFlowFix =
    "Python/C++ control flow cannot depend on traced values: use lax.cond / lax.select / "
    "numpy.where for value-dependent branches, lax.while_loop / lax.fori_loop for loops, or mark "
    "the argument static (static_argnums / static_argnames).";

}  // namespace

std::string shaped_array_str(const Aval& a) {
  std::string s = "ShapedArray(";
  s += short_str(a);
  if (a.weak_type) s += ", weak_type=True";
  s += ')';
  return s;
}

std::string origin_message(const DebugInfo& d, const std::vector<size_t>& positions) {
  std::string s = "The error occurred while tracing the function ";
  s += d.func_src_info.empty() ? "<unknown>" : d.func_src_info;
  s += " for ";
  s += d.traced_for.empty() ? "a transformation" : d.traced_for;
  s += '.';
  if (positions.empty()) return s;
  std::vector<std::string> names;
  for (size_t p : positions) {
    if (p >= d.arg_names.size() || d.arg_names[p].empty()) return s;  // names unknown
    // A name repeated (leaves of one argument under a prefix name) is said once.
    bool seen = false;
    for (const std::string& n : names) seen = seen || n == d.arg_names[p];
    if (!seen) names.push_back(d.arg_names[p]);
  }
  s += " This concrete value was not available in ";
  s += d.language;
  s += " because it depends on the value";
  s += names.size() > 1 ? "s of the arguments " : " of the argument ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += names.size() == 2 ? " and " : (i + 1 == names.size() ? ", and " : ", ");
    s += names[i];
  }
  s += '.';
  return s;
}

std::string concretization_message(const Tracer& t, std::string_view context) {
  // Built by appending: g++ 12 warns falsely (-Wrestrict) on `"literal" + std::string&&`.
  std::string head = "[";
  head += context;
  head += "] Abstract tracer value encountered where concrete value is expected: ";
  head += traced_repr(t);
  head += "\nThe problem arose with the `";
  head += context;
  head += "` function.";
  return with_origin(std::move(head), t,
                     "The value is not known while tracing; use lax.cond / lax.select / "
                     "numpy.where for value-dependent control flow, or pass the argument as "
                     "static.");
}

std::string bool_conversion_message(const Tracer& t) {
  std::string head = "[bool] Attempted boolean conversion of ";
  head += traced_repr(t);
  head += '.';
  return with_origin(std::move(head), t, kControlFlowFix);
}

std::string integer_conversion_message(const Tracer& t, std::string_view method) {
  std::string head = "[";
  head += method;
  head += "] The ";
  head += method;
  head += "() method was called on ";
  head += traced_repr(t);
  head += '.';
  return with_origin(std::move(head), t,
                     "A traced value cannot be a Python/C++ integer (a shape, a size, a list "
                     "index): mark the argument static (static_argnums / static_argnames), or "
                     "use lax.dynamic_slice / lax.dynamic_index_in_dim for traced positions.");
}

std::string array_conversion_message(const Tracer& t) {
  std::string head = "[__array__] The numpy.ndarray conversion method __array__() was called on ";
  head += traced_repr(t);
  head += '.';
  return with_origin(std::move(head), t,
                     "NumPy cannot see through transformations: use tessera.numpy functions "
                     "inside transformed functions, or jax.pure_callback to call NumPy on "
                     "concrete values.");
}

}  // namespace tessera
