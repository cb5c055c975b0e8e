// Generic bind fuzz target: the input bytes choose a primitive, its operands (count, dtypes,
// weak flags, ranks, dims — mostly plausible, sometimes huge, negative or out of range) and its
// params (from the primitive's signature: mostly the declared kind, sometimes another kind,
// missing or extra; ints small or extreme). Then
//  (a) abstract evaluation, directly and through the staging trace (nothing is allocated, so
//      huge shapes are fine): it must either succeed or raise a typed error;
//  (b) when it succeeds and every operand and result is small, the eager bind on concrete
//      operands made from the input: it must not crash, and every output's aval must equal the
//      abstract result.
// Input layout: byte 0 = L, then L bytes naming the primitive (an unknown name picks one by
// hash, so that mutated and random inputs reach every primitive); the rest drives the choices.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "tessera/jaxpr.h"
#include "tessera/jaxpr_parse.h"
#include "tessera/param_types.h"
#include "tessera/primitive.h"
#include "tessera/transforms_flat.h"

namespace {

using namespace tessera;

struct Reader {
  const uint8_t* d;
  size_t n, i = 0;
  uint8_t u8() { return i < n ? d[i++] : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | u8();
    return v;
  }
  size_t pick(size_t k) { return k ? u8() % k : 0; }
  bool chance(int num, int den) { return u8() % den < num; }
};

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
const int64_t kExtreme[] = {int64_t{1} << 31,
                            int64_t{1} << 40,
                            int64_t{1} << 62,
                            kI64Max,
                            -1,
                            -2,
                            -(int64_t{1} << 62),
                            kI64Min,
                            int64_t{1} << 32,
                            65535,
                            int64_t{1} << 20,
                            kI64Max - 1};

int64_t gen_int(Reader& r) {
  const uint8_t m = r.u8() % 16;
  if (m < 11) return static_cast<int64_t>(r.u8() % 7) - 1;  // -1..5
  if (m < 15) return kExtreme[r.pick(std::size(kExtreme))];
  return static_cast<int64_t>(r.u64());
}

int64_t gen_dim(Reader& r) {
  const uint8_t m = r.u8() % 32;
  if (m < 30) return r.u8() % 5;
  return kExtreme[r.pick(std::size(kExtreme))];
}

DType gen_dtype(Reader& r) { return static_cast<DType>(r.pick(kNumDTypes)); }

// An opaque param of no rule's expected class: rules must reject it with a typed error.
struct FakeOpaque final : OpaqueParam {
  std::string str() const override { return "<fake>"; }
};

Aval small_aval(Reader& r) {
  static const DType kTs[] = {DType::kFloat32, DType::kInt32, DType::kBool, DType::kFloat64};
  Aval a;
  a.dtype = kTs[r.pick(4)];
  const size_t rank = r.pick(3);
  for (size_t k = 0; k < rank; ++k) a.shape.push_back(1 + r.pick(3));
  return a;
}

// Canned sub-jaxprs: identities and small computations of random arity and types, so that
// control-flow and reduce rules see bodies that match their operands, and ones that do not.
std::shared_ptr<const Jaxpr> gen_jaxpr(Reader& r) {
  static const char* kTexts[] = {
      "{ lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) }",
      "{ lambda ; a:i32[] b:i32[]. let c:i32[] = max a b in (c,) }",
      "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }",
      "{ lambda ; a:i32[]. let b:bool[] = ne a a in (b,) }",
      "{ lambda ; a:f32[]. let b:bool[] = lt a 1.0:f32[] in (b,) }",
      "{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }",
      "{ lambda ; a:bool[] b:bool[]. let c:bool[] = and a b in (c,) }",
  };
  static std::vector<std::shared_ptr<const Jaxpr>> canned = [] {
    std::vector<std::shared_ptr<const Jaxpr>> v;
    for (const char* t : kTexts) v.push_back(parse_jaxpr_interned(t));
    return v;
  }();
  if (r.chance(1, 2)) return canned[r.pick(canned.size())];
  // An identity-like jaxpr: n invars, outputs chosen among them.
  Jaxpr j;
  const size_t nin = r.pick(4), nout = r.pick(4);
  for (size_t k = 0; k < nin; ++k) j.invars.emplace_back(small_aval(r));
  for (size_t k = 0; k < nout && nin; ++k) j.outvars.emplace_back(j.invars[r.pick(nin)]);
  return intern(std::move(j));
}

std::vector<int64_t> gen_ints(Reader& r, int64_t rank) {
  size_t len;
  switch (r.u8() % 6) {
    case 0:
      len = static_cast<size_t>(rank);
      break;
    case 1:
      len = static_cast<size_t>(3 * rank);
      break;
    case 2:
      len = static_cast<size_t>(std::max<int64_t>(rank - 1, 0));
      break;
    default:
      len = r.pick(7);
  }
  std::vector<int64_t> v;
  const bool perm = r.chance(1, 3);  // a permutation of 0..len-1: reaches deeper checks
  for (size_t k = 0; k < len; ++k) v.push_back(perm ? static_cast<int64_t>(k) : gen_int(r));
  if (perm && len > 1)
    for (size_t k = len - 1; k > 0; --k) std::swap(v[k], v[r.pick(k + 1)]);
  return v;
}

ParamValue gen_value(Reader& r, ParamKind kind, int64_t rank, const ParamSpec* spec = nullptr) {
  switch (kind) {
    case ParamKind::kBool:
      return r.chance(1, 2);
    case ParamKind::kInt:
      return gen_int(r);
    case ParamKind::kFloat: {
      static const double kF[] = {0.0,
                                  1.0,
                                  -1.0,
                                  0.5,
                                  1e308,
                                  -1e308,
                                  std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity()};
      return kF[r.pick(std::size(kF))];
    }
    case ParamKind::kDType:
      return gen_dtype(r);
    case ParamKind::kInts:
      return gen_ints(r, rank);
    case ParamKind::kString: {
      static const char* kS[] = {
          "", "None", "foo", "sequential", "expand_dims", "legacy_vectorized", "broadcast_all",
          "x"};
      return std::string(kS[r.pick(std::size(kS))]);
    }
    case ParamKind::kJaxpr:
      return gen_jaxpr(r);
    case ParamKind::kOpaque:
      return std::shared_ptr<const OpaqueParam>(std::make_shared<FakeOpaque>());
    case ParamKind::kJaxprList: {
      JaxprList l;
      const size_t n = r.pick(4);
      for (size_t k = 0; k < n; ++k) l.push_back(gen_jaxpr(r));
      return l;
    }
    case ParamKind::kOptionalDType:
      return r.chance(1, 3) ? ParamValue(std::string("None")) : ParamValue(gen_dtype(r));
    case ParamKind::kTuple: {
      std::vector<ParamValue> items;
      const size_t n = r.pick(4);
      for (size_t k = 0; k < n; ++k)
        items.push_back(r.chance(1, 4) ? gen_value(r, ParamKind::kTuple, rank)
                                       : ParamValue(gen_int(r)));
      return make_tuple_param(std::move(items));
    }
    case ParamKind::kEnum: {
      const auto defs = param_enum_defs();
      const EnumDef* def =
          spec && spec->enum_def && r.chance(7, 8) ? spec->enum_def : defs[r.pick(defs.size())];
      return ParamEnum{
          def, static_cast<int32_t>(r.pick(def->members.size() + 1)) - (r.chance(1, 8) ? 1 : 0)};
    }
    case ParamKind::kRecord: {
      const auto defs = param_record_defs();
      const RecordDef* def =
          spec && spec->record_def && r.chance(7, 8) ? spec->record_def : defs[r.pick(defs.size())];
      std::vector<ParamValue> fields;
      for (size_t k = 0; k < def->fields.size(); ++k)
        fields.push_back(r.chance(1, 16) ? gen_value(r, static_cast<ParamKind>(r.pick(14)), rank)
                                         : ParamValue(gen_ints(r, rank)));
      return make_record_param(*def, std::move(fields));
    }
    case ParamKind::kAny:
    default:
      return gen_value(r, static_cast<ParamKind>(r.pick(9)), rank);
  }
}

Params gen_params(Reader& r, const Signature& sig, int64_t rank, bool mutate) {
  Params ps;
  for (const ParamSpec& spec : sig.params) {
    const uint8_t m = mutate ? r.u8() % 32 : 31;
    if (m == 0) continue;  // missing
    const ParamKind k = m == 1 ? static_cast<ParamKind>(r.pick(14)) : spec.kind;
    if (!spec.required && m == 2) continue;
    ps.set(spec.name, gen_value(r, k, rank, &spec));
  }
  if (mutate && r.u8() % 32 == 0) ps.set("bogus_param", gen_int(r));
  return ps;
}

// Bytes for concrete operands: splitmix64 from the input, so values are reproducible.
struct Mix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

Array concrete(const Aval& a, Mix& mix, uint8_t style) {
  std::vector<uint8_t> bytes(a.nbytes());
  for (auto& b : bytes) b = static_cast<uint8_t>(mix.next());
  const size_t isz = itemsize(a.dtype);
  if (a.dtype == DType::kBool) {
    for (auto& b : bytes) b &= 1;
  } else if (style % 4 == 0 && isz > 0) {
    // Small values (0, 1, 2, ... in the low byte): zeros, ones, valid indices, small shifts.
    for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = k % isz == 0 ? bytes[k] % 4 : 0;
    if (a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64 || a.dtype == DType::kFloat16 ||
        a.dtype == DType::kBFloat16)
      std::fill(bytes.begin(), bytes.end(), 0);
  }
  return array_from_host(a, bytes.data());
}

bool is_small(const Aval& a) {
  int64_t n = 1;
  for (int64_t d : a.shape) {
    if (d > 4096) return false;
    n *= d;
    if (n > 4096) return false;
  }
  return true;
}

const Primitive* choose_primitive(Reader& r) {
  static const std::vector<std::string> names = primitive_names();
  const size_t len = r.u8() % 32;
  std::string name;
  for (size_t k = 0; k < len; ++k) name.push_back(static_cast<char>(r.u8()));
  if (const Primitive* p = find_primitive(name)) return p;
  size_t h = 0;
  for (char c : name) h = h * 131 + static_cast<uint8_t>(c);
  h = h * 131 + r.u8();
  return find_primitive(names[h % names.size()]);
}

void fuzz_one(Reader& r) {
  const Primitive& p = *choose_primitive(r);
  const Signature& sig = p.signature;  // every primitive declares one (test_signatures)
  if (!sig.declared()) return;
  // Operand count: mostly inside the signature's range, sometimes outside.
  size_t nargs;
  const int64_t lo = sig.min_args;
  const int64_t hi = std::min<int64_t>(sig.max_args, lo + 5);
  const uint8_t m = r.u8() % 16;
  if (m < 13)
    nargs = static_cast<size_t>(lo + static_cast<int64_t>(r.pick(hi - lo + 1)));
  else if (m == 13)
    nargs = static_cast<size_t>(std::max<int64_t>(lo - 1, 0));
  else
    nargs = r.pick(9);

  std::vector<Aval> avals;
  for (size_t k = 0; k < nargs; ++k) {
    Aval a;
    const uint8_t mode = r.u8() % 8;
    if (k > 0 && mode < 3) {
      a = avals[0];  // same aval as operand 0: elementwise ops get past their checks
      if (mode == 2) a.dtype = gen_dtype(r);
    } else if (k > 0 && mode == 3) {
      a = Aval{{}, DType::kInt32, false};  // a scalar index
    } else {
      a.dtype = gen_dtype(r);
      a.weak_type = r.chance(1, 4);
      size_t rank = r.pick(5);
      if (r.u8() % 64 == 0) rank = 65 + r.pick(4);
      for (size_t d = 0; d < rank; ++d) a.shape.push_back(gen_dim(r));
    }
    check_aval(p.name(), a);  // operands are arrays: invalid avals cannot reach a rule
    avals.push_back(std::move(a));
  }
  const int64_t rank0 = avals.empty() ? 0 : avals[0].ndim();
  const Params params = gen_params(r, sig, rank0, true);

  // (a) abstract evaluation, directly and through the staging trace.
  const std::vector<Aval> outs = abstract_eval(p, avals, params);
  std::vector<Array> holders;
  for (const Aval& a : avals) holders.push_back(flat::abstract_placeholder(a));
  auto fun = [&](std::span<const Array> xs) { return tessera::bind(p, xs, params); };
  const ClosedJaxpr staged = flat::make_jaxpr(fun, holders);
  if (staged.jaxpr->outvars.size() != outs.size()) {
    std::fprintf(stderr, "fuzz finding: %s staged %zu outputs, abstract_eval %zu\n",
                 p.name().c_str(), staged.jaxpr->outvars.size(), outs.size());
    std::abort();
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!(atom_aval(staged.jaxpr->outvars[k]) == outs[k])) {
      std::fprintf(stderr, "fuzz finding: %s staged output %zu is %s, abstract_eval says %s\n",
                   p.name().c_str(), k, atom_aval(staged.jaxpr->outvars[k]).str().c_str(),
                   outs[k].str().c_str());
      std::abort();
    }
  }

  // (b) the eager bind on small concrete operands.
  for (const Aval& a : avals)
    if (!is_small(a)) return;
  for (const Aval& a : outs)
    if (!is_small(a)) return;
  // Unbounded work from params: a scan of huge length, a while whose condition may hold forever.
  if (p.name() == "scan" && params.has("length")) {
    const ParamValue& v = params.at("length");
    if (const int64_t* n = std::get_if<int64_t>(&v); n && *n > 64) return;
  }
  if (p.name() == "while") return;
  Mix mix{r.u64()};
  const uint8_t style = r.u8();
  std::vector<Array> args;
  for (const Aval& a : avals) args.push_back(concrete(a, mix, style));
  const std::vector<Array> got = tessera::bind(p, args, params);
  if (got.size() != outs.size()) {
    std::fprintf(stderr, "fuzz finding: %s returned %zu outputs, abstract_eval said %zu\n",
                 p.name().c_str(), got.size(), outs.size());
    std::abort();
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!(got[k].aval() == outs[k])) {
      std::fprintf(stderr, "fuzz finding: %s output %zu is %s%s, abstract_eval says %s%s\n",
                   p.name().c_str(), k, got[k].aval().str().c_str(),
                   got[k].aval().weak_type ? "{weak}" : "", outs[k].str().c_str(),
                   outs[k].weak_type ? "{weak}" : "");
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::register_all();
  // Under the replay driver a hang or crash leaves no file: TESSERA_FUZZ_BIND_LAST=path keeps
  // the input being run there, to be copied into the corpus as a regression input.
  static const char* last = std::getenv("TESSERA_FUZZ_BIND_LAST");
  if (last) {
    if (FILE* f = std::fopen(last, "wb")) {
      std::fwrite(data, 1, size, f);
      std::fclose(f);
    }
  }
  Reader r{data, size};
  return tessera::fuzz::guard([&] { fuzz_one(r); });
}
