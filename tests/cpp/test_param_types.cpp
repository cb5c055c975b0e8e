// Structured params: nested tuples, JAX's enums and dimension-number records — printed as JAX
// prints them, read back by parse_param_text and the jaxpr parser, compared and hashed by
// content (never by address: a sub-jaxpr rebuilt elsewhere in memory hashes the same). Random
// values are generated, printed, parsed and compared; the seed is printed.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "prims/prims.h"
#include "tessera/jaxpr.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/param_types.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using Ints = std::vector<int64_t>;

TEST(ParamTypes, EnumsPrintAsJax) {
  EXPECT_EQ(param_value_str(to_param(GatherScatterMode::kClip)), "GatherScatterMode.CLIP");
  EXPECT_EQ(param_value_str(to_param(GatherScatterMode::kFillOrDrop)),
            "GatherScatterMode.FILL_OR_DROP");
  EXPECT_EQ(param_value_str(to_param(Precision::kHighest)), "Precision.HIGHEST");
  // RoundingMethod is an IntEnum: JAX prints round's rounding_method as its value.
  EXPECT_EQ(param_value_str(to_param(RoundingMethod::kToNearestEven)), "1");
  EXPECT_TRUE(param_equal(to_param(Precision::kHigh), to_param(Precision::kHigh)));
  EXPECT_FALSE(param_equal(to_param(Precision::kHigh), to_param(Precision::kHighest)));
  // Same value, different enum types: unequal.
  EXPECT_FALSE(param_equal(to_param(Precision::kHigh), to_param(RoundingMethod::kToNearestEven)));
}

TEST(ParamTypes, RecordsPrintAsJax) {
  EXPECT_EQ(param_value_str(DotDimensionNumbers{{1}, {0}, {}, {}}.to_param()),
            "(([1], [0]), ([], []))");
  EXPECT_EQ(param_value_str(DotDimensionNumbers{{2, 3}, {1, 2}, {0}, {0}}.to_param()),
            "(([2, 3], [1, 2]), ([0], [0]))");
  EXPECT_EQ(param_value_str(GatherDimensionNumbers{{0}, {1}, {1}, {}, {}}.to_param()),
            "GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), "
            "start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=())");
  EXPECT_EQ(
      param_value_str(ConvDimensionNumbers{{0, 1, 2, 3}, {3, 2, 0, 1}, {0, 3, 1, 2}}.to_param()),
      "ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(3, 2, 0, 1), "
      "out_spec=(0, 3, 1, 2))");
  EXPECT_EQ(param_value_str(padding_pairs_param({{1, 1}, {0, 2}})), "((1, 1), (0, 2))");
  EXPECT_EQ(param_value_str(padding_config_param({{1, 2, 0}})), "((1, 2, 0),)");
  EXPECT_EQ(padding_config_from_param(padding_config_param({{1, 2, 0}, {0, 0, 3}})),
            (std::vector<std::array<int64_t, 3>>{{1, 2, 0}, {0, 0, 3}}));
  EXPECT_EQ(padding_pairs_from_param(padding_pairs_param({{4, 5}})),
            (std::vector<std::pair<int64_t, int64_t>>{{4, 5}}));
  EXPECT_THROW(padding_pairs_from_param(padding_config_param({{1, 2, 0}})), TypeError);
}

TEST(ParamTypes, DotGeneralPrintsDimensionNumbersAsJax) {
  auto f = [](const Array& a, const Array& b) { return tnp::matmul(a, b); };
  const std::string text = to_string(*make_jaxpr(f)(tnp::zeros({2, 3}), tnp::zeros({3, 4})).jaxpr);
  // JAX's layout: the params do not fit on the equation's line, so one per line.
  EXPECT_NE(text.find("    c:f32[2,4] = dot_general[\n"
                      "      dimension_numbers=(([1], [0]), ([], []))\n"
                      "      preferred_element_type=float32\n"
                      "    ] a b\n"),
            std::string::npos)
      << text;
  // The printed text parses back to the same jaxpr.
  const Jaxpr back = parse_jaxpr(text);
  EXPECT_EQ(to_string(back), text);
}

TEST(ParamTypes, ParserReadsJaxAndEarlierDotForms) {
  const char* jax =
      "{ lambda ; a:f32[5,2,3] b:f32[5,3,4]. let c:f32[5,2,4] = dot_general["
      "dimension_numbers=(([2], [1]), ([0], [0])) precision=None "
      "preferred_element_type=float32] a b in (c,) }";
  const char* earlier =
      "{ lambda ; a:f32[5,2,3] b:f32[5,3,4]. let c:f32[5,2,4] = dot_general["
      "lhs_batch_dimensions=(0,) lhs_contracting_dimensions=(2,) preferred_element_type=float32 "
      "rhs_batch_dimensions=(0,) rhs_contracting_dimensions=(1,)] a b in (c,) }";
  const Jaxpr a = parse_jaxpr(jax), b = parse_jaxpr(earlier);
  EXPECT_TRUE(structurally_equal(a, b)) << to_string(a) << "\n" << to_string(b);
  const auto dn = DotDimensionNumbers::from_param(
      a.eqns[0].params.get_record("dimension_numbers", kDotDimensionNumbersDef));
  EXPECT_EQ(dn, (DotDimensionNumbers{{2}, {1}, {0}, {0}}));
  // A malformed record is a parse error naming the param and the expected form.
  try {
    (void)parse_jaxpr(
        "{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general["
        "dimension_numbers=((1, 0), ([], []))] a b in (c,) }");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dimension_numbers"), std::string::npos) << m;
    EXPECT_NE(m.find("DotDimensionNumbers"), std::string::npos) << m;
  }
}

TEST(ParamTypes, SignatureChecksRecordTypes) {
  register_all();
  // Four int tuples are no longer dot_general's params; an int tuple is not the record.
  Params wrong{{"dimension_numbers", Ints{1, 0}}};
  try {
    (void)bind(prims::dot_general, {tnp::zeros({2, 3}), tnp::zeros({3, 4})}, wrong);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[dot_general]"), std::string::npos) << m;
    EXPECT_NE(m.find("must be a record of type DotDimensionNumbers"), std::string::npos) << m;
  }
  Params other{{"dimension_numbers", GatherDimensionNumbers{}.to_param()}};
  EXPECT_THROW((void)bind(prims::dot_general, {tnp::zeros({2, 3}), tnp::zeros({3, 4})}, other),
               TypeError);
  // A record of the right type with a field of the wrong kind (only reachable by building one
  // by hand) is a TypeError too, not a crash.
  Params bad{{"dimension_numbers", make_record_param(kDotDimensionNumbersDef,
                                                     {Ints{1}, std::string("x"), Ints{}, Ints{}})}};
  EXPECT_THROW((void)bind(prims::dot_general, {tnp::zeros({2, 3}), tnp::zeros({3, 4})}, bad),
               TypeError);
}

// ---- random round trips ----

class Gen {
 public:
  explicit Gen(std::mt19937_64& r) : r_(r) {}
  int64_t i(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r_); }
  Ints ints() {
    Ints v(static_cast<size_t>(i(0, 4)));
    for (auto& e : v) e = i(-1000, 1000) * (i(0, 9) == 0 ? int64_t{1} << 40 : 1);
    return v;
  }
  // A tuple tree of scalars, enums, strings and nested tuples (depth-limited).
  ParamValue tuple_tree(int depth) {
    std::vector<ParamValue> items(static_cast<size_t>(i(0, 4)));
    for (auto& e : items) e = leaf_or_tuple(depth);
    return make_tuple_param(std::move(items));
  }
  ParamValue leaf_or_tuple(int depth) {
    switch (i(0, depth > 0 ? 6 : 5)) {
      case 0:
        return i(-5, 5);
      case 1:
        return i(0, 1) == 1;
      case 2:
        return to_param(static_cast<Precision>(i(0, 2)));
      case 3:
        return to_param(static_cast<GatherScatterMode>(i(0, 3)));
      case 4:
        return static_cast<double>(i(-100, 100)) / 8.0 + 0.0625;  // never integral
      case 5:
        return std::string(i(0, 1) ? "foo" : "bar_baz");
      default:
        return tuple_tree(depth - 1);
    }
  }

 private:
  std::mt19937_64& r_;
};

TEST(ParamTypes, RandomValuesRoundTripThroughText) {
  Gen g(testing::rng());
  const ParamSpec tuple_spec{"t", ParamKind::kTuple};
  const ParamSpec dot_spec{"d", ParamKind::kRecord, true, nullptr, &kDotDimensionNumbersDef};
  const ParamSpec gather_spec{"g", ParamKind::kRecord, true, nullptr, &kGatherDimensionNumbersDef};
  const ParamSpec scatter_spec{"s", ParamKind::kRecord, true, nullptr,
                               &kScatterDimensionNumbersDef};
  const ParamSpec conv_spec{"c", ParamKind::kRecord, true, nullptr, &kConvDimensionNumbersDef};
  const ParamSpec prec_spec{"p", ParamKind::kEnum, true, &kPrecisionDef};
  for (int n = 0; n < 2000; ++n) {
    std::vector<std::pair<ParamValue, const ParamSpec*>> vs = {
        {g.tuple_tree(3), &tuple_spec},
        {DotDimensionNumbers{g.ints(), g.ints(), g.ints(), g.ints()}.to_param(), &dot_spec},
        {GatherDimensionNumbers{g.ints(), g.ints(), g.ints(), g.ints(), g.ints()}.to_param(),
         &gather_spec},
        {ScatterDimensionNumbers{g.ints(), g.ints(), g.ints(), g.ints(), g.ints()}.to_param(),
         &scatter_spec},
        {ConvDimensionNumbers{g.ints(), g.ints(), g.ints()}.to_param(), &conv_spec},
        {to_param(static_cast<Precision>(g.i(0, 2))), &prec_spec},
    };
    for (const auto& [v, spec] : vs) {
      const std::string text = param_value_str(v);
      auto back = parse_param_text(text, spec);
      ASSERT_TRUE(back.has_value()) << text;
      EXPECT_TRUE(param_equal(*back, v)) << text << " read back as " << param_value_str(*back);
      EXPECT_EQ(param_hash(*back), param_hash(v)) << text;
      EXPECT_EQ(param_value_str(*back), text);
    }
    // Content, not identity: two separately built equal values are equal with equal hashes; a
    // changed element changes both.
    Ints a = g.ints();
    const ParamValue x = GatherDimensionNumbers{a, {}, {}, {}, {}}.to_param();
    const ParamValue y = GatherDimensionNumbers{a, {}, {}, {}, {}}.to_param();
    EXPECT_TRUE(param_equal(x, y));
    EXPECT_EQ(param_hash(x), param_hash(y));
    a.push_back(7);
    const ParamValue z = GatherDimensionNumbers{a, {}, {}, {}, {}}.to_param();
    EXPECT_FALSE(param_equal(x, z));
    EXPECT_NE(Params({{"d", x}}).hash(), Params({{"d", z}}).hash());
    EXPECT_TRUE(Params({{"d", x}}) == Params({{"d", y}}));
  }
}

TEST(ParamTypes, TextThatIsNotOfTheKindIsRefused) {
  const ParamSpec dot_spec{"d", ParamKind::kRecord, true, nullptr, &kDotDimensionNumbersDef};
  const ParamSpec gather_spec{"g", ParamKind::kRecord, true, nullptr, &kGatherDimensionNumbersDef};
  const ParamSpec prec_spec{"p", ParamKind::kEnum, true, &kPrecisionDef};
  for (const char* t : {"", "(", "((1, 0), ([], []))", "(([1], [0]), ([], [])",
                        "(([1], [x]), ([], []))", "(([1], [0]), ([], []), ())", "[[1], [0]]"})
    EXPECT_FALSE(parse_param_text(t, &dot_spec).has_value()) << t;
  for (const char* t :
       {"GatherDimensionNumbers(offset_dims=(0,))", "GatherDimensionNumbers()",
        "ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(), "
        "scatter_dims_to_operand_dims=(), operand_batching_dims=(), "
        "scatter_indices_batching_dims=())",
        "GatherDimensionNumbers(offset_dims=(0,), offset_dims=(0,), start_index_map=(), "
        "operand_batching_dims=(), start_indices_batching_dims=())"})
    EXPECT_FALSE(parse_param_text(t, &gather_spec).has_value()) << t;
  for (const char* t : {"Precision.FASTEST", "GatherScatterMode.CLIP", "3", "-1", "HIGHEST"})
    EXPECT_FALSE(parse_param_text(t, &prec_spec).has_value()) << t;
  EXPECT_TRUE(parse_param_text("2", &prec_spec).has_value());  // JAX's int form of an enum
  // Deep nesting is refused, not a stack overflow.
  std::string deep(100000, '(');
  deep += std::string(100000, ')');
  const ParamSpec tuple_spec{"t", ParamKind::kTuple};
  EXPECT_FALSE(parse_param_text(deep, &tuple_spec).has_value());
}

// Sub-jaxprs hash by content: a jaxpr rebuilt after the first was freed (so at another address,
// in general) gives the same params hash; the equation hash does not use primitive addresses.
TEST(ParamTypes, SubJaxprParamsHashByContent) {
  auto build = [] {
    auto f = [](const Array& x) { return tnp::sin(x) * 2.0; };
    return make_jaxpr(f)(tnp::zeros({3})).jaxpr;
  };
  size_t h1 = 0;
  std::string t1;
  {
    std::shared_ptr<const Jaxpr> j = intern(*build());
    h1 = Params({{"jaxpr", j}}).hash();
    t1 = to_string(*j);
  }
  // Allocate in between so that the rebuilt jaxpr is unlikely to reuse the address.
  std::vector<std::shared_ptr<const Jaxpr>> keep;
  for (int k = 0; k < 8; ++k) keep.push_back(build());
  std::shared_ptr<const Jaxpr> j2 = intern(*build());
  EXPECT_EQ(Params({{"jaxpr", j2}}).hash(), h1);
  EXPECT_EQ(to_string(*j2), t1);
  EXPECT_EQ(j2->hash(), structural_hash(*j2));
}

}  // namespace
}  // namespace tessera
