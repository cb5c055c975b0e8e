// Shared argument handling of random_dists.cpp and random_discrete.cpp (internal): JAX's key,
// dtype and shape checks for jax.random's distributions, with JAX's error texts.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::random::dists {

using numpy::ArrayLike;

// A single key as a typed key<fry> scalar (raw uint32[2] keys are wrapped, as JAX's
// _check_prng_key); TypeError for key arrays and non-keys.
Array typed_key(const char* op, const Array& key);

// JAX's check of a float (int) `dtype` argument, canonicalized; default float32 (int32), 64-bit
// with x64. kind names the accepted kind in the message ("float", "float or complex").
DType float_dtype(const char* op, std::optional<DType> dtype, const char* kind = "float");
DType int_dtype(const char* op, std::optional<DType> dtype);

// NumPy broadcasting of several shapes; ValueError "Incompatible shapes for broadcasting".
Shape broadcast_all(std::initializer_list<Shape> shapes);
// JAX's _check_shape: the parameters' shapes broadcast with `shape` must give `shape`.
void check_shape(const char* op, const Shape& shape, std::initializer_list<Shape> params);

// lax.convert_element_type; broadcast_to that returns x when it already has the shape.
Array convert(const ArrayLike& x, DType d);
Array broadcast_to(const Array& x, const Shape& shape);
// lax.select(pred, on_true, on_false).
Array select(const Array& pred, const Array& on_true, const Array& on_false);
// A strong rank-0 constant of dtype d.
Array cst(DType d, double v);
// promote_dtypes_inexact of one argument: integers (and bool) become the default float.
Array float_of(const ArrayLike& x);
// Key i of a key array (rank 1).
Array key_at(const Array& keys, int64_t i);

}  // namespace tessera::random::dists
