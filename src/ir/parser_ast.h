// The jaxpr parser's syntax tree (private to src/ir/parser*.cpp): what the text says, with
// byte offsets for messages; elaboration (parser_params.cpp) turns it into a typed Jaxpr.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/jaxpr.h"

namespace tessera::jaxpr_parse {

struct TypeAst {
  DType dtype = DType::kFloat32;
  Shape shape;
  size_t off = 0;
};

struct BinderAst {
  std::string name;  // "_" for a dropped var
  TypeAst type;
  size_t off = 0;
};

struct AtomAst {
  bool is_literal = false;
  std::string text;  // the var name or the literal's value
  TypeAst type;      // literals only
  size_t off = 0;
};

struct JaxprAst;

struct ParamAst {
  enum Kind { kWord, kTuple, kJaxpr, kOpaque } kind = kWord;
  std::string text;  // the raw text of the value
  std::vector<ParamAst> items;
  bool trailing_comma = false;
  std::shared_ptr<JaxprAst> jaxpr;
  size_t off = 0, key_off = 0;
};

struct EqnAst {
  std::vector<BinderAst> outs;
  std::string prim;
  std::vector<std::pair<std::string, ParamAst>> params;
  std::vector<AtomAst> ins;
  size_t off = 0, prim_off = 0;
};

struct JaxprAst {
  std::vector<BinderAst> constvars, invars;
  std::vector<EqnAst> eqns;
  std::vector<AtomAst> outs;
  size_t off = 0;
};

// Throws ValueError "[parse_jaxpr] line:col: msg" for the offset `off` of `src`.
[[noreturn]] void fail_at(std::string_view src, size_t off, const std::string& msg);
// The syntax phase (parser.cpp).
std::shared_ptr<JaxprAst> read_jaxpr_text(std::string_view src);
// "[op] msg" -> "msg" (for messages of library checks re-raised at a position).
std::string strip_op_prefix(const std::string& msg);
// Jaxprs elaborated on this thread so far (the top one and every sub-jaxpr reading): tests
// check with it that elaboration work grows linearly with nesting depth.
int64_t jaxpr_elaboration_count();

}  // namespace tessera::jaxpr_parse
