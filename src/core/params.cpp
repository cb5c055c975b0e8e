#include <functional>
#include <sstream>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera {

// Items are kept sorted by key (JAX's params are a dict: equality and hashing do not depend on
// the order in which a rule happened to add them, and the printer shows them sorted).
Params::Params(std::initializer_list<std::pair<std::string, ParamValue>> kv) {
  for (const auto& [k, v] : kv) set(k, v);
}

Params& Params::set(std::string key, ParamValue v) {
  auto it = items_.begin();
  while (it != items_.end() && it->first < key) ++it;
  if (it != items_.end() && it->first == key) {
    it->second = std::move(v);
    return *this;
  }
  items_.emplace(it, std::move(key), std::move(v));
  return *this;
}

bool Params::has(std::string_view key) const {
  for (const auto& kv : items_)
    if (kv.first == key) return true;
  return false;
}

const ParamValue& Params::at(std::string_view key) const {
  for (const auto& kv : items_)
    if (kv.first == key) return kv.second;
  throw_internal("params", "missing parameter '" + std::string(key) + "' in {" + str() + "}");
}

std::optional<DType> Params::get_optional_dtype(std::string_view key) const {
  for (const auto& kv : items_) {
    if (kv.first == key) {
      if (auto* d = std::get_if<DType>(&kv.second)) return *d;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

void Params::bad_type(std::string_view key) const {
  throw_internal("params",
                 "parameter '" + std::string(key) + "' has an unexpected type in {" + str() + "}");
}

int32_t Params::get_enum(std::string_view key, const EnumDef& def) const {
  const ParamEnum& e = get<ParamEnum>(key);
  if (e.def != &def) bad_type(key);
  return e.value;
}

const ParamRecord& Params::get_record(std::string_view key, const RecordDef& def) const {
  const auto& r = get<std::shared_ptr<const ParamRecord>>(key);
  if (!r || r->def != &def) bad_type(key);
  return *r;
}

const ParamValue& ParamRecord::field(std::string_view name) const {
  for (size_t i = 0; i < def->fields.size() && i < fields.size(); ++i)
    if (name == def->fields[i]) return fields[i];
  throw_internal("params",
                 "record " + std::string(def->name) + " has no field '" + std::string(name) + "'");
}

ParamValue make_tuple_param(std::vector<ParamValue> items) {
  return std::make_shared<const ParamTuple>(ParamTuple{std::move(items)});
}

ParamValue make_record_param(const RecordDef& def, std::vector<ParamValue> fields) {
  if (fields.size() != def.fields.size())
    throw_internal("params", "record " + std::string(def.name) + " takes " +
                                 std::to_string(def.fields.size()) + " fields, got " +
                                 std::to_string(fields.size()));
  return std::make_shared<const ParamRecord>(ParamRecord{&def, std::move(fields)});
}

static size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

static bool values_equal(const std::vector<ParamValue>& a, const std::vector<ParamValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!param_equal(a[i], b[i])) return false;
  return true;
}

bool param_equal(const ParamValue& a, const ParamValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* t = std::get_if<std::shared_ptr<const ParamTuple>>(&a)) {
    const auto& u = std::get<std::shared_ptr<const ParamTuple>>(b);
    if (*t == u) return true;
    return *t && u && values_equal((*t)->items, u->items);
  }
  if (auto* r = std::get_if<std::shared_ptr<const ParamRecord>>(&a)) {
    const auto& q = std::get<std::shared_ptr<const ParamRecord>>(b);
    if (*r == q) return true;
    return *r && q && (*r)->def == q->def && values_equal((*r)->fields, q->fields);
  }
  // Sub-jaxprs are interned (structurally equal ones share a pointer); opaque values compare by
  // identity; everything else by value.
  return a == b;
}

size_t param_hash(const ParamValue& v) {
  size_t h = v.index();
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          h = mix(h, x.size());
          for (int64_t e : x) h = mix(h, std::hash<int64_t>()(e));
        } else if constexpr (std::is_same_v<T, DType>) {
          h = mix(h, static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Jaxpr>>) {
          h = mix(h, x ? x->hash() : 0);  // structural: the same in every process
        } else if constexpr (std::is_same_v<T, JaxprList>) {
          h = mix(h, x.size());
          for (const auto& j : x) h = mix(h, j ? j->hash() : 0);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const OpaqueParam>>) {
          h = mix(h, std::hash<const void*>()(x.get()));  // a callable: identity, as in JAX
        } else if constexpr (std::is_same_v<T, ParamEnum>) {
          h = mix(h, x.def ? std::hash<std::string_view>()(x.def->name) : 0);
          h = mix(h, static_cast<size_t>(x.value));
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamTuple>>) {
          if (x) {
            h = mix(h, x->items.size());
            for (const ParamValue& e : x->items) h = mix(h, param_hash(e));
          }
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamRecord>>) {
          if (x) {
            h = mix(h, std::hash<std::string_view>()(x->def->name));
            for (const ParamValue& e : x->fields) h = mix(h, param_hash(e));
          }
        } else {
          h = mix(h, std::hash<T>()(x));
        }
      },
      v);
  return h;
}

size_t Params::hash() const {
  size_t h = items_.size();
  for (const auto& [k, v] : items_) {
    h = mix(h, std::hash<std::string>()(k));
    h = mix(h, param_hash(v));
  }
  return h;
}

bool Params::operator==(const Params& o) const {
  if (items_.size() != o.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].first != o.items_[i].first || !param_equal(items_[i].second, o.items_[i].second))
      return false;
  return true;
}

static std::string ints_str(const std::vector<int64_t>& x) {
  std::string s = "(";
  for (size_t i = 0; i < x.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(x[i]);
  }
  if (x.size() == 1) s += ",";
  return s + ")";
}

std::string param_value_str(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          std::ostringstream os;
          os << x;
          return os.str();
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(x));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return ints_str(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const OpaqueParam>>) {
          return x ? x->str() : "None";
        } else if constexpr (std::is_same_v<T, JaxprList>) {
          std::string s = "(";
          for (size_t i = 0; i < x.size(); ++i) s += i ? ", { jaxpr }" : "{ jaxpr }";
          return s + (x.size() == 1 ? ",)" : ")");
        } else if constexpr (std::is_same_v<T, ParamEnum>) {
          if (!x.def) return "None";
          if (x.def->prints_as_int || x.value < 0 ||
              static_cast<size_t>(x.value) >= x.def->members.size())
            return std::to_string(x.value);
          return std::string(x.def->name) + "." + x.def->members[static_cast<size_t>(x.value)];
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamTuple>>) {
          if (!x) return "None";
          std::string s = "(";
          for (size_t i = 0; i < x->items.size(); ++i)
            s += (i ? ", " : "") + param_value_str(x->items[i]);
          return s + (x->items.size() == 1 ? ",)" : ")");
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamRecord>>) {
          if (!x) return "None";
          if (x->def->print) return x->def->print(*x);
          std::string s = std::string(x->def->name) + "(";
          for (size_t i = 0; i < x->fields.size() && i < x->def->fields.size(); ++i)
            s += (i ? ", " : "") + std::string(x->def->fields[i]) + "=" +
                 param_value_str(x->fields[i]);
          return s + ")";
        } else {
          return x ? "{ jaxpr }" : "None";
        }
      },
      v);
}

std::string Params::str() const {
  std::string s;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i) s += " ";
    s += items_[i].first + "=" + param_value_str(items_[i].second);
  }
  return s;
}

}  // namespace tessera
