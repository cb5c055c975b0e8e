// The scalar IR (scalar_ir.h): op tables, the printer and the type-checking builder.
#include "tessera/scalar_ir.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <string>

#include "tessera/errors.h"

namespace tessera::scalar {
namespace {

struct OpInfo {
  const char* name;
  int arity;
};
constexpr OpInfo kOps[] = {
#define TESSERA_SCALAR_OP_INFO(e, name, n) {name, n},
    TESSERA_SCALAR_OPS(TESSERA_SCALAR_OP_INFO)
#undef TESSERA_SCALAR_OP_INFO
};
constexpr OpInfo kFns[] = {
#define TESSERA_SCALAR_FN_INFO(e, name, n) {name, n},
    TESSERA_SCALAR_EXTERNS(TESSERA_SCALAR_FN_INFO)
#undef TESSERA_SCALAR_FN_INFO
};

bool is_f(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }
bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }
bool is_int(DType t) { return is_integer(t); }
bool is_num(DType t) { return is_f(t) || is_int(t); }

enum class Domain { kAny, kNumber, kFloat, kInt, kIntOrBool };

Domain domain(Op o) {
  switch (o) {
    case Op::kNeg:
    case Op::kAbs:
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kRem:
      return Domain::kNumber;
    case Op::kMax:
    case Op::kMin:
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe:
      return Domain::kAny;
    case Op::kNot:
    case Op::kAnd:
    case Op::kOr:
    case Op::kXor:
      return Domain::kIntOrBool;
    case Op::kShl:
    case Op::kShrLogical:
    case Op::kShrArith:
    case Op::kPopcnt:
    case Op::kClz:
      return Domain::kInt;
    default:
      return Domain::kFloat;
  }
}

bool in_domain(Domain d, DType t) {
  switch (d) {
    case Domain::kAny:
      return !is_half(t) && !is_extended(t);
    case Domain::kNumber:
      return is_num(t);
    case Domain::kFloat:
      return is_f(t);
    case Domain::kInt:
      return is_int(t);
    case Domain::kIntOrBool:
      return is_int(t) || t == DType::kBool;
  }
  return false;
}

}  // namespace

const char* op_name(Op op) { return kOps[static_cast<int>(op)].name; }
int op_arity(Op op) { return kOps[static_cast<int>(op)].arity; }
const char* fn_name(Fn f) { return kFns[static_cast<int>(f)].name; }
int fn_arity(Fn f) { return kFns[static_cast<int>(f)].arity; }

std::vector<DType> Program::output_types() const {
  std::vector<DType> r;
  r.reserve(outputs.size());
  for (int32_t o : outputs) r.push_back(instrs[static_cast<size_t>(o)].type);
  return r;
}

std::string Program::str() const {
  std::string s;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const Instr& in = instrs[i];
    // Appended piecewise (GCC 12 warns falsely about "literal" + std::string temporaries).
    s += '%';
    s += std::to_string(i);
    s += ':';
    s += dtype_short_name(in.type);
    s += " = ";
    s += op_name(in.op);
    if (in.op == Op::kInput) {
      s += ' ';
      s += std::to_string(in.index);
    }
    if (in.op == Op::kExtern) {
      s += " @";
      s += fn_name(static_cast<Fn>(in.index));
    }
    if (in.op == Op::kConst) {
      s += ' ';
      if (is_floating(in.type)) {
        // Shortest text that reads back as the same double: kernels that print the same are
        // the same (the JIT's cache keys on the text).
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, std::bit_cast<double>(in.literal));
        s.append(buf, r.ptr);
      } else {
        s += std::to_string(static_cast<int64_t>(in.literal));
      }
    }
    for (int32_t a : in.args)
      if (a >= 0) {
        s += " %";
        s += std::to_string(a);
      }
    s += "\n";
  }
  s += "return";
  for (int32_t o : outputs) {
    s += " %";
    s += std::to_string(o);
  }
  return s;
}

Builder::Builder(std::span<const DType> inputs) : inputs_(inputs.begin(), inputs.end()) {
  prog_.inputs = inputs_;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Instr in{Op::kInput, inputs_[i]};
    in.index = static_cast<int32_t>(i);
    push(in);
  }
}

Value Builder::input(int i) const {
  if (i < 0 || i >= num_inputs())
    throw_internal("ir/scalar", "input " + std::to_string(i) + " out of range");
  return Value{i, inputs_[static_cast<size_t>(i)]};
}

Value Builder::push(Instr in) {
  prog_.instrs.push_back(in);
  return Value{static_cast<int32_t>(prog_.instrs.size() - 1), in.type};
}

void Builder::check(bool ok, Op o, std::span<const Value> args, const char* why) const {
  if (ok) return;
  std::string types;
  for (const Value& v : args) {
    if (!types.empty()) types += ", ";
    types += dtype_short_name(v.type);
  }
  throw_internal("ir/scalar",
                 std::string(op_name(o)) + "(" + types + "): " + why + " (see scalar_ir.h)");
}

Value Builder::constant(double v, DType t) {
  if (is_floating(t)) return constant_bits(std::bit_cast<uint64_t>(v), t);
  check(t == DType::kBool || is_int(t), Op::kConst, {}, "constant of an extended type");
  const auto i = static_cast<int64_t>(v);
  check(static_cast<double>(i) == v, Op::kConst, {}, "integer constant that is not an integer");
  return constant_bits(static_cast<uint64_t>(i), t);
}

Value Builder::constant_bits(uint64_t bits, DType t) {
  Instr in{Op::kConst, t};
  in.literal = bits;
  return push(in);
}

Value Builder::op(Op o, std::span<const Value> args, DType result) {
  const int n = op_arity(o);
  check(n >= 0 && static_cast<size_t>(n) == args.size() && args.size() <= 3, o, args,
        "wrong operand count");
  Instr in{o, result};
  for (size_t i = 0; i < args.size(); ++i) {
    check(args[i].id >= 0 && static_cast<size_t>(args[i].id) < prog_.instrs.size(), o, args,
          "operand not defined in this program");
    in.args[i] = args[i].id;
  }
  switch (o) {
    case Op::kConvert:
    case Op::kBitcast:
    case Op::kSelect:
    case Op::kExtern:
    case Op::kInput:
    case Op::kConst:
      break;  // checked by their builders
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe:
      check(result == DType::kBool, o, args, "a comparison returns bool");
      check(in_domain(domain(o), args[0].type) && args[0].type == args[1].type, o, args,
            "comparison operands of one non-16-bit type");
      break;
    default: {
      const DType t = args[0].type;
      check(in_domain(domain(o), t), o, args, "operand type outside the op's domain");
      for (const Value& a : args) check(a.type == t, o, args, "operands of different types");
      check(result == t, o, args, "result type differs from the operands'");
    }
  }
  return push(in);
}

Value Builder::binary(Op o, Value a, Value b) {
  const Value args[] = {a, b};
  return op(o, args, a.type);
}

Value Builder::compare(Op o, Value a, Value b) {
  const Value args[] = {a, b};
  return op(o, args, DType::kBool);
}

Value Builder::convert(Value a, DType t) {
  check(!is_extended(a.type) && !is_extended(t), Op::kConvert, {&a, 1}, "extended type");
  if (a.type == t) return a;
  return op(Op::kConvert, {&a, 1}, t);
}

Value Builder::bitcast(Value a, DType t) {
  check(!is_extended(t) && itemsize(a.type) == itemsize(t) &&
            (a.type == DType::kBool) == (t == DType::kBool),
        Op::kBitcast, {&a, 1}, "bitcast between types of different widths");
  if (a.type == t) return a;
  return op(Op::kBitcast, {&a, 1}, t);
}

Value Builder::select(Value c, Value t, Value f) {
  const Value args[] = {c, t, f};
  check(c.type == DType::kBool && t.type == f.type && !is_extended(t.type), Op::kSelect, args,
        "select takes (bool, T, T)");
  return op(Op::kSelect, args, t.type);
}

Value Builder::fma(Value a, Value b, Value c) {
  const Value args[] = {a, b, c};
  return op(Op::kFma, args, a.type);
}

Value Builder::call(Fn f, std::span<const Value> args) {
  const Op o = Op::kExtern;
  check(static_cast<int>(args.size()) == fn_arity(f) && args.size() <= 3, o, args,
        "wrong argument count for the extern function");
  for (const Value& a : args) check(a.type == DType::kFloat64, o, args, "externs take float64");
  Instr in{o, DType::kFloat64};
  in.index = static_cast<int32_t>(f);
  for (size_t i = 0; i < args.size(); ++i) in.args[i] = args[i].id;
  return push(in);
}

Program Builder::finish(std::span<const Value> outputs) && {
  prog_.outputs.clear();
  for (const Value& v : outputs) prog_.outputs.push_back(v.id);
  return std::move(prog_);
}

}  // namespace tessera::scalar
