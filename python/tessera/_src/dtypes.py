"""Tessera's dtypes with JAX's names.

NumPy 1.24 has no bfloat16 and Debian 12 has no ml_dtypes, so Tessera defines its own
`bfloat16` dtype object: Arrays can be bfloat16, `x.dtype == jnp.bfloat16` holds, and
`np.asarray(x)` of a bfloat16 array returns a float32 COPY (exact: every bfloat16 is a float32)
instead of a view. Every other dtype is NumPy's own and converts without copying.
"""
import numpy as _np

from tessera import _tessera


class _BFloat16DType:
    """The bfloat16 dtype (no NumPy equivalent in NumPy 1.24)."""

    name = "bfloat16"
    itemsize = 2
    kind = "V"
    char = "E"
    str = "bfloat16"

    def __repr__(self):
        return "dtype(bfloat16)"

    def __str__(self):
        return "bfloat16"

    def __eq__(self, other):
        if isinstance(other, _BFloat16DType):
            return True
        if isinstance(other, str):
            return other == "bfloat16"
        return getattr(other, "name", None) == "bfloat16" and other is not _np.dtype

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash("bfloat16")


bfloat16_dtype = _BFloat16DType()


class _KeyDType:
    """The dtype of typed PRNG keys (jax.random.key): one key is 2 x uint32, 8 bytes."""

    name = "key<fry>"
    itemsize = 8
    kind = "V"
    char = "V"
    str = "key<fry>"

    def __repr__(self):
        return "key<fry>"

    def __str__(self):
        return "key<fry>"

    def __eq__(self, other):
        if isinstance(other, _KeyDType):
            return True
        return isinstance(other, str) and other == "key<fry>"

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash("key<fry>")


key_dtype = _KeyDType()


class _ScalarType:
    """jnp.float32 and friends: `jnp.float32(1.5)` makes a strongly typed rank-0 Array, and
    `.dtype` is the NumPy dtype (so np.dtype(jnp.float32) works)."""

    def __init__(self, name):
        self.__name__ = name
        self.name = name
        self.dtype = bfloat16_dtype if name == "bfloat16" else _np.dtype(name)

    def __call__(self, x):
        return _tessera.asarray(x, self.name)

    def __repr__(self):
        return f"<class 'tessera.numpy.{self.__name__}'>"

    def __eq__(self, other):
        return other is self or self.dtype == other

    def __hash__(self):
        return hash(self.name)


_NAMES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64"]
scalar_types = {n: _ScalarType("bool" if n == "bool_" else n) for n in _NAMES}


def dtype_arg(d):
    """A dtype argument as the C++ core takes it: jnp's scalar types and bfloat16 by name,
    anything else (NumPy dtypes, type objects, strings, None) as given."""
    if isinstance(d, _ScalarType):
        return d.name
    if isinstance(d, _BFloat16DType):
        return "bfloat16"
    return d


def dtype_of_name(name):
    """The dtype object an Array of this dtype name reports."""
    if name == "bfloat16":
        return bfloat16_dtype
    if name == "float0":
        return _np.dtype([("float0", "V")])
    if name == "key<fry>":
        return key_dtype
    return _np.dtype(name)


def canonicalize_dtype(dtype):
    """JAX's canonicalize_dtype: 64-bit types become 32-bit unless x64 is enabled."""
    return dtype_of_name(_tessera.canonical_dtype_name(dtype))


class finfo:
    """jnp.finfo for floating dtypes (bfloat16 included)."""

    def __init__(self, dtype):
        name = _tessera.canonical_dtype_name(dtype) if not isinstance(dtype, str) else dtype
        if name == "bfloat16":
            self.bits, self.eps, self.max, self.tiny = 16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126
            self.min = -self.max
            self.smallest_normal = self.tiny
            self.resolution = 0.01
            self.dtype = bfloat16_dtype
        else:
            f = _np.finfo(name)
            self.bits, self.eps, self.max, self.min = f.bits, f.eps, f.max, f.min
            self.tiny = f.tiny
            self.smallest_normal = f.smallest_normal
            self.resolution = f.resolution
            self.dtype = f.dtype

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, dtype={self.dtype})"


def iinfo(dtype):
    return _np.iinfo(_tessera.canonical_dtype_name(dtype) if not isinstance(dtype, str) else dtype)


float0 = _np.dtype([("float0", "V")])


# ---- the rest of jax.dtypes' public names ----
class extended(_np.generic):
    """The abstract parent of JAX's extended dtypes (PRNG key dtypes), for issubdtype."""


class prng_key(extended):
    """The abstract dtype of typed PRNG key arrays: dtypes.issubdtype(k.dtype, prng_key)."""


def _jnp():
    from tessera import numpy as jnp
    return jnp


def result_type(*args, return_weak_type_flag=False):
    """The dtype JAX's promotion gives args (canonicalized: 32-bit unless x64); with
    return_weak_type_flag, (dtype, weak) — weak when every argument is weakly typed."""
    dt = _jnp().result_type(*args)
    if not return_weak_type_flag:
        return dt
    return dt, bool(args) and all(is_weakly_typed(a) for a in args)


def issubdtype(a, b):
    """jnp.issubdtype, extended with the key dtypes: a key dtype is a subtype of prng_key and of
    extended only."""
    if a is key_dtype or (isinstance(a, str) and a.startswith("key")):
        return b in (prng_key, extended) or b is key_dtype
    if b in (prng_key, extended):
        return False
    return _jnp().issubdtype(a, b)


def is_weakly_typed(x):
    """Python scalars and Arrays created from them are weakly typed."""
    if isinstance(x, (bool, int, float, complex)):
        return True
    return bool(getattr(x, "weak_type", False))


def scalar_type_of(x):
    """The Python scalar type (bool, int, float) of x's dtype kind."""
    d = _jnp().result_type(x)
    if d == bfloat16_dtype:
        return float
    kind = _np.dtype(d).kind
    if kind == "b":
        return bool
    if kind in "iu":
        return int
    if kind == "f":
        return float
    if kind == "c":
        return complex
    raise TypeError(f"Invalid scalar value {x!r}")


def __getattr__(name):
    if name == "bfloat16":
        return _jnp().bfloat16
    raise AttributeError(f"module 'tessera.dtypes' has no attribute {name!r}")
