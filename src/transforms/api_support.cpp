// Non-templated support of transforms.h: VmapAxes prefixes, ShapeDtypeStruct, stop_gradient.
#include <sstream>

#include "tessera/lax.h"
#include "tessera/transforms.h"

namespace tessera {

std::string ShapeDtypeStruct::str() const {
  std::string s = "ShapeDtypeStruct(shape=(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  s += "), dtype=" + std::string(dtype_name(dtype));
  if (weak_type) s += ", weak_type=True";
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const ShapeDtypeStruct& s) { return os << s.str(); }

Array stop_gradient(const Array& x) { return lax::stop_gradient(x); }

VmapAxes VmapAxes::list(std::vector<VmapAxes> children) {
  VmapAxes a;
  a.children_ = std::move(children);
  return a;
}

VmapAxes VmapAxes::dict(std::map<std::string, VmapAxes> children) {
  VmapAxes a;
  for (auto& [k, v] : children) {
    a.keys_.push_back(k);
    a.children_.push_back(std::move(v));
  }
  return a;
}

std::string VmapAxes::str() const {
  if (is_leaf_) return leaf_ ? std::to_string(*leaf_) : "None";
  std::string s = keys_.empty() ? "(" : "{";
  for (size_t i = 0; i < children_.size(); ++i) {
    if (i) s += ", ";
    if (!keys_.empty()) s += "'" + keys_[i] + "': ";
    s += children_[i].str();
  }
  if (keys_.empty() && children_.size() == 1) s += ",";
  return s + (keys_.empty() ? ")" : "}");
}

void VmapAxes::broadcast_into(const TreeDef& def, std::string_view what, const TreeDef& whole,
                          std::vector<std::optional<int64_t>>& out) const {
  if (is_leaf_) {
    out.insert(out.end(), static_cast<size_t>(def.num_leaves()), leaf_);
    return;
  }
  auto mismatch = [&](const std::string& why) {
    throw ValueError("[vmap] " + std::string(what) + " specification " + str() +
                     " must be a tree prefix of the corresponding value " + def.str() + " (" + why +
                     "); the whole value is " + whole.str());
  };
  TreeKind k = def.kind();
  if (!keys_.empty()) {
    if (k != TreeKind::kDict) mismatch("a dict of axes for a value that is not a dict");
    if (def.keys() != keys_) mismatch("the dict keys differ");
  } else if (k != TreeKind::kTuple && k != TreeKind::kList && k != TreeKind::kCustom) {
    mismatch("a sequence of axes for a value that is not a tuple, list or struct");
  }
  if (def.children().size() != children_.size())
    mismatch(std::to_string(children_.size()) + " entries for " +
             std::to_string(def.children().size()) + " children");
  for (size_t i = 0; i < children_.size(); ++i)
    children_[i].broadcast_into(def.child(i), what, whole, out);
}

std::vector<std::optional<int64_t>> VmapAxes::broadcast_to(const TreeDef& def,
                                                       std::string_view what) const {
  std::vector<std::optional<int64_t>> out;
  broadcast_into(def, what, def, out);
  return out;
}

}  // namespace tessera
