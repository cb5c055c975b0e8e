"""tessera.nn: jax.nn's activations and normalizing functions (`jax.nn.relu`, `softmax`, ...).

Every function is the C++ tessera::nn function of the same name (include/tessera/nn.h), which
decides dtypes, NaN/inf results and derivatives (JAX's custom JVPs for relu, relu6, softmax
and logsumexp); this module only gives them jax.nn's signatures and defaults.
"""
from tessera import _tessera
from tessera import numpy as _jnp
from tessera.nn import initializers  # noqa: F401  (jax.nn.initializers)

_C = _tessera.nn

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "mish", "one_hot",
    "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus",
    "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh",
]


# ---- activations ----

def relu(x):
    """max(x, 0); the gradient at 0 is 0 (JAX's custom JVP). Integers keep their dtype."""
    return _C.relu(x)


def relu6(x):
    """min(max(x, 0), 6); the gradient at 0 and at 6 is 0."""
    return _C.relu6(x)


def gelu(x, approximate: bool = True):
    """x * Phi(x): the tanh approximation by default, the exact erfc form otherwise."""
    return _C.gelu(x, bool(approximate))


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return _C.sigmoid(x)


def silu(x):
    """x * sigmoid(x) (also named swish)."""
    return _C.silu(x)


swish = silu


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return _C.log_sigmoid(x)


def softplus(x):
    """log(1 + exp(x)) = logaddexp(x, 0)."""
    return _C.softplus(x)


def soft_sign(x):
    """x / (|x| + 1)."""
    return _C.soft_sign(x)


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _C.elu(x, alpha)


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return _C.celu(x, alpha)


def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    return _C.selu(x)


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise."""
    return _C.leaky_relu(x, negative_slope)


def hard_tanh(x):
    """x clamped to [-1, 1]."""
    return _C.hard_tanh(x)


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return _C.hard_sigmoid(x)


def hard_silu(x):
    """x * hard_sigmoid(x) (also named hard_swish)."""
    return _C.hard_silu(x)


hard_swish = hard_silu


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2."""
    return _C.squareplus(x, b)


def mish(x):
    """x * tanh(softplus(x))."""
    return _C.mish(x)


def sparse_plus(x):
    """0 for x <= -1, (x + 1)**2 / 4 for -1 < x < 1, x for x >= 1."""
    return _C.sparse_plus(x)


def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1), the derivative of sparse_plus."""
    return _C.sparse_sigmoid(x)


def tanh(x):
    """jax.numpy.tanh, as jax.nn re-exports it."""
    return _C.tanh(x)


def identity(x):
    """x itself."""
    return _C.identity(x)


def glu(x, axis: int = -1):
    """first * sigmoid(second) of x's two halves along axis (its length must be even)."""
    return _C.glu(x, axis)


# ---- normalizing functions ----

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, stable (jax.scipy.special.logsumexp); with return_sign,
    (log|sum|, sign of the sum)."""
    return _C.logsumexp(a, axis, b, bool(keepdims), bool(return_sign), where)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) over axis; masked-out entries (where=False) give 0."""
    return _C.softmax(x, axis, where)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) over axis; masked-out entries (where=False) give -inf."""
    return _C.log_softmax(x, axis, where)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """(x - mean) * rsqrt(variance + epsilon), mean and variance over axis unless given."""
    return _C.standardize(x, axis, mean, variance, epsilon, where)


def one_hot(x, num_classes, *, dtype=_jnp.float_, axis=-1):
    """x's labels one-hot encoded along a new axis; labels outside [0, num_classes) give
    all-zero rows. dtype jnp.float_ is the default float (float32 unless x64)."""
    return _C.one_hot(x, num_classes, dtype, axis)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """Scaled dot-product attention, softmax(q kᵀ · scale + bias, masked) v, as jax.nn's XLA
    implementation: query [B, T, N, H] (or [T, N, H]), key/value [B, S, K, H] with N a multiple
    of K (grouped-query attention); mask is boolean (True = attend); is_causal, sequence lengths
    and a local window add to it. Logits and softmax in float32; the result has the inputs'
    dtype and query's shape."""
    if return_residual:
        raise NotImplementedError("dot_product_attention: return_residual=True is not "
                                  "implemented in Tessera.")
    if local_window_size is not None:
        if isinstance(local_window_size, int):
            local_window_size = (local_window_size, local_window_size)
        local_window_size = tuple(int(w) for w in local_window_size)
        if len(local_window_size) != 2:
            raise ValueError("dot_product_attention: local_window_size must be an int or a "
                             f"pair (left, right), got {local_window_size}")
    return _C.dot_product_attention(query, key, value, bias, mask,
                                    None if scale is None else float(scale), bool(is_causal),
                                    query_seq_lengths, key_value_seq_lengths, local_window_size,
                                    "" if implementation is None else str(implementation))


__all__.append("dot_product_attention")
