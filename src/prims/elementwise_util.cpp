// Shared abstract-eval checks of the elementwise families (see elementwise_util.h).
#include "prims/elementwise_util.h"

#include <string>

#include "tessera/errors.h"

namespace tessera::prims::elementwise {

std::vector<Aval> unary_abstract(const char* op, Accept accept, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  kernels::check_not_extended(op, x);
  if (accept == Accept::kFloating && !is_floating(x.dtype)) {
    throw TypeError(op_message(op, "requires a floating dtype, got " + x.str() +
                                       "; convert with convert_element_type (tessera::numpy "
                                       "promotes integers for you)"));
  }
  if (accept == Accept::kNumber && is_bool(x.dtype)) {
    throw TypeError(op_message(op, "does not accept dtype bool (got " + x.str() +
                                       "); accepted dtypes are integers and floats"));
  }
  return {x};
}

void check_binary_operands(const char* op, std::span<const Aval> in,
                           const std::string& same_dtype_hint) {
  kernels::check_num_operands(op, in, 2);
  for (const Aval& a : in) kernels::check_not_extended(op, a);
  kernels::check_same_dtype(op, in, same_dtype_hint);
}

Aval binary_result(const char* op, std::span<const Aval> in) {
  Shape shape = kernels::broadcast_shapes(op, in);
  return Aval{std::move(shape), in[0].dtype, in[0].weak_type && in[1].weak_type};
}

std::vector<Aval> binary_abstract(const char* op, Accept accept, std::span<const Aval> in,
                                  std::string_view reject_fix, const std::string& same_dtype_hint) {
  check_binary_operands(op, in, same_dtype_hint);
  const DType d = in[0].dtype;
  if (accept == Accept::kNumber && is_bool(d)) {
    throw TypeError(op_message(op, "does not accept dtype bool (got " + kernels::avals_list(in) +
                                       "); accepted dtypes are integers and floats" +
                                       std::string(reject_fix)));
  }
  if (accept == Accept::kFloating && !is_floating(d)) {
    throw TypeError(op_message(op, "requires floating operands, got " + kernels::avals_list(in) +
                                       std::string(reject_fix)));
  }
  return {binary_result(op, in)};
}

void rejected_dtype(const char* layer, const char* op, DType d) {
  throw_internal(layer, std::string(op) + " reached a kernel for dtype " +
                            std::string(dtype_name(d)) + " that abstract_eval rejects");
}

namespace sdef {

ScalarDef op(Op o) {
  ScalarDef d;
  d.rule = [o](Builder& b, std::span<const Value> in, const Params&) -> Values {
    if (o >= Op::kEq && o <= Op::kGe) return {b.compare(o, in[0], in[1])};
    return {b.op(o, in, in[0].type)};
  };
  return d;
}

Value via_f64(Builder& b, Fn f, std::span<const Value> in) {
  Values args;
  for (const Value& v : in) args.push_back(b.convert(v, DType::kFloat64));
  return b.convert(b.call(f, args), in[0].type);
}

ScalarDef extern_f64(Fn f) {
  ScalarDef d;
  d.rule = [f](Builder& b, std::span<const Value> in, const Params&) -> Values {
    return {via_f64(b, f, in)};
  };
  return d;
}

}  // namespace sdef

}  // namespace tessera::prims::elementwise
