// The jaxpr printer, in JAX's exact text format. A small Wadler-Lindig document printer (text,
// break, group, nest; width 80) lays out the same document structure that JAX's pp_jaxpr
// builds, so line breaking matches JAX too. Names are assigned in order of appearance
// (a, b, ..., z, ba, bb, ...), shared across nested sub-jaxprs as in JAX.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "ir/print_rules.h"
#include "tessera/jaxpr.h"

namespace tessera {

namespace {

std::mutex g_print_mu;
std::unordered_map<const Primitive*, std::vector<std::string>>& print_orders() {
  static std::unordered_map<const Primitive*, std::vector<std::string>> m;
  return m;
}

}  // namespace

void ir::set_param_print_order(const Primitive& p, std::vector<std::string> leading) {
  std::lock_guard<std::mutex> lock(g_print_mu);
  print_orders()[&p] = std::move(leading);
}

std::vector<std::string> ir::param_print_order(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_print_mu);
  auto it = print_orders().find(&p);
  return it == print_orders().end() ? std::vector<std::string>{} : it->second;
}

namespace {

// ---- Documents ----

struct DocNode;
using Doc = std::shared_ptr<const DocNode>;
struct DocNode {
  enum Kind { kNil, kText, kConcat, kBreak, kGroup, kNest } kind = kNil;
  std::string text;  // kText, kBreak (its flat text)
  int nest = 0;      // kNest
  std::vector<Doc> children;
};

Doc nil() {
  static const Doc d = std::make_shared<const DocNode>();
  return d;
}
Doc text(std::string s) {
  auto d = std::make_shared<DocNode>();
  d->kind = DocNode::kText;
  d->text = std::move(s);
  return d;
}
Doc concat(std::vector<Doc> docs) {
  if (docs.size() == 1) return docs[0];
  auto d = std::make_shared<DocNode>();
  d->kind = DocNode::kConcat;
  d->children = std::move(docs);
  return d;
}
Doc brk(std::string s = " ") {
  auto d = std::make_shared<DocNode>();
  d->kind = DocNode::kBreak;
  d->text = std::move(s);
  return d;
}
Doc group(Doc child) {
  auto d = std::make_shared<DocNode>();
  d->kind = DocNode::kGroup;
  d->children = {std::move(child)};
  return d;
}
Doc nest(int n, Doc child) {
  auto d = std::make_shared<DocNode>();
  d->kind = DocNode::kNest;
  d->nest = n;
  d->children = {std::move(child)};
  return d;
}
Doc join(const Doc& sep, const std::vector<Doc>& docs) {
  if (docs.empty()) return nil();
  std::vector<Doc> xs{docs[0]};
  for (size_t i = 1; i < docs.size(); ++i) {
    xs.push_back(sep);
    xs.push_back(docs[i]);
  }
  return concat(std::move(xs));
}

enum class Mode { kFlat, kBreak };
struct Item {
  int indent;
  Mode mode;
  const DocNode* doc;
};

// Whether `doc` printed flat fits in `width` columns (only the group itself, as JAX).
bool fits(const DocNode* doc, int64_t width) {
  std::vector<const DocNode*> agenda{doc};
  while (width >= 0 && !agenda.empty()) {
    const DocNode* d = agenda.back();
    agenda.pop_back();
    switch (d->kind) {
      case DocNode::kNil:
        break;
      case DocNode::kText:
      case DocNode::kBreak:
        width -= static_cast<int64_t>(d->text.size());
        break;
      case DocNode::kConcat:
        for (auto it = d->children.rbegin(); it != d->children.rend(); ++it)
          agenda.push_back(it->get());
        break;
      case DocNode::kGroup:
      case DocNode::kNest:
        agenda.push_back(d->children[0].get());
        break;
    }
  }
  return width >= 0;
}

std::string format(const Doc& root, int width) {
  std::string out;
  int64_t k = 0;  // current column
  std::vector<Item> agenda{{0, Mode::kBreak, root.get()}};
  while (!agenda.empty()) {
    Item it = agenda.back();
    agenda.pop_back();
    const DocNode* d = it.doc;
    switch (d->kind) {
      case DocNode::kNil:
        break;
      case DocNode::kText:
        out += d->text;
        k += static_cast<int64_t>(d->text.size());
        break;
      case DocNode::kConcat:
        for (auto c = d->children.rbegin(); c != d->children.rend(); ++c)
          agenda.push_back({it.indent, it.mode, c->get()});
        break;
      case DocNode::kBreak:
        if (it.mode == Mode::kBreak) {
          out += '\n';
          out.append(static_cast<size_t>(it.indent), ' ');
          k = it.indent;
        } else {
          out += d->text;
          k += static_cast<int64_t>(d->text.size());
        }
        break;
      case DocNode::kNest:
        agenda.push_back({it.indent + d->nest, it.mode, d->children[0].get()});
        break;
      case DocNode::kGroup: {
        const Mode m = fits(d->children[0].get(), width - k) ? Mode::kFlat : Mode::kBreak;
        agenda.push_back({it.indent, m, d->children[0].get()});
        break;
      }
    }
  }
  return out;
}

// Python's repr of a float: the shortest digits that round-trip through `dtype`, in fixed
// notation for decimal exponents in [-4, 16) (always with a fraction), scientific otherwise.
std::string python_float_str(double v, DType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
    unsigned char tmp[8];
    store_from_double(dtype, tmp, std::strtod(buf, nullptr));
    if (load_as_double(dtype, tmp) == v) break;
  }
  std::string s(buf);  // "[-]d.ddde[+-]XX"
  const bool neg = s[0] == '-';
  if (neg) s.erase(0, 1);
  const size_t epos = s.find('e');
  const int exp = std::atoi(s.c_str() + epos + 1);
  std::string digits;
  for (size_t i = 0; i < epos; ++i)
    if (s[i] != '.') digits += s[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    } else {
      const size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len)
        out = digits + std::string(int_len - digits.size(), '0') + ".0";
      else
        out = digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += e;
  }
  return neg ? "-" + out : out;
}

// ---- Jaxpr documents (the structure of JAX's pp_jaxpr) ----

class Printer {
 public:
  std::string name(const Var& v) {
    if (v.is_dropped()) return "_";
    auto [it, inserted] = names_.try_emplace(v.id(), names_.size());
    (void)inserted;
    return var_name_for_index(it->second);
  }
  std::string atom(const Atom& a) {
    if (const Var* v = std::get_if<Var>(&a)) return name(*v);
    const Literal& l = std::get<Literal>(a);
    return l.value_str() + ":" + l.aval().str();
  }

  // pp_vars: a fill of names (binders with their types), breaking only where needed.
  Doc vars(std::vector<std::string> items, const std::string& sep) {
    std::vector<Doc> docs;
    for (auto& s : items) docs.push_back(text(std::move(s)));
    return nest(2, group(join(concat({text(sep), group(brk())}), docs)));
  }
  Doc binders(const std::vector<Var>& vs) {
    std::vector<std::string> items;
    for (const Var& v : vs) items.push_back(name(v) + ":" + v.aval().str());
    return vars(std::move(items), "");
  }
  Doc uses(const std::vector<Atom>& as, const std::string& sep) {
    std::vector<std::string> items;
    for (const Atom& a : as) items.push_back(atom(a));
    return vars(std::move(items), sep);
  }

  Doc param_value(const ParamValue& v) {
    if (auto* j = std::get_if<std::shared_ptr<const Jaxpr>>(&v)) {
      if (*j) return jaxpr(**j);
      return text("None");
    }
    if (auto* js = std::get_if<JaxprList>(&v)) {
      // JAX's pp_jaxprs: a group that puts each jaxpr on its own line when it does not fit.
      std::vector<Doc> items;
      for (const auto& j : *js) items.push_back(j ? jaxpr(*j) : text("None"));
      return group(
          concat({nest(2, concat({text("("), brk(""), join(brk(), items)})), brk(""), text(")")}));
    }
    if (auto* d = std::get_if<double>(&v)) return text(python_float_str(*d, DType::kFloat64));
    return text(param_value_str(v));
  }

  Doc params(const Params& p, const Primitive* prim) {
    if (p.empty()) return nil();
    std::vector<const std::pair<std::string, ParamValue>*> items;
    for (const auto& kv : p.items()) items.push_back(&kv);
    // JAX prints params sorted by name, after those a primitive's print rule puts first.
    const std::vector<std::string> lead =
        prim ? ir::param_print_order(*prim) : std::vector<std::string>{};
    auto rank = [&](const std::string& k) {
      auto it = std::find(lead.begin(), lead.end(), k);
      return static_cast<size_t>(it - lead.begin());
    };
    std::stable_sort(items.begin(), items.end(), [&](const auto* a, const auto* b) {
      const size_t ra = rank(a->first), rb = rank(b->first);
      if (ra != rb) return ra < rb;
      return a->first < b->first;
    });
    std::vector<Doc> kvs;
    for (const auto* kv : items)
      kvs.push_back(concat({text(kv->first + "="), param_value(kv->second)}));
    return group(
        concat({nest(2, concat({text("["), brk(""), join(brk(), kvs)})), brk(""), text("]")}));
  }

  Doc eqn(const JaxprEqn& e) {
    Doc lhs = e.outvars.empty() ? nil() : binders(e.outvars);
    const std::string prim = e.primitive ? e.primitive->name() : "<null primitive>";
    Doc ps = params(e.params, e.primitive);
    Doc rhs = concat({text(prim), ps, concat({text(" "), uses(e.invars, "")})});
    if (e.outvars.empty()) return rhs;
    return concat({lhs, text(" = "), rhs});
  }

  const std::unordered_map<uint64_t, uint64_t>& name_indices() const { return names_; }

  Doc jaxpr(const Jaxpr& j, std::vector<Doc>* eqn_docs = nullptr) {
    Doc constvars = binders(j.constvars);
    Doc invars = binders(j.invars);
    std::vector<Doc> eqns;
    for (const JaxprEqn& e : j.eqns) eqns.push_back(eqn(e));
    if (eqn_docs) *eqn_docs = eqns;
    Doc outvars =
        concat({text("("), uses(j.outvars, ","), text(j.outvars.size() != 1 ? ")" : ",)")});
    return group(concat(
        {nest(2, concat({text("{ "), text("lambda "), constvars, text("; "), invars, text(". "),
                         text("let"), nest(2, concat({brk(), join(brk("; "), eqns)})), brk(),
                         text("in "), outvars})),
         text(" }")}));
  }

 private:
  std::unordered_map<uint64_t, uint64_t> names_;
};

}  // namespace

std::string Literal::value_str() const {
  const DType d = value_.dtype();
  const void* p = value_.raw_data("a jaxpr literal");
  if (is_bool(d)) return load_as_double(d, p) != 0.0 ? "True" : "False";
  if (d == DType::kInt64) return std::to_string(*static_cast<const int64_t*>(p));
  if (d == DType::kUInt64) return std::to_string(*static_cast<const uint64_t*>(p));
  if (is_integer(d)) return std::to_string(static_cast<int64_t>(load_as_double(d, p)));
  return python_float_str(load_as_double(d, p), d);
}

std::string var_name_for_index(uint64_t index) {
  // Base 26 with digits a..z, most significant first ("a" is zero, so 26 is "ba").
  std::string s;
  do {
    s += static_cast<char>('a' + index % 26);
    index /= 26;
  } while (index > 0);
  std::reverse(s.begin(), s.end());
  return s;
}

std::string to_string(const Jaxpr& j, int width) {
  Printer p;
  return format(p.jaxpr(j), width);
}

std::string to_string(const ClosedJaxpr& j, int width) {
  if (!j.jaxpr) return "ClosedJaxpr(None)";
  return to_string(*j.jaxpr, width);
}

std::string eqn_to_string(const Jaxpr& j, size_t eqn_index) {
  Printer p;
  std::vector<Doc> eqns;
  p.jaxpr(j, &eqns);
  if (eqn_index >= eqns.size()) return "<no equation " + std::to_string(eqn_index) + ">";
  return format(eqns[eqn_index], 80);
}

std::unordered_map<uint64_t, std::string> var_names(const Jaxpr& j) {
  Printer p;
  (void)p.jaxpr(j);
  std::unordered_map<uint64_t, std::string> out;
  for (const auto& [id, index] : p.name_indices()) out.emplace(id, var_name_for_index(index));
  return out;
}

std::ostream& operator<<(std::ostream& os, const Jaxpr& j) { return os << to_string(j); }
std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j) { return os << to_string(j); }

}  // namespace tessera
