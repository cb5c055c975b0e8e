// Elaboration of a parsed jaxpr's syntax tree (parser_ast.h) into a typed Jaxpr: vars by name,
// literal values, param values and weak types.
//
// Param texts are read into candidate ParamValues, most likely first (`(0, 1)` is a tuple of
// ints, else a string; `()` an empty tuple of ints or of jaxprs; `None` a missing sub-jaxpr);
// the first combination whose abstract_eval reproduces the printed output types is kept.
// Weak types are not printed: literals take the weak type of the equation's var inputs of the
// same dtype (strong without such inputs; the other reading is tried when that does not
// type-check or breaks a loop's carry types), sub-jaxpr inputs take the weak types of the
// operands they receive, and equation outputs get theirs from abstract_eval. So a weak literal
// passed straight into control flow (lax.cond/while_loop on a Python scalar) reads back strong.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/parser_ast.h"
#include "tessera/errors.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/param_types.h"

namespace tessera::jaxpr_parse {

namespace {

thread_local int64_t t_elaborations = 0;

using JaxprPtr = std::shared_ptr<const Jaxpr>;
using OpaquePtr = std::shared_ptr<const OpaqueParam>;

// ParamValue alternative indices, for the table of known param types.
constexpr size_t kStringIdx = 5, kJaxprListIdx = 8;

// Params whose type the text cannot tell: (primitive or "*", key, ParamValue index).
struct KnownParam {
  const char* prim;
  const char* key;
  size_t index;
};
constexpr KnownParam kKnownParams[] = {
    {"*", "branches", kJaxprListIdx},
    {"*", "name", kStringIdx},
    {"*", "vmap_method", kStringIdx},
};

std::optional<int64_t> parse_int(std::string_view t) {
  if (t.empty()) return std::nullopt;
  int64_t v = 0;
  const char* b = t.data();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, t.data() + t.size(), v);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

// Whether `t` is written as an integer (sign and digits), so that failing parse_int means it
// overflows int64 rather than being another kind of word.
bool looks_like_int(std::string_view t) {
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<double> parse_float(std::string_view t) {
  if (t.empty()) return std::nullopt;
  const std::string s(t);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<DType> parse_dtype_name(std::string_view t) {
  try {
    const DType d = dtype_from_name(t);
    if (dtype_name(d) == t) return d;
  } catch (const ValueError&) {
  }
  return std::nullopt;
}

std::string trim(std::string_view t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  return std::string(t);
}

// A param value as a list of ints: `(1, 2)`, or a Python list `[1, 2]` as JAX prints inside
// dimension_numbers. Integers that overflow int64 are an error at their position.
std::optional<std::vector<int64_t>> int_list(std::string_view src, const ParamAst& v) {
  std::vector<int64_t> xs;
  auto one = [&](const std::string& t, size_t off) {
    if (auto i = parse_int(t)) {
      xs.push_back(*i);
      return true;
    }
    if (looks_like_int(t)) fail_at(src, off, "the integer " + t + " does not fit in int64");
    return false;
  };
  if (v.kind == ParamAst::kTuple) {
    for (const ParamAst& it : v.items)
      if (it.kind != ParamAst::kWord || !one(it.text, it.off)) return std::nullopt;
    return xs;
  }
  const std::string& t = v.text;
  if (v.kind != ParamAst::kWord || t.size() < 2 || t.front() != '[' || t.back() != ']')
    return std::nullopt;
  const std::string body = trim(std::string_view(t).substr(1, t.size() - 2));
  if (body.empty()) return xs;
  size_t from = 0;
  while (true) {
    const size_t comma = body.find(',', from);
    const std::string item = trim(std::string_view(body).substr(from, comma - from));
    if (item.empty() && comma == std::string::npos && from > 0) break;  // trailing comma
    if (!one(item, v.off)) return std::nullopt;
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return xs;
}

// Integers in a structured param's text that do not fit in int64 are an error of their own.
void check_int_words(std::string_view src, std::string_view text, size_t off) {
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != '(' && text[j] != ')' &&
           text[j] != '[' && text[j] != ']' && text[j] != ' ' && text[j] != '=' && text[j] != '\n')
      ++j;
    const std::string_view w = text.substr(i, j - i);
    if (!w.empty() && looks_like_int(w) && !parse_int(w))
      fail_at(src, off, "the integer " + std::string(w) + " does not fit in int64");
    i = j + 1;
  }
}

bool sig_has(const Primitive& p, std::string_view key, ParamKind* kind = nullptr) {
  for (const ParamSpec& ps : p.signature.params)
    if (key == ps.name) {
      if (kind) *kind = ps.kind;
      return true;
    }
  return false;
}

// Params JAX prints that Tessera does not model, for primitives whose signature does not (yet)
// tell: dropped whatever their value.
constexpr std::pair<const char*, const char*> kJaxOnlyParams[] = {
    {"dot_general", "precision"},
    {"dot_general", "out_sharding"},
    {"scan", "linear"},
    {"scan", "_split_transpose"},
    {"*", "out_sharding"},
    {"*", "sharding"},
    {"*", "accuracy"},
};

// JAX's printed params rewritten into Tessera's (syntax only; abstract_eval still checks them).
// nullopt when nothing changes.
std::optional<EqnAst> jax_params(std::string_view src, const Primitive& p, const EqnAst& e) {
  const Signature& sig = p.signature;
  const bool closed = sig.declared() && !sig.open_params;
  std::vector<std::pair<std::string, ParamAst>> out;
  std::map<std::string, const ParamAst*> old_dot;
  bool changed = false;
  for (const auto& [k, v] : e.params) {
    const bool is_none = v.kind == ParamAst::kWord && v.text == "None";
    bool drop = false;
    for (const auto& [prim, key] : kJaxOnlyParams)
      if (k == key && (e.prim == prim || (std::string_view(prim) == "*" && closed)))
        drop = drop || !sig_has(p, k);
    ParamKind kind{};
    const bool known = sig_has(p, k, &kind);
    // `key=None` is JAX's default: a param Tessera leaves out (absent) or does not have.
    if (is_none && ((closed && !known) || (known && kind == ParamKind::kOptionalDType) ||
                    (e.prim == "dot_general" && k == "preferred_element_type")))
      drop = true;
    if (drop) {
      changed = true;
      continue;
    }
    if (e.prim == "dot_general" && k.ends_with("_dimensions") && !sig_has(p, k)) {
      // Tessera's earlier form: four int tuples, read into one dimension_numbers record.
      old_dot[k] = &v;
      changed = true;
      continue;
    }
    out.emplace_back(k, v);
  }
  if (!old_dot.empty()) {
    const char* names[] = {"lhs_contracting_dimensions", "rhs_contracting_dimensions",
                           "lhs_batch_dimensions", "rhs_batch_dimensions"};
    std::vector<int64_t> parts[4];
    size_t off = 0, key_off = 0;
    for (size_t i = 0; i < 4; ++i) {
      auto it = old_dot.find(names[i]);
      if (it == old_dot.end())
        fail_at(src, e.off,
                std::string("dot_general's ") + names[i] +
                    " is missing (give dimension_numbers=((lhs_contracting, "
                    "rhs_contracting), (lhs_batch, rhs_batch)) as JAX prints it)");
      auto xs = int_list(src, *it->second);
      if (!xs) fail_at(src, it->second->off, std::string(names[i]) + " must be a tuple of ints");
      parts[i] = std::move(*xs);
      off = it->second->off;
      key_off = it->second->key_off;
    }
    if (old_dot.size() != 4)
      for (const auto& [k, v] : old_dot)
        if (std::find(std::begin(names), std::end(names), k) == std::end(names))
          fail_at(src, v->key_off, "dot_general has no param '" + k + "'");
    ParamAst d;
    d.kind = ParamAst::kWord;
    d.text =
        param_value_str(DotDimensionNumbers{parts[0], parts[1], parts[2], parts[3]}.to_param());
    d.off = off;
    d.key_off = key_off;
    out.emplace_back("dimension_numbers", std::move(d));
  }
  if (!changed) return std::nullopt;
  EqnAst n = e;
  n.params = std::move(out);
  return n;
}

std::string avals_str(const std::vector<Aval>& as) {
  std::string s = "(";
  for (size_t i = 0; i < as.size(); ++i) s += (i ? ", " : "") + as[i].str();
  return s + ")";
}

class Elaborator {
 public:
  explicit Elaborator(std::string_view src) : src_(src) {}

  // in_avals: exact input avals (top level); weak: weak flags for the invars (sub-jaxprs).
  Jaxpr jaxpr(const JaxprAst& a, const std::vector<Aval>* in_avals,
              const std::vector<Aval>* const_avals, const std::vector<bool>* weak) {
    ++t_elaborations;
    Env env;
    Jaxpr j;
    auto bind_inputs = [&](const std::vector<BinderAst>& bs, const std::vector<Aval>* exact,
                           const std::vector<bool>* weak_flags, const char* what,
                           std::vector<Var>& out) {
      if (exact && exact->size() != bs.size())
        fail_at(src_, a.off,
                std::string("the options give ") + std::to_string(exact->size()) + " " + what +
                    " avals but the jaxpr has " + std::to_string(bs.size()) + " " + what);
      for (size_t i = 0; i < bs.size(); ++i) {
        Aval av{bs[i].type.shape, bs[i].type.dtype, false};
        if (exact) {
          const Aval& x = (*exact)[i];
          if (x.shape != av.shape || x.dtype != av.dtype)
            fail_at(src_, bs[i].off,
                    std::string("the options type ") + what + " " + std::to_string(i) + " " +
                        x.str() + " but the text says " + av.str());
          av = x;
        } else if (weak_flags && weak_flags->size() == bs.size()) {
          av.weak_type = (*weak_flags)[i];
        }
        if (bs[i].name == "_") fail_at(src_, bs[i].off, "a jaxpr input cannot be dropped ('_')");
        out.push_back(define(env, bs[i], av));
      }
    };
    bind_inputs(a.constvars, const_avals, nullptr, "constvars", j.constvars);
    bind_inputs(a.invars, in_avals, weak, "invars", j.invars);
    for (const EqnAst& e : a.eqns) {
      j.eqns.push_back(eqn(e, env));
      j.effects = effects_union(j.effects, j.eqns.back().effects);
    }
    for (const AtomAst& o : a.outs) j.outvars.push_back(atom(o, env, false));
    return j;
  }

 private:
  using Env = std::unordered_map<std::string, Var>;
  std::string_view src_;
  // Sub-jaxprs already elaborated, by syntax node and input weak types: a sub-jaxpr is closed,
  // so these determine it. Without this, each candidate reading of an enclosing equation would
  // elaborate its sub-jaxprs again, exponential in the nesting depth.
  std::map<std::pair<const JaxprAst*, std::vector<bool>>, JaxprPtr> memo_;

  Var define(Env& env, const BinderAst& b, const Aval& av) {
    if (b.name == "_") return Var::dropped(av);
    if (env.count(b.name)) fail_at(src_, b.off, "the variable '" + b.name + "' is defined twice");
    Var v(av);
    env.emplace(b.name, v);
    return v;
  }

  Atom atom(const AtomAst& a, const Env& env, bool weak) {
    if (!a.is_literal) {
      auto it = env.find(a.text);
      if (it == env.end())
        fail_at(src_, a.off, "the variable '" + a.text + "' is used before it is defined");
      return it->second;
    }
    return literal(a, weak);
  }

  Literal literal(const AtomAst& a, bool weak) {
    const DType d = a.type.dtype;
    if (!a.type.shape.empty())
      fail_at(src_, a.type.off,
              "a literal must have a scalar type such as f32[], got " +
                  Aval{a.type.shape, d, false}.str());
    const Aval aval{{}, d, weak};
    unsigned char buf[16] = {};
    const std::string& t = a.text;
    auto bad = [&](const char* what) {
      fail_at(src_, a.off,
              "'" + t + "' is not " + what + " (the literal is typed " + aval.str() + ")");
    };
    if (is_bool(d)) {
      if (t != "True" && t != "False") bad("True or False");
      store_from_double(d, buf, t == "True" ? 1.0 : 0.0);
    } else if (d == DType::kUInt64) {
      uint64_t v = 0;
      auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      if (r.ec != std::errc() || r.ptr != t.data() + t.size()) bad("a uint64 value");
      std::memcpy(buf, &v, sizeof v);
    } else if (is_integer(d)) {
      std::optional<int64_t> v = parse_int(t);
      if (!v) bad(looks_like_int(t) ? "in range of its dtype" : "an integer");
      if (d == DType::kInt64) {
        std::memcpy(buf, &*v, sizeof *v);
      } else {
        store_from_double(d, buf, static_cast<double>(*v));
        if (load_as_double(d, buf) != static_cast<double>(*v)) bad("in range of its dtype");
      }
    } else if (is_floating(d)) {
      std::optional<double> v = parse_float(t);
      if (!v) bad("a floating-point value");
      store_from_double(d, buf, *v);
    } else {
      fail_at(src_, a.type.off,
              "literals of dtype " + std::string(dtype_name(d)) + " are not supported");
    }
    return Literal(array_from_host(aval, buf));
  }

  [[noreturn]] void opaque(const EqnAst& e, const std::string& key, const ParamAst& v) {
    fail_at(src_, v.off,
            "the param '" + key + "' of '" + e.prim + "' is opaque (" + v.text +
                "): jaxprs holding C++/Python callables (custom_jvp/custom_vjp rules, callbacks, "
                "checkpoint policies) cannot be parsed from text");
  }

  // Weak flags for a sub-jaxpr's inputs from the operands it receives.
  std::vector<bool> sub_weak(const EqnAst& e, const std::string& key, size_t n_sub,
                             const std::vector<Aval>& ins) {
    auto int_param = [&](const char* k) -> size_t {
      for (const auto& [pk, pv] : e.params)
        if (pk == k)
          if (auto v = parse_int(pv.text)) return static_cast<size_t>(std::max<int64_t>(0, *v));
      return 0;
    };
    std::vector<bool> w;
    if (e.prim == "reduce") {
      // The computation is traced on strong scalars of the init values' dtypes.
    } else if (key == "cond_jaxpr" || key == "body_jaxpr") {
      const size_t cn = int_param("cond_nconsts"), bn = int_param("body_nconsts");
      const size_t lo = key == "cond_jaxpr" ? 0 : cn, hi = key == "cond_jaxpr" ? cn : cn + bn;
      for (size_t i = lo; i < hi && i < ins.size(); ++i) w.push_back(ins[i].weak_type);
      for (size_t i = cn + bn; i < ins.size(); ++i) w.push_back(ins[i].weak_type);
    } else if (n_sub == ins.size()) {
      for (const Aval& a : ins) w.push_back(a.weak_type);
    } else if (n_sub + 1 == ins.size()) {
      for (size_t i = 1; i < ins.size(); ++i) w.push_back(ins[i].weak_type);
    }
    if (w.size() != n_sub) w.assign(n_sub, false);
    return w;
  }

  JaxprPtr sub_jaxpr(const EqnAst& e, const std::string& key, const JaxprAst& a,
                     const std::vector<Aval>& ins, bool use_hints) {
    std::vector<bool> w = use_hints ? sub_weak(e, key, a.invars.size(), ins)
                                    : std::vector<bool>(a.invars.size(), false);
    if (!a.constvars.empty()) fail_at(src_, a.off, "a sub-jaxpr in a param cannot have constvars");
    auto memo_key = std::make_pair(&a, std::move(w));
    auto it = memo_.find(memo_key);
    if (it != memo_.end()) return it->second;
    JaxprPtr j = intern(jaxpr(a, nullptr, nullptr, &memo_key.second));
    memo_.emplace(std::move(memo_key), j);
    return j;
  }

  // Candidate readings of a param value, most likely first.
  std::vector<ParamValue> candidates(const EqnAst& e, const std::string& key, const ParamAst& v,
                                     const std::vector<Aval>& ins, bool use_hints) {
    std::vector<ParamValue> c;
    // Structured params (tuples, enums, records) are read as the signature says.
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& ps : find_primitive(e.prim)->signature.params)
      if (key == ps.name) spec = &ps;
    if (spec && (spec->kind == ParamKind::kTuple || spec->kind == ParamKind::kEnum ||
                 spec->kind == ParamKind::kRecord)) {
      check_int_words(src_, v.text, v.off);
      auto pv = parse_param_text(v.text, spec);
      if (!pv) {
        std::string want = "a tuple";
        if (spec->record_def) {
          // An example of the form: the record with empty fields, as JAX prints it.
          const RecordDef& d = *spec->record_def;
          want = std::string("a ") + d.name + " written as JAX prints it, e.g. " +
                 param_value_str(make_record_param(
                     d, std::vector<ParamValue>(d.fields.size(), std::vector<int64_t>{})));
        } else if (spec->enum_def) {
          want = std::string("a ") + spec->enum_def->name + " value such as " +
                 spec->enum_def->name + "." + spec->enum_def->members.front();
        }
        fail_at(src_, v.off, e.prim + "'s " + key + " must be " + want + ", got " + v.text);
      }
      c.push_back(std::move(*pv));
      return c;
    }
    switch (v.kind) {
      case ParamAst::kOpaque:
        opaque(e, key, v);
      case ParamAst::kJaxpr:
        c.push_back(sub_jaxpr(e, key, *v.jaxpr, ins, use_hints));
        break;
      case ParamAst::kWord: {
        const std::string& t = v.text;
        if (t == "True" || t == "False") {
          c.push_back(t == "True");
        } else if (auto i = parse_int(t)) {
          c.push_back(*i);
        } else if (looks_like_int(t)) {
          fail_at(src_, v.off,
                  "the integer " + t + " of the param '" + key + "' does not fit in int64");
        } else if (auto xs = int_list(src_, v)) {
          c.push_back(std::move(*xs));  // a Python list of ints, as JAX prints some params
        } else if (auto f = parse_float(t)) {
          c.push_back(*f);
        } else if (t == "None") {
          c.push_back(JaxprPtr());
          c.push_back(OpaquePtr());
        } else if (auto d = parse_dtype_name(t)) {
          c.push_back(*d);
        }
        c.push_back(t);
        break;
      }
      case ParamAst::kTuple: {
        bool jaxprs = true;
        for (const ParamAst& it : v.items) {
          if (it.kind == ParamAst::kOpaque) opaque(e, key, it);
          jaxprs = jaxprs && (it.kind == ParamAst::kJaxpr ||
                              (it.kind == ParamAst::kWord && it.text == "None"));
        }
        if (auto xs = int_list(src_, v)) {
          c.push_back(std::move(*xs));
        } else if (!v.items.empty()) {
          // JAX's nested form (pad's padding_config=((1, 2, 0),)): the ints flattened.
          std::vector<int64_t> flat;
          bool nested = true;
          for (const ParamAst& it : v.items) {
            auto xs = it.kind == ParamAst::kWord && it.text.front() != '[' ? std::nullopt
                                                                           : int_list(src_, it);
            if (!xs) {
              nested = false;
              break;
            }
            flat.insert(flat.end(), xs->begin(), xs->end());
          }
          if (nested) c.push_back(std::move(flat));
        }
        if (jaxprs) {
          JaxprList js;
          for (const ParamAst& it : v.items)
            js.push_back(it.kind == ParamAst::kJaxpr ? sub_jaxpr(e, key, *it.jaxpr, ins, use_hints)
                                                     : JaxprPtr());
          c.push_back(std::move(js));
        }
        if (!jaxprs || v.items.empty()) c.push_back(v.text);
        break;
      }
    }
    for (const KnownParam& k : kKnownParams) {
      if ((std::string_view(k.prim) == "*" || e.prim == k.prim) && key == k.key) {
        std::stable_partition(c.begin(), c.end(),
                              [&](const ParamValue& x) { return x.index() == k.index; });
        break;
      }
    }
    return c;
  }

  // Checks a candidate: "" when abstract_eval reproduces the printed output types.
  std::string check(const Primitive& p, const EqnAst& e, const std::vector<Aval>& ins,
                    const Params& params, std::vector<Aval>& outs) {
    try {
      outs = abstract_eval(p, ins, params);
    } catch (const std::exception& ex) {
      return "'" + e.prim + "' does not accept the inputs " + avals_str(ins) + " with [" +
             params.str() + "]: " + ex.what();
    }
    if (outs.size() != e.outs.size())
      return "'" + e.prim + "' produces " + std::to_string(outs.size()) + " outputs " +
             avals_str(outs) + " but the equation binds " + std::to_string(e.outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const TypeAst& t = e.outs[i].type;
      if (outs[i].dtype != t.dtype || outs[i].shape != t.shape)
        return "'" + e.prim + "' produces " + outs[i].str() + " for output " + std::to_string(i) +
               " but the text types it " + Aval{t.shape, t.dtype, false}.str();
    }
    return "";
  }

  JaxprEqn eqn(const EqnAst& raw, Env& env) {
    const Primitive* p = find_primitive(raw.prim);
    if (!p) fail_at(src_, raw.prim_off, "unknown primitive '" + raw.prim + "'");
    if (!p->abstract_eval)
      fail_at(src_, raw.prim_off, "the primitive '" + raw.prim + "' has no abstract-eval rule");
    const std::optional<EqnAst> norm = jax_params(src_, *p, raw);
    const EqnAst& e = norm ? *norm : raw;
    std::unordered_set<std::string_view> keys;
    const Signature& sig = p->signature;
    for (const auto& [k, v] : e.params) {
      if (!keys.insert(k).second) fail_at(src_, v.key_off, "the param '" + k + "' is given twice");
      // Unknown params fail here, at their position (and before readings are combined).
      if (sig.declared() && !sig.open_params && !sig_has(*p, k)) {
        std::string takes;
        for (const ParamSpec& ps : sig.params)
          takes += (takes.empty() ? "" : ", ") + std::string(ps.name);
        fail_at(src_, v.key_off,
                "'" + e.prim + "' has no param '" + k + "'; it takes {" + takes + "}");
      }
    }
    // Literal weak types: that of the var inputs of the same dtype when all are weak.
    std::vector<Atom> base;
    bool any_literal = false;
    for (const AtomAst& a : e.ins) {
      if (a.is_literal) {
        base.emplace_back(Var());
        any_literal = true;
      } else {
        base.push_back(atom(a, env, false));
      }
    }
    bool any_sub = false;
    for (const auto& kv : e.params) {
      any_sub = any_sub || kv.second.kind == ParamAst::kJaxpr;
      for (const ParamAst& it : kv.second.items) any_sub = any_sub || it.kind == ParamAst::kJaxpr;
    }
    auto make_ins = [&](bool flip) {
      std::vector<Atom> ins = base;
      for (size_t i = 0; i < e.ins.size(); ++i) {
        if (!e.ins[i].is_literal) continue;
        bool all_weak = true, any = false;
        for (const Atom& b : base)
          if (const Var* v = std::get_if<Var>(&b))
            if (v->valid() && v->aval().dtype == e.ins[i].type.dtype) {
              any = true;
              all_weak = all_weak && v->aval().weak_type;
            }
        ins[i] = literal(e.ins[i], (any && all_weak) != flip);
      }
      return ins;
    };
    struct Reading {
      std::vector<Atom> ins;
      Params params;
      std::vector<Aval> outs;
    };
    std::optional<Reading> fallback;
    std::string first_error;
    for (int hints = 1; hints >= (any_sub ? 0 : 1); --hints) {
      for (int flip = 0; flip <= (any_literal ? 1 : 0); ++flip) {
        std::vector<Atom> ins = make_ins(flip != 0);
        std::vector<Aval> in_avals;
        for (const Atom& a : ins) in_avals.push_back(atom_aval(a));
        std::vector<std::vector<ParamValue>> cands;
        for (const auto& [k, v] : e.params) cands.push_back(candidates(e, k, v, in_avals, hints));
        std::vector<size_t> pick(cands.size(), 0);
        for (int tries = 0; tries < 512; ++tries) {
          Params params;
          for (size_t i = 0; i < cands.size(); ++i)
            params.set(e.params[i].first, cands[i][pick[i]]);
          std::vector<Aval> outs;
          std::string err = check(*p, e, in_avals, params, outs);
          if (err.empty()) {
            if (carries_consistent(e, in_avals, params)) return build(p, e, env, ins, params, outs);
            if (!fallback) fallback = Reading{ins, params, outs};
          }
          if (first_error.empty()) first_error = err;
          size_t k = 0;  // next combination (odometer)
          while (k < pick.size() && ++pick[k] == cands[k].size()) pick[k++] = 0;
          if (k == pick.size()) break;
        }
      }
    }
    if (fallback) return build(p, e, env, fallback->ins, fallback->params, fallback->outs);
    fail_at(src_, e.off, "the equation does not type-check: " + first_error);
  }

  JaxprEqn build(const Primitive* p, const EqnAst& e, Env& env, std::vector<Atom> ins,
                 Params params, const std::vector<Aval>& outs) {
    JaxprEqn q;
    q.invars = std::move(ins);
    q.primitive = p;
    q.params = std::move(params);
    q.effects = primitive_effects(*p);
    if (p->effects) q.effects = effects_union(q.effects, make_effects(p->effects(q.params)));
    for (size_t i = 0; i < outs.size(); ++i) q.outvars.push_back(define(env, e.outs[i], outs[i]));
    return q;
  }

  // Whether a loop's carries keep their weak types through the body (JAX requires identical
  // carry types). Readings where they differ are kept only when no other one type-checks.
  static bool carries_consistent(const EqnAst& e, const std::vector<Aval>& ins,
                                 const Params& params) {
    auto num = [&](const char* k) -> int64_t {
      if (!params.has(k)) return -1;
      const auto* v = std::get_if<int64_t>(&params.at(k));
      return v ? *v : -1;
    };
    auto sub = [&](const char* k) -> const Jaxpr* {
      if (!params.has(k)) return nullptr;
      const auto* v = std::get_if<JaxprPtr>(&params.at(k));
      return v ? v->get() : nullptr;
    };
    const Jaxpr* body = nullptr;
    int64_t body_consts = 0, operand_start = 0, ncarry = 0;
    if (e.prim == "scan") {
      body = sub("jaxpr");
      body_consts = operand_start = num("num_consts");
      ncarry = num("num_carry");
    } else if (e.prim == "while") {
      body = sub("body_jaxpr");
      body_consts = num("body_nconsts");
      const int64_t cond_consts = num("cond_nconsts");
      // Counts beyond the operands are rejected by abstract_eval; never add them (overflow).
      if (cond_consts < 0 || body_consts < 0 || cond_consts > static_cast<int64_t>(ins.size()) ||
          body_consts > static_cast<int64_t>(ins.size()))
        return true;
      operand_start = cond_consts + body_consts;
      ncarry = static_cast<int64_t>(ins.size()) - operand_start;
    }
    const int64_t n_ins = static_cast<int64_t>(ins.size());
    if (!body || body_consts < 0 || body_consts > n_ins || operand_start < 0 ||
        operand_start > n_ins || ncarry < 0 || ncarry > n_ins)
      return true;
    for (int64_t i = 0; i < ncarry; ++i) {
      const size_t in = static_cast<size_t>(body_consts + i),
                   op = static_cast<size_t>(operand_start + i);
      if (in >= body->invars.size() || static_cast<size_t>(i) >= body->outvars.size() ||
          op >= ins.size())
        return true;
      const bool w = body->invars[in].aval().weak_type;
      if (w != atom_aval(body->outvars[static_cast<size_t>(i)]).weak_type || w != ins[op].weak_type)
        return false;
    }
    return true;
  }
};

}  // namespace

int64_t jaxpr_elaboration_count() { return t_elaborations; }

}  // namespace tessera::jaxpr_parse

namespace tessera {

Jaxpr parse_jaxpr(std::string_view text, const ParseJaxprOptions& options) {
  register_all();
  std::shared_ptr<jaxpr_parse::JaxprAst> ast = jaxpr_parse::read_jaxpr_text(text);
  jaxpr_parse::Elaborator el(text);
  Jaxpr j = el.jaxpr(*ast, options.invar_avals.empty() ? nullptr : &options.invar_avals,
                     options.constvar_avals.empty() ? nullptr : &options.constvar_avals, nullptr);
  try {
    verify(j);
  } catch (const InternalError& e) {
    throw ValueError(
        op_message("parse_jaxpr", std::string("the parsed jaxpr does not verify: ") + e.what()));
  }
  return j;
}

std::shared_ptr<const Jaxpr> parse_jaxpr_interned(std::string_view text,
                                                  const ParseJaxprOptions& options) {
  return intern(parse_jaxpr(text, options));
}

}  // namespace tessera
