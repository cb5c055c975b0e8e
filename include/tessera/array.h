// Array: a cheap, immutable, ref-counted handle. Either concrete (a Buffer on a Device,
// dense row-major) or a tracer owned by a trace. The user never needs to know which.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/device.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/shape.h"

namespace tessera {

class Trace;  // primitive.h
class Array;
class Sharding;  // sharding.h

// Base of every trace's tracer (jvp, linearize, batch, staging; src/trace/).
class Tracer {
 public:
  virtual ~Tracer() = default;
  virtual const Aval& aval() const = 0;
  // The unique tag of the trace that owns this tracer (for leak detection).
  virtual uint64_t trace_tag() const = 0;
  // Short description for error messages ("JVPTracer(f32[3])").
  virtual std::string str() const = 0;
  // The owning trace; null for placeholders that belong to no trace (ShapeDtypeStruct
  // arguments of make_jaxpr/eval_shape).
  virtual Trace* trace() const { return nullptr; }
  // The concrete value this tracer stands for when one is known (a JVP tracer over a concrete
  // primal, as in grad of eager code), else null. Python/C++ control flow on such tracers
  // works, as in JAX.
  virtual const Array* concrete_value() const { return nullptr; }
  // Where the value comes from, for the concretization errors (JAX's _origin_msg): "The error
  // occurred while tracing the function f at file:line for jit. This concrete value was not
  // available in Python because it depends on the value of the argument x." Empty when the
  // trace knows nothing (a tracer of grad or vmap over concrete values).
  virtual std::string origin() const { return {}; }
};

struct ArrayImpl {
  Aval aval;
  std::shared_ptr<Buffer> buffer;  // concrete payload (null for tracers)
  std::shared_ptr<Tracer> tracer;  // null for concrete arrays
  bool deleted = false;            // set by delete()/donation
  // Placement (JAX's committed arrays): device_put(x, device) commits x to its device; arrays
  // made without a device are uncommitted and follow committed operands. An op's outputs are
  // committed when one of its inputs is.
  bool committed = false;
};

class Index;  // tessera/index.h

class Array {
 public:
  Array() = default;  // an empty handle; most operations on it raise ValueError
  // Concrete array over an existing buffer (shared, not copied).
  Array(Aval aval, std::shared_ptr<Buffer> buffer);
  // A tracer.
  explicit Array(std::shared_ptr<Tracer> tracer);

  bool defined() const { return impl_ != nullptr; }
  const Aval& aval() const { return impl_->aval; }
  const Shape& shape() const { return impl_->aval.shape; }
  DType dtype() const { return impl_->aval.dtype; }
  bool weak_type() const { return impl_->aval.weak_type; }
  int64_t ndim() const { return impl_->aval.ndim(); }
  int64_t size() const { return impl_->aval.size(); }
  size_t nbytes() const { return impl_->aval.nbytes(); }
  int64_t dim(int64_t axis) const;  // negative axes allowed

  bool is_tracer() const { return impl_ && impl_->tracer != nullptr; }
  bool is_concrete() const { return impl_ && impl_->tracer == nullptr; }
  Tracer* tracer() const { return impl_->tracer.get(); }
  const std::shared_ptr<Tracer>& tracer_ptr() const { return impl_->tracer; }

  // Concrete payload. Throw ConcretizationError for tracers (naming `why`), and
  // ValueError for deleted arrays.
  const std::shared_ptr<Buffer>& buffer(const char* why = "data") const;
  const void* raw_data(const char* why = "data") const { return buffer(why)->data(); }
  template <class T>
  const T* data() const {
    check_element_type(dtype_v<T>);
    return static_cast<const T*>(raw_data());
  }
  Device* device() const;
  // True when the array was placed explicitly (device_put with a device, or an op on committed
  // inputs). Concrete arrays only; tracers raise ConcretizationError.
  bool committed() const;
  // The array's sharding: today the interned SingleDeviceSharding of device().
  const Sharding& sharding() const;

  // Host copies. to_vector<T> requires T's dtype to equal the array's (use astype first).
  template <class T>
  std::vector<T> to_vector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + size());
  }
  // The single element converted to T (like NumPy's item()); ValueError unless size()==1,
  // ConcretizationError for tracers.
  template <class T>
  T item() const;
  double item_double() const;
  // For `if (x > 0)`: concrete size-1 arrays only; tracers raise ConcretizationError that
  // points to lax.cond / where / static arguments.
  explicit operator bool() const;

  // Basic indexing with NumPy's rules (tessera/index.h): x[2], x[{1, Slice(0, 3), newaxis}],
  // x[{ellipsis, Slice(std::nullopt, std::nullopt, -1)}]; an integer rank-0 Array index is a
  // dynamic index (clamped, as JAX). Defined in src/api/numpy_indexing.cpp.
  Array operator[](int64_t i) const;
  Array operator[](std::initializer_list<Index> idx) const;
  Array operator[](const std::vector<Index>& idx) const;

  // Marks the buffer deleted (later uses raise ValueError); as jax.Array.delete().
  void delete_buffer();
  bool is_deleted() const { return impl_ && impl_->deleted; }
  // Blocks until the value is computed (eager CPU execution is synchronous today).
  const Array& block_until_ready() const { return *this; }

  // Identity of the underlying handle (same object), not value equality.
  bool is(const Array& o) const { return impl_ == o.impl_; }
  const std::shared_ptr<ArrayImpl>& impl() const { return impl_; }

  // JAX's repr: "Array([[1., 2.]], dtype=float32)".
  std::string repr() const;
  // NumPy's str: "[[1. 2.]]".
  std::string str() const;

 private:
  void check_element_type(DType t) const;
  std::shared_ptr<ArrayImpl> impl_;
};
std::ostream& operator<<(std::ostream& os, const Array& a);

// Makes an uninitialized concrete array (kernels fill it). `op` names the caller for OOM errors.
// Implementation rules pass their ExecContext's device; null is the default device.
Array empty_array(const Aval& aval, const char* op, Device* device = nullptr);
// JAX's device_put(x, device): a committed array on `device` (null: the default device, and the
// result is uncommitted, as device_put(x) without a device). Copies the data when x is on another
// device; on the same device the result shares x's buffer. Tracers are returned unchanged (under
// a transformation placement is the enclosing computation's).
Array device_put(const Array& x, Device* device);
// Copies host data of dtype aval.dtype into a new array.
Array array_from_host(const Aval& aval, const void* data, Device* device = nullptr);

// Converts one element of dtype `src` at p to double / writes double as dtype `dst`.
double load_as_double(DType src, const void* p);
void store_from_double(DType dst, void* p, double v);

template <class T>
T Array::item() const {
  if (size() != 1)
    throw ValueError("[item] can only convert an array of size 1 to a C++ scalar, got " +
                     aval().str() + "; index it or reduce it first");
  const void* p = raw_data("item()");
  if constexpr (std::is_same_v<T, bool>) {
    return load_as_double(dtype(), p) != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    if (dtype() == DType::kInt64) return static_cast<T>(*static_cast<const int64_t*>(p));
    if (dtype() == DType::kUInt64) return static_cast<T>(*static_cast<const uint64_t*>(p));
    return static_cast<T>(load_as_double(dtype(), p));
  } else {
    return static_cast<T>(load_as_double(dtype(), p));
  }
}

}  // namespace tessera
