// Python pytrees on the C++ TreeDef (py_tree.h): the registry, flatten (with and without key
// paths), unflatten, and the tree_util functions built on them. tessera/tree_util.py is the
// public API over these.
#include "py_tree.h"

namespace tessera::python {
namespace pytree {

// ---- unflatten ----
// Builds the node `d` from its children's values (new references, in order). A str-keyed dict
// takes its keys from `keys` (borrowed, in order) when given.
py::object build_node(const TreeDef& d, std::vector<py::object>& vals, PyObject* const* keys) {
  const size_t n = vals.size();
  switch (kind_of(d)) {
    case Kind::kLeaf:
      return std::move(vals.at(0));
    case Kind::kNone:
      return py::none();
    case Kind::kTuple: {
      PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(n));
      if (t == nullptr) throw py::error_already_set();
      for (size_t i = 0; i < n; ++i)
        PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), vals[i].release().ptr());
      return py::reinterpret_steal<py::object>(t);
    }
    case Kind::kList: {
      PyObject* l = PyList_New(static_cast<Py_ssize_t>(n));
      if (l == nullptr) throw py::error_already_set();
      for (size_t i = 0; i < n; ++i)
        PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), vals[i].release().ptr());
      return py::reinterpret_steal<py::object>(l);
    }
    case Kind::kDict: {
      py::dict out;
      if (d.kind() == TreeKind::kDict && keys != nullptr) {
        for (size_t i = 0; i < n; ++i)
          if (PyDict_SetItem(out.ptr(), keys[i], vals[i].ptr()) < 0) throw py::error_already_set();
      } else if (d.kind() == TreeKind::kDict) {
        const auto& dkeys = d.keys();
        for (size_t i = 0; i < n; ++i) {
          py::str k = utf8_str(dkeys[i]);
          if (PyDict_SetItem(out.ptr(), k.ptr(), vals[i].ptr()) < 0) throw py::error_already_set();
        }
      } else {
        py::tuple keys = dict_keys(d);
        for (size_t i = 0; i < n; ++i)
          if (PyDict_SetItem(out.ptr(), keys[i].ptr(), vals[i].ptr()) < 0)
            throw py::error_already_set();
      }
      return out;
    }
    case Kind::kNamedTuple: {
      py::tuple args(n);
      for (size_t i = 0; i < n; ++i) args[i] = std::move(vals[i]);
      return aux_of(d)->data()(*args);
    }
    case Kind::kCustom: {
      const PyAux* a = aux_of(d);
      py::tuple kids(n);
      for (size_t i = 0; i < n; ++i) kids[i] = std::move(vals[i]);
      return a->registration()->unflatten(a->data(), kids);
    }
  }
  return py::none();
}

// keys: the PyTreeDef's key cache (or null), consumed from kpos in preorder.
py::object unflatten_rec(const TreeDef& d, PyObject* const* leaves, size_t& pos,
                         PyObject* const* keys, size_t& kpos) {
  if (d.is_leaf()) return py::reinterpret_borrow<py::object>(leaves[pos++]);
  Depth depth(" while unflattening a pytree");
  PyObject* const* my_keys = nullptr;
  if (keys != nullptr && d.kind() == TreeKind::kDict) {
    my_keys = keys + kpos;
    kpos += d.children().size();
  }
  std::vector<py::object> vals;
  vals.reserve(d.children().size());
  for (const TreeDef& c : d.children()) vals.push_back(unflatten_rec(c, leaves, pos, keys, kpos));
  return build_node(d, vals, my_keys);
}

namespace {

// ---- with paths ----
struct PathFlattener {
  py::list out;  // (path, leaf) pairs
  py::object is_leaf;
  bool takes_path = false;

  TreeDef flatten(py::handle x, const py::tuple& path) {
    if (!is_leaf.is_none()) {
      py::object r = takes_path ? is_leaf(path, x) : is_leaf(x);
      if (r.cast<bool>()) {
        out.append(py::make_tuple(path, x));
        return TreeDef::leaf();
      }
    }
    const Registration* r = lookup(x.ptr());
    if (r == nullptr) {
      out.append(py::make_tuple(path, x));
      return TreeDef::leaf();
    }
    Depth depth(" while flattening a pytree");
    Registry& g = reg();
    auto extend = [&](py::object key) {
      py::tuple p(PyTuple_GET_SIZE(path.ptr()) + 1);
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(path.ptr()); ++i) p[i] = path[i];
      p[PyTuple_GET_SIZE(path.ptr())] = std::move(key);
      return p;
    };
    std::vector<TreeDef> kids;
    switch (r->kind) {
      case Kind::kNone:
        return TreeDef::none();
      case Kind::kTuple:
      case Kind::kList: {
        py::object hold = py::reinterpret_borrow<py::object>(x);
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(x.ptr()); ++i)
          kids.push_back(flatten(PySequence_Fast_GET_ITEM(x.ptr(), i), extend(g.SequenceKey(i))));
        return r->kind == Kind::kList ? TreeDef::list(std::move(kids))
                                      : TreeDef::tuple(std::move(kids));
      }
      case Kind::kNamedTuple: {
        py::object fields = x.get_type().attr("_fields");
        if (py::len(fields) != static_cast<size_t>(PyTuple_GET_SIZE(x.ptr())))
          throw py::value_error(
              "[tree_flatten_with_path] a namedtuple's _fields attribute should have the same "
              "size as the tuple");
        py::object hold = py::reinterpret_borrow<py::object>(x);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x.ptr()); ++i)
          kids.push_back(
              flatten(PyTuple_GET_ITEM(x.ptr(), i), extend(g.GetAttrKey(fields[py::int_(i)]))));
        return make_custom(r, py::reinterpret_borrow<py::object>(x.get_type()), std::move(kids));
      }
      case Kind::kDict: {
        SortedDict items(x.ptr(), "tree_flatten_with_path");
        for (size_t i = 0; i < items.size(); ++i)
          kids.push_back(flatten(items.val(i), extend(g.DictKey(py::handle(items.key(i))))));
        return items.node(std::move(kids));
      }
      case Kind::kCustom: {
        py::object hold = py::reinterpret_borrow<py::object>(x);
        auto [key_children, aux] = custom_flatten_with_keys(*r, x.ptr());
        for (auto& [k, c] : key_children) kids.push_back(flatten(c, extend(k)));
        return make_custom(r, std::move(aux), std::move(kids));
      }
      case Kind::kLeaf:
        break;
    }
    out.append(py::make_tuple(path, x));
    return TreeDef::leaf();
  }
};

}  // namespace
}  // namespace pytree

void bind_tree(py::module_& m) {
  using namespace pytree;
  bind_treedef(m);
  m.def("_tree_init", [](py::object seq, py::object dict, py::object attr, py::object flat) {
    Registry& r = reg();
    r.SequenceKey = std::move(seq);
    r.DictKey = std::move(dict);
    r.GetAttrKey = std::move(attr);
    r.FlattenedIndexKey = std::move(flat);
  });
  m.def(
      "tree_flatten",
      [](py::handle tree, py::object is_leaf) {
        py::list leaves;
        Flattener f{leaves.ptr(), is_leaf.is_none() ? nullptr : is_leaf.ptr(), true, true, {}};
        TreeDef d = f.flatten(tree.ptr());
        py::object keys = f.keys ? std::move(f.keys) : py::object(py::none());
        return py::make_tuple(std::move(leaves), PyTreeDef{std::move(d), std::move(keys)});
      },
      py::arg("tree"), py::arg("is_leaf") = py::none());
  m.def(
      "tree_leaves",
      [](py::handle tree, py::object is_leaf) {
        py::list leaves;
        Flattener f{leaves.ptr(), is_leaf.is_none() ? nullptr : is_leaf.ptr(), false, false, {}};
        f.flatten(tree.ptr());
        return leaves;
      },
      py::arg("tree"), py::arg("is_leaf") = py::none());
  m.def(
      "tree_flatten_with_path",
      [](py::handle tree, py::object is_leaf, bool takes_path) {
        PathFlattener f{py::list(), std::move(is_leaf), takes_path};
        TreeDef d = f.flatten(tree, py::tuple());
        return py::make_tuple(f.out, PyTreeDef{std::move(d)});
      },
      py::arg("tree"), py::arg("is_leaf") = py::none(), py::arg("is_leaf_takes_path") = false);
  m.def("tree_all_leaves", [](py::iterable xs) {
    for (py::handle x : xs)
      if (lookup(x.ptr()) != nullptr) return false;
    return true;
  });
  m.def("tree_flatten_one_level", [](py::handle tree, bool with_keys) -> py::tuple {
    const char* op = with_keys ? "flatten_one_level_with_keys" : "flatten_one_level";
    const Registration* r = lookup(tree.ptr());
    Registry& g = reg();
    if (r == nullptr)
      throw py::value_error(std::string("[") + op +
                            "] can't tree-flatten type: " + repr_of(tree.get_type()));
    auto keyed = [&](auto key_of, py::handle xs) {
      py::list out;
      size_t i = 0;
      for (py::handle c : xs) {
        out.append(py::make_tuple(key_of(i), c));
        ++i;
      }
      return out;
    };
    switch (r->kind) {
      case Kind::kNone:
        return py::make_tuple(with_keys ? py::object(py::list()) : py::object(py::tuple()),
                              py::none());
      case Kind::kTuple:
      case Kind::kList:
        if (!with_keys) return py::make_tuple(tree, py::none());
        return py::make_tuple(keyed([&](size_t i) { return g.SequenceKey(i); }, tree), py::none());
      case Kind::kNamedTuple: {
        if (!with_keys) return py::make_tuple(to_list_of(tree), tree.get_type());
        py::object fields = tree.get_type().attr("_fields");
        return py::make_tuple(
            keyed([&](size_t i) { return g.GetAttrKey(fields[py::int_(i)]); }, tree),
            tree.get_type());
      }
      case Kind::kDict: {
        SortedDict items(tree.ptr(), op);
        py::tuple kt = items.keys(), vt = items.vals();
        if (!with_keys) return py::make_tuple(vt, kt);
        return py::make_tuple(keyed([&](size_t i) { return g.DictKey(kt[i]); }, vt), kt);
      }
      default: {
        if (!with_keys) {
          auto [children, aux] = custom_flatten(*r, tree.ptr());
          return py::make_tuple(children, aux);
        }
        auto [key_children, aux] = custom_flatten_with_keys(*r, tree.ptr());
        py::list out;
        for (auto& [k, c] : key_children) out.append(py::make_tuple(k, c));
        return py::make_tuple(out, aux);
      }
    }
  });
  m.def("tree_register", [](py::handle type, py::object flatten, py::object unflatten,
                            py::object flatten_with_keys, const std::string& op) {
    if (!PyType_Check(type.ptr()))
      throw py::type_error("[" + op + "] expected a type to register, got " + short_repr(type));
    Registry& r = reg();
    if (r.by_type.count(type.ptr()))
      throw py::value_error("[" + op + "] Duplicate custom PyTreeDef type registration for " +
                            repr_of(type) + ".");
    auto* x = new Registration;  // lives as long as the process
    x->kind = Kind::kCustom;
    x->type = py::reinterpret_borrow<py::object>(type);
    x->name = py::str(type.attr("__name__"));
    x->flatten = std::move(flatten);
    x->unflatten = std::move(unflatten);
    x->flatten_with_keys = std::move(flatten_with_keys);
    r.by_type[type.ptr()] = x;
  });
}

}  // namespace tessera::python
