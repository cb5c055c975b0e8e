// Pytrees (jax.tree_util): nested containers of arrays flatten to a list of leaves plus a
// hashable TreeDef. The TreeDef is a runtime tree whose nodes carry opaque aux data (so Python
// classes fit later); C++ types map to it through TreeTraits at the API edge only. The
// transformation core works on std::vector<Array> + TreeDef and is not templated.
//
//   struct Params { Array w, b; };
//   TESSERA_REGISTER_PYTREE(Params, w, b);   // at namespace scope, in Params's namespace
//   auto [leaves, def] = tessera::tree_flatten(std::make_tuple(params, 1.0));
//   def.str();  // "PyTreeDef((CustomNode(Params[None], [*, *]), *))"
//   auto p2 = tessera::tree::map([](const Array& x) { return lax::neg(x); }, params);
//
// Supported C++ types: Array (leaf), arithmetic scalars (leaf: weakly typed rank-0 arrays,
// bool strong), std::vector / std::array (list), std::tuple / std::pair (tuple),
// std::map<std::string, T> (dict, keys sorted), std::optional<T> (None when empty, as JAX
// treats None: a node with no children), and structs registered with TESSERA_REGISTER_PYTREE.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/errors.h"
#include "tessera/numpy.h"

namespace tessera {

// Opaque, hashable aux data of a custom node (static fields, a Python class's aux, ...).
class TreeAux {
 public:
  virtual ~TreeAux() = default;
  virtual size_t hash() const = 0;
  virtual bool equals(const TreeAux& other) const = 0;
  // Printed inside CustomNode(Name[<str>], [...]).
  virtual std::string str() const = 0;
};

enum class TreeKind { kLeaf, kNone, kTuple, kList, kDict, kCustom };

struct TreeNode;

// The structure of a pytree. Immutable and cheap to copy (a shared node). The default
// TreeDef is a single leaf, PyTreeDef(*).
class TreeDef {
 public:
  TreeDef();
  static TreeDef leaf();
  static TreeDef none();
  static TreeDef tuple(std::vector<TreeDef> children);
  static TreeDef list(std::vector<TreeDef> children);
  // Keys are sorted (as JAX sorts dict keys) and children permuted to match; duplicate keys
  // raise ValueError.
  static TreeDef dict(std::vector<std::string> keys, std::vector<TreeDef> children);
  // A registered type: `name` identifies it; `aux` may be null (prints as None); `keys`, when
  // given, name the children for key paths (GetAttrKey), else FlattenedIndexKey is used.
  static TreeDef custom(std::string name, std::shared_ptr<const TreeAux> aux,
                        std::vector<TreeDef> children, std::vector<std::string> keys = {});

  TreeKind kind() const;
  bool is_leaf() const { return kind() == TreeKind::kLeaf; }
  bool is_none() const { return kind() == TreeKind::kNone; }
  int64_t num_leaves() const;
  // All nodes, leaves and None included (as JAX's num_nodes).
  int64_t num_nodes() const;
  const std::vector<TreeDef>& children() const;
  const TreeDef& child(size_t i) const { return children()[i]; }
  // Dict keys (sorted) or a custom node's child key names (may be empty).
  const std::vector<std::string>& keys() const;
  // A custom node's type name ("" otherwise) and aux data (may be null).
  const std::string& name() const;
  const std::shared_ptr<const TreeAux>& aux() const;

  size_t hash() const;
  bool operator==(const TreeDef& o) const;
  bool operator!=(const TreeDef& o) const { return !(*this == o); }
  // As JAX: "PyTreeDef((*, {'a': *, 'b': [*, *]}))".
  std::string str() const;
  // The structure without the PyTreeDef(...) wrapper: "(*, {'a': *, 'b': [*, *]})".
  std::string node_str() const;

 private:
  explicit TreeDef(std::shared_ptr<const TreeNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const TreeNode> node_;
};
std::ostream& operator<<(std::ostream& os, const TreeDef& t);

// ---- key paths (jax.tree_util's key types) ----
struct SequenceKey {  // tuple/list index: "[0]"
  int64_t idx;
  std::string str() const;
  bool operator==(const SequenceKey&) const = default;
};
struct DictKey {  // dict key: "['a']"
  std::string key;
  std::string str() const;
  bool operator==(const DictKey&) const = default;
};
struct GetAttrKey {  // registered struct field: ".w"
  std::string name;
  std::string str() const;
  bool operator==(const GetAttrKey&) const = default;
};
struct FlattenedIndexKey {  // custom node child without a name: "[<flat index 0>]"
  int64_t key;
  std::string str() const;
  bool operator==(const FlattenedIndexKey&) const = default;
};
using PathEntry = std::variant<SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey>;
using KeyPath = std::vector<PathEntry>;
std::string keystr(const KeyPath& path);
// The key path of every leaf of `def`, in leaf order.
std::vector<KeyPath> tree_leaf_paths(const TreeDef& def);

// Raises ValueError "[op] <what mismatched> at <path>; expected PyTreeDef(..) got PyTreeDef(..)"
// unless the two structures are equal. `context` (e.g. "in tree argument 2") is appended to
// the description when non-empty.
void check_same_structure(const TreeDef& expected, const TreeDef& got, std::string_view op,
                          std::string_view context = {});

// ---- C++ types <-> TreeDef ----
// TreeTraits<T>: static TreeDef flatten(const T&, std::vector<Array>& leaves) appends T's leaves
// and returns its node; static T unflatten(const TreeDef& node, LeafIter& it) consumes leaves;
// static std::string type_str() describes the structure T accepts (for error messages).
template <class T>
struct TreeTraits;
using LeafIter = std::vector<Array>::const_iterator;

template <class T>
concept Pytree = requires(const T& x, std::vector<Array>& leaves, const TreeDef& d, LeafIter& it) {
  { TreeTraits<T>::flatten(x, leaves) } -> std::same_as<TreeDef>;
  { TreeTraits<T>::unflatten(d, it) } -> std::same_as<T>;
};

namespace detail {
// Thrown by TreeTraits::unflatten when a node does not fit the C++ type; tree_unflatten
// rethrows it as a ValueError showing both structures.
class TreeMismatchError : public ValueError {
 public:
  using ValueError::ValueError;
};
[[noreturn]] void throw_node_mismatch(const TreeDef& node, const std::string& expected);
[[noreturn]] void throw_scalar_unflatten(const Array& a, const char* type_name);
std::string join_type_strs(const std::vector<std::string>& parts);
// open + inner + close, by appending: g++ 12 warns falsely (-Wrestrict) on
// `"literal" + std::string&&` in user code that instantiates these.
inline std::string bracket(const char* open, const std::string& inner, const char* close) {
  std::string s = open;
  s += inner;
  s += close;
  return s;
}

template <class T>
constexpr const char* scalar_type_name() {
  if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, long double>)
    return "long double";
  else if constexpr (std::is_same_v<T, char>)
    return "char";
  else if constexpr (std::is_same_v<T, signed char>)
    return "signed char";
  else if constexpr (std::is_same_v<T, unsigned char>)
    return "unsigned char";
  else if constexpr (std::is_same_v<T, short>)
    return "short";
  else if constexpr (std::is_same_v<T, unsigned short>)
    return "unsigned short";
  else if constexpr (std::is_same_v<T, int>)
    return "int";
  else if constexpr (std::is_same_v<T, unsigned>)
    return "unsigned int";
  else if constexpr (std::is_same_v<T, long>)
    return "long";
  else if constexpr (std::is_same_v<T, unsigned long>)
    return "unsigned long";
  else if constexpr (std::is_same_v<T, long long>)
    return "long long";
  else if constexpr (std::is_same_v<T, unsigned long long>)
    return "unsigned long long";
  else
    return "scalar";
}

template <class T>
void expect_kind(const TreeDef& node, TreeKind kind, size_t arity) {
  if (node.kind() != kind || node.children().size() != arity)
    throw_node_mismatch(node, TreeTraits<T>::type_str());
}

// Registered structs: TESSERA_REGISTER_PYTREE defines tessera_pytree_fields(TreeTypeTag<T>) and
// tessera_pytree_name(TreeTypeTag<T>) next to T, found by argument-dependent lookup.
template <class T>
struct TreeTypeTag {};
template <class C, class M>
struct TreeField {
  const char* name;
  M C::*ptr;
};
template <class C, class M>
constexpr TreeField<C, M> tree_field(const char* name, M C::*ptr) {
  return {name, ptr};
}
// Always false, for a static_assert that fires only when instantiated.
template <class T>
inline constexpr bool kNotAPytree = false;

template <class T>
concept RegisteredTreeStruct = requires {
  tessera_pytree_fields(TreeTypeTag<T>{});
  { tessera_pytree_name(TreeTypeTag<T>{}) } -> std::convertible_to<const char*>;
};
}  // namespace detail

template <>
struct TreeTraits<Array> {
  static TreeDef flatten(const Array& x, std::vector<Array>& leaves) {
    leaves.push_back(x);
    return TreeDef::leaf();
  }
  static Array unflatten(const TreeDef& node, LeafIter& it) {
    detail::expect_kind<Array>(node, TreeKind::kLeaf, 0);
    return *it++;
  }
  static std::string type_str() { return "*"; }
};

// Scalars flatten to weakly typed rank-0 arrays (bool strong), as jnp.asarray does; they
// unflatten from concrete size-1 arrays only.
template <class T>
requires std::is_arithmetic_v<T>
struct TreeTraits<T> {
  static TreeDef flatten(const T& x, std::vector<Array>& leaves) {
    leaves.push_back(numpy::asarray(numpy::ArrayLike(x)));
    return TreeDef::leaf();
  }
  static T unflatten(const TreeDef& node, LeafIter& it) {
    detail::expect_kind<T>(node, TreeKind::kLeaf, 0);
    const Array& a = *it++;
    if (!a.is_concrete() || a.size() != 1)
      detail::throw_scalar_unflatten(a, detail::scalar_type_name<T>());
    return a.item<T>();
  }
  static std::string type_str() { return "*"; }
};

template <class T>
struct TreeTraits<std::vector<T>> {
  static TreeDef flatten(const std::vector<T>& x, std::vector<Array>& leaves) {
    std::vector<TreeDef> children;
    children.reserve(x.size());
    for (const T& e : x) children.push_back(TreeTraits<T>::flatten(e, leaves));
    return TreeDef::list(std::move(children));
  }
  static std::vector<T> unflatten(const TreeDef& node, LeafIter& it) {
    if (node.kind() != TreeKind::kList) detail::throw_node_mismatch(node, type_str());
    std::vector<T> out;
    out.reserve(node.children().size());
    for (const TreeDef& c : node.children()) out.push_back(TreeTraits<T>::unflatten(c, it));
    return out;
  }
  static std::string type_str() {
    return detail::bracket("[", TreeTraits<T>::type_str(), ", ...]");
  }
};

template <class T, size_t N>
struct TreeTraits<std::array<T, N>> {
  static TreeDef flatten(const std::array<T, N>& x, std::vector<Array>& leaves) {
    std::vector<TreeDef> children;
    children.reserve(N);
    for (const T& e : x) children.push_back(TreeTraits<T>::flatten(e, leaves));
    return TreeDef::list(std::move(children));
  }
  static std::array<T, N> unflatten(const TreeDef& node, LeafIter& it) {
    detail::expect_kind<std::array<T, N>>(node, TreeKind::kList, N);
    return [&]<size_t... I>(std::index_sequence<I...>) {
      // Braced initialization evaluates left to right, so leaves are consumed in order.
      return std::array<T, N>{TreeTraits<T>::unflatten(node.child(I), it)...};
    }
    (std::make_index_sequence<N>{});
  }
  static std::string type_str() {
    return detail::bracket(
        "[", detail::join_type_strs(std::vector<std::string>(N, TreeTraits<T>::type_str())), "]");
  }
};

template <class... Ts>
struct TreeTraits<std::tuple<Ts...>> {
  using Tuple = std::tuple<Ts...>;
  static TreeDef flatten(const Tuple& x, std::vector<Array>& leaves) {
    std::vector<TreeDef> children;
    children.reserve(sizeof...(Ts));
    std::apply(
        [&](const Ts&... e) { (children.push_back(TreeTraits<Ts>::flatten(e, leaves)), ...); }, x);
    return TreeDef::tuple(std::move(children));
  }
  static Tuple unflatten(const TreeDef& node, LeafIter& it) {
    detail::expect_kind<Tuple>(node, TreeKind::kTuple, sizeof...(Ts));
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return Tuple{TreeTraits<Ts>::unflatten(node.child(I), it)...};
    }
    (std::index_sequence_for<Ts...>{});
  }
  static std::string type_str() {
    std::string s = detail::join_type_strs({TreeTraits<Ts>::type_str()...});
    return detail::bracket("(", s, sizeof...(Ts) == 1 ? ",)" : ")");
  }
};

template <class A, class B>
struct TreeTraits<std::pair<A, B>> {
  static TreeDef flatten(const std::pair<A, B>& x, std::vector<Array>& leaves) {
    TreeDef a = TreeTraits<A>::flatten(x.first, leaves);
    TreeDef b = TreeTraits<B>::flatten(x.second, leaves);
    return TreeDef::tuple({std::move(a), std::move(b)});
  }
  static std::pair<A, B> unflatten(const TreeDef& node, LeafIter& it) {
    detail::expect_kind<std::pair<A, B>>(node, TreeKind::kTuple, 2);
    return std::pair<A, B>{TreeTraits<A>::unflatten(node.child(0), it),
                           TreeTraits<B>::unflatten(node.child(1), it)};
  }
  static std::string type_str() {
    std::string inner = TreeTraits<A>::type_str();
    inner += ", ";
    inner += TreeTraits<B>::type_str();
    return detail::bracket("(", inner, ")");
  }
};

template <class T>
struct TreeTraits<std::map<std::string, T>> {
  using Map = std::map<std::string, T>;
  static TreeDef flatten(const Map& x, std::vector<Array>& leaves) {
    // std::map iterates in byte order of the keys: the order JAX sorts str keys in.
    std::vector<std::string> keys;
    std::vector<TreeDef> children;
    keys.reserve(x.size());
    children.reserve(x.size());
    for (const auto& [k, v] : x) {
      keys.push_back(k);
      children.push_back(TreeTraits<T>::flatten(v, leaves));
    }
    return TreeDef::dict(std::move(keys), std::move(children));
  }
  static Map unflatten(const TreeDef& node, LeafIter& it) {
    if (node.kind() != TreeKind::kDict) detail::throw_node_mismatch(node, type_str());
    Map out;
    for (size_t i = 0; i < node.children().size(); ++i)
      out.emplace(node.keys()[i], TreeTraits<T>::unflatten(node.child(i), it));
    return out;
  }
  static std::string type_str() {
    return detail::bracket("{str: ", TreeTraits<T>::type_str(), ", ...}");
  }
};

// Empty is None (a node without children); a value is its own node, as JAX treats None.
template <class T>
struct TreeTraits<std::optional<T>> {
  static TreeDef flatten(const std::optional<T>& x, std::vector<Array>& leaves) {
    return x ? TreeTraits<T>::flatten(*x, leaves) : TreeDef::none();
  }
  static std::optional<T> unflatten(const TreeDef& node, LeafIter& it) {
    if (node.is_none()) return std::nullopt;
    return TreeTraits<T>::unflatten(node, it);
  }
  static std::string type_str() {
    return detail::bracket("Optional[", TreeTraits<T>::type_str(), "]");
  }
};

// Structs registered with TESSERA_REGISTER_PYTREE: a Custom node named after the type, with
// no aux data and the fields as children (key paths .field). Unflatten default-constructs the
// struct and assigns the fields.
template <class T>
requires detail::RegisteredTreeStruct<T>
struct TreeTraits<T> {
  static auto fields() { return tessera_pytree_fields(detail::TreeTypeTag<T>{}); }
  static const std::string& name() {
    static const std::string n = tessera_pytree_name(detail::TreeTypeTag<T>{});
    return n;
  }
  static const std::vector<std::string>& keys() {
    static const std::vector<std::string> k = std::apply(
        [](const auto&... f) { return std::vector<std::string>{std::string(f.name)...}; },
        fields());
    return k;
  }
  template <class F>
  using Member = std::remove_cvref_t<decltype(std::declval<const T&>().*(std::declval<F>().ptr))>;

  static TreeDef flatten(const T& x, std::vector<Array>& leaves) {
    std::vector<TreeDef> children;
    std::apply(
        [&](const auto&... f) {
          (children.push_back(TreeTraits<Member<decltype(f)>>::flatten(x.*(f.ptr), leaves)), ...);
        },
        fields());
    return TreeDef::custom(name(), nullptr, std::move(children), keys());
  }
  static T unflatten(const TreeDef& node, LeafIter& it) {
    if (node.kind() != TreeKind::kCustom || node.name() != name() || node.aux() != nullptr ||
        node.keys() != keys())
      detail::throw_node_mismatch(node, type_str());
    T out{};
    size_t i = 0;
    std::apply(
        [&](const auto&... f) {
          ((out.*(f.ptr) = TreeTraits<Member<decltype(f)>>::unflatten(node.child(i++), it)), ...);
        },
        fields());
    return out;
  }
  static std::string type_str() {
    std::vector<std::string> parts = std::apply(
        [](const auto&... f) {
          return std::vector<std::string>{TreeTraits<Member<decltype(f)>>::type_str()...};
        },
        fields());
    return "CustomNode(" + name() + "[None], [" + detail::join_type_strs(parts) + "])";
  }
};

// The one error a transformation gives for an argument or result that is not a pytree. Use as
// `if constexpr (Pytree<T>) ... else detail::not_a_pytree<T>();`.
namespace detail {
template <class T>
[[noreturn]] void not_a_pytree() {
  static_assert(kNotAPytree<T>,
                "tessera: this argument or result type is not a pytree. Register a struct "
                "with TESSERA_REGISTER_PYTREE(Type, field1, field2, ...) at namespace scope in "
                "Type's namespace, or use Array, arithmetic scalars, std::vector, std::array, "
                "std::tuple, std::pair, std::map<std::string, T> or std::optional of pytrees");
  std::abort();
}
// TreeTraits<T>::flatten, or the not-a-pytree error.
template <class T>
TreeDef flatten_into(const T& x, std::vector<Array>& leaves) {
  if constexpr (Pytree<T>)
    return TreeTraits<T>::flatten(x, leaves);
  else
    not_a_pytree<T>();
}
}  // namespace detail

// ---- jax.tree_util functions ----
template <Pytree T>
std::pair<std::vector<Array>, TreeDef> tree_flatten(const T& tree) {
  std::vector<Array> leaves;
  TreeDef def = TreeTraits<T>::flatten(tree, leaves);
  return {std::move(leaves), std::move(def)};
}

// Rebuilds a T from leaves; ValueError (showing both structures) when `def` does not fit T or
// the leaf count differs.
template <Pytree T>
T tree_unflatten(const TreeDef& def, const std::vector<Array>& leaves) {
  if (static_cast<int64_t>(leaves.size()) != def.num_leaves())
    throw ValueError("[tree_unflatten] " + def.str() + " has " + std::to_string(def.num_leaves()) +
                     " leaves but " + std::to_string(leaves.size()) + " leaves were given");
  LeafIter it = leaves.begin();
  try {
    return TreeTraits<T>::unflatten(def, it);
  } catch (const detail::TreeMismatchError& e) {
    throw ValueError("[tree_unflatten] " + def.str() +
                     " does not match the structure of the C++ type, " + TreeTraits<T>::type_str() +
                     ": " + e.what());
  }
}

template <Pytree T>
std::vector<Array> tree_leaves(const T& tree) {
  return tree_flatten(tree).first;
}

template <Pytree T>
TreeDef tree_structure(const T& tree) {
  std::vector<Array> leaves;
  return TreeTraits<T>::flatten(tree, leaves);
}

// f(leaf, leaf_of_rest...) -> Array on every leaf; `rest` trees must have tree's structure.
// Returns a T (None nodes stay None: f is not called on them).
template <class F, Pytree T, Pytree... Rest>
T tree_map(F&& f, const T& tree, const Rest&... rest) {
  auto [leaves, def] = tree_flatten(tree);
  auto rest_flat = std::make_tuple(tree_flatten(rest)...);
  int arg = 1;
  std::apply(
      [&](const auto&... r) {
        ((++arg, check_same_structure(def, r.second, "tree_map",
                                      "in tree argument " + std::to_string(arg))),
         ...);
      },
      rest_flat);
  std::vector<Array> out;
  out.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    out.push_back(std::apply(
        [&](const auto&... r) { return Array(std::invoke(f, leaves[i], r.first[i]...)); },
        rest_flat));
  }
  return tree_unflatten<T>(def, out);
}

// functools.reduce(f, leaves, init): f(acc, leaf) -> acc.
template <class F, Pytree T, class Acc>
Acc tree_reduce(F&& f, const T& tree, Acc init) {
  for (const Array& leaf : tree_leaves(tree)) init = std::invoke(f, std::move(init), leaf);
  return init;
}
// Without an initial value: the first leaf starts; an empty tree raises TypeError.
template <class F, Pytree T>
Array tree_reduce(F&& f, const T& tree) {
  std::vector<Array> leaves = tree_leaves(tree);
  if (leaves.empty())
    throw TypeError("[tree_reduce] reduce() of an empty tree with no initial value; pass init");
  Array acc = leaves[0];
  for (size_t i = 1; i < leaves.size(); ++i) acc = std::invoke(f, std::move(acc), leaves[i]);
  return acc;
}

// As jax.tree_util.tree_flatten_with_path: ([(path, leaf), ...], treedef).
template <Pytree T>
std::pair<std::vector<std::pair<KeyPath, Array>>, TreeDef> tree_flatten_with_path(const T& tree) {
  auto [leaves, def] = tree_flatten(tree);
  std::vector<KeyPath> paths = tree_leaf_paths(def);
  std::vector<std::pair<KeyPath, Array>> out;
  out.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) out.emplace_back(std::move(paths[i]), leaves[i]);
  return {std::move(out), std::move(def)};
}
template <Pytree T>
std::vector<std::pair<KeyPath, Array>> tree_leaves_with_path(const T& tree) {
  return tree_flatten_with_path(tree).first;
}

// jax.tree: the short names.
namespace tree {
template <Pytree T>
auto flatten(const T& t) {
  return tree_flatten(t);
}
template <Pytree T>
T unflatten(const TreeDef& def, const std::vector<Array>& leaves) {
  return tree_unflatten<T>(def, leaves);
}
template <Pytree T>
std::vector<Array> leaves(const T& t) {
  return tree_leaves(t);
}
template <Pytree T>
TreeDef structure(const T& t) {
  return tree_structure(t);
}
template <class F, Pytree T, Pytree... Rest>
T map(F&& f, const T& t, const Rest&... rest) {
  return tree_map(std::forward<F>(f), t, rest...);
}
template <class F, Pytree T, class... Init>
auto reduce(F&& f, const T& t, Init&&... init) {
  return tree_reduce(std::forward<F>(f), t, std::forward<Init>(init)...);
}
template <Pytree T>
auto flatten_with_path(const T& t) {
  return tree_flatten_with_path(t);
}
template <Pytree T>
auto leaves_with_path(const T& t) {
  return tree_leaves_with_path(t);
}
}  // namespace tree

}  // namespace tessera

template <>
struct std::hash<tessera::TreeDef> {
  size_t operator()(const tessera::TreeDef& t) const { return t.hash(); }
};

// ---- TESSERA_REGISTER_PYTREE(Type, field1, field2, ...) ----
// Use at namespace scope in the namespace that declares Type (found by argument-dependent
// lookup). Type must be default-constructible with assignable fields.
#define TESSERA_PP_PARENS ()
#define TESSERA_PP_EXPAND(...) \
  TESSERA_PP_EXPAND3(TESSERA_PP_EXPAND3(TESSERA_PP_EXPAND3(TESSERA_PP_EXPAND3(__VA_ARGS__))))
#define TESSERA_PP_EXPAND3(...) \
  TESSERA_PP_EXPAND2(TESSERA_PP_EXPAND2(TESSERA_PP_EXPAND2(TESSERA_PP_EXPAND2(__VA_ARGS__))))
#define TESSERA_PP_EXPAND2(...) \
  TESSERA_PP_EXPAND1(TESSERA_PP_EXPAND1(TESSERA_PP_EXPAND1(TESSERA_PP_EXPAND1(__VA_ARGS__))))
#define TESSERA_PP_EXPAND1(...) __VA_ARGS__
#define TESSERA_PP_FOR_EACH(macro, ctx, ...) \
  __VA_OPT__(TESSERA_PP_EXPAND(TESSERA_PP_FOR_EACH_HELPER(macro, ctx, __VA_ARGS__)))
#define TESSERA_PP_FOR_EACH_HELPER(macro, ctx, a1, ...) \
  macro(ctx, a1) __VA_OPT__(TESSERA_PP_FOR_EACH_AGAIN TESSERA_PP_PARENS(macro, ctx, __VA_ARGS__))
#define TESSERA_PP_FOR_EACH_AGAIN() TESSERA_PP_FOR_EACH_HELPER
#define TESSERA_PP_TREE_FIELD(Type, field) \
  , ::std::make_tuple(::tessera::detail::tree_field(#field, &Type::field))

#define TESSERA_REGISTER_PYTREE(Type, ...)                                                        \
  [[maybe_unused]] inline auto tessera_pytree_fields(::tessera::detail::TreeTypeTag<Type>) {      \
    return ::std::tuple_cat(                                                                      \
        ::std::tuple<> {} TESSERA_PP_FOR_EACH(TESSERA_PP_TREE_FIELD, Type, __VA_ARGS__));         \
  }                                                                                               \
  [[maybe_unused]] inline const char* tessera_pytree_name(::tessera::detail::TreeTypeTag<Type>) { \
    return #Type;                                                                                 \
  }                                                                                               \
  static_assert(true)
