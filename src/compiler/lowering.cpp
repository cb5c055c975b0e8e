// The lowering-rule table (lowering.h).
#include "compiler/lowering.h"

#include <mutex>
#include <unordered_map>

namespace tessera::compiler {

namespace {
std::mutex g_lower_mu;
std::unordered_map<const Primitive*, LoweringRule>& lowering_rules() {
  static std::unordered_map<const Primitive*, LoweringRule> m;
  return m;
}
}  // namespace

void register_lowering(const Primitive& p, LoweringRule rule) {
  std::lock_guard<std::mutex> lock(g_lower_mu);
  lowering_rules()[&p] = std::move(rule);
}

const LoweringRule* lowering_rule(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_lower_mu);
  auto it = lowering_rules().find(&p);
  return it == lowering_rules().end() ? nullptr : &it->second;  // entries are never erased
}

BodyFn executable_body(std::shared_ptr<const Executable> exe, const ExecContext& ctx) {
  return
      [exe = std::move(exe), &ctx](std::span<const Array> args) { return exe->execute(ctx, args); };
}

}  // namespace tessera::compiler
