// A table of per-primitive rules that primitive families register into and the compiler reads
// (index-map, reduction and lowering rules): keyed by the primitive's address, thread-safe.
// Entries are never erased, so a returned pointer stays valid for the process's life.
#pragma once

#include <mutex>
#include <unordered_map>

#include "tessera/primitive.h"

namespace tessera::compiler {

template <class Rule>
class RuleTable {
 public:
  void set(const Primitive& p, Rule rule) {
    std::lock_guard<std::mutex> lock(mu_);
    rules_[&p] = std::move(rule);
  }
  // The rule registered for p, or null.
  const Rule* get(const Primitive& p) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rules_.find(&p);
    return it == rules_.end() ? nullptr : &it->second;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<const Primitive*, Rule> rules_;
};

}  // namespace tessera::compiler
