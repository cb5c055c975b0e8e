// Primitive family file (being written).
#pragma once
namespace tessera::prims {
void register_while();
}  // namespace tessera::prims
