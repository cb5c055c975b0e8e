// The solve family's lax.linalg functions (binds of the primitives of src/prims/linalg_*.cpp,
// found by name) and the jnp.linalg / scipy.linalg composites built on them.
#include "tessera/linalg_solve.h"

#include <string>
#include <vector>

#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/primitive.h"

namespace tessera::lax::linalg {

namespace {

const Primitive& prim(const char* name) { return *find_primitive(name); }

}  // namespace

Array triangular_solve(const Array& a, const Array& b, bool left_side, bool lower, bool transpose_a,
                       bool conjugate_a, bool unit_diagonal) {
  if (!a.defined() || !b.defined())
    throw ValueError(op_message("triangular_solve", "an operand is an empty Array handle"));
  (void)conjugate_a;  // no effect on real dtypes (Tessera has no complex ones)
  static const Primitive& p = prim("triangular_solve");
  const bool singleton = b.ndim() == a.ndim() - 1;
  Array bb = singleton ? lax::expand_dims(b, {left_side ? b.ndim() : b.ndim() - 1}) : b;
  Array x = tessera::bind(p, {a, bb},
                          Params{{"left_side", left_side},
                                 {"lower", lower},
                                 {"transpose_a", transpose_a},
                                 {"conjugate_a", false},  // JAX: only complex a conjugates
                                 {"unit_diagonal", unit_diagonal}})[0];
  if (singleton) x = lax::squeeze(x, {left_side ? x.ndim() - 1 : x.ndim() - 2});
  return x;
}

}  // namespace tessera::lax::linalg
