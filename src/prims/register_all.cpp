// register_all(): every primitive family registers its primitives once, on first use of the
// registry (find_primitive, bind). It lives with the families so that the core's registry
// (src/core/primitive.cpp) includes nothing above it; it also installs the lax operations the
// interpreters compute with (trace/tangents.h).
#include <atomic>
#include <mutex>

#include "prims/callbacks.h"
#include "prims/checkpoint.h"
#include "prims/cond.h"
#include "prims/cumulative.h"
#include "prims/gather_scatter.h"
#include "prims/jit.h"
#include "prims/prims.h"
#include "prims/scan.h"
#include "prims/sort.h"
#include "prims/while_loop.h"
#include "tessera/lax.h"
#include "tessera/primitive.h"
#include "trace/custom_lin.h"
#include "trace/interpreter_ops.h"

namespace tessera {

void register_all() {
  static std::atomic<bool> g_registered{false};
  if (g_registered.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    trace::install_interpreter_ops({&lax::add, &lax::broadcast_in_dim, &lax::transpose});
    prims::register_arithmetic();
    prims::register_arithmetic_unary();
    prims::register_transcendental();
    prims::register_binary_math();
    prims::register_compare();
    prims::register_select_convert();
    prims::register_shape_ops();
    prims::register_reductions();
    prims::register_dot_general();
    prims::register_conv();
    prims::register_special();
    prims::register_bitwise();
    prims::register_squeeze_rev();
    prims::register_slicing();
    prims::register_concat_pad();
    prims::register_argminmax();
    prims::register_reduce_generic();
    prims::register_reduce_window();
    prims::register_select_and_scatter();
    prims::register_ad_prims();
    trace::register_custom_lin();
    prims::register_custom_derivatives();
    prims::register_custom_linear_solve();
    prims::register_scan();
    prims::register_cond();
    prims::register_while();
    prims::register_checkpoint();
    prims::register_callbacks();
    prims::register_cumulative();
    prims::register_gather_scatter();
    prims::register_sort();
    prims::register_top_k();
    prims::register_random_bits();
    prims::register_eigh();
    prims::register_svd();
    prims::register_qr();
    prims::register_householder();
    prims::register_linalg_triangular_solve();
    prims::register_linalg_cholesky();
    prims::register_linalg_lu();
    prims::register_collectives();
    prims::register_jit();
    g_registered.store(true, std::memory_order_release);
  });
}

}  // namespace tessera
