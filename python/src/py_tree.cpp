// Python pytrees on the C++ TreeDef: jax.tree_util's flatten, unflatten, structure
// comparison and errors, in C++. tessera/tree_util.py is the public API over these.
//
// A Python structure is a tessera::TreeDef. Leaves, None, tuples, lists and dicts whose keys
// are all str are the TreeDef's own kinds; namedtuples, dicts with other keys and registered
// classes are Custom nodes whose aux is a PyAux: the Registration (compared by identity) and
// a Python object (a namedtuple's class, the sorted dict keys, a class's aux data). PyAux
// compares with Python's ==, hashes with Python's hash (0 when unhashable) and drops its
// reference with the GIL held, so a TreeDef may be copied and freed anywhere.
#include <Python.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "py_common.h"
#include "tessera/tree.h"

namespace tessera::python {
namespace {

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

Registry& reg() {
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

bool is_namedtuple_type(PyTypeObject* t) {
  return PyType_IsSubtype(t, &PyTuple_Type) &&
         PyObject_HasAttrString(reinterpret_cast<PyObject*>(t), "_fields");
}

// The registration of x's exact type (namedtuples: the pseudo-registration), or null: a leaf.
const Registration* lookup(PyObject* x) {
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
    if (PyGILState_Check()) {
      data_ = py::object();
    } else {
      py::gil_scoped_acquire gil;
      data_ = py::object();
    }
  }
  size_t hash() const override { return hash_; }
  bool equals(const TreeAux& other) const override {
    const auto* o = dynamic_cast<const PyAux*>(&other);
    if (o == nullptr || o->reg_ != reg_) return false;
    if (o->data_.is(data_)) return true;
    py::gil_scoped_acquire gil;
    int r = PyObject_RichCompareBool(data_.ptr(), o->data_.ptr(), Py_EQ);
    if (r < 0) throw py::error_already_set();
    return r == 1;
  }
  std::string str() const override {
    py::gil_scoped_acquire gil;
    return py::str(data_);
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
const PyAux* aux_of(const TreeDef& d) {
  if (d.kind() != TreeKind::kCustom) return nullptr;
  const auto* a = dynamic_cast<const PyAux*>(d.aux().get());
  if (a == nullptr)
    throw py::type_error("[tree_util] " + d.str() +
                         " holds a C++ node type; it cannot be used from Python");
  return a;
}

Kind kind_of(const TreeDef& d) {
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

py::str utf8_str(const std::string& s) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict"));
}

// A dict node's sorted keys as a Python tuple.
py::tuple dict_keys(const TreeDef& d) {
  if (d.kind() == TreeKind::kDict) {
    const auto& keys = d.keys();
    py::tuple t(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) t[i] = utf8_str(keys[i]);
    return t;
  }
  return py::reinterpret_borrow<py::tuple>(aux_of(d)->data());
}

// The Python class a custom/namedtuple node stands for.
py::object node_type(const TreeDef& d) {
  const PyAux* a = aux_of(d);
  return a->registration()->kind == Kind::kNamedTuple ? a->data() : a->registration()->type;
}

std::string short_repr(py::handle x, size_t limit = 80) {
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

std::string repr_of(py::handle x) { return py::repr(x); }

// list(x) for any iterable.
py::list to_list_of(py::handle x) {
  PyObject* l = PySequence_List(x.ptr());
  if (l == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::list>(l);
}

// ---- building nodes ----
TreeDef make_custom(const Registration* r, py::object data, std::vector<TreeDef> kids) {
  auto aux = std::make_shared<const PyAux>(r, std::move(data));
  return TreeDef::custom(r->name, std::move(aux), std::move(kids));
}

// A dict node from its keys (any order; sorted here, children permuted alike). All-str keys
// use the TreeDef's own dict kind; others a Custom node holding the sorted key tuple.
[[noreturn]] void throw_unsortable(py::handle keys, const char* op) {
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
std::pair<py::object, py::object> custom_flatten(const Registration& r, PyObject* x) {
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
std::pair<std::vector<std::pair<py::object, py::object>>, py::object> custom_flatten_with_keys(
    const Registration& r, PyObject* x) {
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

// ---- unflatten ----
// Builds the node `d` from its children's values (new references, in order). A str-keyed dict
// takes its keys from `keys` (borrowed, in order) when given.
py::object build_node(const TreeDef& d, std::vector<py::object>& vals,
                      PyObject* const* keys = nullptr) {
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
const char* kind_name(Kind k) {
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

std::string capitalized(const char* s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string keys_list_repr(const py::tuple& keys) { return repr_of(py::list(keys)); }

// The key of child i of d, as the key path names it (custom nodes: FlattenedIndexKey).
py::object child_key(const TreeDef& d, size_t i) {
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

std::string keystr(const std::vector<py::object>& path) {
  std::string s;
  for (const py::object& k : path) s += std::string(py::str(k));
  return s;
}

// The first difference between a and b (depth first), or "" when equal.
std::string first_difference(const TreeDef& a, const TreeDef& b, std::vector<py::object>& path) {
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

void flatten_up_to_rec(const TreeDef& d, PyObject* x, PyObject* out) {
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

py::list flatten_up_to(const TreeDef& d, py::handle tree, const std::string& op,
                       const std::string& context);

py::object tree_structure_or_repr(py::handle tree) {
  py::list leaves;
  Flattener f{leaves.ptr(), nullptr, true, false, {}};
  return py::str(treedef_str(f.flatten(tree.ptr())));
}

py::list flatten_up_to(const TreeDef& d, py::handle tree, const std::string& op,
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

// ---- structure surgery ----
TreeDef with_children(const TreeDef& d, std::vector<TreeDef> kids) {
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

TreeDef compose(const TreeDef& d, const TreeDef& inner) {
  if (d.is_leaf()) return inner;
  Depth depth(" while composing PyTreeDefs");
  std::vector<TreeDef> kids;
  for (const TreeDef& c : d.children()) kids.push_back(compose(c, inner));
  return with_children(d, std::move(kids));
}

// (type, data) of a node: dicts give their key list, namedtuples (class, None).
py::object node_data(const TreeDef& d) {
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
TreeDef node_from(const Registration* r, py::handle typ, py::handle data, std::vector<TreeDef> kids,
                  const char* op) {
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
py::object encode(const TreeDef& d) {
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

}  // namespace

void bind_tree(py::module_& m) {
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

  m.def("_tree_init", [](py::object seq, py::object dict, py::object attr, py::object flat) {
    Registry& r = reg();
    r.SequenceKey = std::move(seq);
    r.DictKey = std::move(dict);
    r.GetAttrKey = std::move(attr);
    r.FlattenedIndexKey = std::move(flat);
  });
  m.def("_tree_decode", [](py::handle enc) { return PyTreeDef{decode(enc)}; });
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
