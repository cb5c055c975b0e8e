// Helpers shared by src/api/scipy_special*.cpp: argument promotion (jnp's promote_args_inexact,
// with the result made strong so that loop carries keep one type) and the iterative-series loop.
#pragma once

#include <functional>
#include <vector>

#include "tessera/array.h"

namespace tessera::scipy::special::detail {

// The arguments promoted to one inexact dtype (bool and integers -> the default float), as
// strong (non-weak) Arrays broadcast to one shape.
std::vector<Array> promote_strong(const char* op, const std::vector<Array>& xs);

// lax.while_loop over carry = {k, done, rest...} (k a scalar of the value dtype, done a bool
// array) while k < max_iter and not every element is done; returns the final carry.
using LoopBody = std::function<std::vector<Array>(const std::vector<Array>&)>;
std::vector<Array> series_loop(const LoopBody& body, std::vector<Array> init, int max_iter);

// A rank-0 Array of x's dtype holding v.
Array scalar_like(const Array& x, double v);

// The Riemann zeta function at 2k (k >= 1) in long double (Borwein's alternating-series
// acceleration): for the Bernoulli numbers B_2k = (-1)^(k+1) 2 (2k)! zeta(2k) / (2 pi)^(2k).
long double zeta_even(int k);

}  // namespace tessera::scipy::special::detail
