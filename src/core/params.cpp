#include <functional>
#include <sstream>

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

static size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

size_t Params::hash() const {
  size_t h = items_.size();
  for (const auto& [k, v] : items_) {
    h = mix(h, std::hash<std::string>()(k));
    h = mix(h, v.index());
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            for (int64_t e : x) h = mix(h, std::hash<int64_t>()(e));
          } else if constexpr (std::is_same_v<T, DType>) {
            h = mix(h, static_cast<size_t>(x));
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const Jaxpr>> ||
                               std::is_same_v<T, std::shared_ptr<const OpaqueParam>>) {
            // Sub-jaxprs are interned and opaque values compare by identity.
            h = mix(h, std::hash<const void*>()(x.get()));
          } else if constexpr (std::is_same_v<T, JaxprList>) {
            for (const auto& j : x) h = mix(h, std::hash<const void*>()(j.get()));
          } else {
            h = mix(h, std::hash<T>()(x));
          }
        },
        v);
  }
  return h;
}

bool Params::operator==(const Params& o) const { return items_ == o.items_; }

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
          std::string s = "(";
          for (size_t i = 0; i < x.size(); ++i) {
            if (i) s += ", ";
            s += std::to_string(x[i]);
          }
          if (x.size() == 1) s += ",";
          return s + ")";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const OpaqueParam>>) {
          return x ? x->str() : "None";
        } else if constexpr (std::is_same_v<T, JaxprList>) {
          std::string s = "(";
          for (size_t i = 0; i < x.size(); ++i) s += i ? ", { jaxpr }" : "{ jaxpr }";
          return s + (x.size() == 1 ? ",)" : ")");
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
