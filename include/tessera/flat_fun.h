// A function over flat lists of arrays: what the transformations, the jaxpr transformations of
// the interpreter layer and the primitive families pass around (pytrees are flattened to it).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "tessera/array.h"

namespace tessera::flat {

using Fun = std::function<std::vector<Array>(std::span<const Array>)>;

}  // namespace tessera::flat
