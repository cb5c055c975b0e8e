// The jaxpr parser: JAX's text format back into the IR. Two phases: a layout-insensitive
// recursive-descent reader builds a syntax tree (names, printed types, raw param values, with
// their offsets for messages), then elaboration types it: vars are bound by name per jaxpr,
// literals become Arrays, params are read into ParamValues (ambiguous texts resolved by the
// primitive's abstract_eval, see parser_params.cpp) and each equation's output avals are
// recomputed and checked against the printed ones.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/parser_ast.h"
#include "tessera/errors.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/shape.h"

namespace tessera::jaxpr_parse {

std::string strip_op_prefix(const std::string& msg) {
  if (msg.empty() || msg[0] != '[') return msg;
  const size_t end = msg.find("] ");
  return end == std::string::npos ? msg : msg.substr(end + 2);
}

[[noreturn]] void fail_at(std::string_view src, size_t off, const std::string& msg) {
  int line = 1, col = 1;
  for (size_t i = 0; i < off && i < src.size(); ++i) {
    if (src[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  throw ValueError(
      op_message("parse_jaxpr", std::to_string(line) + ":" + std::to_string(col) + ": " + msg));
}

namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The index a printed var name stands for ("a" = 0, "ba" = 26), or -1 for other names.
int64_t var_name_index(std::string_view s) {
  if (s.empty() || s.size() > 12) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (c < 'a' || c > 'z') return -1;
    v = v * 26 + (c - 'a');
  }
  return (s.size() > 1 && s[0] == 'a') ? -1 : v;
}

class Reader {
 public:
  explicit Reader(std::string_view src) : s_(src) {}

  std::shared_ptr<JaxprAst> read_top() {
    auto j = read_jaxpr();
    skip_ws();
    if (i_ != s_.size()) fail("expected the end of the text after the jaxpr's closing '}'");
    return j;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  int64_t defined_names_ = 0;  // distinct binder names so far (the printer's naming counter)
  int depth_ = 0;              // open jaxprs and param tuples (kMaxParseNesting)

  // Counts one nesting level (a jaxpr or a param tuple) for the duration of its read.
  struct Nest {
    Reader& r;
    explicit Nest(Reader& reader, const char* what) : r(reader) {
      if (++r.depth_ > kMaxParseNesting)
        r.fail(std::string("the text nests jaxprs and param tuples deeper than ") +
               std::to_string(kMaxParseNesting) + " levels (the parser's limit) at this " + what);
    }
    ~Nest() { --r.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
  };

  [[noreturn]] void fail(const std::string& what) { fail_at(s_, i_, what + ", got " + got()); }
  std::string got() const {
    if (i_ >= s_.size()) return "the end of the text";
    size_t n = 0;
    while (i_ + n < s_.size() && n < 12 && !std::isspace(static_cast<unsigned char>(s_[i_ + n])))
      ++n;
    return "'" + std::string(s_.substr(i_, n == 0 ? 1 : n)) + "'";
  }
  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c, const char* what) {
    skip_ws();
    if (peek() != c) fail(std::string("expected ") + what);
    ++i_;
  }
  std::string_view peek_name() const {
    size_t j = i_;
    if (j < s_.size() && is_name_start(s_[j]))
      while (j < s_.size() && is_name_char(s_[j])) ++j;
    return s_.substr(i_, j - i_);
  }
  std::string read_name(const char* what) {
    std::string_view n = peek_name();
    if (n.empty()) fail(std::string("expected ") + what);
    i_ += n.size();
    return std::string(n);
  }
  // After a keyword-like word at i_ + len, whether the next non-space char is c.
  bool next_nonspace_is(size_t from, char c) const {
    while (from < s_.size() && std::isspace(static_cast<unsigned char>(s_[from]))) ++from;
    return from < s_.size() && s_[from] == c;
  }
  bool at_word(std::string_view w) const {
    return s_.substr(i_, w.size()) == w &&
           (i_ + w.size() >= s_.size() || !is_name_char(s_[i_ + w.size()]));
  }
  // The `in (` that closes the equations (a var may be named `in`).
  bool at_in_keyword() const { return at_word("in") && next_nonspace_is(i_ + 2, '('); }

  TypeAst read_type() {
    TypeAst t;
    t.off = i_;
    size_t j = i_;
    while (j < s_.size() && (is_name_char(s_[j]) || s_[j] == '<' || s_[j] == '>')) ++j;
    if (j == i_) fail("expected a type such as f32[3]");
    std::string_view name = s_.substr(i_, j - i_);
    try {
      t.dtype = dtype_from_name(name);
    } catch (const ValueError&) {
      fail_at(s_, i_, "unknown dtype '" + std::string(name) + "' in a type");
    }
    i_ = j;
    if (peek() != '[')
      fail("expected '[' and the shape after the dtype '" + std::string(name) + "'");
    ++i_;
    while (peek() != ']') {
      if (!t.shape.empty()) {
        if (peek() != ',') fail("expected ',' or ']' in a shape");
        ++i_;
      }
      if (static_cast<int64_t>(t.shape.size()) == kMaxRank)
        fail("a type may have at most " + std::to_string(kMaxRank) +
             " dimensions (NumPy's limit); expected ']'");
      const char* b = s_.data() + i_;
      int64_t d = 0;
      auto r = std::from_chars(b, s_.data() + s_.size(), d);
      if (r.ec == std::errc::result_out_of_range)
        fail("the dimension size does not fit in int64; expected a dimension size in a shape");
      if (r.ec != std::errc()) fail("expected a dimension size in a shape");
      if (d < 0) fail("negative dimensions are not allowed in a shape");
      i_ += static_cast<size_t>(r.ptr - b);
      t.shape.push_back(d);
    }
    ++i_;
    try {
      check_shape("parse_jaxpr", t.shape, itemsize(t.dtype));
    } catch (const ValueError& e) {
      fail_at(s_, t.off,
              "invalid type '" + std::string(s_.substr(t.off, i_ - t.off)) +
                  "': " + strip_op_prefix(e.what()));
    }
    return t;
  }

  BinderAst read_binder() {
    BinderAst b;
    b.off = i_;
    b.name = read_name("a variable name");
    if (peek() != ':') fail("expected ':' and a type after the binder '" + b.name + "'");
    ++i_;
    b.type = read_type();
    if (b.name != "_") ++defined_names_;
    return b;
  }

  // Whether a list of binders `x:t y:t =` starts here (without consuming it).
  bool at_binders() {
    const size_t save = i_;
    const int64_t save_names = defined_names_;
    bool ok = false;
    try {
      std::unordered_set<std::string> seen;
      bool dup = false;
      while (true) {
        skip_ws();
        if (!is_name_start(peek())) break;
        std::string_view w = peek_name();
        if (i_ + w.size() >= s_.size() || s_[i_ + w.size()] != ':') break;
        BinderAst b = read_binder();
        // A repeated name ends the scan (binders are distinct), keeping this linear.
        if (b.name != "_" && !seen.insert(b.name).second) {
          dup = true;
          break;
        }
        if (b.name == "_") seen.insert("_");
      }
      skip_ws();
      ok = !seen.empty() && !dup && peek() == '=';
    } catch (const ValueError&) {
      ok = false;
    }
    i_ = save;
    defined_names_ = save_names;
    return ok;
  }

  bool is_literal_word(std::string_view w) const {
    return w == "True" || w == "False" || w == "inf" || w == "nan";
  }

  // A literal `2.0:f32[]`, `-inf:f32[]`, `True:bool[]` or a var use.
  AtomAst read_atom() {
    skip_ws();
    AtomAst a;
    a.off = i_;
    const char c = peek();
    std::string_view w = peek_name();
    const bool lit_word = !w.empty() && is_literal_word(w) && peek(w.size()) == ':';
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || lit_word) {
      size_t j = i_;
      while (j < s_.size() && (is_name_char(s_[j]) || s_[j] == '.' || s_[j] == '-' || s_[j] == '+'))
        ++j;
      a.is_literal = true;
      a.text = std::string(s_.substr(i_, j - i_));
      i_ = j;
      if (peek() != ':') fail("expected ':' and a type after the literal '" + a.text + "'");
      ++i_;
      a.type = read_type();
      return a;
    }
    a.text = read_name("a variable or a literal such as 1.0:f32[]");
    return a;
  }

  ParamAst read_param_value() {
    skip_ws();
    ParamAst p;
    p.off = i_;
    const char c = peek();
    if (c == '{') {
      p.kind = ParamAst::kJaxpr;
      p.jaxpr = read_jaxpr();
    } else if (c == '(') {
      Nest nest(*this, "tuple");
      p.kind = ParamAst::kTuple;
      ++i_;
      while (true) {
        skip_ws();
        if (peek() == ')') break;
        p.items.push_back(read_param_value());
        skip_ws();
        if (peek() == ',') {
          ++i_;
          p.trailing_comma = true;
        } else {
          p.trailing_comma = false;
        }
        if (peek() == '\0') fail("expected ')' to close a tuple");
      }
      ++i_;
    } else if (c == '<') {
      p.kind = ParamAst::kOpaque;
      int depth = 0;
      do {
        if (peek() == '<') ++depth;
        if (peek() == '>') --depth;
        if (peek() == '\0') fail("expected '>' to close an opaque value");
        ++i_;
      } while (depth > 0);
    } else {
      p.kind = ParamAst::kWord;
      int depth = 0;
      while (i_ < s_.size()) {
        const char d = s_[i_];
        if (std::isspace(static_cast<unsigned char>(d)) && depth == 0) break;
        if ((d == ']' || d == ')' || d == ',') && depth == 0) break;
        if (d == '(' || d == '[') ++depth;
        if (d == ')' || d == ']') --depth;
        ++i_;
      }
      if (i_ == p.off) fail("expected a param value");
    }
    p.text = std::string(s_.substr(p.off, i_ - p.off));
    return p;
  }

  EqnAst read_eqn() {
    EqnAst e;
    e.off = i_;
    // `name:` opens the outputs unless the name is a literal word (`inf:f32[]` may be an
    // operand of an equation without outputs); then errors in the types are reported as such.
    const std::string_view first = peek_name();
    const bool binder_start =
        !first.empty() && !is_literal_word(first) && peek(first.size()) == ':';
    if (binder_start || at_binders()) {
      while (true) {
        skip_ws();
        if (peek() == '=') break;
        e.outs.push_back(read_binder());
      }
      ++i_;
      skip_ws();
    }
    e.prim_off = i_;
    e.prim = read_name("a primitive name");
    if (peek() == '[') {
      ++i_;
      while (true) {
        skip_ws();
        if (peek() == ']') break;
        const size_t key_off = i_;
        std::string key = read_name("a param name or ']'");
        if (peek() != '=') fail("expected '=' after the param name '" + key + "'");
        ++i_;
        ParamAst v = read_param_value();
        v.key_off = key_off;
        e.params.emplace_back(std::move(key), std::move(v));
      }
      ++i_;
    }
    // Operands: until `;`, `in (`, the next equation's binders or a primitive with params.
    while (true) {
      skip_ws();
      const char c = peek();
      if (c == ';' || c == '}' || c == '\0' || at_in_keyword()) break;
      std::string_view w = peek_name();
      if (!w.empty()) {
        const char after = peek(w.size());
        if (after == '[') break;
        if (after == ':') {
          // `inf:f32[]` is a literal unless it starts binders and is the next name the printer
          // would give (names are given in order of definition).
          const bool lit =
              is_literal_word(w) && !(var_name_index(w) == defined_names_ && at_binders());
          if (!lit) break;
        } else if (!names_.count(std::string(w)) && find_primitive(w) != nullptr) {
          break;  // an equation without outputs or params
        }
      }
      e.ins.push_back(read_atom());
    }
    return e;
  }

  std::shared_ptr<JaxprAst> read_jaxpr() {
    auto j = std::make_shared<JaxprAst>();
    skip_ws();
    j->off = i_;
    expect('{', "'{' to open a jaxpr");
    --i_;
    Nest nest(*this, "jaxpr");
    ++i_;
    skip_ws();
    if (!at_word("lambda")) fail("expected 'lambda' after '{'");
    i_ += 6;
    auto binders = [&](char end, std::vector<BinderAst>& out) {
      while (true) {
        skip_ws();
        if (peek() == end) break;
        if (!is_name_start(peek()))
          fail(std::string("expected a binder such as a:f32[3] or '") + end + "'");
        out.push_back(read_binder());
        names_.insert(out.back().name);
      }
      ++i_;
    };
    binders(';', j->constvars);
    binders('.', j->invars);
    skip_ws();
    if (!at_word("let")) fail("expected 'let' after the jaxpr's inputs");
    i_ += 3;
    while (true) {
      skip_ws();
      if (at_in_keyword()) break;
      if (peek() == '\0' || peek() == '}') fail("expected an equation or 'in (' and the outputs");
      j->eqns.push_back(read_eqn());
      for (const BinderAst& b : j->eqns.back().outs) names_.insert(b.name);
      skip_ws();
      if (peek() == ';') ++i_;
    }
    i_ += 2;
    expect('(', "'(' and the jaxpr's outputs");
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      j->outs.push_back(read_atom());
      skip_ws();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the jaxpr's outputs");
      }
    }
    ++i_;
    expect('}', "'}' to close the jaxpr");
    return j;
  }

  std::unordered_set<std::string> names_;  // every binder name read so far
};

}  // namespace

std::shared_ptr<JaxprAst> read_jaxpr_text(std::string_view src) { return Reader(src).read_top(); }

}  // namespace tessera::jaxpr_parse
