// JAX's structured params: enum and record definitions, conversions, and the param-text reader.
#include "tessera/param_types.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace tessera {

const EnumDef kGatherScatterModeDef{
    "GatherScatterMode", {"CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS", "ONE_HOT"}, false};
const EnumDef kRoundingMethodDef{"RoundingMethod", {"AWAY_FROM_ZERO", "TO_NEAREST_EVEN"}, true};
const EnumDef kPrecisionDef{"Precision", {"DEFAULT", "HIGH", "HIGHEST"}, false};

ParamValue to_param(GatherScatterMode m) {
  return ParamEnum{&kGatherScatterModeDef, static_cast<int32_t>(m)};
}
ParamValue to_param(RoundingMethod m) {
  return ParamEnum{&kRoundingMethodDef, static_cast<int32_t>(m)};
}
ParamValue to_param(Precision p) { return ParamEnum{&kPrecisionDef, static_cast<int32_t>(p)}; }

namespace {

[[noreturn]] void bad_record(const RecordDef& def, const std::string& what) {
  throw TypeError(op_message(def.name, "a " + std::string(def.name) + " record " + what));
}

const DimList& dims_field(const ParamRecord& r, size_t i) {
  if (i >= r.fields.size()) bad_record(*r.def, "has too few fields");
  auto* v = std::get_if<DimList>(&r.fields[i]);
  if (!v)
    bad_record(*r.def, "needs a tuple of integers for " + std::string(r.def->fields[i]) + ", got " +
                           param_value_str(r.fields[i]));
  return *v;
}

void check_def(const ParamRecord& r, const RecordDef& def) {
  if (r.def != &def)
    throw TypeError(op_message(def.name, "expected a " + std::string(def.name) + " record, got " +
                                             (r.def ? r.def->name : "none")));
  if (r.fields.size() != def.fields.size()) bad_record(def, "has the wrong number of fields");
}

// ---- A small reader of printed param values. ----
class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_end() {
    ws();
    return i_ == t_.size();
  }
  char peek() {
    ws();
    return i_ < t_.size() ? t_[i_] : '\0';
  }
  // A word: up to a delimiter.
  std::string_view word() {
    ws();
    size_t j = i_;
    while (j < t_.size() && t_[j] != ',' && t_[j] != ')' && t_[j] != ']' && t_[j] != '(' &&
           t_[j] != '[' && t_[j] != '=' && t_[j] != ' ' && t_[j] != '\n')
      ++j;
    std::string_view w = t_.substr(i_, j - i_);
    i_ = j;
    return w;
  }
  size_t pos() const { return i_; }
  void set_pos(size_t p) { i_ = p; }
  int depth = 0;

 private:
  std::string_view t_;
  size_t i_ = 0;
};

constexpr int kMaxDepth = 32;  // nesting limit: hostile texts cannot exhaust the stack

std::optional<int64_t> to_int(std::string_view w) {
  int64_t v = 0;
  auto r = std::from_chars(w.data(), w.data() + w.size(), v);
  if (r.ec != std::errc() || r.ptr != w.data() + w.size() || w.empty()) return std::nullopt;
  return v;
}

std::optional<double> to_float(std::string_view w) {
  if (w.empty() || w.size() > 64) return std::nullopt;
  std::string s(w);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<ParamValue> read_value(Reader& r, const ParamSpec* spec);

// `(a, b, ...)` or `[a, b, ...]` after the opening bracket was eaten; items read without a spec.
std::optional<std::vector<ParamValue>> read_items(Reader& r, char close) {
  std::vector<ParamValue> items;
  if (r.eat(close)) return items;
  while (true) {
    auto v = read_value(r, nullptr);
    if (!v) return std::nullopt;
    items.push_back(std::move(*v));
    if (r.eat(close)) return items;
    if (!r.eat(',')) return std::nullopt;
    if (r.eat(close)) return items;  // trailing comma: (1,)
  }
}

// A tuple whose items are all ints becomes an int list (the kInts form) unless nested inside a
// ParamTuple spec.
bool all_ints(const std::vector<ParamValue>& xs) {
  for (const ParamValue& x : xs)
    if (!std::holds_alternative<int64_t>(x)) return false;
  return true;
}
DimList ints_of(const std::vector<ParamValue>& xs) {
  DimList d;
  for (const ParamValue& x : xs) d.push_back(std::get<int64_t>(x));
  return d;
}

// Converts tuples nested in a ParamTuple to the canonical form: int tuples stay ParamTuples.
ParamValue as_tuple_tree(const ParamValue& v) {
  if (auto* d = std::get_if<DimList>(&v)) {
    std::vector<ParamValue> items(d->begin(), d->end());
    return make_tuple_param(std::move(items));
  }
  if (auto* t = std::get_if<std::shared_ptr<const ParamTuple>>(&v)) {
    std::vector<ParamValue> items;
    for (const ParamValue& x : (*t)->items) items.push_back(as_tuple_tree(x));
    return make_tuple_param(std::move(items));
  }
  return v;
}

std::optional<ParamValue> read_record_named(Reader& r, const RecordDef& def) {
  std::vector<ParamValue> fields(def.fields.size());
  std::vector<bool> seen(def.fields.size(), false);
  if (r.eat(')')) return std::nullopt;
  while (true) {
    std::string_view key = r.word();
    if (!r.eat('=')) return std::nullopt;
    size_t k = 0;
    while (k < def.fields.size() && key != def.fields[k]) ++k;
    if (k == def.fields.size() || seen[k]) return std::nullopt;
    auto v = read_value(r, nullptr);
    if (!v) return std::nullopt;
    if (auto* t = std::get_if<std::shared_ptr<const ParamTuple>>(&*v); t && (*t)->items.empty())
      *v = DimList{};
    fields[k] = std::move(*v);
    seen[k] = true;
    if (r.eat(')')) break;
    if (!r.eat(',')) return std::nullopt;
  }
  for (bool s : seen)
    if (!s) return std::nullopt;
  return make_record_param(def, std::move(fields));
}

std::optional<ParamValue> read_value(Reader& r, const ParamSpec* spec) {
  if (++r.depth > kMaxDepth) return std::nullopt;
  struct Depth {
    Reader& r;
    ~Depth() { --r.depth; }
  } depth{r};
  const char c = r.peek();
  if (c == '(' || c == '[') {
    r.eat(c);
    auto items = read_items(r, c == '(' ? ')' : ']');
    if (!items) return std::nullopt;
    // An empty tuple is an empty int list unless the spec says tuple.
    if (all_ints(*items) && !(spec && spec->kind == ParamKind::kTuple)) return ints_of(*items);
    return make_tuple_param(std::move(*items));
  }
  std::string_view w = r.word();
  if (w.empty()) return std::nullopt;
  if (r.peek() == '(') {  // Record(field=value, ...)
    for (const RecordDef* def : param_record_defs()) {
      if (w != def->name) continue;
      r.eat('(');
      return read_record_named(r, *def);
    }
    return std::nullopt;
  }
  if (w == "True") return ParamValue(true);
  if (w == "False") return ParamValue(false);
  if (auto i = to_int(w)) {
    if (spec && spec->kind == ParamKind::kEnum && spec->enum_def) {
      if (*i < 0 || *i >= static_cast<int64_t>(spec->enum_def->members.size())) return std::nullopt;
      return ParamValue(ParamEnum{spec->enum_def, static_cast<int32_t>(*i)});
    }
    return ParamValue(*i);
  }
  if (const size_t dot = w.find('.'); dot != std::string_view::npos && !to_float(w)) {
    for (const EnumDef* def : param_enum_defs()) {
      if (w.substr(0, dot) != def->name) continue;
      for (size_t k = 0; k < def->members.size(); ++k)
        if (w.substr(dot + 1) == def->members[k])
          return ParamValue(ParamEnum{def, static_cast<int32_t>(k)});
      return std::nullopt;
    }
  }
  if (auto f = to_float(w)) return ParamValue(*f);
  return ParamValue(std::string(w));
}

// dot_general's printed form: ((lc, rc), (lb, rb)) with lists.
std::string dot_dims_print(const ParamRecord& r) {
  auto list = [&](size_t i) {
    const DimList& d = dims_field(r, i);
    std::string s = "[";
    for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
    return s + "]";
  };
  return "((" + list(0) + ", " + list(1) + "), (" + list(2) + ", " + list(3) + "))";
}

std::optional<std::shared_ptr<const ParamRecord>> dot_dims_parse(std::string_view text) {
  Reader r(text);
  auto v = read_value(r, nullptr);
  if (!v || !r.at_end()) return std::nullopt;
  auto* outer = std::get_if<std::shared_ptr<const ParamTuple>>(&*v);
  if (!outer || (*outer)->items.size() != 2) return std::nullopt;
  std::vector<ParamValue> fields;
  for (const ParamValue& pair : (*outer)->items) {
    auto* t = std::get_if<std::shared_ptr<const ParamTuple>>(&pair);
    if (!t || (*t)->items.size() != 2) return std::nullopt;
    for (const ParamValue& part : (*t)->items) {
      auto* d = std::get_if<DimList>(&part);
      if (!d) return std::nullopt;
      fields.push_back(*d);
    }
  }
  return std::make_shared<const ParamRecord>(ParamRecord{&kDotDimensionNumbersDef, fields});
}

}  // namespace

const RecordDef kDotDimensionNumbersDef{"DotDimensionNumbers",
                                        {"lhs_contracting_dimensions", "rhs_contracting_dimensions",
                                         "lhs_batch_dimensions", "rhs_batch_dimensions"},
                                        dot_dims_print,
                                        dot_dims_parse};
const RecordDef kGatherDimensionNumbersDef{
    "GatherDimensionNumbers",
    {"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
     "start_indices_batching_dims"}};
const RecordDef kScatterDimensionNumbersDef{
    "ScatterDimensionNumbers",
    {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
     "operand_batching_dims", "scatter_indices_batching_dims"}};
const RecordDef kConvDimensionNumbersDef{"ConvDimensionNumbers",
                                         {"lhs_spec", "rhs_spec", "out_spec"}};

ParamValue DotDimensionNumbers::to_param() const {
  return make_record_param(kDotDimensionNumbersDef,
                           {lhs_contracting, rhs_contracting, lhs_batch, rhs_batch});
}
DotDimensionNumbers DotDimensionNumbers::from_param(const ParamRecord& r) {
  check_def(r, kDotDimensionNumbersDef);
  return {dims_field(r, 0), dims_field(r, 1), dims_field(r, 2), dims_field(r, 3)};
}

ParamValue GatherDimensionNumbers::to_param() const {
  return make_record_param(kGatherDimensionNumbersDef,
                           {offset_dims, collapsed_slice_dims, start_index_map,
                            operand_batching_dims, start_indices_batching_dims});
}
GatherDimensionNumbers GatherDimensionNumbers::from_param(const ParamRecord& r) {
  check_def(r, kGatherDimensionNumbersDef);
  return {dims_field(r, 0), dims_field(r, 1), dims_field(r, 2), dims_field(r, 3), dims_field(r, 4)};
}

ParamValue ScatterDimensionNumbers::to_param() const {
  return make_record_param(kScatterDimensionNumbersDef,
                           {update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                            operand_batching_dims, scatter_indices_batching_dims});
}
ScatterDimensionNumbers ScatterDimensionNumbers::from_param(const ParamRecord& r) {
  check_def(r, kScatterDimensionNumbersDef);
  return {dims_field(r, 0), dims_field(r, 1), dims_field(r, 2), dims_field(r, 3), dims_field(r, 4)};
}

ParamValue ConvDimensionNumbers::to_param() const {
  return make_record_param(kConvDimensionNumbersDef, {lhs_spec, rhs_spec, out_spec});
}
ConvDimensionNumbers ConvDimensionNumbers::from_param(const ParamRecord& r) {
  check_def(r, kConvDimensionNumbersDef);
  return {dims_field(r, 0), dims_field(r, 1), dims_field(r, 2)};
}

namespace {

template <size_t N>
std::vector<std::array<int64_t, N>> int_rows(const ParamValue& v, const char* what) {
  auto bad = [&]() -> std::vector<std::array<int64_t, N>> {
    throw TypeError(op_message(what, "expected a tuple of " + std::to_string(N) +
                                         "-tuples of integers, got " + param_value_str(v)));
  };
  auto* t = std::get_if<std::shared_ptr<const ParamTuple>>(&v);
  if (!t || !*t) return bad();
  std::vector<std::array<int64_t, N>> rows;
  for (const ParamValue& row : (*t)->items) {
    auto* rt = std::get_if<std::shared_ptr<const ParamTuple>>(&row);
    if (!rt || !*rt || (*rt)->items.size() != N) return bad();
    std::array<int64_t, N> a{};
    for (size_t k = 0; k < N; ++k) {
      auto* x = std::get_if<int64_t>(&(*rt)->items[k]);
      if (!x) return bad();
      a[k] = *x;
    }
    rows.push_back(a);
  }
  return rows;
}

}  // namespace

ParamValue padding_pairs_param(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::vector<ParamValue> rows;
  for (const auto& [lo, hi] : pairs) rows.push_back(make_tuple_param({lo, hi}));
  return make_tuple_param(std::move(rows));
}
std::vector<std::pair<int64_t, int64_t>> padding_pairs_from_param(const ParamValue& v) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& a : int_rows<2>(v, "padding")) out.emplace_back(a[0], a[1]);
  return out;
}
ParamValue padding_config_param(const std::vector<std::array<int64_t, 3>>& config) {
  std::vector<ParamValue> rows;
  for (const auto& c : config) rows.push_back(make_tuple_param({c[0], c[1], c[2]}));
  return make_tuple_param(std::move(rows));
}
std::vector<std::array<int64_t, 3>> padding_config_from_param(const ParamValue& v) {
  return int_rows<3>(v, "padding_config");
}

std::span<const EnumDef* const> param_enum_defs() {
  static const EnumDef* const defs[] = {&kGatherScatterModeDef, &kRoundingMethodDef,
                                        &kPrecisionDef};
  return defs;
}
std::span<const RecordDef* const> param_record_defs() {
  static const RecordDef* const defs[] = {&kDotDimensionNumbersDef, &kGatherDimensionNumbersDef,
                                          &kScatterDimensionNumbersDef, &kConvDimensionNumbersDef};
  return defs;
}

std::optional<ParamValue> parse_param_text(std::string_view text, const ParamSpec* spec) {
  if (text.size() > (1u << 20)) return std::nullopt;
  if (spec && spec->kind == ParamKind::kRecord && spec->record_def && spec->record_def->parse) {
    auto r = spec->record_def->parse(text);
    if (!r) return std::nullopt;
    return ParamValue(std::move(*r));
  }
  Reader r(text);
  auto v = read_value(r, spec);
  if (!v || !r.at_end()) return std::nullopt;
  if (spec) {
    switch (spec->kind) {
      case ParamKind::kTuple:
        if (!std::holds_alternative<std::shared_ptr<const ParamTuple>>(*v)) return std::nullopt;
        return as_tuple_tree(*v);
      case ParamKind::kEnum: {
        auto* e = std::get_if<ParamEnum>(&*v);
        if (!e || e->def != spec->enum_def) return std::nullopt;
        break;
      }
      case ParamKind::kRecord: {
        auto* rec = std::get_if<std::shared_ptr<const ParamRecord>>(&*v);
        if (!rec || (*rec)->def != spec->record_def) return std::nullopt;
        break;
      }
      default:
        break;
    }
  }
  return v;
}

}  // namespace tessera
