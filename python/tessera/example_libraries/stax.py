"""tessera.example_libraries.stax: jax.example_libraries.stax, a small layer library.

    from tessera.example_libraries import stax
    init_fun, apply_fun = stax.serial(stax.Dense(512), stax.Relu, stax.Dense(10),
                                      stax.LogSoftmax)
    out_shape, params = init_fun(key, (-1, 784))
    logits = apply_fun(params, x)

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the outputs (``rng=``
for the layers that need randomness, such as Dropout). Layer constructors are CamelCase
(Dense, Conv); parameterless layers (Relu, Flatten, Identity, FanInSum) are already pairs.

Output shapes are computed here from the input shape alone (no tracing), so an unknown batch
size written as -1 passes through. The convolution and pooling layers call
lax.conv_general_dilated, lax.conv_transpose and lax.reduce_window with JAX's arguments.
"""
import functools
import math

from tessera import lax, random
from tessera import numpy as jnp
from tessera.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                        softplus, standardize)
from tessera.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "parallel", "serial",
    "shape_dependent",
    # re-exported, as JAX's module does
    "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax",
    "normal", "ones", "randn", "relu", "selu", "sigmoid", "softmax", "softplus", "standardize",
    "zeros",
]

# JAX's backwards-compatible aliases.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# ---- output-shape arithmetic (JAX's padding rules, spatial dimensions only) ----

def _padding_pairs(op, in_sizes, window, strides, padding):
    """(low, high) padding per spatial dimension for 'VALID', 'SAME', 'SAME_LOWER' or pairs."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * len(in_sizes)
        if mode in ("SAME", "SAME_LOWER"):
            pairs = []
            for n, w, s in zip(in_sizes, window, strides):
                out = -(-n // s)
                total = max(0, (out - 1) * s + w - n)
                lo = total // 2 if mode == "SAME" else total - total // 2
                pairs.append((lo, total - lo))
            return pairs
        raise ValueError(f"[{op}] unrecognized padding {padding!r}: expected 'VALID', 'SAME', "
                         "'SAME_LOWER' or a sequence of (low, high) integer pairs.")
    pairs = [tuple(p) for p in padding]
    if len(pairs) != len(in_sizes) or any(len(p) != 2 for p in pairs):
        raise ValueError(f"[{op}] padding {padding!r} must have one (low, high) pair per "
                         f"spatial dimension ({len(in_sizes)} of them).")
    return pairs


def _window_out_size(n, w, s, lo, hi):
    # A size of -1 (unknown batch or spatial size) stays unknown.
    if n < 0:
        return n
    return max(0, (n + lo + hi - w) // s + 1)


def _check_spec(op, spec, chars, rank):
    if len(spec) != rank or sorted(set(spec)) != sorted(spec) or not all(c in spec for c in chars):
        raise ValueError(f"[{op}] dimension spec {spec!r} must name each of {chars!r} once and "
                         f"one letter per spatial dimension ({rank} letters in all).")


def _conv_specs(op, dimension_numbers, filter_shape):
    if len(dimension_numbers) != 3 or not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(f"[{op}] dimension_numbers must be three layout strings such as "
                        f"('NHWC', 'HWIO', 'NHWC'); got {dimension_numbers!r}.")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rank = len(filter_shape) + 2
    _check_spec(op, lhs_spec, "NC", rank)
    _check_spec(op, rhs_spec, "IO", rank)
    _check_spec(op, out_spec, "NC", rank)
    return lhs_spec, rhs_spec, out_spec


def _kernel_shape(op, lhs_spec, rhs_spec, input_shape, out_chan, filter_shape):
    if len(input_shape) != len(lhs_spec):
        raise ValueError(f"[{op}] input shape {tuple(input_shape)} does not match the layout "
                         f"{lhs_spec!r} ({len(lhs_spec)} dimensions).")
    sizes = iter(filter_shape)
    return tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                 else next(sizes) for c in rhs_spec)


def _spatial(spec, skip):
    # The spatial letters of a layout, in the rhs (kernel) order JAX pairs them by.
    return [c for c in spec if c not in skip]


def _conv_output_shape(op, dimension_numbers, input_shape, kernel_shape, strides, padding,
                       transpose):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    letters = _spatial(rhs_spec, "IO")  # spatial dims are matched by letter
    in_sizes = [input_shape[lhs_spec.index(c)] for c in letters]
    ks = [kernel_shape[rhs_spec.index(c)] for c in letters]
    if transpose:
        sizes = []
        for n, k, s, p in zip(in_sizes, ks, strides, _transpose_pads(op, ks, strides, padding)):
            sizes.append(n if n < 0 else (n - 1) * s + 1 + p[0] + p[1] - k + 1)
    else:
        pads = _padding_pairs(op, in_sizes, ks, strides, padding)
        sizes = [_window_out_size(n, k, s, lo, hi)
                 for n, k, s, (lo, hi) in zip(in_sizes, ks, strides, pads)]
    out = {"N": input_shape[lhs_spec.index("N")], "C": kernel_shape[rhs_spec.index("O")]}
    out.update(zip(letters, sizes))
    return tuple(out[c] for c in out_spec)


def _transpose_pads(op, ks, strides, padding):
    """Padding of the stride-dilated input for a transposed convolution (JAX's rule)."""
    if not isinstance(padding, str):
        return _padding_pairs(op, ks, ks, strides, padding)
    mode = padding.upper()
    pairs = []
    for k, s in zip(ks, strides):
        if mode == "SAME":
            total = k + s - 2
            lo = k - 1 if s > k - 1 else -(-total // 2)
        elif mode == "VALID":
            total = k + s - 2 + max(k - s, 0)
            lo = k - 1
        else:
            raise ValueError(f"[{op}] transposed convolution padding must be 'SAME', 'VALID' "
                             f"or a sequence of (low, high) pairs; got {padding!r}.")
        pairs.append((lo, total - lo))
    return pairs


# ---- layers ----

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully-connected layer: inputs @ W + b, W of shape (in_dim, out_dim)."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer with layouts given as three strings (input, kernel, output), e.g.
    ('NHWC', 'HWIO', 'NHWC'); the bias has the output's rank with out_chan along 'C'."""
    filter_shape = tuple(filter_shape)
    dimension_numbers = _conv_specs("GeneralConv", tuple(dimension_numbers), filter_shape)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape("GeneralConv", lhs_spec, rhs_spec, input_shape, out_chan,
                                     filter_shape)
        output_shape = _conv_output_shape("GeneralConv", dimension_numbers, input_shape,
                                          kernel_shape, strides, padding, transpose=False)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer (lax.conv_transpose) with string layouts."""
    filter_shape = tuple(filter_shape)
    dimension_numbers = _conv_specs("GeneralConvTranspose", tuple(dimension_numbers),
                                    filter_shape)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape("GeneralConvTranspose", lhs_spec, rhs_spec, input_shape,
                                     out_chan, filter_shape)
        output_shape = _conv_output_shape("GeneralConvTranspose", dimension_numbers,
                                          input_shape, kernel_shape, strides, padding,
                                          transpose=True)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization over `axis` (statistics of the batch itself; no running averages).

    params (beta, gamma) have the shape of the input without `axis`; an absent one (center
    or scale False) is ().
    """
    axis = (axis,) if jnp.ndim(axis) == 0 else tuple(axis)

    def init_fun(rng, input_shape):
        rank = len(input_shape)
        axes = {a % rank for a in axis}
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return tuple(input_shape), (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        rank = jnp.ndim(x)
        axes = tuple(sorted({a % rank for a in axis}))
        # beta/gamma get size-1 dimensions at the normalized axes.
        expand = tuple(None if i in axes else slice(None) for i in range(rank))
        z = standardize(x, axes, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(name, reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over the spatial dimensions (all but N and C; NHWC by default)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        if len(strides) != len(window_shape):
            raise ValueError(f"[{name}] strides {strides} must have one entry per window "
                             f"dimension (window_shape {window_shape}).")
        spatial_window, spatial_strides = window_shape, strides
        if spec is None:
            non_spatial = (0, len(window_shape) + 1)
        else:
            _check_spec(name, spec, "NC", len(window_shape) + 2)
            non_spatial = (spec.index("N"), spec.index("C"))
        # Full-rank window and strides: 1 at the batch and channel dimensions.
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            if len(input_shape) != len(window_shape):
                raise ValueError(f"[{name}] input shape {tuple(input_shape)} must have "
                                 f"{len(window_shape)} dimensions (window {spatial_window} "
                                 "plus batch and channel).")
            pads = _padding_pairs(name, input_shape, window_shape, strides, padding)
            out = tuple(_window_out_size(n, w, s, lo, hi)
                        for n, w, s, (lo, hi) in zip(input_shape, window_shape, strides, pads))
            return out, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            if not average:
                return out
            # Divide by the number of in-bounds elements of each window (padding excluded).
            spatial_shape = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
            spatial_padding = padding
            if not isinstance(padding, str):  # full-rank pairs: keep the spatial ones
                spatial_padding = [tuple(p) for i, p in enumerate(padding)
                                   if i not in non_spatial]
            counts = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.0,
                                       lax.add, spatial_window, spatial_strides,
                                       spatial_padding)
            for i in sorted(non_spatial):
                counts = jnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", lax.max, -jnp.inf)
SumPool = _pooling_layer("SumPool", lax.add, 0.0)
AvgPool = _pooling_layer("AvgPool", lax.add, 0.0, average=True)


def _flatten():
    """Flattens every dimension but the leading (batch) one."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):
    """Copies its input into a list of `num` outputs (for parallel)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    """Sums a list of inputs of one shape."""
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """Concatenates a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout as JAX's stax defines it: `rate` is the probability of KEEPING an element;
    kept elements are divided by `rate`. mode='test' is the identity."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        if mode == "test":
            return inputs
        if mode != "train":
            raise ValueError("Dropout layer requires `mode` argument to be either `'train'` or "
                             f"`'test'`; got {mode!r}.")
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng=rng)` where `rng` is a PRNG key (e.g. from "
                "`jax.random.key`).")
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# ---- combinators ----

def serial(*layers):
    """Composes layers in sequence; params is a list with one entry per layer, and an rng
    given to apply_fun is split into one key per layer."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Applies layer k to input k of a sequence of inputs (use with FanOut / FanInSum)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(r[0] for r in results), tuple(r[1] for r in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """Delays building a layer until the input shape is known: make_layer(shape) returns the
    (init_fun, apply_fun) pair for that shape."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
