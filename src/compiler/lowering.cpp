// The lowering-rule table (lowering.h).
#include "compiler/lowering.h"

#include "compiler/rule_table.h"

namespace tessera::compiler {

namespace {
RuleTable<LoweringRule>& table() {
  static auto* t = new RuleTable<LoweringRule>;  // never destroyed: rules may be read at exit
  return *t;
}
}  // namespace

void register_lowering(const Primitive& p, LoweringRule rule) { table().set(p, std::move(rule)); }

const LoweringRule* lowering_rule(const Primitive& p) { return table().get(p); }

BodyFn executable_body(std::shared_ptr<const Executable> exe, const ExecContext& ctx) {
  return
      [exe = std::move(exe), &ctx](std::span<const Array> args) { return exe->execute(ctx, args); };
}

}  // namespace tessera::compiler
