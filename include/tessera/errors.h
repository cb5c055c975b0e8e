// Typed exceptions. A user error's message starts with "[op] " and says what to do;
// an internal error says "internal error in <layer>" and is a bug.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Wrong dtype, wrong kind of argument (JAX: TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};
// Wrong shape, axis, value (JAX: ValueError).
class ValueError : public Error {
 public:
  using Error::Error;
};
// An index or axis out of range (NumPy: AxisError/IndexError); a ValueError as JAX's AxisError.
class IndexError : public ValueError {
 public:
  using ValueError::ValueError;
};
// A Python/C++ integer that does not fit the dtype it must take (Python's OverflowError, as JAX
// raises for jnp.int8(1) + 200); a ValueError in C++.
class OverflowError : public ValueError {
 public:
  using ValueError::ValueError;
};
// A traced value used where a concrete one is needed (JAX: ConcretizationTypeError).
class ConcretizationError : public TypeError {
 public:
  using TypeError::TypeError;
};
// The truth value of a traced value (JAX: TracerBoolConversionError, a ConcretizationTypeError).
class TracerBoolConversionError : public ConcretizationError {
 public:
  using ConcretizationError::ConcretizationError;
};
// A traced value used as a Python/C++ integer, __index__ or int() (JAX:
// TracerIntegerConversionError, a TypeError).
class TracerIntegerConversionError : public TypeError {
 public:
  using TypeError::TypeError;
};
// A traced value converted to a NumPy array (JAX: TracerArrayConversionError, a TypeError).
class TracerArrayConversionError : public TypeError {
 public:
  using TypeError::TypeError;
};
// A tracer used outside the transformation that created it.
class UnexpectedTracerError : public Error {
 public:
  using Error::Error;
};
// A device allocation would exceed the memory limit or the system refused it.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};
// An operation that a transformation or a device does not support in this configuration
// (Python's NotImplementedError), e.g. vmap of a pure_callback without a vmap_method.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
// A name that nothing in scope binds, such as a collective's axis name outside any vmap/pmap
// that names it (Python's NameError, as JAX's "unbound axis name").
class NameError : public Error {
 public:
  using Error::Error;
};
// A bug in Tessera: please report it.
class InternalError : public Error {
 public:
  using Error::Error;
};

// Builds "[op] message".
std::string op_message(std::string_view op, std::string_view message);

[[noreturn]] void throw_internal(std::string_view layer, std::string_view message);

}  // namespace tessera
