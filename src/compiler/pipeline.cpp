// The pass pipeline (pipeline.h).
#include "compiler/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string_view>

#include "compiler/passes/cse.h"
#include "compiler/passes/expand.h"
#include "compiler/passes/fold_constants.h"
#include "compiler/passes/inline_calls.h"
#include "compiler/passes/simplify.h"
#include "ir/passes/dce.h"
#include "tessera/errors.h"

namespace tessera::compiler {

namespace {

using Pass = std::function<std::shared_ptr<const Jaxpr>(const Jaxpr&)>;

struct NamedPass {
  std::string name;
  Pass run;
};

const std::vector<NamedPass>& passes() {
  static const std::vector<NamedPass> p = {
      {"inline_calls", [](const Jaxpr& j) { return inline_calls(j); }},
      {"expand", [](const Jaxpr& j) { return expand(j); }},
      {"fold_constants", [](const Jaxpr& j) { return fold_constants(j); }},
      {"simplify", [](const Jaxpr& j) { return simplify(j); }},
      {"cse", [](const Jaxpr& j) { return cse(j); }},
      {"dce",
       [](const Jaxpr& j) { return ir::dce(j, std::vector<bool>(j.outvars.size(), true)).first; }},
  };
  return p;
}

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const NamedPass& p : passes()) n.push_back(p.name);
    return n;
  }();
  return names;
}

std::vector<std::string> dump_ir_passes() {
  const char* v = std::getenv("TESSERA_DUMP_IR");
  if (v == nullptr || *v == '\0') return {};
  std::vector<std::string> out;
  std::string_view rest(v);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item == "all") return pass_names();
    const std::vector<std::string>& names = pass_names();
    if (std::find(names.begin(), names.end(), item) == names.end()) {
      std::string accepted = "all";
      for (const std::string& n : names) accepted += ", " + n;
      throw ValueError(op_message("TESSERA_DUMP_IR", "unknown pass '" + item + "' in '" + v +
                                                         "'; accepted: " + accepted +
                                                         " (comma-separated)"));
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::shared_ptr<const Jaxpr> optimize(const Jaxpr& j) {
  const std::vector<std::string> dump = dump_ir_passes();
  std::shared_ptr<const Jaxpr> p;
  const Jaxpr* cur = &j;
  for (const NamedPass& pass : passes()) {
    p = pass.run(*cur);
    cur = p.get();
    if (std::find(dump.begin(), dump.end(), pass.name) != dump.end())
      std::cerr << "// after " << pass.name << ":\n" << to_string(*p) << "\n";
  }
  return p;
}

}  // namespace tessera::compiler
