// Key paths, structure comparison and the error messages of the pytree traits.
#include <cstdio>

#include "tessera/tree.h"
#include "tree/tree_internal.h"

namespace tessera {

namespace detail {

std::string py_str_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == quote || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += quote;
  return out;
}

void throw_node_mismatch(const TreeDef& node, const std::string& expected) {
  throw TreeMismatchError("expected " + expected + ", got " + node.node_str());
}

void throw_scalar_unflatten(const Array& a, const char* type_name) {
  if (!a.defined())
    throw ValueError(
        std::string("[tree_unflatten] cannot convert an empty Array handle to a C++ ") + type_name);
  if (a.is_tracer())
    throw ConcretizationError("[tree_unflatten] cannot convert a traced value (" + a.aval().str() +
                              ") to a C++ " + type_name + "; make the field an Array");
  throw ValueError("[tree_unflatten] cannot convert " + a.aval().str() + " to a C++ " + type_name +
                   "; only size-1 arrays convert to scalars (make the field an Array)");
}

std::string join_type_strs(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

}  // namespace detail

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string temporaries.
std::string SequenceKey::str() const {
  std::string s = "[";
  s += std::to_string(idx);
  return s += "]";
}
std::string DictKey::str() const {
  std::string s = "[";
  s += detail::py_str_repr(key);
  return s += "]";
}
std::string GetAttrKey::str() const { return "." + name; }
std::string FlattenedIndexKey::str() const { return "[<flat index " + std::to_string(key) + ">]"; }

std::string keystr(const KeyPath& path) {
  std::string s;
  for (const PathEntry& e : path) s += std::visit([](const auto& k) { return k.str(); }, e);
  return s;
}

namespace {

PathEntry child_key(const TreeDef& node, size_t i) {
  switch (node.kind()) {
    case TreeKind::kDict:
      return DictKey{node.keys()[i]};
    case TreeKind::kCustom:
      if (!node.keys().empty()) return GetAttrKey{node.keys()[i]};
      return FlattenedIndexKey{static_cast<int64_t>(i)};
    default:
      return SequenceKey{static_cast<int64_t>(i)};
  }
}

void collect_paths(const TreeDef& node, KeyPath& prefix, std::vector<KeyPath>& out) {
  if (node.is_leaf()) {
    out.push_back(prefix);
    return;
  }
  for (size_t i = 0; i < node.children().size(); ++i) {
    prefix.push_back(child_key(node, i));
    collect_paths(node.child(i), prefix, out);
    prefix.pop_back();
  }
}

const char* kind_name(TreeKind k) {
  switch (k) {
    case TreeKind::kLeaf:
      return "a leaf";
    case TreeKind::kNone:
      return "None";
    case TreeKind::kTuple:
      return "tuple";
    case TreeKind::kList:
      return "list";
    case TreeKind::kDict:
      return "dict";
    case TreeKind::kCustom:
      return "a custom node";
  }
  return "?";
}

std::string keys_repr(const std::vector<std::string>& keys) {
  std::string s = "[";
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", " : "") + detail::py_str_repr(keys[i]);
  return s + "]";
}

// The first difference between a and b (depth first), or "" when equal.
std::string first_difference(const TreeDef& a, const TreeDef& b, KeyPath& path) {
  if (a == b) return "";
  auto at = [&](std::string what) { return path.empty() ? what : what + " at " + keystr(path); };
  if (a.kind() != b.kind())
    return at(std::string("Expected ") + kind_name(a.kind()) + ", got " + b.node_str());
  const size_t na = a.children().size(), nb = b.children().size();
  switch (a.kind()) {
    case TreeKind::kTuple:
    case TreeKind::kList:
      if (na != nb)
        return at(std::string(a.kind() == TreeKind::kTuple ? "Tuple" : "List") +
                  " arity mismatch: " + std::to_string(nb) + " != " + std::to_string(na));
      break;
    case TreeKind::kDict:
      if (a.keys() != b.keys())
        return at("Dict key mismatch; expected keys: " + keys_repr(a.keys()) +
                  ", got keys: " + keys_repr(b.keys()));
      break;
    case TreeKind::kCustom:
      if (a.name() != b.name())
        return at("Custom node type mismatch; expected type: " + a.name() +
                  ", got type: " + b.name());
      if (!(a.aux() == b.aux() || (a.aux() && b.aux() && a.aux()->equals(*b.aux()))))
        return at("Custom node auxiliary data mismatch; expected " + a.name() + "[" +
                  (a.aux() ? a.aux()->str() : "None") + "], got " + b.name() + "[" +
                  (b.aux() ? b.aux()->str() : "None") + "]");
      if (na != nb)
        return at("Custom node arity mismatch: " + std::to_string(nb) +
                  " != " + std::to_string(na));
      if (a.keys() != b.keys())
        return at("Custom node key mismatch; expected keys: " + keys_repr(a.keys()) +
                  ", got keys: " + keys_repr(b.keys()));
      break;
    default:
      break;
  }
  for (size_t i = 0; i < na; ++i) {
    path.push_back(child_key(a, i));
    std::string d = first_difference(a.child(i), b.child(i), path);
    path.pop_back();
    if (!d.empty()) return d;
  }
  return "structures differ";  // unreachable for well-formed nodes
}

}  // namespace

std::vector<KeyPath> tree_leaf_paths(const TreeDef& def) {
  std::vector<KeyPath> out;
  out.reserve(static_cast<size_t>(def.num_leaves()));
  KeyPath prefix;
  collect_paths(def, prefix, out);
  return out;
}

void check_same_structure(const TreeDef& expected, const TreeDef& got, std::string_view op,
                          std::string_view context) {
  if (expected == got) return;
  KeyPath path;
  std::string what = first_difference(expected, got, path);
  if (!context.empty()) what += " " + std::string(context);
  throw ValueError(op_message(op, what + "; expected " + expected.str() + " got " + got.str()));
}

}  // namespace tessera
