"""jax.scipy.stats.gaussian_kde: a kernel density estimate with a Gaussian kernel whose
covariance is the (weighted) data covariance times factor^2 (Scott's or Silverman's rule, or a
given factor).

The estimate's arithmetic is C++ (tessera::scipy::stats::GaussianKDE, tessera/scipy_stats.h);
this class holds its five array fields (a pytree) and passes them to it."""
from tessera import numpy as _jnp
from tessera.scipy.stats._util import C as _C
from tessera.tree_util import register_pytree_node_class as _register

_K = _C.gaussian_kde


@_register
class gaussian_kde:
    """gaussian_kde(dataset (d, n) or (n,), bw_method='scott'|'silverman'|scalar|callable,
    weights=None). Attributes: dataset, weights, d, n, neff, factor, covariance, inv_cov."""

    def __init__(self, dataset, bw_method=None, weights=None):
        if _jnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if bw_method is None:
            bw = "scott"
        elif isinstance(bw_method, str):
            bw = bw_method
        elif _jnp.isscalar(bw_method):
            bw = _jnp.asarray(bw_method)
        elif callable(bw_method):
            bw = None  # needs the estimate: made with Scott's factor first, then remade
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar or a "
                             "callable.")
        self._set(_K.make(dataset, "scott" if bw is None else bw, weights))
        if bw is None:
            self._set(_K.make(dataset, _jnp.asarray(bw_method(self)), weights))

    def _set(self, fields):
        self.dataset, self.weights, self.neff, self.covariance, self.inv_cov = fields

    def _fields(self):
        return (self.dataset, self.weights, self.neff, self.covariance, self.inv_cov)

    d = property(lambda self: self.dataset.shape[0])
    n = property(lambda self: self.dataset.shape[1])

    @property
    def factor(self):
        return _K.factor(self._fields())

    def logpdf(self, x):
        """The log density at the columns of x (d, m)."""
        return _K.logpdf(self._fields(), x)

    def evaluate(self, points):
        return _jnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the Gaussian N(mean, cov)."""
        return _K.integrate_gaussian(self._fields(), mean, cov)

    def integrate_box_1d(self, low, high):
        """The estimate's mass between low and high (1-D data only)."""
        return _K.integrate_box_1d(self._fields(), low, high)

    def integrate_kde(self, other):
        """The integral of the product of this estimate and another of the same dimension."""
        return _K.integrate_kde(self._fields(), other._fields())

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("gaussian_kde.integrate_box: the multivariate normal CDF it "
                                  "needs is not implemented (as in JAX)")

    def resample(self, key, shape=()):
        """Samples (d, *shape) drawn from the estimate: a data point chosen by weight plus
        kernel noise."""
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        return _K.resample(self._fields(), key, shape)

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("gaussian_kde.set_bandwidth: construct a new gaussian_kde "
                                  "with the bw_method instead (the estimate is immutable, as "
                                  "in JAX)")

    def tree_flatten(self):
        return self._fields(), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj._set(children)
        return obj
