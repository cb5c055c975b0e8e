// Messages shared by the places that refuse an unusable array (array.cpp, the eval trace, the
// staging trace).
#pragma once

#include <string>

#include "tessera/shape.h"

namespace tessera {

// JAX's text for a deleted or donated array ("Array has been deleted with shape=float32[3].")
// and what to do. The Python package raises it as RuntimeError, as JAX does.
std::string deleted_array_message(const Aval& a);

}  // namespace tessera
