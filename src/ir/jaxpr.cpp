// The jaxpr data structures: vars, literals, effects, structural hashing/equality (up to
// renaming of vars) and the intern table that gives identical sub-jaxprs one shared pointer.
#include "tessera/jaxpr.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tessera {

namespace {

std::atomic<uint64_t> g_next_var_id{1};

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t aval_hash(const Aval& a) {
  size_t h = mix(static_cast<size_t>(a.dtype), a.weak_type);
  for (int64_t d : a.shape) h = mix(h, std::hash<int64_t>()(d));
  return h;
}

}  // namespace

// ---- Var / Literal / Atom ----

Var::Var(Aval aval)
    : id_(g_next_var_id.fetch_add(1, std::memory_order_relaxed)),
      aval_(std::make_shared<const Aval>(std::move(aval))) {}

Var Var::dropped(Aval aval) {
  Var v(std::move(aval));
  v.dropped_ = true;
  return v;
}

Literal::Literal(Array value) : value_(std::move(value)) {
  if (!value_.defined() || !value_.is_concrete())
    throw_internal("ir/jaxpr", "a Literal needs a concrete array value");
}

bool Literal::operator==(const Literal& o) const {
  if (!(aval() == o.aval())) return false;
  if (value_.is(o.value_)) return true;
  const size_t n = aval().nbytes();
  return std::memcmp(value_.raw_data(), o.value_.raw_data(), n) == 0;
}

size_t Literal::hash() const {
  size_t h = aval_hash(aval());
  const auto* b = static_cast<const unsigned char*>(value_.raw_data());
  for (size_t i = 0; i < aval().nbytes(); ++i) h = mix(h, b[i]);
  return h;
}

const Aval& atom_aval(const Atom& a) {
  if (const Var* v = std::get_if<Var>(&a)) return v->aval();
  return std::get<Literal>(a).aval();
}

// ---- Effects ----

size_t Effect::hash() const { return mix(std::hash<std::string>()(name), ordered); }

Effects make_effects(std::vector<Effect> effs) {
  std::sort(effs.begin(), effs.end());
  effs.erase(std::unique(effs.begin(), effs.end()), effs.end());
  return effs;
}

Effects effects_union(const Effects& a, const Effects& b) {
  Effects out = a;
  out.insert(out.end(), b.begin(), b.end());
  return make_effects(std::move(out));
}

namespace {
std::mutex g_effects_mu;
std::unordered_map<const Primitive*, Effects>& effects_table() {
  static std::unordered_map<const Primitive*, Effects> t;
  return t;
}
}  // namespace

void set_primitive_effects(const Primitive& p, Effects effs) {
  std::lock_guard<std::mutex> lock(g_effects_mu);
  effects_table()[&p] = make_effects(std::move(effs));
}

Effects primitive_effects(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_effects_mu);
  auto it = effects_table().find(&p);
  return it == effects_table().end() ? Effects{} : it->second;
}

// ---- Structural hash and equality (alpha-equivalence) ----

namespace {

size_t effects_hash(const Effects& e) {
  size_t h = e.size();
  for (const Effect& x : e) h = mix(h, x.hash());
  return h;
}

// Numbers each binder in order of definition; a var's hash is its number (plus its aval).
class Renumber {
 public:
  size_t bind(const Var& v) {
    const size_t n = next_++;
    if (!v.is_dropped()) ids_[v.id()] = n;
    return mix(n, aval_hash(v.aval()));
  }
  size_t use(const Atom& a) const {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = ids_.find(v->id());
      // A free var (ill-formed jaxpr) hashes by its id so that unequal jaxprs stay apart.
      return it == ids_.end() ? mix(0xfeedULL, v->id()) : mix(1, it->second);
    }
    return mix(2, std::get<Literal>(a).hash());
  }

 private:
  size_t next_ = 0;
  std::unordered_map<uint64_t, size_t> ids_;
};

}  // namespace

size_t structural_hash(const Jaxpr& j) {
  Renumber r;
  size_t h = mix(j.constvars.size(), j.invars.size());
  for (const Var& v : j.constvars) h = mix(h, r.bind(v));
  for (const Var& v : j.invars) h = mix(h, r.bind(v));
  for (const JaxprEqn& e : j.eqns) {
    // By name, not address: the same jaxpr hashes the same in every process.
    h = mix(h, e.primitive ? std::hash<std::string>()(e.primitive->name()) : 0);
    h = mix(h, e.params.hash());
    h = mix(h, effects_hash(e.effects));
    h = mix(h, e.invars.size());
    for (const Atom& a : e.invars) h = mix(h, r.use(a));
    for (const Var& v : e.outvars) h = mix(h, r.bind(v) ^ (v.is_dropped() ? 0x5bd1e995 : 0));
  }
  h = mix(h, j.outvars.size());
  for (const Atom& a : j.outvars) h = mix(h, r.use(a));
  return mix(h, effects_hash(j.effects));
}

size_t Jaxpr::hash() const { return cached_hash != 0 ? cached_hash : structural_hash(*this); }

bool structurally_equal(const Jaxpr& a, const Jaxpr& b) {
  if (&a == &b) return true;
  if (a.constvars.size() != b.constvars.size() || a.invars.size() != b.invars.size() ||
      a.eqns.size() != b.eqns.size() || a.outvars.size() != b.outvars.size() ||
      a.effects != b.effects)
    return false;
  std::unordered_map<uint64_t, uint64_t> a_to_b;  // var id in a -> var id in b
  auto bind = [&](const Var& x, const Var& y) {
    if (!(x.aval() == y.aval()) || x.is_dropped() != y.is_dropped()) return false;
    if (!x.is_dropped()) a_to_b[x.id()] = y.id();
    return true;
  };
  auto same_atom = [&](const Atom& x, const Atom& y) {
    if (x.index() != y.index()) return false;
    if (const Var* xv = std::get_if<Var>(&x)) {
      auto it = a_to_b.find(xv->id());
      const uint64_t mapped = it == a_to_b.end() ? xv->id() : it->second;
      return mapped == std::get<Var>(y).id();
    }
    return std::get<Literal>(x) == std::get<Literal>(y);
  };
  for (size_t i = 0; i < a.constvars.size(); ++i)
    if (!bind(a.constvars[i], b.constvars[i])) return false;
  for (size_t i = 0; i < a.invars.size(); ++i)
    if (!bind(a.invars[i], b.invars[i])) return false;
  for (size_t k = 0; k < a.eqns.size(); ++k) {
    const JaxprEqn& x = a.eqns[k];
    const JaxprEqn& y = b.eqns[k];
    if (x.primitive != y.primitive || x.invars.size() != y.invars.size() ||
        x.outvars.size() != y.outvars.size() || x.effects != y.effects || !(x.params == y.params))
      return false;
    for (size_t i = 0; i < x.invars.size(); ++i)
      if (!same_atom(x.invars[i], y.invars[i])) return false;
    for (size_t i = 0; i < x.outvars.size(); ++i)
      if (!bind(x.outvars[i], y.outvars[i])) return false;
  }
  for (size_t i = 0; i < a.outvars.size(); ++i)
    if (!same_atom(a.outvars[i], b.outvars[i])) return false;
  return true;
}

// ---- Interning ----

namespace {
struct InternTable {
  std::mutex mu;
  std::unordered_multimap<size_t, std::weak_ptr<const Jaxpr>> by_hash;
  size_t inserts_since_sweep = 0;
};
InternTable& intern_table() {
  static InternTable* t = new InternTable();  // never destroyed: interned jaxprs may outlive it
  return *t;
}
}  // namespace

std::shared_ptr<const Jaxpr> intern(Jaxpr j) {
  const size_t h = structural_hash(j);
  j.cached_hash = h == 0 ? 1 : h;
  InternTable& t = intern_table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [lo, hi] = t.by_hash.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    if (std::shared_ptr<const Jaxpr> p = it->second.lock()) {
      if (structurally_equal(*p, j)) return p;
    }
  }
  // Sweep dead entries now and then so the table stays proportional to live jaxprs.
  if (++t.inserts_since_sweep >= 1024) {
    t.inserts_since_sweep = 0;
    for (auto it = t.by_hash.begin(); it != t.by_hash.end();)
      it = it->second.expired() ? t.by_hash.erase(it) : std::next(it);
  }
  auto p = std::make_shared<const Jaxpr>(std::move(j));
  t.by_hash.emplace(h, p);
  return p;
}

}  // namespace tessera
