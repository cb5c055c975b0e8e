"""jax.scipy.stats.gaussian_kde: a kernel density estimate with a Gaussian kernel whose
covariance is the (weighted) data covariance times factor^2 (Scott's or Silverman's rule, or a
given factor)."""
import math as _math

from tessera import numpy as _jnp
from tessera import random as _random
from tessera.scipy import special as _special
from tessera.tree_util import register_pytree_node_class as _register


def _log_gauss_sums(x, y, cov, weights):
    """log sum_j w_j N(x_i; y_j, cov) for every column x_i of x (d, m); y is (d, n)."""
    d = x.shape[0]
    chol = _jnp.linalg.cholesky(cov)
    diff = x.T[:, None, :] - y.T[None, :, :]
    # solve chol z = diff for every pair: z = diff @ inv(chol)^T
    white = _jnp.linalg.solve(chol, diff.reshape(-1, d).T).T.reshape(diff.shape)
    maha = _jnp.sum(white * white, axis=-1)
    log_det = 2 * _jnp.sum(_jnp.log(_jnp.diagonal(chol)))
    log_norm = -0.5 * (d * _math.log(2 * _math.pi) + log_det)
    return _special.logsumexp(-0.5 * maha + _jnp.log(weights)[None, :], axis=1) + log_norm


@_register
class gaussian_kde:
    """gaussian_kde(dataset (d, n) or (n,), bw_method='scott'|'silverman'|scalar|callable,
    weights=None). Attributes: dataset, weights, d, n, neff, factor, covariance, inv_cov."""

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = _jnp.atleast_2d(_jnp.asarray(dataset))
        if _jnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not _jnp.issubdtype(dataset.dtype, _jnp.floating):
            dataset = dataset.astype(_jnp.result_type(dataset.dtype, 1.0))
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            weights = _jnp.atleast_1d(_jnp.asarray(weights)).astype(dataset.dtype)
            weights = weights / _jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
            neff = 1 / _jnp.sum(weights ** 2)
        else:
            weights = _jnp.full(n, 1.0 / n, dtype=dataset.dtype)
            neff = _jnp.asarray(float(n), dataset.dtype)
        self.dataset, self.weights, self.neff = dataset, weights, neff
        if bw_method is None or bw_method == "scott":
            factor = neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif _jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = _jnp.asarray(bw_method, dataset.dtype)
        elif callable(bw_method):
            factor = _jnp.asarray(bw_method(self), dataset.dtype)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar or a "
                             "callable.")
        data_cov = _jnp.atleast_2d(_jnp.cov(dataset, rowvar=True, bias=False,
                                            aweights=weights))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = _jnp.linalg.inv(data_cov) / factor ** 2

    d = property(lambda self: self.dataset.shape[0])
    n = property(lambda self: self.dataset.shape[1])

    @property
    def factor(self):
        return _jnp.sqrt(self.covariance[0, 0] / _jnp.atleast_2d(
            _jnp.cov(self.dataset, rowvar=True, bias=False, aweights=self.weights))[0, 0])

    def _points(self, points):
        points = _jnp.atleast_2d(_jnp.asarray(points)).astype(self.dataset.dtype)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = points.reshape(self.d, 1)
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def logpdf(self, x):
        """The log density at the columns of x (d, m)."""
        return _log_gauss_sums(self._points(x), self.dataset, self.covariance, self.weights)

    def evaluate(self, points):
        return _jnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the Gaussian N(mean, cov)."""
        mean = _jnp.atleast_1d(_jnp.squeeze(_jnp.asarray(mean))).astype(self.dataset.dtype)
        cov = _jnp.atleast_2d(_jnp.asarray(cov)).astype(self.dataset.dtype)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        return _jnp.exp(_log_gauss_sums(mean[:, None], self.dataset, self.covariance + cov,
                                        self.weights)[0])

    def integrate_box_1d(self, low, high):
        """The estimate's mass between low and high (1-D data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        std = _jnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / std
        hi = (high - self.dataset[0]) / std
        return _jnp.sum(self.weights * (_special.ndtr(hi) - _special.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of this estimate and another of the same dimension."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        cov = self.covariance + other.covariance
        logs = _log_gauss_sums(other.dataset, self.dataset, cov, self.weights)
        return _jnp.sum(other.weights * _jnp.exp(logs))

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("gaussian_kde.integrate_box: the multivariate normal CDF it "
                                  "needs is not implemented (as in JAX)")

    def resample(self, key, shape=()):
        """Samples (d, *shape) drawn from the estimate: a data point chosen by weight plus
        kernel noise."""
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        k_choice, k_noise = _random.split(key)
        idx = _random.choice(k_choice, self.n, shape=shape, p=self.weights)
        noise = _random.multivariate_normal(k_noise, _jnp.zeros(self.d, self.dataset.dtype),
                                            self.covariance, shape=shape,
                                            dtype=self.dataset.dtype)
        return self.dataset[:, idx] + _jnp.moveaxis(noise, -1, 0)

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("gaussian_kde.set_bandwidth: construct a new gaussian_kde "
                                  "with the bw_method instead (the estimate is immutable, as "
                                  "in JAX)")

    def tree_flatten(self):
        return (self.dataset, self.weights, self.neff, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.dataset, obj.weights, obj.neff, obj.covariance, obj.inv_cov = children
        return obj
