// Messages shared by the places that refuse an unusable array (array.cpp, the eval trace, the
// staging trace, the Python bindings): deleted arrays and JAX's concretization errors.
#pragma once

#include <string>
#include <string_view>

#include "tessera/array.h"
#include "tessera/shape.h"

namespace tessera {

// JAX's text for a deleted or donated array ("Array has been deleted with shape=float32[3].")
// and what to do. The Python package raises it as RuntimeError, as JAX does.
std::string deleted_array_message(const Aval& a);

// JAX's str(ShapedArray): "ShapedArray(float32[3,4])", ", weak_type=True" for weak types.
std::string shaped_array_str(const Aval& a);

// JAX's texts for a traced value used where a concrete one is needed, each followed by the
// tracer's origin (Tracer::origin: the function, the transformation, the arguments it depends
// on) and what to do instead. `context` names the function that needed the value ("bool",
// "float", "item"). Each goes with its error type (tessera/errors.h):
//   ConcretizationError          "Abstract tracer value encountered where concrete value is
//                                 expected: traced array with shape float32[3]"
//   TracerBoolConversionError    "Attempted boolean conversion of traced array with shape bool[]."
//   TracerIntegerConversionError "The __index__() method was called on traced array with shape
//                                 int32[]."
//   TracerArrayConversionError   "The numpy.ndarray conversion method __array__() was called on
//                                 traced array with shape float32[3]."
std::string concretization_message(const Tracer& t, std::string_view context);
std::string bool_conversion_message(const Tracer& t);
std::string integer_conversion_message(const Tracer& t, std::string_view method);
std::string array_conversion_message(const Tracer& t);

}  // namespace tessera
