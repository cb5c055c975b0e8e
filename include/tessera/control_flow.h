// Structured control flow over pytrees, with JAX's API: lax::cond, lax::switch_, lax::while_loop,
// lax::fori_loop, lax::scan, lax::map (lax_cond.h, lax_scan.h) over the flat core of
// control_flow_flat.h.
#pragma once

#include "tessera/control_flow_flat.h"
#include "tessera/lax_cond.h"
#include "tessera/lax_scan.h"
