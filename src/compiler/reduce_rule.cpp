// The reduction rule registry (reduce_rule.h).
#include "compiler/reduce_rule.h"

#include "compiler/rule_table.h"

namespace tessera::compiler {

namespace {
RuleTable<ReductionRule>& table() {
  static auto* t = new RuleTable<ReductionRule>;  // never destroyed: rules may be read at exit
  return *t;
}
}  // namespace

void register_reduction(const Primitive& p, ReductionRule rule) { table().set(p, std::move(rule)); }

const ReductionRule* reduction_rule(const Primitive& p) { return table().get(p); }

}  // namespace tessera::compiler
