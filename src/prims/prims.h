// The primitive objects of every family and the families' registration functions.
// A primitive's rules are all set in its family's file; this header only names them.
#pragma once

#include "tessera/primitive.h"

namespace tessera::prims {

// arithmetic.cpp: arithmetic on operands of one dtype whose shapes follow lax's broadcasting
// rule (rank-0 operands broadcast; others have equal rank, dims equal or 1).
extern Primitive add, sub, mul, div, max, min, pow;
// arithmetic_unary.cpp: params none, except integer_pow {y: int64} and round
// {rounding_method: int64}.
extern Primitive neg, abs, sign, square, integer_pow, floor, ceil, round, is_finite;
// transcendental.cpp: unary, no params.
extern Primitive exp, log, sin, cos, tanh, logistic, sqrt, exp2, expm1, log1p, rsqrt, cbrt, tan,
    asin, acos, atan, sinh, cosh, asinh, acosh, atanh;
// binary_math.cpp: binary atan2 nextafter rem; clamp(min, x, max).
extern Primitive atan2, nextafter, rem, clamp;
// compare.cpp: the binary rule, bool result.
extern Primitive eq, ne, lt, le, gt, ge;
// select_convert.cpp: select_n(which, *cases) {}; convert_element_type {new_dtype, weak_type}.
extern Primitive select_n, convert_element_type;
// shape_ops.cpp: broadcast_in_dim {shape, broadcast_dimensions}; reshape {new_sizes};
// transpose {permutation}; iota {dtype, shape, dimension}.
extern Primitive broadcast_in_dim, reshape, transpose, iota;
// reductions.cpp: {axes}.
extern Primitive reduce_sum, reduce_max;
// dot_general.cpp: {dimension_numbers (DotDimensionNumbers), preferred_element_type (optional
// DType)}.
extern Primitive dot_general;
// conv.cpp: JAX's conv_general_dilated params (window_strides ... preferred_element_type).
extern Primitive conv_general_dilated;
void register_conv();

// special.cpp: erf erfc erf_inv lgamma digamma bessel_i0e bessel_i1e (unary); polygamma(m, x)
// zeta(x, q) igamma(a, x) igammac igamma_grad_a random_gamma_grad(a, x) (binary);
// regularized_incomplete_beta(a, b, x).
extern Primitive erf, erfc, erf_inv, lgamma, digamma, polygamma, zeta, igamma, igammac,
    igamma_grad_a, bessel_i0e, bessel_i1e, random_gamma_grad, regularized_incomplete_beta;
// bitwise.cpp: not and or xor shift_left shift_right_logical shift_right_arithmetic
// population_count clz; bitcast_convert_type {new_dtype}; reduce_precision {exponent_bits,
// mantissa_bits}.
extern Primitive not_, and_, or_, xor_, shift_left, shift_right_logical, shift_right_arithmetic,
    population_count, clz, bitcast_convert_type, reduce_precision;
// squeeze_rev.cpp: squeeze {dimensions}; rev {dimensions}.
extern Primitive squeeze, rev;
// slicing.cpp: slice {start_indices, limit_indices, strides}; dynamic_slice(x, *starts)
// {slice_sizes}; dynamic_update_slice(x, update, *starts).
extern Primitive slice, dynamic_slice, dynamic_update_slice;
// concat_pad.cpp: concatenate(*xs) {dimension}; pad(x, padding_value) {padding_config: flat
// (lo, hi, interior) triples}.
extern Primitive concatenate, pad;
// reductions.cpp: reduce_prod reduce_min reduce_and reduce_or reduce_xor {axes}.
extern Primitive reduce_prod, reduce_min, reduce_and, reduce_or, reduce_xor;
// argminmax.cpp: argmax, argmin {axes: one axis, index_dtype}.
extern Primitive argmax, argmin;
// reduce_generic.cpp: reduce(*operands, *init_values, *consts) {computation: jaxpr whose
// constvars are the trailing consts, dimensions};
// multiple results.
extern Primitive reduce;
// reduce_window.cpp: reduce_window_sum/max/min(x) and reduce_window(*operands, *init_values,
// *consts) {jaxpr} with {window_dimensions, window_strides, padding, base_dilation,
// window_dilation}; select_and_scatter.cpp: select_and_gather_add(tangents, operand) and
// select_and_scatter_add(source, operand) {select_prim: "ge" | "le", the window params}.
extern Primitive reduce_window_sum, reduce_window_max, reduce_window_min, reduce_window,
    select_and_gather_add, select_and_scatter_add;
void register_reduce_window();
void register_select_and_scatter();

// ad_prims.cpp: stop_gradient (identity, zero tangent); custom_lin (custom_lin.h).
extern Primitive stop_gradient;

void register_ad_prims();
// custom_derivatives.cpp: custom_jvp_call, custom_vjp_call (custom_derivatives.h).
void register_custom_derivatives();
// custom_linear_solve.cpp: custom_linear_solve (custom_linear_solve.h).
void register_custom_linear_solve();
void register_arithmetic();
void register_arithmetic_unary();
void register_transcendental();
void register_binary_math();
void register_compare();
void register_select_convert();
void register_shape_ops();
void register_reductions();
void register_dot_general();
void register_special();
void register_bitwise();
void register_squeeze_rev();
void register_slicing();
void register_concat_pad();
void register_argminmax();
void register_reduce_generic();
// threefry2x32 and the key casts random_wrap / random_unwrap (random_bits.cpp).
extern Primitive threefry2x32_p, random_wrap_p, random_unwrap_p;
void register_random_bits();
// linalg_eigh.cpp, linalg_svd.cpp, linalg_qr.cpp (the spectral family): eigh(x) {lower,
// sort_eigenvalues} -> (v, w); svd(x) {full_matrices, compute_uv} -> (s, u, vt) or (s);
// qr(x) {full_matrices, pivoting} -> (q, r) or (q, r, p).
extern Primitive eigh_p, svd_p, qr_p;
void register_eigh();
void register_svd();
void register_qr();
// linalg_householder.cpp (the raw Householder QR family): geqrf(a) -> (a, taus);
// geqp3(a, jpvt) -> (a, jpvt, taus); householder_product(a, taus) -> q.
extern Primitive geqrf_p, geqp3_p, householder_product_p;
void register_householder();
// linalg_triangular_solve.cpp, linalg_cholesky.cpp, linalg_lu.cpp (the solve family; the
// primitive objects are named in linalg_util.h).
void register_linalg_triangular_solve();
void register_linalg_cholesky();
void register_linalg_lu();

// collectives.cpp: psum/pmax/pmin(x) {axes}; all_gather(x) {all_gather_dimension, axis_name,
// axis_size, tiled} (named axes: vmap's today).
extern Primitive psum_p, pmax_p, pmin_p, all_gather_p;
void register_collectives();

}  // namespace tessera::prims
