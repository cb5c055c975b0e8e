// The primitive objects of every family and the families' registration functions.
// A primitive's rules are all set in its family's file; this header only names them.
#pragma once

#include "tessera/primitive.h"

namespace tessera::prims {

// elementwise_binary.cpp: arithmetic on operands of one dtype whose shapes follow lax's
// broadcasting rule (rank-0 operands broadcast; others have equal rank, dims equal or 1).
extern Primitive add, sub, mul, div, max, min, pow;
// elementwise_unary.cpp: params none, except integer_pow {y: int64}.
extern Primitive neg, exp, log, sin, cos, tanh, logistic, sqrt, integer_pow;
// compare.cpp: the binary rule, bool result.
extern Primitive eq, ne, lt, le, gt, ge;
// select_convert.cpp: select_n(which, *cases) {}; convert_element_type {new_dtype, weak_type}.
extern Primitive select_n, convert_element_type;
// shape_ops.cpp: broadcast_in_dim {shape, broadcast_dimensions}; reshape {new_sizes};
// transpose {permutation}; iota {dtype, shape, dimension}.
extern Primitive broadcast_in_dim, reshape, transpose, iota;
// reductions.cpp: {axes}.
extern Primitive reduce_sum, reduce_max;
// dot_general.cpp: {lhs_contracting_dimensions, rhs_contracting_dimensions,
// lhs_batch_dimensions, rhs_batch_dimensions, preferred_element_type (optional DType)}.
extern Primitive dot_general;

// ad_prims.cpp: stop_gradient (identity, zero tangent); custom_lin (custom_lin.h).
extern Primitive stop_gradient;

void register_ad_prims();
void register_elementwise_binary();
void register_elementwise_unary();
void register_compare();
void register_select_convert();
void register_shape_ops();
void register_reductions();
void register_dot_general();

}  // namespace tessera::prims
