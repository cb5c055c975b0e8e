// The tangent vocabulary of the interpreters (see tangents.h).
#include "trace/tangents.h"

#include "tessera/errors.h"
#include "trace/interpreter_ops.h"

namespace tessera::trace {

bool has_tangent(DType d) { return is_floating(d); }

bool zero_tangent(const Array& primal, const Array& tangent) {
  return !tangent.defined() || !is_inexact(primal.dtype());
}

Aval tangent_aval(const Aval& a) {
  if (has_tangent(a.dtype)) return Aval{a.shape, a.dtype, false};
  return Aval{a.shape, DType::kFloat0, false};
}

std::vector<bool> nonzero_mask(std::span<const Array> primals, std::span<const Array> tangents) {
  std::vector<bool> nz(primals.size());
  for (size_t i = 0; i < primals.size(); ++i)
    nz[i] = i < tangents.size() && !zero_tangent(primals[i], tangents[i]) &&
            has_tangent(primals[i].dtype());
  return nz;
}

Array scalar_const(double v, DType d) {
  Aval a{Shape{}, d, false};
  alignas(16) unsigned char bytes[16] = {};
  store_from_double(d, bytes, v);
  return array_from_host(a, bytes);
}

Array full_like_aval(const Aval& aval, double v) {
  Array c = scalar_const(v, aval.dtype);
  if (aval.shape.empty()) return c;
  return interpreter_ops().broadcast_in_dim(c, aval.shape, {});
}

Array zeros_like_aval(const Aval& aval) { return full_like_aval(aval, 0.0); }

Array instantiate(const Array& t, const Aval& aval) {
  return t.defined() ? t : zeros_like_aval(aval);
}

Array add_tangents(const Array& a, const Array& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return interpreter_ops().add(a, b);
}

}  // namespace tessera::trace
