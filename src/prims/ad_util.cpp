// Shared helpers for the JVP and transpose rules (see ad_util.h).
#include "prims/ad_util.h"

#include <string>
#include <vector>

#include "tessera/errors.h"
#include "tessera/lax.h"

namespace tessera::prims::ad {

Array broadcast_to_shape(const Array& t, const Shape& shape) {
  if (!t.defined() || t.shape() == shape) return t;
  if (t.ndim() == 0) return lax::broadcast(t, shape);
  std::vector<int64_t> dims(t.shape().size());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
  return lax::broadcast_in_dim(t, shape, dims);
}

Array unbroadcast(const Array& ct, const Aval& aval) {
  if (ct.shape() == aval.shape) return ct;
  std::vector<int64_t> axes;
  if (aval.shape.empty()) {
    for (int64_t i = 0; i < ct.ndim(); ++i) axes.push_back(i);
    return lax::reduce_sum(ct, axes);
  }
  if (static_cast<int64_t>(aval.shape.size()) != ct.ndim()) {
    throw_internal("prims/ad_util", "unbroadcast: cotangent " + ct.aval().str() +
                                        " does not broadcast from " + aval.str());
  }
  for (int64_t i = 0; i < ct.ndim(); ++i) {
    if (aval.shape[i] != ct.shape()[i]) axes.push_back(i);
  }
  return lax::reshape(lax::reduce_sum(ct, axes), aval.shape);
}

void bad_linearity(std::string_view op, std::string_view message) {
  throw_internal("prims/ad", "[" + std::string(op) + "] " + std::string(message));
}

std::vector<Array> one(Array a) {
  std::vector<Array> v;
  v.push_back(std::move(a));
  return v;
}

JvpRule zero_jvp(const Primitive& p) {
  const Primitive* prim = &p;
  return [prim](std::span<const Array> primals, std::span<const Array>,
                const Params& params) -> JvpOut {
    return {tessera::bind(*prim, primals, params), one(Array())};
  };
}

}  // namespace tessera::prims::ad
