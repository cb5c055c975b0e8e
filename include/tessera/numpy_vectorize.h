// jnp.vectorize for C++ functions over Arrays (src/api/numpy_vectorize.cpp): a function written
// for one element of each argument — or, with a generalized-ufunc signature such as
// "(n),(n)->()", for arrays of the signature's core shapes — applied over the broadcast leading
// ("loop") dimensions of its arguments with nested vmaps, as JAX's vectorize: loop axes of size
// 1 are squeezed and not mapped (an axis of size 1 in every argument is mapped by none and
// restored on the outputs), so f sees unbatched values there. Works under jit, grad and vmap
// like any composition of vmap. The Python package's vectorize (Python callables, excluded and
// keyword arguments, pytrees) keeps its own loop and shares parse_gufunc_signature.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/array.h"
#include "tessera/flat_fun.h"

namespace tessera::numpy {

// The core dimension names of each input and output of a gufunc signature. Whitespace is
// ignored; a dimension name is a run of word characters; an argument may have no core dims
// "()". ValueError "not a valid gufunc signature: <signature>" otherwise.
struct GufuncSignature {
  std::vector<std::vector<std::string>> inputs, outputs;
};
GufuncSignature parse_gufunc_signature(const std::string& signature);

// f vectorized: the returned function takes f's arguments with any extra leading dims (which
// broadcast against each other) and returns f's outputs with the broadcast leading dims added.
// Without a signature every argument's core is a scalar and f may return any number of
// outputs. With one: the argument count must match (TypeError), each argument needs the core
// dims (ValueError), a core dim's size must agree across arguments and outputs (ValueError),
// and f must return the signature's number of outputs (TypeError).
flat::Fun vectorize(flat::Fun f, const std::optional<std::string>& signature = std::nullopt);

}  // namespace tessera::numpy
