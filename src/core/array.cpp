#include "tessera/array.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/array_errors.h"
#include "prims/kernel_util.h"
#include "tessera/sharding.h"

namespace tessera {

Array::Array(Aval aval, std::shared_ptr<Buffer> buffer)
    : impl_(std::make_shared<ArrayImpl>(std::move(aval), std::move(buffer))) {}

Array::Array(std::shared_ptr<Tracer> tracer) : impl_(std::make_shared<ArrayImpl>()) {
  impl_->aval = tracer->aval();
  impl_->tracer = std::move(tracer);
}

int64_t Array::dim(int64_t axis) const { return shape()[normalize_axis("dim", axis, ndim())]; }

const std::shared_ptr<Buffer>& Array::buffer(const char* why) const {
  if (!impl_) throw ValueError(op_message(why, "the Array handle is empty (default-constructed)"));
  if (impl_->tracer) {
    if (const Array* c = impl_->tracer->concrete_value()) return c->buffer(why);
    throw ConcretizationError(concretization_message(*impl_->tracer, why));
  }
  if (impl_->deleted) throw ValueError(op_message(why, deleted_array_message(impl_->aval)));
  return impl_->buffer;
}

Device* Array::device() const { return buffer("device")->device(); }

bool Array::committed() const {
  (void)buffer("committed");
  return impl_->committed;
}

const Sharding& Array::sharding() const { return single_device_sharding(device()); }

Array device_put(const Array& x, Device* device) {
  if (!x.defined()) throw ValueError(op_message("device_put", "got an empty Array handle"));
  if (x.is_tracer()) return x;
  const bool commit = device != nullptr;
  if (!device) device = default_device();
  const std::shared_ptr<Buffer>& src = x.buffer("device_put");
  Array out;
  if (src->device() == device) {
    out = Array(x.aval(), src);
  } else {
    out = empty_array(x.aval(), "device_put", device);
    if (x.nbytes()) std::memcpy(out.buffer()->data(), src->data(), x.nbytes());
  }
  out.impl()->committed = commit;
  return out;
}

void Array::check_element_type(DType t) const {
  if (dtype() != t) {
    throw TypeError(op_message("data", "requested element type " + std::string(dtype_name(t)) +
                                           " but the array is " + aval().str() +
                                           "; convert with astype first"));
  }
}

double Array::item_double() const { return item<double>(); }

Array::operator bool() const {
  if (is_tracer() && tracer()->concrete_value() == nullptr)
    throw TracerBoolConversionError(bool_conversion_message(*tracer()));
  if (size() != 1) {
    throw ValueError(op_message("bool", "the truth value of an array with " +
                                            std::to_string(size()) +
                                            " elements is ambiguous; use numpy::any or all"));
  }
  return load_as_double(dtype(), raw_data("bool")) != 0.0;
}

std::string deleted_array_message(const Aval& a) {
  // Appends only: g++ 12 warns falsely (-Wrestrict) on `"literal" + std::string&&`.
  std::string s = "Array has been deleted with shape=";
  s += dtype_name(a.dtype);
  s += '[';
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(a.shape[i]);
  }
  s += "]. It was deleted (Array.delete) or donated to a jit call (donate_argnums); compute it "
       "again, or do not donate it";
  return s;
}

void Array::delete_buffer() {
  if (!impl_ || impl_->tracer) return;
  impl_->deleted = true;
  impl_->buffer.reset();
}

Array empty_array(const Aval& aval, const char* op, Device* device) {
  // Kernels pass avals that abstract_eval checked; nbytes() itself never wraps around.
  return Array(aval, Buffer::allocate(device, aval.nbytes(), op));
}

Array array_from_host(const Aval& aval, const void* data, Device* device) {
  check_aval("array", aval);  // a user's aval
  Array a = empty_array(aval, "array", device);
  if (aval.nbytes()) std::memcpy(a.buffer()->data(), data, aval.nbytes());
  return a;
}

double load_as_double(DType src, const void* p) {
  return kernels::dispatch_dtype(src, [&]<class T>() -> double {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<double>(kernels::load(v));
  });
}

void store_from_double(DType dst, void* p, double v) {
  kernels::dispatch_dtype(dst, [&]<class T>() {
    T out;
    if constexpr (std::is_same_v<T, float16_t>) {
      out.bits = double_to_half_bits(v);
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
      out.bits = double_to_bfloat16_bits(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      out = v != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
      // Saturating, NaN -> 0: never undefined behaviour.
      if (std::isnan(v)) {
        out = 0;
      } else if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
        out = std::numeric_limits<T>::lowest();
      } else if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
        out = std::numeric_limits<T>::max();
      } else {
        out = static_cast<T>(v);
      }
    } else {
      out = static_cast<T>(v);
    }
    std::memcpy(p, &out, sizeof(T));
  });
}

}  // namespace tessera
