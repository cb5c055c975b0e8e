// Internal to the pytree bindings (py_tree.cpp: registry, flatten, unflatten and the
// tree_util functions; py_treedef.cpp: the PyTreeDef class — printing, comparison,
// flatten_up_to, surgery, pickling).
//
// A Python structure is a tessera::TreeDef. Leaves, None, tuples, lists and dicts whose keys
// are all str are the TreeDef's own kinds; namedtuples, dicts with other keys and registered
// classes are Custom nodes whose aux is a PyAux: the Registration (compared by identity) and
// a Python object (a namedtuple's class, the sorted dict keys, a class's aux data). PyAux
// compares with Python's ==, hashes with Python's hash (0 when unhashable) and drops its
// reference with the GIL held, so a TreeDef may be copied and freed anywhere.
#pragma once

#include <Python.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "py_common.h"
#include "tessera/tree.h"

namespace tessera::python::pytree {

enum class Kind { kLeaf, kNone, kTuple, kList, kDict, kNamedTuple, kCustom };

struct Registration {
  Kind kind = Kind::kCustom;
  py::object type;  // the registered class (None for the namedtuple pseudo-registration)
  std::string name;
  py::object flatten, unflatten, flatten_with_keys;  // custom nodes; flatten_with_keys may be None
};

// Registrations live as long as the process (as JAX's registry): the references they hold are
// deliberately never released.
struct Registry {
  std::unordered_map<PyObject*, Registration*> by_type;
  Registration none{Kind::kNone, {}, "NoneType", {}, {}, {}};
  Registration tuple{Kind::kTuple, {}, "tuple", {}, {}, {}};
  Registration list{Kind::kList, {}, "list", {}, {}, {}};
  Registration dict{Kind::kDict, {}, "dict", {}, {}, {}};
  Registration namedtuple{Kind::kNamedTuple, {}, "namedtuple", {}, {}, {}};
  // tessera.tree_util's key classes and helpers, set once at import.
  py::object SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey;
};

inline Registry& reg() {
  static Registry* r = [] {
    auto* p = new Registry;
    auto put = [&](PyObject* t, Registration& x) {
      x.type = py::reinterpret_borrow<py::object>(t);
      p->by_type[t] = &x;
    };
    put(reinterpret_cast<PyObject*>(Py_TYPE(Py_None)), p->none);
    put(reinterpret_cast<PyObject*>(&PyTuple_Type), p->tuple);
    put(reinterpret_cast<PyObject*>(&PyList_Type), p->list);
    put(reinterpret_cast<PyObject*>(&PyDict_Type), p->dict);
    return p;
  }();
  return *r;
}

inline bool is_namedtuple_type(PyTypeObject* t) {
  return PyType_IsSubtype(t, &PyTuple_Type) &&
         PyObject_HasAttrString(reinterpret_cast<PyObject*>(t), "_fields");
}

// The registration of x's exact type (namedtuples: the pseudo-registration), or null: a leaf.
inline const Registration* lookup(PyObject* x) {
  PyTypeObject* t = Py_TYPE(x);
  Registry& r = reg();
  if (t == &PyTuple_Type) return &r.tuple;
  if (t == &PyList_Type) return &r.list;
  if (t == &PyDict_Type) return &r.dict;
  if (x == Py_None) return &r.none;
  auto it = r.by_type.find(reinterpret_cast<PyObject*>(t));
  if (it != r.by_type.end()) return it->second;
  if (PyTuple_Check(x) && is_namedtuple_type(t)) return &r.namedtuple;
  return nullptr;
}

// f() with the GIL held: taken only when this thread does not hold it already (the common
// case, code called from Python, then costs nothing extra).
template <class F>
auto with_gil(F&& f) {
  if (PyGILState_Check()) return f();
  py::gil_scoped_acquire gil;
  return f();
}

class PyAux final : public TreeAux {
 public:
  PyAux(const Registration* r, py::object data) : reg_(r), data_(std::move(data)) {
    Py_hash_t h = PyObject_Hash(data_.ptr());
    if (h == -1) {  // unhashable aux data: structures still compare, by ==
      PyErr_Clear();
      h = 0;
    }
    hash_ = static_cast<size_t>(h) ^ reinterpret_cast<size_t>(reg_);
  }
  ~PyAux() override {
    if (!Py_IsInitialized() || _Py_IsFinalizing()) {
      data_.release();  // the interpreter is gone: leak rather than touch it
      return;
    }
    with_gil([&] { data_ = py::object(); });
  }
  size_t hash() const override { return hash_; }
  bool equals(const TreeAux& other) const override {
    const auto* o = dynamic_cast<const PyAux*>(&other);
    if (o == nullptr || o->reg_ != reg_) return false;
    if (o->data_.is(data_)) return true;
    return with_gil([&] {
      int r = PyObject_RichCompareBool(data_.ptr(), o->data_.ptr(), Py_EQ);
      if (r < 0) throw py::error_already_set();
      return r == 1;
    });
  }
  std::string str() const override {
    return with_gil([&] { return std::string(py::str(data_)); });
  }
  const Registration* registration() const { return reg_; }
  const py::object& data() const { return data_; }

 private:
  const Registration* reg_;
  py::object data_;
  size_t hash_ = 0;
};

// RAII guard on Python's recursion limit: deep structures raise RecursionError, never overflow
// the C++ stack.
struct Depth {
  explicit Depth(const char* where) {
    if (Py_EnterRecursiveCall(where)) throw py::error_already_set();
  }
  ~Depth() { Py_LeaveRecursiveCall(); }
  Depth(const Depth&) = delete;
  Depth& operator=(const Depth&) = delete;
};

// ---- node accessors over the two dict representations and custom nodes ----
inline const PyAux* aux_of(const TreeDef& d) {
  if (d.kind() != TreeKind::kCustom) return nullptr;
  const auto* a = dynamic_cast<const PyAux*>(d.aux().get());
  if (a == nullptr)
    throw py::type_error("[tree_util] " + d.str() +
                         " holds a C++ node type; it cannot be used from Python");
  return a;
}

inline Kind kind_of(const TreeDef& d) {
  switch (d.kind()) {
    case TreeKind::kLeaf:
      return Kind::kLeaf;
    case TreeKind::kNone:
      return Kind::kNone;
    case TreeKind::kTuple:
      return Kind::kTuple;
    case TreeKind::kList:
      return Kind::kList;
    case TreeKind::kDict:
      return Kind::kDict;
    case TreeKind::kCustom:
      return aux_of(d)->registration()->kind;
  }
  return Kind::kLeaf;
}

inline py::str utf8_str(const std::string& s) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict"));
}

// A dict node's sorted keys as a Python tuple.
inline py::tuple dict_keys(const TreeDef& d) {
  if (d.kind() == TreeKind::kDict) {
    const auto& keys = d.keys();
    py::tuple t(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) t[i] = utf8_str(keys[i]);
    return t;
  }
  return py::reinterpret_borrow<py::tuple>(aux_of(d)->data());
}

// The Python class a custom/namedtuple node stands for.
inline py::object node_type(const TreeDef& d) {
  const PyAux* a = aux_of(d);
  return a->registration()->kind == Kind::kNamedTuple ? a->data() : a->registration()->type;
}

inline std::string short_repr(py::handle x, size_t limit = 80) {
  std::string s;
  PyObject* r = PyObject_Repr(x.ptr());
  if (r == nullptr) {  // a broken __repr__ must not hide the real error
    PyErr_Clear();
    s = std::string("<") + Py_TYPE(x.ptr())->tp_name + " object>";
  } else {
    s = py::reinterpret_steal<py::str>(r);
  }
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out.size() <= limit ? out : out.substr(0, limit - 3) + "...";
}

inline std::string repr_of(py::handle x) { return py::repr(x); }

// list(x) for any iterable.
inline py::list to_list_of(py::handle x) {
  PyObject* l = PySequence_List(x.ptr());
  if (l == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::list>(l);
}

// ---- building nodes ----
inline TreeDef make_custom(const Registration* r, py::object data, std::vector<TreeDef> kids) {
  auto aux = std::make_shared<const PyAux>(r, std::move(data));
  return TreeDef::custom(r->name, std::move(aux), std::move(kids));
}

// A dict node from its keys (any order; sorted here, children permuted alike). All-str keys
// use the TreeDef's own dict kind; others a Custom node holding the sorted key tuple.
[[noreturn]] inline void throw_unsortable(py::handle keys, const char* op) {
  py::error_already_set cause;  // the comparison's error, chained as the ValueError's cause
  std::string msg = std::string("[") + op +
                    "] Comparator raised exception while sorting pytree dictionary keys " +
                    short_repr(keys, 400) +
                    "; dict keys must be mutually comparable (e.g. all str), or use a registered "
                    "container";
  py::raise_from(cause, PyExc_ValueError, msg.c_str());
  throw py::error_already_set();
}

// The items of a dict in sorted key order, on one scratch stack shared by all flattens (the
// GIL serializes them; a flatten function that flattens again pushes above and pops before
// returning), so the hot path allocates nothing per dict. Holds references to the items.
class SortedDict {
 public:
  SortedDict(PyObject* d, const char* op) : begin_(stack().size()) {
    Py_ssize_t pos = 0;
    PyObject *k = nullptr, *v = nullptr;
    std::vector<Item>& st = stack();
    while (PyDict_Next(d, &pos, &k, &v)) {
      Py_INCREF(k);
      Py_INCREF(v);
      st.push_back({k, v, {}});
      if (all_str_) {
        Py_ssize_t n = 0;
        const char* s = PyUnicode_CheckExact(k) ? PyUnicode_AsUTF8AndSize(k, &n) : nullptr;
        if (s == nullptr) {  // not str, or lone surrogates: let Python order them
          PyErr_Clear();
          all_str_ = false;
        } else {
          st.back().utf8 = std::string_view(s, static_cast<size_t>(n));
        }
      }
    }
    n_ = st.size() - begin_;
    auto first = st.begin() + static_cast<std::ptrdiff_t>(begin_);
    // All str: UTF-8 byte order is code point order, the order Python compares str in.
    if (all_str_) {
      std::sort(first, st.end(), [](const Item& a, const Item& b) { return a.utf8 < b.utf8; });
      return;
    }
    py::list keys(n_);
    for (size_t i = 0; i < n_; ++i) keys[i] = py::handle(st[begin_ + i].key);
    py::list idx(n_);
    for (size_t i = 0; i < n_; ++i) idx[i] = py::int_(i);
    py::dict kw;
    kw["key"] = keys.attr("__getitem__");
    PyObject* sorted = PyObject_Call(py::module_::import("builtins").attr("sorted").ptr(),
                                     py::make_tuple(idx).ptr(), kw.ptr());
    if (sorted == nullptr) {
      release();
      throw_unsortable(keys, op);
    }
    py::list order = py::reinterpret_steal<py::list>(sorted);
    std::vector<Item> items(n_);
    for (size_t i = 0; i < n_; ++i) items[i] = stack()[begin_ + order[i].cast<size_t>()];
    std::copy(items.begin(), items.end(), stack().begin() + static_cast<std::ptrdiff_t>(begin_));
  }
  ~SortedDict() { release(); }
  SortedDict(const SortedDict&) = delete;
  SortedDict& operator=(const SortedDict&) = delete;

  size_t size() const { return n_; }
  bool all_str() const { return all_str_; }
  PyObject* key(size_t i) const { return stack()[begin_ + i].key; }
  PyObject* val(size_t i) const { return stack()[begin_ + i].val; }
  std::string_view utf8(size_t i) const { return stack()[begin_ + i].utf8; }
  py::tuple keys() const {
    py::tuple t(n_);
    for (size_t i = 0; i < n_; ++i) t[i] = py::handle(key(i));
    return t;
  }
  py::tuple vals() const {
    py::tuple t(n_);
    for (size_t i = 0; i < n_; ++i) t[i] = py::handle(val(i));
    return t;
  }
  // The dict node over children already flattened in this order.
  TreeDef node(std::vector<TreeDef> kids) const {
    if (!all_str_) return make_custom(&reg().dict, keys(), std::move(kids));
    std::vector<std::string> k;
    k.reserve(n_);
    for (size_t i = 0; i < n_; ++i) k.emplace_back(utf8(i));
    return TreeDef::dict(std::move(k), std::move(kids));
  }

 private:
  struct Item {
    PyObject* key;
    PyObject* val;
    std::string_view utf8;
  };
  static std::vector<Item>& stack() {
    static std::vector<Item>* s = new std::vector<Item>;
    return *s;
  }
  void release() {
    std::vector<Item>& st = stack();
    if (st.size() < begin_) return;
    for (size_t i = begin_; i < st.size(); ++i) {
      Py_DECREF(st[i].key);
      Py_DECREF(st[i].val);
    }
    st.resize(begin_);
  }
  size_t begin_;
  size_t n_ = 0;
  bool all_str_ = true;
};

// (children, aux) of a registered class, checked.
inline std::pair<py::object, py::object> custom_flatten(const Registration& r, PyObject* x) {
  py::object out = r.flatten(py::handle(x));
  if (PyTuple_Check(out.ptr()) && PyTuple_GET_SIZE(out.ptr()) == 2)
    return {py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(out.ptr(), 0)),
            py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(out.ptr(), 1))};
  py::object seq = py::reinterpret_steal<py::object>(PySequence_Tuple(out.ptr()));
  if (!seq || PyTuple_GET_SIZE(seq.ptr()) != 2) {
    PyErr_Clear();
    throw py::value_error("[tree_flatten] the flatten function of " + r.name +
                          " should return a (children, aux_data) tuple, got " + short_repr(out));
  }
  return {py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(seq.ptr(), 0)),
          py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(seq.ptr(), 1))};
}

// ([(key, child), ...], aux) of a registered class (FlattenedIndexKey keys without
// flatten_with_keys).
inline std::pair<std::vector<std::pair<py::object, py::object>>, py::object>
custom_flatten_with_keys(const Registration& r, PyObject* x) {
  std::vector<std::pair<py::object, py::object>> out;
  if (r.flatten_with_keys.is_none()) {
    auto [children, aux] = custom_flatten(r, x);
    size_t i = 0;
    for (py::handle c : children)
      out.emplace_back(reg().FlattenedIndexKey(i++), py::reinterpret_borrow<py::object>(c));
    return {std::move(out), aux};
  }
  py::object res = r.flatten_with_keys(py::handle(x));
  auto bad = [&]() {
    PyErr_Clear();
    return py::value_error("[tree_flatten_with_path] the flatten_with_keys function of " + r.name +
                           " should return a (((key, child), ...), aux_data) tuple, got " +
                           short_repr(res));
  };
  py::object pair = py::reinterpret_steal<py::object>(PySequence_Tuple(res.ptr()));
  if (!pair || PyTuple_GET_SIZE(pair.ptr()) != 2) throw bad();
  py::handle key_children = PyTuple_GET_ITEM(pair.ptr(), 0);
  py::object it = py::reinterpret_steal<py::object>(PyObject_GetIter(key_children.ptr()));
  if (!it) throw bad();
  while (PyObject* kc = PyIter_Next(it.ptr())) {
    py::object kco = py::reinterpret_steal<py::object>(kc);
    py::object t = py::reinterpret_steal<py::object>(PySequence_Tuple(kc));
    if (!t || PyTuple_GET_SIZE(t.ptr()) != 2) throw bad();
    out.emplace_back(py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(t.ptr(), 0)),
                     py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(t.ptr(), 1)));
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  return {std::move(out), py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(pair.ptr(), 1))};
}

// ---- flatten ----
struct Flattener {
  PyObject* leaves;             // a list
  PyObject* is_leaf = nullptr;  // optional predicate
  bool build = true;            // false: leaves only (tree_leaves)
  bool want_keys = false;       // collect str-keyed dicts' keys in preorder (PyTreeDef::keys)
  py::object keys;              // that list, made at the first such dict (null before)

  void leaf(PyObject* x) {
    if (PyList_Append(leaves, x) < 0) throw py::error_already_set();
  }

  bool pred(PyObject* x) {
    PyObject* r = PyObject_CallOneArg(is_leaf, x);
    if (r == nullptr) throw py::error_already_set();
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (t < 0) throw py::error_already_set();
    return t == 1;
  }

  TreeDef children_of_seq(PyObject* seq) {
    // seq is a tuple or list; hold it while iterating (user code may mutate a list).
    py::object hold = py::reinterpret_borrow<py::object>(seq);
    std::vector<TreeDef> kids;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (build) kids.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
      PyObject* c = PySequence_Fast_GET_ITEM(seq, i);
      py::object hc = py::reinterpret_borrow<py::object>(c);
      TreeDef k = flatten(c);
      if (build) kids.push_back(std::move(k));
    }
    if (!build) return TreeDef::leaf();
    return PyList_CheckExact(seq) ? TreeDef::list(std::move(kids))
                                  : TreeDef::tuple(std::move(kids));
  }

  std::vector<TreeDef> children_of_iterable(py::handle xs) {
    std::vector<TreeDef> kids;
    py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(xs.ptr(), ""));
    if (!seq) {
      PyErr_Clear();
      throw py::type_error(
          "[tree_flatten] the children returned by a flatten function must be "
          "iterable, got " +
          short_repr(xs));
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
    kids.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      TreeDef k = flatten(PySequence_Fast_GET_ITEM(seq.ptr(), i));
      if (build) kids.push_back(std::move(k));
    }
    return kids;
  }

  TreeDef flatten(PyObject* x) {
    if (is_leaf != nullptr && pred(x)) {
      leaf(x);
      return TreeDef::leaf();
    }
    const Registration* r = lookup(x);
    if (r == nullptr) {
      leaf(x);
      return TreeDef::leaf();
    }
    Depth depth(" while flattening a pytree");
    switch (r->kind) {
      case Kind::kNone:
        return TreeDef::none();
      case Kind::kTuple:
      case Kind::kList:
        return children_of_seq(x);
      case Kind::kNamedTuple: {
        py::object hold = py::reinterpret_borrow<py::object>(x);
        std::vector<TreeDef> kids;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x); ++i) {
          TreeDef k = flatten(PyTuple_GET_ITEM(x, i));
          if (build) kids.push_back(std::move(k));
        }
        if (!build) return TreeDef::leaf();
        return make_custom(
            r, py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(x))),
            std::move(kids));
      }
      case Kind::kDict: {
        SortedDict items(x, "tree_flatten");
        std::vector<TreeDef> kids;
        if (build) kids.reserve(items.size());
        if (want_keys && build && items.all_str()) {
          if (!keys) keys = py::list();
          for (size_t i = 0; i < items.size(); ++i)
            if (PyList_Append(keys.ptr(), items.key(i)) < 0) throw py::error_already_set();
        }
        for (size_t i = 0; i < items.size(); ++i) {
          TreeDef k = flatten(items.val(i));
          if (build) kids.push_back(std::move(k));
        }
        if (!build) return TreeDef::leaf();
        return items.node(std::move(kids));
      }
      case Kind::kCustom: {
        py::object hold = py::reinterpret_borrow<py::object>(x);
        auto [children, aux] = custom_flatten(*r, x);
        std::vector<TreeDef> kids = children_of_iterable(children);
        if (!build) return TreeDef::leaf();
        return make_custom(r, std::move(aux), std::move(kids));
      }
      case Kind::kLeaf:
        break;
    }
    leaf(x);
    return TreeDef::leaf();
  }
};

// A structure as Python holds it. `keys`, when set, is the str keys of the TreeDef's dict
// nodes in preorder, the very objects flattening saw: unflatten reuses them (with their cached
// hashes) instead of decoding each key again.
struct PyTreeDef {
  TreeDef def;
  py::object keys = py::none();  // a list, or None
};

// ---- defined in py_tree.cpp ----
// Builds node `d` from its children's values (in order); a str-keyed dict takes its keys from
// `keys` (borrowed) when given.
py::object build_node(const TreeDef& d, std::vector<py::object>& vals,
                      PyObject* const* keys = nullptr);
// keys: a PyTreeDef's key cache (or null), consumed from kpos in preorder.
py::object unflatten_rec(const TreeDef& d, PyObject* const* leaves, size_t& pos,
                         PyObject* const* keys, size_t& kpos);

// ---- defined in py_treedef.cpp ----
std::string node_str(const TreeDef& d);
std::string treedef_str(const TreeDef& d);
TreeDef decode(py::handle enc);
std::vector<TreeDef> defs_of(py::iterable children);
void bind_treedef(py::module_& m);  // the PyTreeDef class and the structure functions

}  // namespace tessera::python::pytree
