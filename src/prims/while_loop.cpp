#include "prims/while_loop.h"
namespace tessera::prims {
void register_while() {}
}  // namespace tessera::prims
