// Pytrees: flatten/unflatten round trips, leaf order, TreeDef identity and printing, tree_map,
// structure-mismatch errors, key paths, None, and scalars from tracers.
#include <gtest/gtest.h>

#include <unordered_set>

#include "tessera/tree.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::rng;
using testing::to_doubles;

struct Layer {
  Array w;
  Array b;
};
TESSERA_REGISTER_PYTREE(Layer, w, b);

// Same fields, another type: a Custom node type mismatch.
struct OtherLayer {
  Array w;
  Array b;
};
TESSERA_REGISTER_PYTREE(OtherLayer, w, b);

// Children follow the macro's order, not the declaration order.
struct Reordered {
  Array a;
  Array b;
};
TESSERA_REGISTER_PYTREE(Reordered, b, a);

struct Model {
  std::vector<Layer> layers;
  std::map<std::string, Array> extra;
  double scale = 0;
  std::optional<Array> bias;
};
TESSERA_REGISTER_PYTREE(Model, layers, extra, scale, bias);

Array rand_f32(Shape s) { return random_array(s, DType::kFloat32); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

#define EXPECT_CONTAINS(hay, needle) \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos) << (hay)

TEST(Tree, ArrayIsALeaf) {
  Array x = rand_f32({2, 3});
  auto [leaves, def] = tree_flatten(x);
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_TRUE(leaves[0].is(x));
  EXPECT_EQ(def.str(), "PyTreeDef(*)");
  EXPECT_EQ(def, TreeDef());
  EXPECT_TRUE(tree_unflatten<Array>(def, leaves).is(x));
}

TEST(Tree, NestedRoundTripAndJaxLeafOrder) {
  Array a = rand_f32({3}), b = rand_f32({2, 2}), c = rand_f32({}), d = rand_f32({4});
  Array e = rand_f32({1}), f = rand_f32({5}), g = rand_f32({2}), h = rand_f32({3, 1});
  Array w0 = rand_f32({2, 2}), b0 = rand_f32({2}), w1 = rand_f32({2, 3}), b1 = rand_f32({3});
  Array x0 = rand_f32({1}), x1 = rand_f32({2});
  using Inner = std::map<std::string, std::pair<Array, std::vector<Array>>>;
  using Tree = std::tuple<Array, Inner, std::array<Array, 2>, std::optional<Array>, Model>;
  Model m{{Layer{w0, b0}, Layer{w1, b1}}, {{"zeta", x1}, {"alpha", x0}}, 0.5, std::nullopt};
  // Keys inserted out of order: JAX sorts dict keys.
  Inner inner{{"b", {c, {d, e}}}, {"a", {b, {}}}};
  Tree t{a, inner, {f, g}, h, m};

  auto [leaves, def] = tree_flatten(t);
  std::vector<Array> want = {a, b, c, d, e, f, g, h, w0, b0, w1, b1, x0, x1};
  ASSERT_EQ(leaves.size(), want.size() + 1);  // + the scale scalar, last
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(leaves[i].is(want[i])) << i;
  EXPECT_EQ(leaves.back().item<double>(), 0.5);
  EXPECT_EQ(def.num_leaves(), static_cast<int64_t>(leaves.size()));
  EXPECT_EQ(def.str(),
            "PyTreeDef((*, {'a': (*, []), 'b': (*, [*, *])}, [*, *], *, "
            "CustomNode(Model[None], [[CustomNode(Layer[None], [*, *]), "
            "CustomNode(Layer[None], [*, *])], {'alpha': *, 'zeta': *}, *, None])))");

  Tree back = tree_unflatten<Tree>(def, leaves);
  EXPECT_TRUE(std::get<0>(back).is(a));
  const Inner& bi = std::get<1>(back);
  ASSERT_EQ(bi.size(), 2u);
  EXPECT_TRUE(bi.at("a").first.is(b));
  EXPECT_TRUE(bi.at("a").second.empty());
  EXPECT_TRUE(bi.at("b").first.is(c));
  ASSERT_EQ(bi.at("b").second.size(), 2u);
  EXPECT_TRUE(bi.at("b").second[1].is(e));
  EXPECT_TRUE(std::get<2>(back)[0].is(f) && std::get<2>(back)[1].is(g));
  ASSERT_TRUE(std::get<3>(back).has_value());
  EXPECT_TRUE(std::get<3>(back)->is(h));
  const Model& bm = std::get<4>(back);
  ASSERT_EQ(bm.layers.size(), 2u);
  EXPECT_TRUE(bm.layers[1].w.is(w1) && bm.layers[1].b.is(b1));
  EXPECT_TRUE(bm.extra.at("alpha").is(x0) && bm.extra.at("zeta").is(x1));
  EXPECT_EQ(bm.scale, 0.5);
  EXPECT_FALSE(bm.bias.has_value());
  EXPECT_EQ(tree_structure(back), def);
}

TEST(Tree, RandomNestedContainersFollowJaxOrder) {
  // vector<map<str, vector<Array>>> of random sizes; the reference order is a hand-written
  // traversal with keys sorted.
  using Tree = std::vector<std::map<std::string, std::vector<Array>>>;
  std::uniform_int_distribution<int> n(0, 4), ch('a', 'z');
  for (int trial = 0; trial < 20; ++trial) {
    Tree t(n(rng()));
    for (auto& m : t) {
      int keys = n(rng());
      for (int k = 0; k < keys; ++k) {
        std::string key(1 + n(rng()) % 3, 'x');
        for (char& c : key) c = static_cast<char>(ch(rng()));
        std::vector<Array> v(n(rng()));
        for (Array& x : v) x = rand_f32({2});
        m[key] = v;
      }
    }
    std::vector<Array> want;
    for (const auto& m : t) {
      std::vector<std::string> ks;
      for (const auto& kv : m) ks.push_back(kv.first);
      std::sort(ks.begin(), ks.end());
      for (const auto& k : ks)
        for (const Array& x : m.at(k)) want.push_back(x);
    }
    auto [leaves, def] = tree_flatten(t);
    ASSERT_EQ(leaves.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(leaves[i].is(want[i]));
    Tree back = tree_unflatten<Tree>(def, leaves);
    ASSERT_EQ(back.size(), t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      ASSERT_EQ(back[i].size(), t[i].size());
      for (const auto& [k, v] : t[i]) {
        ASSERT_EQ(back[i].at(k).size(), v.size());
        for (size_t j = 0; j < v.size(); ++j) EXPECT_TRUE(back[i].at(k)[j].is(v[j]));
      }
    }
  }
}

TEST(Tree, StructFieldOrderIsTheMacroOrder) {
  Array a = rand_f32({1}), b = rand_f32({2});
  auto [leaves, def] = tree_flatten(Reordered{a, b});
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_TRUE(leaves[0].is(b) && leaves[1].is(a));
  EXPECT_EQ(def.keys(), (std::vector<std::string>{"b", "a"}));
  Reordered r = tree_unflatten<Reordered>(def, leaves);
  EXPECT_TRUE(r.a.is(a) && r.b.is(b));
}

TEST(Tree, StrMatchesJaxFormat) {
  Array x = rand_f32({2});
  std::map<std::string, std::vector<Array>> m{{"b", {x, x}}};
  std::map<std::string, Array> am{{"a", x}};
  EXPECT_EQ(tree_structure(std::make_tuple(x, std::map<std::string, Array>{{"a", x}}, m)).str(),
            "PyTreeDef((*, {'a': *}, {'b': [*, *]}))");
  EXPECT_EQ(TreeDef::tuple({TreeDef::leaf(), TreeDef::dict({"b", "a"}, {tree_structure(m.at("b")),
                                                                        TreeDef::leaf()})})
                .str(),
            "PyTreeDef((*, {'a': *, 'b': [*, *]}))");
  EXPECT_EQ(tree_structure(std::make_tuple(x)).str(), "PyTreeDef((*,))");
  EXPECT_EQ(tree_structure(std::tuple<>{}).str(), "PyTreeDef(())");
  EXPECT_EQ(tree_structure(std::vector<Array>{}).str(), "PyTreeDef([])");
  EXPECT_EQ(tree_structure(std::map<std::string, Array>{}).str(), "PyTreeDef({})");
  EXPECT_EQ(tree_structure(std::optional<Array>{}).str(), "PyTreeDef(None)");
  EXPECT_EQ(tree_structure(std::make_pair(std::optional<Array>{}, x)).str(),
            "PyTreeDef((None, *))");
  EXPECT_EQ(tree_structure(Layer{x, x}).str(), "PyTreeDef(CustomNode(Layer[None], [*, *]))");
  EXPECT_EQ(tree_structure(std::map<std::string, Array>{{"it's", x}}).str(),
            "PyTreeDef({\"it's\": *})");
  EXPECT_EQ(tree_structure(std::map<std::string, Array>{{"a\nb", x}}).str(),
            "PyTreeDef({'a\\nb': *})");
  std::ostringstream os;
  os << tree_structure(std::vector<Array>{x});
  EXPECT_EQ(os.str(), "PyTreeDef([*])");
}

// A hashable aux for custom nodes built by hand (as a Python class's static data would be).
class NameAux : public TreeAux {
 public:
  explicit NameAux(std::string s) : s_(std::move(s)) {}
  size_t hash() const override { return std::hash<std::string>{}(s_); }
  bool equals(const TreeAux& o) const override {
    auto* p = dynamic_cast<const NameAux*>(&o);
    return p && p->s_ == s_;
  }
  std::string str() const override { return "('" + s_ + "',)"; }

 private:
  std::string s_;
};

TEST(Tree, HashAndEquality) {
  auto x = [] { return rand_f32({2}); };
  using T = std::tuple<Array, std::vector<Layer>, std::map<std::string, Array>>;
  TreeDef d1 = tree_structure(T{x(), {Layer{x(), x()}}, {{"k", x()}}});
  TreeDef d2 = tree_structure(T{x(), {Layer{x(), x()}}, {{"k", x()}}});
  EXPECT_EQ(d1, d2);
  EXPECT_EQ(d1.hash(), d2.hash());
  EXPECT_EQ(d1.num_leaves(), 4);
  EXPECT_EQ(d1.num_nodes(), 8);  // tuple, leaf, list, Layer, 2 leaves, dict, leaf
  EXPECT_NE(d1, tree_structure(T{x(), {Layer{x(), x()}}, {{"j", x()}}}));            // dict key
  EXPECT_NE(d1, tree_structure(T{x(), {}, {{"k", x()}}}));                           // list arity
  EXPECT_NE(tree_structure(Layer{x(), x()}), tree_structure(OtherLayer{x(), x()}));  // type
  EXPECT_NE(tree_structure(std::make_tuple(x(), x())),
            tree_structure(std::vector<Array>{x(), x()}));  // tuple vs list
  EXPECT_NE(TreeDef::none(), TreeDef::leaf());
  EXPECT_EQ(TreeDef::none(), tree_structure(std::optional<Layer>{}));

  auto custom = [](std::shared_ptr<const TreeAux> aux, std::vector<std::string> keys) {
    return TreeDef::custom("Foo", std::move(aux), {TreeDef::leaf(), TreeDef::leaf()},
                           std::move(keys));
  };
  TreeDef c1 = custom(std::make_shared<NameAux>("x"), {});
  TreeDef c2 = custom(std::make_shared<NameAux>("x"), {});
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(c1.hash(), c2.hash());
  EXPECT_EQ(c1.str(), "PyTreeDef(CustomNode(Foo[('x',)], [*, *]))");
  EXPECT_NE(c1, custom(std::make_shared<NameAux>("y"), {}));  // aux
  EXPECT_NE(c1, custom(nullptr, {}));
  EXPECT_NE(custom(nullptr, {"p", "q"}), custom(nullptr, {"p", "r"}));  // keys
  EXPECT_NE(c1, TreeDef::custom("Foo", std::make_shared<NameAux>("x"), {TreeDef::leaf()}));

  std::unordered_set<TreeDef> set{d1, d2, c1, c2, TreeDef::none()};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(d1.children().size(), 3u);
  EXPECT_EQ(d1.child(1).child(0).name(), "Layer");
}

TEST(Tree, DictFactorySortsAndRejectsDuplicates) {
  TreeDef l2 = TreeDef::list({TreeDef::leaf(), TreeDef::leaf()});
  TreeDef d = TreeDef::dict({"b", "a"}, {l2, TreeDef::none()});
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d.child(0), TreeDef::none());
  EXPECT_EQ(d.child(1), l2);
  EXPECT_CONTAINS(error_of([] {
                    TreeDef::dict({"a", "a"}, {TreeDef(), TreeDef()});
                  }),
                  "[TreeDef::dict] duplicate key 'a'");
}

TEST(Tree, MapOverSeveralTreesMatchesElementwiseReference) {
  using T = std::tuple<Array, std::vector<Layer>, std::map<std::string, Array>>;
  std::uniform_int_distribution<int> dim(1, 5);
  auto shape = [&] { return Shape{dim(rng()), dim(rng())}; };
  std::vector<Shape> shapes = {shape(), shape(), shape(), shape()};
  auto make = [&] {
    return T{rand_f32(shapes[0]),
             {Layer{rand_f32(shapes[1]), rand_f32(shapes[2])}},
             {{"k", rand_f32(shapes[3])}}};
  };
  T x = make(), y = make(), z = make();
  T s = tree::map(
      [](const Array& a, const Array& b, const Array& c) { return lax::add(lax::add(a, b), c); }, x,
      y, z);
  std::vector<Array> lx = tree_leaves(x), ly = tree_leaves(y), lz = tree_leaves(z);
  std::vector<Array> ls = tree::leaves(s);
  ASSERT_EQ(ls.size(), 4u);
  EXPECT_EQ(tree_structure(s), tree_structure(x));
  for (size_t i = 0; i < ls.size(); ++i) {
    EXPECT_EQ(ls[i].shape(), shapes[i]);
    std::vector<double> a = to_doubles(lx[i]), b = to_doubles(ly[i]), c = to_doubles(lz[i]);
    std::vector<double> want(a.size());
    for (size_t j = 0; j < a.size(); ++j)  // float32 arithmetic, in lax's order
      want[j] = static_cast<float>(static_cast<float>(a[j] + b[j]) + static_cast<float>(c[j]));
    EXPECT_EQ(testing::compare(to_doubles(ls[i]), want, 0, 0), "") << i;
  }
}

TEST(Tree, MapKeepsNoneAndConvertsScalars) {
  Array w = rand_f32({3});
  Model m{{Layer{w, w}}, {}, 1.5, std::nullopt};
  int calls = 0;
  Model doubled = tree_map(
      [&](const Array& a) {
        ++calls;
        return lax::add(a, a);
      },
      m);
  EXPECT_EQ(calls, 3);  // w, b, scale: None has no leaves
  EXPECT_EQ(doubled.scale, 3.0);
  EXPECT_FALSE(doubled.bias.has_value());
  std::vector<double> got = to_doubles(doubled.layers[0].w), in = to_doubles(w);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[i], static_cast<float>(in[i] + in[i]));
}

TEST(Tree, MapStructureMismatchShowsBothStructures) {
  Array x = rand_f32({2});
  auto id2 = [](const Array& a, const Array&) { return a; };
  std::string m = error_of([&] { tree_map(id2, std::make_tuple(x, x), std::make_tuple(x, x, x)); });
  EXPECT_CONTAINS(m,
                  "[tree_map] Tuple arity mismatch: 3 != 2 in tree argument 2; "
                  "expected PyTreeDef((*, *)) got PyTreeDef((*, *, *))");
  m = error_of([&] { tree_map(id2, Layer{x, x}, OtherLayer{x, x}); });
  EXPECT_CONTAINS(m,
                  "[tree_map] Custom node type mismatch; expected type: Layer, got type: "
                  "OtherLayer");
  EXPECT_CONTAINS(m,
                  "expected PyTreeDef(CustomNode(Layer[None], [*, *])) got "
                  "PyTreeDef(CustomNode(OtherLayer[None], [*, *]))");
  using D = std::map<std::string, Array>;
  m = error_of([&] {
    tree_map(id2, std::make_pair(x, D{{"a", x}, {"b", x}}),
             std::make_pair(x, D{{"a", x}, {"c", x}}));
  });
  EXPECT_CONTAINS(m, "Dict key mismatch; expected keys: ['a', 'b'], got keys: ['a', 'c'] at [1]");
  m = error_of([&] { tree_map(id2, std::vector<Array>{x}, std::vector<std::vector<Array>>{{x}}); });
  EXPECT_CONTAINS(m, "Expected a leaf, got [*] at [0]");
  m = error_of([&] { tree_map(id2, std::vector<Array>{x}, std::vector<Array>{x, x}); });
  EXPECT_CONTAINS(m,
                  "List arity mismatch: 2 != 1 in tree argument 2; expected PyTreeDef([*]) got "
                  "PyTreeDef([*, *])");
  // Leaves of either kind (Array or scalar) match.
  auto sum = tree_map([](const Array& a, const Array& b) { return lax::add(a, b); },
                      std::make_tuple(1.0f), std::make_tuple(2.0));
  EXPECT_EQ(std::get<0>(sum), 3.0f);
}

TEST(Tree, UnflattenChecksStructureAndLeafCount) {
  Array x = rand_f32({2});
  TreeDef list2 = tree_structure(std::vector<Array>{x, x});
  std::string m = error_of([&] { tree_unflatten<std::tuple<Array, Array>>(list2, {x, x}); });
  EXPECT_CONTAINS(m,
                  "[tree_unflatten] PyTreeDef([*, *]) does not match the structure of the C++ "
                  "type, (*, *): expected (*, *), got [*, *]");
  m = error_of([&] { tree_unflatten<Layer>(tree_structure(OtherLayer{x, x}), {x, x}); });
  EXPECT_CONTAINS(m,
                  "expected CustomNode(Layer[None], [*, *]), got "
                  "CustomNode(OtherLayer[None], [*, *])");
  m = error_of([&] { tree_unflatten<std::vector<Array>>(list2, {x}); });
  EXPECT_CONTAINS(m, "[tree_unflatten] PyTreeDef([*, *]) has 2 leaves but 1 leaves were given");
  m = error_of([&] { tree_unflatten<std::array<Array, 3>>(list2, {x, x}); });
  EXPECT_CONTAINS(m, "expected [*, *, *], got [*, *]");
  m = error_of([&] { tree_unflatten<double>(TreeDef::leaf(), {x}); });
  EXPECT_CONTAINS(m, "[tree_unflatten] cannot convert f32[2] to a C++ double");
}

TEST(Tree, KeyPathsAndKeystr) {
  Array a = rand_f32({1}), b = rand_f32({2}), c = rand_f32({3}), d = rand_f32({4});
  Array e = rand_f32({5});
  using Inner = std::tuple<Layer, std::vector<Array>>;
  auto t = std::make_tuple(std::map<std::string, Inner>{{"a", Inner{Layer{a, b}, {c, d}}}}, e);
  auto [pairs, def] = tree_flatten_with_path(t);
  EXPECT_EQ(def, tree_structure(t));
  std::vector<std::string> want = {"[0]['a'][0].w", "[0]['a'][0].b", "[0]['a'][1][0]",
                                   "[0]['a'][1][1]", "[1]"};
  std::vector<Array> leaves = {a, b, c, d, e};
  ASSERT_EQ(pairs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(keystr(pairs[i].first), want[i]);
    EXPECT_TRUE(pairs[i].second.is(leaves[i]));
  }
  KeyPath p0 = pairs[0].first;
  ASSERT_EQ(p0.size(), 4u);
  EXPECT_EQ(p0[0], PathEntry(SequenceKey{0}));
  EXPECT_EQ(p0[1], PathEntry(DictKey{"a"}));
  EXPECT_EQ(p0[3], PathEntry(GetAttrKey{"w"}));
  // A custom node without key names uses FlattenedIndexKey; None has no paths.
  TreeDef cn = TreeDef::custom("Foo", nullptr, {TreeDef::none(), TreeDef::leaf(), TreeDef::leaf()});
  std::vector<KeyPath> paths = tree_leaf_paths(TreeDef::list({cn}));
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(keystr(paths[0]), "[0][<flat index 1>]");
  EXPECT_EQ(keystr(paths[1]), "[0][<flat index 2>]");
  EXPECT_EQ(keystr({}), "");
  EXPECT_EQ(tree::leaves_with_path(a).size(), 1u);
}

TEST(Tree, EmptyOptionalIsNoneWithNoLeaves) {
  auto [leaves, def] = tree_flatten(std::optional<Array>{});
  EXPECT_TRUE(leaves.empty());
  EXPECT_EQ(def, TreeDef::none());
  EXPECT_EQ(def.num_leaves(), 0);
  EXPECT_EQ(def.num_nodes(), 1);
  EXPECT_FALSE(tree_unflatten<std::optional<Array>>(def, {}).has_value());
  Array x = rand_f32({2});
  auto [l2, d2] = tree_flatten(std::optional<Array>{x});
  EXPECT_EQ(d2, TreeDef::leaf());  // a present value is its own node
  EXPECT_TRUE(tree_unflatten<std::optional<Array>>(d2, l2)->is(x));
  std::vector<std::optional<Array>> v{std::nullopt, x};
  EXPECT_EQ(tree_structure(v).str(), "PyTreeDef([None, *])");
  EXPECT_EQ(tree_leaves(v).size(), 1u);
  auto back = tree_unflatten<std::vector<std::optional<Array>>>(tree_structure(v), {x});
  EXPECT_FALSE(back[0].has_value());
  EXPECT_TRUE(back[1]->is(x));
}

TEST(Tree, ScalarsAreWeakRank0Leaves) {
  std::uniform_int_distribution<int> ints(-1000, 1000);
  int i = ints(rng());
  float f = static_cast<float>(ints(rng())) / 8.0f;  // exact in float32
  auto t = std::make_tuple(i, f, static_cast<double>(f), true);
  auto [leaves, def] = tree_flatten(t);
  ASSERT_EQ(leaves.size(), 4u);
  EXPECT_EQ(leaves[0].aval(), (Aval{{}, DType::kInt32, true}));
  EXPECT_EQ(leaves[1].aval(), (Aval{{}, DType::kFloat32, true}));
  EXPECT_EQ(leaves[2].aval(), (Aval{{}, DType::kFloat32, true}));
  EXPECT_EQ(leaves[3].aval(), (Aval{{}, DType::kBool, false}));
  EXPECT_EQ(leaves[0].item<int>(), i);
  auto back = tree_unflatten<decltype(t)>(def, leaves);
  EXPECT_EQ(back, t);
  // A concrete size-1 array of another dtype converts like item().
  EXPECT_EQ(tree_unflatten<int>(TreeDef::leaf(), {numpy::array({7.0}, DType::kInt64)}), 7);
}

class TestTracer : public Tracer {
 public:
  explicit TestTracer(Aval aval) : aval_(std::move(aval)) {}
  const Aval& aval() const override { return aval_; }
  uint64_t trace_tag() const override { return 12345; }
  std::string str() const override { return "TestTracer(" + aval_.str() + ")"; }

 private:
  Aval aval_;
};

TEST(Tree, TracerToScalarIsAConcretizationError) {
  Array t(std::make_shared<TestTracer>(Aval{{}, DType::kFloat32, true}));
  std::string m;
  try {
    tree_unflatten<double>(TreeDef::leaf(), {t});
    m = "<no error>";
  } catch (const ConcretizationError& e) {
    m = e.what();
  }
  EXPECT_EQ(m,
            "[tree_unflatten] cannot convert a traced value (f32[]) to a C++ double; make the "
            "field an Array");
  // Inside a struct the error is the same (not rewrapped as a structure mismatch).
  Array w = rand_f32({2});
  TreeDef def = tree_structure(Model{{}, {}, 1.0, std::nullopt});
  EXPECT_THROW(tree_unflatten<Model>(def, {t}), ConcretizationError);
  // An Array field takes the tracer as is.
  Layer l = tree_unflatten<Layer>(tree_structure(Layer{w, w}), {t, w});
  EXPECT_TRUE(l.w.is(t) && l.w.is_tracer() && l.b.is(w));
}

TEST(Tree, ReduceFoldsLeavesInOrder) {
  std::vector<Array> xs = {rand_f32({2}), rand_f32({3, 2}), rand_f32({})};
  auto t = std::make_tuple(xs[0], std::map<std::string, Array>{{"z", xs[2]}, {"a", xs[1]}});
  std::vector<int64_t> sizes = tree_reduce(
      [](std::vector<int64_t> acc, const Array& a) {
        acc.push_back(a.size());
        return acc;
      },
      t, std::vector<int64_t>{});
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 6, 1}));
  Array s = tree::reduce([](const Array& a, const Array& b) { return lax::add(a, b); },
                         std::vector<Array>{xs[2], xs[2], xs[2]});
  double v = to_doubles(xs[2])[0];
  EXPECT_EQ(s.item<double>(), static_cast<float>(static_cast<float>(v + v) + v));
  EXPECT_THROW(tree_reduce([](const Array& a, const Array&) { return a; }, std::vector<Array>{}),
               TypeError);
}

TEST(Tree, NamespaceAliases) {
  Layer l{rand_f32({2}), rand_f32({2})};
  auto [leaves, def] = tree::flatten(l);
  EXPECT_EQ(def, tree::structure(l));
  Layer back = tree::unflatten<Layer>(def, leaves);
  EXPECT_TRUE(back.w.is(l.w) && back.b.is(l.b));
  EXPECT_EQ(keystr(tree::flatten_with_path(l).first[1].first), ".b");
}

}  // namespace
}  // namespace tessera
