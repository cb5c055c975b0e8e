#include "prims/cond.h"
namespace tessera::prims {
void register_cond() {}
}  // namespace tessera::prims
