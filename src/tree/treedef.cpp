// TreeDef: immutable shared nodes with their leaf/node counts and hash computed once.
#include <algorithm>
#include <functional>
#include <numeric>
#include <ostream>

#include "tessera/tree.h"
#include "tree/tree_internal.h"

namespace tessera {

struct TreeNode {
  TreeKind kind = TreeKind::kLeaf;
  std::vector<TreeDef> children;
  std::vector<std::string> keys;
  std::string name;
  std::shared_ptr<const TreeAux> aux;
  int64_t num_leaves = 0;
  int64_t num_nodes = 1;
  size_t hash = 0;
};

namespace {

size_t hash_combine(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

std::shared_ptr<const TreeNode> finish(TreeNode n) {
  n.num_leaves = n.kind == TreeKind::kLeaf ? 1 : 0;
  n.num_nodes = 1;
  size_t h = hash_combine(0, static_cast<size_t>(n.kind) + 1);
  for (const TreeDef& c : n.children) {
    n.num_leaves += c.num_leaves();
    n.num_nodes += c.num_nodes();
    h = hash_combine(h, c.hash());
  }
  for (const std::string& k : n.keys) h = hash_combine(h, std::hash<std::string>{}(k));
  if (n.kind == TreeKind::kCustom) {
    h = hash_combine(h, std::hash<std::string>{}(n.name));
    h = hash_combine(h, n.aux ? n.aux->hash() : 0x5bd1e995u);
  }
  h = hash_combine(h, n.children.size());
  n.hash = h;
  return std::make_shared<const TreeNode>(std::move(n));
}

const std::shared_ptr<const TreeNode>& leaf_node() {
  static const std::shared_ptr<const TreeNode> n = finish(TreeNode{});
  return n;
}

const std::shared_ptr<const TreeNode>& none_node() {
  static const std::shared_ptr<const TreeNode> n = [] {
    TreeNode t;
    t.kind = TreeKind::kNone;
    return finish(std::move(t));
  }();
  return n;
}

bool aux_equal(const std::shared_ptr<const TreeAux>& a, const std::shared_ptr<const TreeAux>& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->equals(*b);
}

}  // namespace

TreeDef::TreeDef() : node_(leaf_node()) {}
TreeDef TreeDef::leaf() { return TreeDef(leaf_node()); }
TreeDef TreeDef::none() { return TreeDef(none_node()); }

TreeDef TreeDef::tuple(std::vector<TreeDef> children) {
  TreeNode n;
  n.kind = TreeKind::kTuple;
  n.children = std::move(children);
  return TreeDef(finish(std::move(n)));
}

TreeDef TreeDef::list(std::vector<TreeDef> children) {
  TreeNode n;
  n.kind = TreeKind::kList;
  n.children = std::move(children);
  return TreeDef(finish(std::move(n)));
}

TreeDef TreeDef::dict(std::vector<std::string> keys, std::vector<TreeDef> children) {
  if (keys.size() != children.size())
    throw ValueError("[TreeDef::dict] got " + std::to_string(keys.size()) + " keys but " +
                     std::to_string(children.size()) + " children");
  // Already sorted without duplicates (what flattening passes): take the vectors as they are.
  if (std::adjacent_find(keys.begin(), keys.end(), std::greater_equal<>()) == keys.end()) {
    TreeNode n;
    n.kind = TreeKind::kDict;
    n.keys = std::move(keys);
    n.children = std::move(children);
    return TreeDef(finish(std::move(n)));
  }
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  TreeNode n;
  n.kind = TreeKind::kDict;
  n.keys.reserve(keys.size());
  n.children.reserve(keys.size());
  for (size_t i : order) {
    if (!n.keys.empty() && n.keys.back() == keys[i])
      throw ValueError("[TreeDef::dict] duplicate key " + detail::py_str_repr(keys[i]));
    n.keys.push_back(std::move(keys[i]));
    n.children.push_back(std::move(children[i]));
  }
  return TreeDef(finish(std::move(n)));
}

TreeDef TreeDef::custom(std::string name, std::shared_ptr<const TreeAux> aux,
                        std::vector<TreeDef> children, std::vector<std::string> keys) {
  if (name.empty()) throw ValueError("[TreeDef::custom] a custom node needs a type name");
  if (!keys.empty() && keys.size() != children.size())
    throw ValueError("[TreeDef::custom] " + name + ": got " + std::to_string(keys.size()) +
                     " child keys for " + std::to_string(children.size()) +
                     " children; pass one key per child or none");
  TreeNode n;
  n.kind = TreeKind::kCustom;
  n.name = std::move(name);
  n.aux = std::move(aux);
  n.children = std::move(children);
  n.keys = std::move(keys);
  return TreeDef(finish(std::move(n)));
}

TreeKind TreeDef::kind() const { return node_->kind; }
int64_t TreeDef::num_leaves() const { return node_->num_leaves; }
int64_t TreeDef::num_nodes() const { return node_->num_nodes; }
const std::vector<TreeDef>& TreeDef::children() const { return node_->children; }
const std::vector<std::string>& TreeDef::keys() const { return node_->keys; }
const std::string& TreeDef::name() const { return node_->name; }
const std::shared_ptr<const TreeAux>& TreeDef::aux() const { return node_->aux; }
size_t TreeDef::hash() const { return node_->hash; }

bool TreeDef::operator==(const TreeDef& o) const {
  const TreeNode& a = *node_;
  const TreeNode& b = *o.node_;
  if (&a == &b) return true;
  if (a.hash != b.hash || a.kind != b.kind || a.num_leaves != b.num_leaves ||
      a.num_nodes != b.num_nodes || a.children.size() != b.children.size() || a.keys != b.keys)
    return false;
  if (a.kind == TreeKind::kCustom && (a.name != b.name || !aux_equal(a.aux, b.aux))) return false;
  for (size_t i = 0; i < a.children.size(); ++i)
    if (a.children[i] != b.children[i]) return false;
  return true;
}

std::string TreeDef::node_str() const {
  const TreeNode& n = *node_;
  auto joined = [&](bool with_keys) {
    std::string s;
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (i) s += ", ";
      if (with_keys) s += detail::py_str_repr(n.keys[i]) + ": ";
      s += n.children[i].node_str();
    }
    return s;
  };
  switch (n.kind) {
    case TreeKind::kLeaf:
      return "*";
    case TreeKind::kNone:
      return "None";
    // Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
    case TreeKind::kTuple: {
      std::string s = "(";
      s += joined(false);
      return s += n.children.size() == 1 ? ",)" : ")";
    }
    case TreeKind::kList: {
      std::string s = "[";
      s += joined(false);
      return s += "]";
    }
    case TreeKind::kDict: {
      std::string s = "{";
      s += joined(true);
      return s += "}";
    }
    case TreeKind::kCustom: {
      std::string s = "CustomNode(";
      s += n.name;
      s += "[";
      s += n.aux ? n.aux->str() : "None";
      s += "], [";
      s += joined(false);
      return s += "])";
    }
  }
  throw_internal("tree", "unknown TreeKind");
}

std::string TreeDef::str() const { return "PyTreeDef(" + node_str() + ")"; }

std::ostream& operator<<(std::ostream& os, const TreeDef& t) { return os << t.str(); }

}  // namespace tessera
