// The PyTreeDef class (py_tree.h): printing as JAX prints, structure comparison with JAX's
// messages, flatten_up_to, node data, composition, and pickling.
#include "py_tree.h"

namespace tessera::python::pytree {

// ---- printing ----
std::string node_str(const TreeDef& d) {
  Kind k = kind_of(d);
  if (k == Kind::kLeaf) return "*";
  if (k == Kind::kNone) return "None";
  Depth depth(" while printing a PyTreeDef");
  std::vector<std::string> parts;
  for (const TreeDef& c : d.children()) parts.push_back(node_str(c));
  auto join = [&](size_t from = 0) {
    std::string s;
    for (size_t i = from; i < parts.size(); ++i) {
      if (i > from) s += ", ";
      s += parts[i];
    }
    return s;
  };
  switch (k) {
    case Kind::kTuple:
      return "(" + join() + (parts.size() == 1 ? ",)" : ")");
    case Kind::kList:
      return "[" + join() + "]";
    case Kind::kDict: {
      py::tuple keys = dict_keys(d);
      std::string s = "{";
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i) s += ", ";
        s += repr_of(keys[i]) + ": " + parts[i];
      }
      return s + "}";
    }
    case Kind::kNamedTuple:
      return "CustomNode(namedtuple[" + std::string(py::str(aux_of(d)->data().attr("__name__"))) +
             "], [" + join() + "])";
    default: {
      const PyAux* a = aux_of(d);
      return "CustomNode(" + a->registration()->name + "[" + std::string(py::str(a->data())) +
             "], [" + join() + "])";
    }
  }
}

std::string treedef_str(const TreeDef& d) { return "PyTreeDef(" + node_str(d) + ")"; }

// ---- structure comparison and flatten_up_to ----
static const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kLeaf:
      return "a leaf";
    case Kind::kNone:
      return "None";
    case Kind::kTuple:
      return "tuple";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    default:
      return "a custom node";
  }
}

static std::string capitalized(const char* s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string keys_list_repr(const py::tuple& keys) { return repr_of(py::list(keys)); }

// The key of child i of d, as the key path names it (custom nodes: FlattenedIndexKey).
static py::object child_key(const TreeDef& d, size_t i) {
  Registry& r = reg();
  switch (kind_of(d)) {
    case Kind::kDict:
      return r.DictKey(dict_keys(d)[i]);
    case Kind::kNamedTuple:
      return r.GetAttrKey(aux_of(d)->data().attr("_fields")[py::int_(i)]);
    case Kind::kTuple:
    case Kind::kList:
      return r.SequenceKey(i);
    default:
      return r.FlattenedIndexKey(i);
  }
}

static std::string keystr(const std::vector<py::object>& path) {
  std::string s;
  for (const py::object& k : path) s += std::string(py::str(k));
  return s;
}

// The first difference between a and b (depth first), or "" when equal.
static std::string first_difference(const TreeDef& a, const TreeDef& b,
                                    std::vector<py::object>& path) {
  if (a == b) return "";
  Depth depth(" while comparing pytree structures");
  auto at = [&](std::string w) { return path.empty() ? w : w + " at " + keystr(path); };
  const Kind ka = kind_of(a), kb = kind_of(b);
  if (ka == Kind::kLeaf || kb == Kind::kLeaf || std::string_view(kind_name(ka)) != kind_name(kb))
    return at(std::string("Expected ") + kind_name(ka) + ", got " + node_str(b));
  const size_t na = a.children().size(), nb = b.children().size();
  if ((ka == Kind::kTuple || ka == Kind::kList) && na != nb)
    return at(capitalized(kind_name(ka)) + " arity mismatch: " + std::to_string(nb) +
              " != " + std::to_string(na));
  if (ka == Kind::kDict) {
    py::tuple da = dict_keys(a), db = dict_keys(b);
    if (!da.equal(db))
      return at("Dict key mismatch; expected keys: " + keys_list_repr(da) +
                ", got keys: " + keys_list_repr(db));
  }
  if (ka == Kind::kCustom || ka == Kind::kNamedTuple) {
    py::object ta = node_type(a), tb = node_type(b);
    if (!ta.is(tb)) {
      std::string sa = py::str(ta.attr("__name__")), sb = py::str(tb.attr("__name__"));
      if (sa == sb) sa = repr_of(ta), sb = repr_of(tb);
      return at("Custom node type mismatch; expected type: " + sa + ", got type: " + sb);
    }
    if (ka == Kind::kCustom && !aux_of(a)->equals(*aux_of(b))) {
      std::string name = py::str(ta.attr("__name__"));
      return at("Custom node auxiliary data mismatch; expected " + name + "[" +
                std::string(py::str(aux_of(a)->data())) + "], got " + name + "[" +
                std::string(py::str(aux_of(b)->data())) + "]");
    }
    if (na != nb)
      return at("Custom node arity mismatch: " + std::to_string(nb) + " != " + std::to_string(na));
  }
  for (size_t i = 0; i < std::min(na, nb); ++i) {
    path.push_back(child_key(a, i));
    std::string d = first_difference(a.child(i), b.child(i), path);
    path.pop_back();
    if (!d.empty()) return d;
  }
  return at("structures differ");
}

struct UpToError {
  std::string what;
  std::vector<py::object> path;  // innermost first
};

static void flatten_up_to_rec(const TreeDef& d, PyObject* x, PyObject* out) {
  if (d.is_leaf()) {
    if (PyList_Append(out, x) < 0) throw py::error_already_set();
    return;
  }
  Depth depth(" while matching a pytree to a PyTreeDef");
  const Kind k = kind_of(d);
  const size_t n = d.children().size();
  py::object xs;  // a sequence of the n children
  py::handle hx(x);
  const Registration* r = nullptr;
  switch (k) {
    case Kind::kTuple:
    case Kind::kList: {
      const bool ok = k == Kind::kTuple ? PyTuple_CheckExact(x) : PyList_CheckExact(x);
      if (!ok)
        throw UpToError{std::string("Expected ") + kind_name(k) + ", got " + short_repr(hx), {}};
      const auto len = static_cast<size_t>(PySequence_Fast_GET_SIZE(x));
      if (len != n)
        throw UpToError{capitalized(kind_name(k)) + " arity mismatch: " + std::to_string(len) +
                            " != " + std::to_string(n),
                        {}};
      xs = py::reinterpret_borrow<py::object>(x);
      break;
    }
    case Kind::kDict: {
      if (!PyDict_CheckExact(x)) throw UpToError{"Expected dict, got " + short_repr(hx), {}};
      SortedDict items(x, "tree_flatten");
      py::tuple want = dict_keys(d);
      py::tuple got = items.keys();
      if (!want.equal(got))
        throw UpToError{"Dict key mismatch; expected keys: " + keys_list_repr(want) +
                            ", got keys: " + keys_list_repr(got),
                        {}};
      xs = items.vals();
      break;
    }
    case Kind::kNone:
      if (x != Py_None)
        throw UpToError{"Expected None, got " + short_repr(hx) +
                            " (None is a pytree node without children, not a leaf; to map over "
                            "it write tree_map(lambda a, b: None if a is None else f(a, b), a, b, "
                            "is_leaf=lambda a: a is None))",
                        {}};
      return;
    case Kind::kNamedTuple: {
      py::object cls = aux_of(d)->data();
      std::string name = py::str(cls.attr("__name__"));
      if (!PyTuple_Check(x) || !is_namedtuple_type(Py_TYPE(x)))
        throw UpToError{"Expected named tuple " + name + ", got " + short_repr(hx), {}};
      const auto len = static_cast<size_t>(PyTuple_GET_SIZE(x));
      if (len != n)
        throw UpToError{
            "Named tuple arity mismatch: " + std::to_string(len) + " != " + std::to_string(n), {}};
      if (reinterpret_cast<PyObject*>(Py_TYPE(x)) != cls.ptr())
        throw UpToError{"Named tuple type mismatch; expected type: " + name +
                            ", got type: " + std::string(py::str(hx.get_type().attr("__name__"))),
                        {}};
      xs = py::reinterpret_borrow<py::object>(x);
      break;
    }
    case Kind::kCustom: {
      const PyAux* a = aux_of(d);
      r = a->registration();
      if (lookup(x) != r)
        throw UpToError{
            "Custom node type mismatch; expected type: " + r->name + ", got " + short_repr(hx), {}};
      auto [children, aux] = custom_flatten(*r, x);
      xs = to_list_of(children);
      bool same = aux.is(a->data());
      if (!same) {
        int c = PyObject_RichCompareBool(aux.ptr(), a->data().ptr(), Py_EQ);
        if (c < 0) throw py::error_already_set();
        same = c == 1;
      }
      if (!same)
        throw UpToError{"Custom node auxiliary data mismatch; expected " + r->name + "[" +
                            std::string(py::str(a->data())) + "], got " + r->name + "[" +
                            std::string(py::str(aux)) + "]",
                        {}};
      const auto len = static_cast<size_t>(PyList_GET_SIZE(xs.ptr()));
      if (len != n)
        throw UpToError{
            "Custom node arity mismatch: " + std::to_string(len) + " != " + std::to_string(n), {}};
      break;
    }
    case Kind::kLeaf:
      break;
  }
  size_t i = 0;
  try {
    for (i = 0; i < n; ++i) {
      py::object c = py::reinterpret_steal<py::object>(PySequence_GetItem(xs.ptr(), i));
      if (!c) throw py::error_already_set();
      flatten_up_to_rec(d.child(i), c.ptr(), out);
    }
  } catch (UpToError& e) {
    if (r != nullptr && !r->flatten_with_keys.is_none())
      e.path.push_back(custom_flatten_with_keys(*r, x).first.at(i).first);
    else
      e.path.push_back(child_key(d, i));
    throw;
  }
}

static py::list flatten_up_to(const TreeDef& d, py::handle tree, const std::string& op,
                              const std::string& context);

static py::object tree_structure_or_repr(py::handle tree) {
  py::list leaves;
  Flattener f{leaves.ptr(), nullptr, true, false, {}};
  return py::str(treedef_str(f.flatten(tree.ptr())));
}

static py::list flatten_up_to(const TreeDef& d, py::handle tree, const std::string& op,
                              const std::string& context) {
  py::list out;
  try {
    flatten_up_to_rec(d, tree.ptr(), out.ptr());
  } catch (UpToError& e) {
    std::string what = e.what;
    if (!e.path.empty()) {
      std::reverse(e.path.begin(), e.path.end());
      what += " at " + keystr(e.path);
    }
    if (!context.empty()) what += " " + context;
    std::string got;
    try {
      got = py::str(tree_structure_or_repr(tree));
    } catch (py::error_already_set&) {
      got = short_repr(tree);
    }
    throw py::value_error("[" + op + "] " + what + "; expected " + treedef_str(d) + " got " + got);
  }
  return out;
}

// ---- structure surgery ----
static TreeDef with_children(const TreeDef& d, std::vector<TreeDef> kids) {
  switch (d.kind()) {
    case TreeKind::kLeaf:
    case TreeKind::kNone:
      return d;
    case TreeKind::kTuple:
      return TreeDef::tuple(std::move(kids));
    case TreeKind::kList:
      return TreeDef::list(std::move(kids));
    case TreeKind::kDict:
      return TreeDef::dict(d.keys(), std::move(kids));
    case TreeKind::kCustom:
      return TreeDef::custom(d.name(), d.aux(), std::move(kids), d.keys());
  }
  return d;
}

static TreeDef compose(const TreeDef& d, const TreeDef& inner) {
  if (d.is_leaf()) return inner;
  Depth depth(" while composing PyTreeDefs");
  std::vector<TreeDef> kids;
  for (const TreeDef& c : d.children()) kids.push_back(compose(c, inner));
  return with_children(d, std::move(kids));
}

// (type, data) of a node: dicts give their key list, namedtuples (class, None).
static py::object node_data(const TreeDef& d) {
  Registry& r = reg();
  switch (kind_of(d)) {
    case Kind::kLeaf:
      return py::none();
    case Kind::kNone:
      return py::make_tuple(r.none.type, py::none());
    case Kind::kTuple:
      return py::make_tuple(r.tuple.type, py::none());
    case Kind::kList:
      return py::make_tuple(r.list.type, py::none());
    case Kind::kDict:
      return py::make_tuple(r.dict.type, py::list(dict_keys(d)));
    case Kind::kNamedTuple:
      return py::make_tuple(aux_of(d)->data(), py::none());
    case Kind::kCustom:
      return py::make_tuple(aux_of(d)->registration()->type, aux_of(d)->data());
  }
  return py::none();
}

// The node for registration r (or namedtuple class) with data and children.
static TreeDef node_from(const Registration* r, py::handle typ, py::handle data,
                         std::vector<TreeDef> kids, const char* op) {
  switch (r->kind) {
    case Kind::kNone:
      return TreeDef::none();
    case Kind::kTuple:
      return TreeDef::tuple(std::move(kids));
    case Kind::kList:
      return TreeDef::list(std::move(kids));
    case Kind::kDict: {
      // {key: child index}, sorted as any dict is.
      py::dict index;
      size_t n = 0;
      for (py::handle k : data) index[k] = py::int_(n++);
      if (n != kids.size() || py::len(index) != n)
        throw py::value_error(std::string("[") + op +
                              "] a dict node needs one distinct key per "
                              "child; got " +
                              std::to_string(n) + " keys for " + std::to_string(kids.size()) +
                              " children");
      SortedDict items(index.ptr(), op);
      std::vector<TreeDef> sorted;
      for (size_t i = 0; i < items.size(); ++i)
        sorted.push_back(kids[py::handle(items.val(i)).cast<size_t>()]);
      return items.node(std::move(sorted));
    }
    case Kind::kNamedTuple:
      return make_custom(r, py::reinterpret_borrow<py::object>(typ), std::move(kids));
    default:
      return make_custom(r, py::reinterpret_borrow<py::object>(data), std::move(kids));
  }
}

// Pickled form: (key, data, children) per node, None for a leaf; key is the node's class
// ("namedtuple" for namedtuples), data its node data.
static py::object encode(const TreeDef& d) {
  if (d.is_leaf()) return py::none();
  Depth depth(" while pickling a PyTreeDef");
  py::list kids;
  for (const TreeDef& c : d.children()) kids.append(encode(c));
  Kind k = kind_of(d);
  py::object nd = node_data(d);
  py::object key = k == Kind::kNamedTuple ? py::str("namedtuple") : py::object(nd[py::int_(0)]);
  py::object data = k == Kind::kNamedTuple ? aux_of(d)->data()
                    : k == Kind::kDict     ? py::object(dict_keys(d))
                                           : py::object(nd[py::int_(1)]);
  return py::make_tuple(key, data, py::tuple(kids));
}

TreeDef decode(py::handle enc) {
  if (enc.is_none()) return TreeDef::leaf();
  Depth depth(" while unpickling a PyTreeDef");
  py::tuple t = py::reinterpret_borrow<py::tuple>(enc);
  py::handle key = t[0], data = t[1];
  std::vector<TreeDef> kids;
  for (py::handle c : py::reinterpret_borrow<py::tuple>(t[2])) kids.push_back(decode(c));
  Registry& r = reg();
  if (PyUnicode_Check(key.ptr()) && py::str(key).cast<std::string>() == "namedtuple")
    return node_from(&r.namedtuple, data, data, std::move(kids), "PyTreeDef");
  auto it = r.by_type.find(key.ptr());
  if (it == r.by_type.end())
    throw py::value_error("[PyTreeDef] unknown node type in pickled PyTreeDef: " + repr_of(key) +
                          "; register it before unpickling");
  return node_from(it->second, key, data, std::move(kids), "PyTreeDef");
}

std::vector<TreeDef> defs_of(py::iterable children) {
  std::vector<TreeDef> kids;
  for (py::handle c : children) kids.push_back(c.cast<const PyTreeDef&>().def);
  return kids;
}

void bind_treedef(py::module_& m) {
  py::class_<PyTreeDef> cls(m, "PyTreeDef");
  cls.attr("__module__") = "tessera.tree_util";
  cls.doc() = "The structure of a pytree: immutable, hashable, printed as JAX prints it.";
  cls.def_property_readonly("num_leaves", [](const PyTreeDef& t) { return t.def.num_leaves(); })
      .def_property_readonly("num_nodes", [](const PyTreeDef& t) { return t.def.num_nodes(); })
      .def("children",
           [](const PyTreeDef& t) {
             py::list out;
             for (const TreeDef& c : t.def.children()) out.append(PyTreeDef{c});
             return out;
           })
      .def(
          "unflatten",
          [](const PyTreeDef& t, py::handle leaves) {
            py::object seq = py::reinterpret_borrow<py::object>(leaves);
            if (!PyList_CheckExact(leaves.ptr()) && !PyTuple_CheckExact(leaves.ptr()))
              seq = to_list_of(leaves);
            const auto got = static_cast<int64_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
            const int64_t n = t.def.num_leaves();
            if (got != n)
              throw py::value_error(
                  std::string("[tree_unflatten] Too ") + (got < n ? "few" : "many") +
                  " leaves for PyTreeDef; expected " + std::to_string(n) + ", got " +
                  std::to_string(got) + " (structure " + treedef_str(t.def) + ")");
            size_t pos = 0, kpos = 0;
            PyObject* const* keys =
                t.keys.is_none() ? nullptr : PySequence_Fast_ITEMS(t.keys.ptr());
            return unflatten_rec(t.def, PySequence_Fast_ITEMS(seq.ptr()), pos, keys, kpos);
          },
          py::arg("leaves"))
      .def(
          "flatten_up_to",
          [](const PyTreeDef& t, py::handle tree) {
            return flatten_up_to(t.def, tree, "flatten_up_to", "");
          },
          py::arg("xs"))
      .def("_flatten_up_to",
           [](const PyTreeDef& t, py::handle tree, const std::string& op,
              const std::string& context) { return flatten_up_to(t.def, tree, op, context); })
      .def("compose", [](const PyTreeDef& t,
                         const PyTreeDef& inner) { return PyTreeDef{compose(t.def, inner.def)}; })
      .def("node_data", [](const PyTreeDef& t) { return node_data(t.def); })
      .def_static(
          "make_from_node_data_and_children",
          [](py::handle /*registry*/, py::handle nd, py::iterable children) {
            std::vector<TreeDef> kids = defs_of(children);
            const char* op = "make_from_node_data_and_children";
            if (nd.is_none()) {
              if (!kids.empty())
                throw py::value_error("[make_from_node_data_and_children] a leaf has no children");
              return PyTreeDef{TreeDef::leaf()};
            }
            py::tuple t = py::tuple(py::reinterpret_borrow<py::object>(nd));
            if (t.size() != 2)
              throw py::value_error(
                  "[make_from_node_data_and_children] node_data should be "
                  "None or a (type, data) pair, got " +
                  short_repr(nd));
            py::handle typ = t[0], data = t[1];
            Registry& r = reg();
            auto it = r.by_type.find(typ.ptr());
            if (it == r.by_type.end()) {
              if (!PyType_Check(typ.ptr()) ||
                  !is_namedtuple_type(reinterpret_cast<PyTypeObject*>(typ.ptr())))
                throw py::value_error("[make_from_node_data_and_children] " + repr_of(typ) +
                                      " is not a pytree node type; register it first");
              return PyTreeDef{node_from(&r.namedtuple, typ, typ, std::move(kids), op)};
            }
            return PyTreeDef{node_from(it->second, typ, data, std::move(kids), op)};
          },
          py::arg("registry"), py::arg("node_data"), py::arg("children"))
      .def(
          "walk",
          [](const PyTreeDef& t, py::object f_node, py::object f_leaf, py::iterable leaves) {
            py::iterator it = py::iter(leaves);
            std::function<py::object(const TreeDef&)> go = [&](const TreeDef& d) -> py::object {
              if (d.is_leaf()) {
                if (it == py::iterator::sentinel())
                  throw py::value_error("[walk] Too few leaves for PyTreeDef");
                py::object leaf = py::reinterpret_borrow<py::object>(*it);
                ++it;
                return f_leaf.is_none() ? leaf : f_leaf(leaf);
              }
              Depth depth(" while walking a PyTreeDef");
              py::list vals;
              for (const TreeDef& c : d.children()) vals.append(go(c));
              py::object data = py::none();
              Kind k = kind_of(d);
              if (k == Kind::kDict)
                data = py::list(dict_keys(d));
              else if (k == Kind::kNamedTuple || k == Kind::kCustom)
                data = aux_of(d)->data();
              return f_node(py::tuple(vals), data);
            };
            py::object out = go(t.def);
            if (it != py::iterator::sentinel())
              throw py::value_error("[walk] Too many leaves for PyTreeDef");
            return out;
          },
          py::arg("f_node"), py::arg("f_leaf"), py::arg("leaves"))
      .def("from_iterable_tree",
           [](const PyTreeDef& t, py::handle xs) {
             std::function<py::object(const TreeDef&, py::handle)> go =
                 [&](const TreeDef& d, py::handle x) -> py::object {
               if (d.is_leaf()) return py::reinterpret_borrow<py::object>(x);
               Depth depth(" while building a pytree");
               py::list ys = to_list_of(x);
               if (ys.size() != d.children().size())
                 throw py::value_error(
                     "[build_tree] Arity mismatch between trees: " + std::to_string(ys.size()) +
                     " != " + std::to_string(d.children().size()) + " at " + node_str(d));
               std::vector<py::object> vals;
               for (size_t i = 0; i < ys.size(); ++i) vals.push_back(go(d.child(i), ys[i]));
               return build_node(d, vals);
             };
             return go(t.def, xs);
           })
      .def("_is_strict_leaf", [](const PyTreeDef& t) { return t.def.is_leaf(); })
      .def("__eq__",
           [](const PyTreeDef& a, py::handle b) -> py::object {
             if (!py::isinstance<PyTreeDef>(b))
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a.def == b.cast<const PyTreeDef&>().def);
           })
      .def("__ne__",
           [](const PyTreeDef& a, py::handle b) -> py::object {
             if (!py::isinstance<PyTreeDef>(b))
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a.def != b.cast<const PyTreeDef&>().def);
           })
      .def("__hash__", [](const PyTreeDef& t) { return static_cast<Py_ssize_t>(t.def.hash()); })
      .def("__repr__", [](const PyTreeDef& t) { return treedef_str(t.def); })
      .def("__reduce__", [](const PyTreeDef& t) {
        py::object from_pickle =
            py::module_::import("tessera.tree_util").attr("_treedef_from_pickle");
        return py::make_tuple(from_pickle, py::make_tuple(encode(t.def)));
      });
  m.def("_tree_decode", [](py::handle enc) { return PyTreeDef{decode(enc)}; });
  m.def("tree_check_same_structure", [](const PyTreeDef& expected, const PyTreeDef& got,
                                        const std::string& op, const std::string& context) {
    if (expected.def == got.def) return;
    std::vector<py::object> path;
    std::string what = first_difference(expected.def, got.def, path);
    if (!context.empty()) what += " " + context;
    throw py::value_error("[" + op + "] " + what + "; expected " + treedef_str(expected.def) +
                          " got " + treedef_str(got.def));
  });
  m.def("treedef_tuple",
        [](py::iterable defs) { return PyTreeDef{TreeDef::tuple(defs_of(std::move(defs)))}; });
}

}  // namespace tessera::python::pytree
