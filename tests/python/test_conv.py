"""lax.conv_general_dilated and its wrappers against PyTorch (torch.nn.functional.conv1d/2d/3d,
conv_transpose2d, unfold) on fresh random inputs, after layout conversion: strides, padding,
dilation, feature groups (depthwise), batch groups through the gradients; gradients against
torch autograd; a JAX-style NHWC CNN's loss and gradients under jit."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _t(x):
    return torch.tensor(np.asarray(x))


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("stride,pad,dil,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1),
                                                   (2, 1, 1, 2), (1, 1, 2, 4)])
def test_conv_nd_vs_torch(rng, x64, nd, stride, pad, dil, groups):
    cin, cout = 4, 4 * (2 if groups == 4 else 1)
    sizes = {1: (11,), 2: (9, 8), 3: (6, 5, 7)}[nd]
    ks = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}[nd]
    x = rng.standard_normal((2, cin) + sizes)
    w = rng.standard_normal((cout, cin // groups) + ks)
    got = lax.conv_general_dilated(x, w, (stride,) * nd, [(pad, pad)] * nd,
                                   rhs_dilation=(dil,) * nd, feature_group_count=groups)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    want = conv(_t(x), _t(w), stride=stride, padding=pad, dilation=dil, groups=groups)
    assert got.shape == tuple(want.shape)
    _close(got, want.numpy())


def test_nhwc_hwio_layouts_vs_torch(rng):
    x = rng.standard_normal((3, 10, 9, 6)).astype(np.float32)  # NHWC
    w = rng.standard_normal((3, 3, 3, 8)).astype(np.float32)   # HWIO, 2 groups of 3 channels
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    got = lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                   feature_group_count=2)
    # SAME, in 10, window 3, stride 2: 5 outputs, total pad 1 -> (0, 1); width: (1, 1).
    xt = F.pad(_t(x).permute(0, 3, 1, 2), (1, 1, 0, 1))
    want = F.conv2d(xt, _t(w).permute(3, 2, 0, 1), stride=(2, 1), groups=2).permute(0, 2, 3, 1)
    _close(got, want.numpy(), 1e-4)
    # The same through a ConvDimensionNumbers and lists.
    again = lax.conv_general_dilated(x, w, [2, 1], [[0, 1], [1, 1]], dimension_numbers=dn,
                                     feature_group_count=2)
    _close(again, got, 0)


def test_depthwise_vs_torch(rng, x64):
    x = rng.standard_normal((2, 5, 7, 7))
    w = rng.standard_normal((10, 1, 3, 3))  # channel multiplier 2
    got = lax.conv_general_dilated(x, w, (1, 1), [(1, 1), (1, 1)], feature_group_count=5)
    _close(got, F.conv2d(_t(x), _t(w), padding=1, groups=5).numpy())


@pytest.mark.parametrize("stride,pad,dil", [(1, 0, 1), (2, 1, 1), (3, 1, 2), (2, 0, 2)])
def test_conv_transpose2d_vs_torch(rng, x64, stride, pad, dil):
    x = rng.standard_normal((2, 4, 5, 6))
    w = rng.standard_normal((4, 3, 3, 2))  # torch: (in, out, kh, kw)
    got = lax.conv_transpose(x, w, (stride, stride), [(pad, pad), (pad, pad)],
                             rhs_dilation=(dil, dil), dimension_numbers=("NCHW", "OIHW", "NCHW"),
                             transpose_kernel=True, use_consistent_padding=True)
    want = F.conv_transpose2d(_t(x), _t(w), stride=stride, padding=pad, dilation=dil)
    assert got.shape == tuple(want.shape)
    _close(got, want.numpy())


@pytest.mark.parametrize("stride,pad,dil,groups", [(1, 1, 1, 1), (2, 0, 1, 2), (2, 2, 2, 1),
                                                   (1, 1, 1, 6)])
def test_grads_vs_torch_autograd(rng, x64, stride, pad, dil, groups):
    x = rng.standard_normal((3, 6, 9, 7))
    w = rng.standard_normal((6, 6 // groups, 3, 3))
    out_shape = lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                         rhs_dilation=(dil, dil),
                                         feature_group_count=groups).shape
    g = rng.standard_normal(out_shape)

    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                     rhs_dilation=(dil, dil), feature_group_count=groups)
        return jnp.sum(jnp.tanh(y) * g)

    gx, gw = jax.grad(loss, argnums=(0, 1))(x, w)
    xt, wt = _t(x).requires_grad_(), _t(w).requires_grad_()
    y = F.conv2d(xt, wt, stride=stride, padding=pad, dilation=dil, groups=groups)
    (torch.tanh(y) * _t(g)).sum().backward()
    _close(gx, xt.grad.numpy(), 1e-9)
    _close(gw, wt.grad.numpy(), 1e-9)
    # The same under jit.
    jx, jw = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    _close(jx, gx, 1e-12)
    _close(jw, gw, 1e-12)


def test_nhwc_cnn_forward_and_grad_under_jit(rng):
    """A JAX-style CNN: NHWC/HWIO convolutions with SAME padding, relu, a strided conv, global
    average pooling and a dense layer; loss and gradients under jit against torch."""
    dn = ("NHWC", "HWIO", "NHWC")
    params = {"c1": rng.standard_normal((3, 3, 3, 8)).astype(np.float32) * 0.3,
              "c2": rng.standard_normal((3, 3, 8, 16)).astype(np.float32) * 0.2,
              "d": rng.standard_normal((16, 5)).astype(np.float32) * 0.3}
    x = rng.standard_normal((4, 8, 8, 3)).astype(np.float32)
    labels = rng.integers(0, 5, size=4)

    def loss(p, x):
        h = jax.nn.relu(lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME",
                                                 dimension_numbers=dn))
        h = jax.nn.relu(lax.conv_general_dilated(h, p["c2"], (2, 2), "SAME",
                                                 dimension_numbers=dn))
        logits = jnp.mean(h, axis=(1, 2)) @ p["d"]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(logp[jnp.arange(4), labels])

    value, grads = jax.jit(jax.value_and_grad(loss))(params, x)

    P = {k: _t(v).requires_grad_() for k, v in params.items()}
    h = F.relu(F.conv2d(_t(x).permute(0, 3, 1, 2), P["c1"].permute(3, 2, 0, 1), padding=1))
    h = F.relu(F.conv2d(F.pad(h, (0, 1, 0, 1)), P["c2"].permute(3, 2, 0, 1), stride=2))
    logits = h.mean(dim=(2, 3)) @ P["d"]
    ref = F.cross_entropy(logits, torch.tensor(labels))
    ref.backward()
    _close(value, ref.item(), 1e-5)
    for k in params:
        _close(grads[k], P[k].grad.numpy(), 1e-5)


def test_vmap_over_kernels_and_inputs(rng, x64):
    x = rng.standard_normal((3, 2, 4, 7, 6))  # a vmapped axis of 3 over NCHW inputs
    w = rng.standard_normal((3, 6, 2, 3, 3))  # and over kernels (2 feature groups)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 2), [(1, 0), (2, 1)], feature_group_count=2)

    for in_axes in [(0, 0), (0, None), (None, 0)]:
        xs = x if in_axes[0] == 0 else x[0]
        ws = w if in_axes[1] == 0 else w[0]
        got = jax.vmap(f, in_axes=in_axes)(xs, ws)
        want = np.stack([np.asarray(f(xs[i] if in_axes[0] == 0 else xs,
                                      ws[i] if in_axes[1] == 0 else ws)) for i in range(3)])
        _close(got, want, 1e-12)


def test_patches_vs_torch_unfold(rng, x64):
    x = rng.standard_normal((2, 3, 7, 6))
    got = lax.conv_general_dilated_patches(x, (3, 2), (2, 1), [(1, 1), (0, 1)],
                                           rhs_dilation=(1, 2))
    want = F.unfold(F.pad(_t(x), (0, 1, 1, 1)), (3, 2), dilation=(1, 2), stride=(2, 1))
    assert got.shape[:2] == (2, 18)
    _close(np.asarray(got).reshape(2, 18, -1), want.numpy())


def test_preferred_element_type_and_dtypes(rng):
    x = rng.standard_normal((1, 2, 6)).astype(np.float16)
    w = rng.standard_normal((3, 2, 3)).astype(np.float16)
    y16 = lax.conv(x, w, (1,), "VALID")
    y32 = lax.conv(x, w, (1,), "VALID", preferred_element_type=jnp.float32)
    assert y16.dtype == jnp.float16 and y32.dtype == jnp.float32
    want = F.conv1d(_t(x.astype(np.float32)), _t(w.astype(np.float32))).numpy()
    _close(y32, want, 1e-5)
    _close(np.asarray(y16).astype(np.float32), want, 5e-3)
    xi = rng.integers(-5, 5, size=(1, 2, 6)).astype(np.int32)
    wi = rng.integers(-5, 5, size=(3, 2, 3)).astype(np.int32)
    yi = lax.conv(xi, wi, (1,), "VALID")
    assert yi.dtype == jnp.int32
    np.testing.assert_array_equal(
        np.asarray(yi), F.conv1d(_t(xi).double(), _t(wi).double()).numpy().astype(np.int32))


def test_errors(rng):
    x = np.zeros((1, 4, 5, 5), np.float32)
    w = np.zeros((2, 3, 3, 3), np.float32)
    with pytest.raises(ValueError, match="lhs feature dimension size divided by"):
        lax.conv(x, w, (1, 1), "VALID")
    with pytest.raises(ValueError, match="should be a string or a sequence of"):
        lax.conv(x, w, (1, 1), 3)
    with pytest.raises(TypeError, match="must be length 3"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW"))
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                 dimension_numbers=("NCHW", "OOHW", "NCHW"))
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(ValueError, match="Negative padding is larger"):
        lax.conv_general_dilated(x, np.zeros((2, 4, 3, 3), np.float32), (1, 1),
                                 [(-3, -3), (0, 0)])
