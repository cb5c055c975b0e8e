// The reduction rule registry (reduce_rule.h).
#include "compiler/reduce_rule.h"

#include <mutex>
#include <unordered_map>

namespace tessera::compiler {

namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<const Primitive*, ReductionRule> rules;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: rules may be read at exit
  return *r;
}

}  // namespace

void register_reduction(const Primitive& p, ReductionRule rule) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.rules[&p] = std::move(rule);
}

const ReductionRule* reduction_rule(const Primitive& p) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.rules.find(&p);
  return it == r.rules.end() ? nullptr : &it->second;
}

}  // namespace tessera::compiler
