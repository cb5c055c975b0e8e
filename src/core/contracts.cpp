// What a primitive tells a compiler and a backend (primitive.h): kind names, the lowering
// registry and its defaults, and the driver that builds a primitive's scalar program.
#include <string>
#include <utility>

#include "tessera/errors.h"
#include "tessera/primitive.h"

namespace tessera {

const char* primitive_kind_name(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::kUnset:
      return "unset";
    case PrimitiveKind::kElementwise:
      return "elementwise";
    case PrimitiveKind::kIndexMap:
      return "index_map";
    case PrimitiveKind::kReduction:
      return "reduction";
    case PrimitiveKind::kContraction:
      return "contraction";
    case PrimitiveKind::kLibraryCall:
      return "library_call";
    case PrimitiveKind::kControlFlow:
      return "control_flow";
    case PrimitiveKind::kCollective:
      return "collective";
    case PrimitiveKind::kEffectful:
      return "effectful";
  }
  return "?";
}

const char* lowering_source_name(LoweringSource s) {
  switch (s) {
    case LoweringSource::kRegistered:
      return "registered";
    case LoweringSource::kScalarDef:
      return "scalar_def";
    case LoweringSource::kComposite:
      return "composite";
    case LoweringSource::kEagerThunk:
      return "eager_thunk";
    case LoweringSource::kNone:
      return "none";
  }
  return "?";
}

const LoweringRule* Primitive::lowering(std::string_view target) const {
  for (const auto& [t, rule] : lowerings)
    if (t == target) return &rule;
  return nullptr;
}

LoweringChoice Primitive::choose_lowering(std::string_view target) const {
  if (const LoweringRule* r = lowering(target)) return {LoweringSource::kRegistered, r};
  if (kind == PrimitiveKind::kElementwise && scalar.rule) return {LoweringSource::kScalarDef};
  if (composite) return {LoweringSource::kComposite};
  if (impl) return {LoweringSource::kEagerThunk};
  return {LoweringSource::kNone};
}

void register_lowering(Primitive& p, std::string target, LoweringRule rule) {
  if (target.empty() || !rule) {
    throw ValueError(op_message(p.name(), "register_lowering needs a target name and a rule"));
  }
  for (auto& [t, r] : p.lowerings) {
    if (t == target) {
      r = std::move(rule);
      return;
    }
  }
  p.lowerings.emplace_back(std::move(target), std::move(rule));
}

scalar::Program scalar_program(const Primitive& p, std::span<const Aval> in, const Params& params) {
  if (!p.scalar.rule) {
    throw_internal("core/contracts",
                   p.name() + " has no scalar definition" +
                       (p.scalar.exemption ? std::string(" (") + p.scalar.exemption + ")" : ""));
  }
  const std::vector<Aval> out = abstract_eval(p, in, params);
  std::vector<DType> types;
  types.reserve(in.size());
  for (const Aval& a : in) types.push_back(a.dtype);
  scalar::Builder b(types);
  std::vector<scalar::Value> args;
  args.reserve(in.size());
  for (int i = 0; i < b.num_inputs(); ++i) {
    scalar::Value v = b.input(i);
    const bool half = v.type == DType::kFloat16 || v.type == DType::kBFloat16;
    args.push_back(half && !p.scalar.raw_16bit ? b.convert(v, DType::kFloat32) : v);
  }
  std::vector<scalar::Value> res = p.scalar.rule(b, args, params);
  if (res.size() != out.size()) {
    throw_internal("core/contracts", p.name() + "'s scalar definition returned " +
                                         std::to_string(res.size()) + " values for " +
                                         std::to_string(out.size()) + " outputs");
  }
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].type != out[i].dtype) res[i] = b.convert(res[i], out[i].dtype);
  }
  return std::move(b).finish(res);
}

}  // namespace tessera
