// Primitive signatures: every registered primitive declares one, and bind rejects a call outside
// it — an operand too few or too many, a required param missing, an unknown param, a param of
// the wrong kind — with a TypeError "[name] ..." before any rule runs. The cases are generated
// from the declarations themselves, so a new primitive is covered when it is registered. The
// jaxpr parser reports the same mistakes in a text as ValueErrors naming line:column.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tessera/jaxpr_parse.h"
#include "tessera/tessera.h"
#include "tessera/transforms_flat.h"
#include "util/test_util.h"

namespace tessera {
namespace {

struct DummyOpaque final : OpaqueParam {
  std::string str() const override { return "<dummy>"; }
};

std::shared_ptr<const Jaxpr> identity_jaxpr() {
  static auto j = parse_jaxpr_interned("{ lambda ; a:f32[]. let  in (a,) }");
  return j;
}

// A value of the declared kind (the signature accepts it; the rule may still reject it).
ParamValue value_of(const ParamSpec& spec) {
  switch (spec.kind) {
    case ParamKind::kBool:
      return false;
    case ParamKind::kInt:
      return int64_t{0};
    case ParamKind::kFloat:
      return 0.5;
    case ParamKind::kDType:
      return DType::kFloat32;
    case ParamKind::kInts:
      return std::vector<int64_t>{};
    case ParamKind::kString:
      return std::string("x");
    case ParamKind::kJaxpr:
      return identity_jaxpr();
    case ParamKind::kOpaque:
      return std::shared_ptr<const OpaqueParam>(new DummyOpaque);
    case ParamKind::kJaxprList:
      return JaxprList{identity_jaxpr()};
    case ParamKind::kOptionalDType:
      return DType::kFloat32;
    case ParamKind::kAny:
      return int64_t{0};
    case ParamKind::kTuple:
      return make_tuple_param({});
    case ParamKind::kEnum:
      return ParamEnum{spec.enum_def, 0};
    case ParamKind::kRecord:
      return make_record_param(
          *spec.record_def,
          std::vector<ParamValue>(spec.record_def->fields.size(), std::vector<int64_t>{}));
  }
  return false;
}

// Values of other kinds than k, including the null jaxpr/opaque the parser reads `None` as.
std::vector<ParamValue> wrong_values(ParamKind k) {
  switch (k) {
    case ParamKind::kOptionalDType:
    case ParamKind::kAny:
      return {};  // every value is accepted
    case ParamKind::kString:
      return {int64_t{1}, std::vector<int64_t>{1}};
    case ParamKind::kInts:
      return {std::string("x"), int64_t{1}};
    case ParamKind::kInt:
      return {std::string("x"), 1.5, true};
    case ParamKind::kBool:
      return {std::string("x"), int64_t{1}};
    case ParamKind::kJaxpr:
      return {std::string("x"), std::shared_ptr<const Jaxpr>()};
    case ParamKind::kOpaque:
      return {std::string("x"), std::shared_ptr<const OpaqueParam>()};
    case ParamKind::kJaxprList:
      return {std::string("x"), JaxprList{nullptr}};
    default:
      return {std::string("x")};
  }
}

Params valid_params(const Signature& s) {
  Params p;
  for (const ParamSpec& ps : s.params) p.set(ps.name, value_of(ps));
  return p;
}

std::vector<Array> operands(int64_t n) {
  std::vector<Array> xs;
  for (int64_t i = 0; i < n; ++i) xs.push_back(numpy::ones({2}, DType::kFloat32));
  return xs;
}

// Binds p and returns "" when it raised TypeError "[name] ...<want>...", else what happened.
std::string expect_rejected(const Primitive& p, int64_t nargs, const Params& params,
                            const std::string& want) {
  const std::vector<Array> xs = operands(nargs);
  try {
    (void)tessera::bind(p, std::span<const Array>(xs), params);
  } catch (const TypeError& e) {
    const std::string m = e.what();
    if (m.rfind("[" + p.name() + "] ", 0) != 0) return "message does not start with [name]: " + m;
    if (m.find(want) == std::string::npos) return "message lacks '" + want + "': " + m;
    return "";
  } catch (const InternalError& e) {
    return std::string("InternalError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("not a TypeError: ") + e.what();
  }
  return "no error";
}

TEST(Signatures, EveryPrimitiveDeclaresOne) {
  std::vector<std::string> missing;
  for (const std::string& n : primitive_names()) {
    const Primitive* p = find_primitive(n);
    ASSERT_NE(p, nullptr) << n;
    if (!p->signature.declared()) {
      missing.push_back(n);
      continue;
    }
    const Signature& s = p->signature;
    EXPECT_LE(s.min_args, s.max_args) << n;
    std::set<std::string> names;
    for (const ParamSpec& ps : s.params)
      EXPECT_TRUE(names.insert(ps.name).second) << n << " declares '" << ps.name << "' twice";
  }
  std::string list;
  for (const std::string& n : missing) list += " " + n;
  EXPECT_TRUE(missing.empty()) << "primitives without a declared signature (set "
                                  "Primitive::signature in the family's register function):"
                               << list;
  std::cout << "[signatures] " << primitive_names().size() << " primitives\n";
}

TEST(Signatures, BindRejectsCallsOutsideTheDeclaration) {
  int64_t cases = 0;
  for (const std::string& n : primitive_names()) {
    const Primitive& p = *find_primitive(n);
    const Signature& s = p.signature;
    if (!s.declared()) continue;  // reported by EveryPrimitiveDeclaresOne
    const Params ok = valid_params(s);
    // The generated call itself passes the check, so each case below fails for its own reason.
    EXPECT_NO_THROW(check_signature(p, static_cast<size_t>(s.min_args), ok)) << n;
    auto expect = [&](const std::string& what, int64_t nargs, const Params& ps,
                      const std::string& want) {
      ++cases;
      EXPECT_EQ(expect_rejected(p, nargs, ps, want), "") << n << ": " << what;
    };
    if (s.min_args > 0) expect("one operand too few", s.min_args - 1, ok, "operand");
    if (s.max_args != Signature::kVariadic)
      expect("one operand too many", s.max_args + 1, ok, "operand");
    for (const ParamSpec& ps : s.params) {
      if (ps.required) {
        Params less;
        for (const auto& [k, v] : ok.items())
          if (k != ps.name) less.set(k, v);
        expect(std::string("missing ") + ps.name, s.min_args, less,
               std::string("missing required param '") + ps.name + "'");
      }
      for (const ParamValue& bad : wrong_values(ps.kind)) {
        Params wrong = ok;
        wrong.set(ps.name, bad);
        expect(std::string("wrong kind for ") + ps.name + ": " + param_value_str(bad), s.min_args,
               wrong, std::string("param '") + ps.name + "' must be " + param_kind_name(ps.kind));
      }
    }
    Params extra = ok;
    extra.set("not_a_param", int64_t{1});
    expect("an unknown param", s.min_args, extra, "unknown param 'not_a_param'");
  }
  std::cout << "[signatures] " << cases << " rejected calls checked\n";
  EXPECT_GT(cases, 300);
}

// The same check under a staging trace (make_jaxpr): bind rejects before the trace records.
TEST(Signatures, RejectedUnderStagingToo) {
  const Primitive& bid = *find_primitive("broadcast_in_dim");
  auto f = [&](std::span<const Array>) {
    return tessera::bind(
        bid, std::span<const Array>(),
        Params{{"shape", Shape{3}}, {"broadcast_dimensions", std::vector<int64_t>{}}});
  };
  const std::vector<Array> args{numpy::ones({3})};
  EXPECT_ERROR(TypeError, (void)flat::make_jaxpr(f, args),
               "[broadcast_in_dim] broadcast_in_dim takes exactly 1 operand, got 0");
}

struct ParseCase {
  const char* eqn;  // line 2 of the text; `a` is f32[3], `c` is bool[3]
  const char* want;
};

TEST(Signatures, ParserReportsWrongEquationsWithLineAndColumn) {
  const ParseCase cases[] = {
      {"b:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] ",
       "[broadcast_in_dim] broadcast_in_dim takes exactly 1 operand, got 0"},
      {"b:f32[3] = sin a a", "[sin] sin takes exactly 1 operand, got 2"},
      {"b:f32[3] = add a", "[add] add takes exactly 2 operands, got 1"},
      {"b:f32[3] = neg ", "[neg] neg takes exactly 1 operand, got 0"},
      {"b:f32[3] = integer_pow[y=2] a a", "[integer_pow] integer_pow takes exactly 1 operand"},
      {"b:f32[] = reduce_sum[axes=(0,)] a a", "[reduce_sum] reduce_sum takes exactly 1 operand"},
      {"b:f32[3] = transpose[permutation=(0,)] ", "[transpose] transpose takes exactly 1"},
      {"b:f32[] = dot_general[lhs_batch_dimensions=() lhs_contracting_dimensions=(0,) "
       "rhs_batch_dimensions=() rhs_contracting_dimensions=(0,)] a",
       "[dot_general] dot_general takes exactly 2 operands, got 1"},
      {"b:f32[3] = select_n c", "[select_n] requires `which` and at least one case"},
      {"b:f32[3] = select_n ", "[select_n] select_n takes at least 1 operand"},
      {"b:f32[3] = concatenate[dimension=0] ",
       "[concatenate] concatenate expects at least one operand"},
      {"b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)] a",
       "[iota] iota takes exactly 0 operands, got 1"},
      {"b:f32[3] = clamp a a", "[clamp] clamp takes exactly 3 operands, got 2"},
      {"b:f32[5] = pad[padding_config=(1, 1, 0)] a", "[pad] pad takes exactly 2 operands"},
      {"b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a a",
       "[convert_element_type] convert_element_type takes exactly 1 operand"},
      {"b:f32[3] = cumsum[axis=0 reverse=False] a a", "[cumsum] cumsum takes exactly 1"},
      {"b:f32[3] = squeeze[dimensions=()] ", "[squeeze] squeeze takes exactly 1"},
      {"b:f32[3] = dynamic_update_slice a",
       "[dynamic_update_slice] dynamic_update_slice takes "
       "at least 2 operands, got 1"},
      {"b:f32[] = reduce_sum a", "[reduce_sum] missing required param 'axes'"},
      {"b:f32[3] = sin[foo=1] a", "'sin' has no param 'foo'"},
      {"b:f32[] = reduce_sum[axes=abc] a", "param 'axes' must be a tuple of integers"},
      {"b:f32[3] = cumsum[axis=0 reverse=3] a", "param 'reverse' must be a bool"},
  };
  for (const ParseCase& c : cases) {
    const std::string text =
        std::string("{ lambda ; a:f32[3] c:bool[3]. let\n    ") + c.eqn + "\n  in (b,) }";
    std::string msg;
    try {
      (void)parse_jaxpr(text);
      msg = "<no error>";
    } catch (const ValueError& e) {
      msg = e.what();
    } catch (const TypeError& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      msg = std::string("<other exception> ") + e.what();
    }
    EXPECT_EQ(msg.rfind("[parse_jaxpr] 2:", 0), 0u) << text << "\nmessage: " << msg;
    EXPECT_NE(msg.find(c.want), std::string::npos) << text << "\nmessage: " << msg;
  }
}

}  // namespace
}  // namespace tessera
