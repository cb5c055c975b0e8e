// Host callbacks as primitives (JAX's jax/_src/debugging.py and jax/_src/callback.py):
//
//  - debug_callback: operands are the arrays handed to a host function; no outputs; an effect
//    (Debug, or OrderedDebug when ordered) keeps it alive through DCE. JVP binds it on the
//    primals only (it runs once, in the forward pass); vmap calls it once per batch member, in
//    order.
//  - pure_callback: a host function treated as pure (no effects: DCE drops it when unused);
//    its outputs are declared (result_avals) and checked when it runs. No JVP/transpose; vmap
//    per vmap_method (sequential, sequential_unrolled, expand_dims, broadcast_all,
//    legacy_vectorized; unspecified raises NotImplementedError, as current JAX).
//  - io_callback: like pure_callback with an IO effect (OrderedIO when ordered); vmap calls
//    it sequentially (an ordered one cannot be vmapped).
//
// Params: callback (a HostCallback opaque param), and effect (debug_callback), result_avals +
// sharding + vmap_method (pure_callback) or ordered + result_avals + sharding (io_callback).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tessera/debug.h"
#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive debug_callback_p;
extern Primitive pure_callback_p;
extern Primitive io_callback_p;

// The host function of a callback equation (compared by identity, printed as a function).
struct HostCallback final : OpaqueParam {
  HostFun fn;
  std::string name;
  std::string str() const override { return "<function " + name + ">"; }
};

// The declared result types of a pure/io callback, printed as JAX prints a tuple of avals:
// "(ShapedArray(float32[3]),)".
struct ResultAvals final : OpaqueParam {
  std::vector<Aval> avals;
  std::string str() const override;
};

inline const Effect kDebugEffect{"Debug", false};
inline const Effect kOrderedDebugEffect{"OrderedDebug", true};
inline const Effect kIOEffect{"IO", false};
inline const Effect kOrderedIOEffect{"OrderedIO", true};

Params debug_callback_params(HostFun fn, std::string name, bool ordered);
Params pure_callback_params(HostFun fn, std::string name, std::vector<Aval> result_avals,
                            VmapMethod method);
Params io_callback_params(HostFun fn, std::string name, std::vector<Aval> result_avals,
                          bool ordered);

void register_callbacks();

}  // namespace tessera::prims
