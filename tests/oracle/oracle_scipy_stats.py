"""SciPy references for jax.scipy.stats (tessera/scipy_stats.h, tests/cpp/test_scipy_stats.cpp).

Each distribution op "scipy.stats.<dist>.<fn>" takes the function's array arguments in JAX's
order (x, shape parameters, loc, scale), promotes them as JAX's promote_args_inexact (the
result dtype: the inputs' jnp result type, made inexact), evaluates scipy.stats.<dist>.<fn> in
float64 from the promoted values and rounds once to the result dtype. The C++ test draws its
random inputs where SciPy's and JAX's definitions agree (valid parameters, integer counts for
the discrete laws, points on the simplex for dirichlet); the places where JAX deliberately
differs from SciPy (NaN for invalid parameters, -inf off the support) are checked against
hand-derived values in the C++ test instead.

Other ops: scipy.stats.multivariate_normal.{logpdf,pdf} (x [..., n], mean [n], cov [n, n]),
scipy.stats.dirichlet.{logpdf,pdf}, scipy.stats.multinomial.{logpmf,pmf} (dtype from p),
scipy.stats.mode.{value,count}, scipy.stats.rankdata, scipy.stats.sem and
scipy.stats.gaussian_kde.logpdf (inputs dataset, weights, points; param bw).

Tolerances (|got - want| <= atol + rtol |want|): Tessera composes float32 ops in float32 (as
JAX does), so float32 carries a few ulps of each step, more for the incomplete gamma/beta
functions and lgamma differences; float64 is checked to 1e-9 relative.
"""

import numpy as np
import scipy.special as ss
import scipy.stats as st

TOL = {"float32": (5e-5, 2e-6), "float64": (1e-9, 1e-12)}
# looser float32 tolerances where the composition amplifies rounding (incomplete gamma/beta,
# lgamma differences, log of a difference of cdfs)
F32_LOOSE = {
    "gamma": (5e-4, 1e-5), "chi2": (5e-4, 1e-5), "beta": (5e-4, 1e-5), "t": (2e-4, 1e-5),
    "truncnorm": (5e-4, 1e-5), "gennorm": (5e-4, 1e-5), "poisson": (5e-4, 1e-5),
    "binom": (2e-4, 1e-5), "nbinom": (2e-4, 1e-5), "betabinom": (5e-4, 2e-5),
    "vonmises": (2e-4, 1e-5), "wrapcauchy": (2e-4, 1e-5), "dirichlet": (5e-4, 1e-4),
    "multinomial": (2e-4, 1e-5), "multivariate_normal": (5e-4, 1e-4),
    "gaussian_kde": (5e-4, 1e-4),
}
F64_LOOSE = {"gaussian_kde": (1e-8, 1e-10), "multivariate_normal": (1e-8, 1e-10),
             "truncnorm": (1e-8, 1e-12), "beta": (1e-8, 1e-12), "betabinom": (1e-8, 1e-12)}

UNIVARIATE = {
    "norm": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"],
    "logistic": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"],
    "cauchy": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"],
    "expon": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"],
    "laplace": ["logpdf", "pdf", "cdf"],
    "uniform": ["logpdf", "pdf", "cdf", "ppf"],
    "gumbel_l": ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf"],
    "gumbel_r": ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf"],
    "gamma": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "chi2": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "t": ["logpdf", "pdf"],
    "pareto": ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf"],
    "beta": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "truncnorm": ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"],
    "gennorm": ["logpdf", "pdf", "cdf"],
    "vonmises": ["logpdf", "pdf"],
    "wrapcauchy": ["logpdf", "pdf"],
    "bernoulli": ["logpmf", "pmf", "cdf", "ppf"],
    "poisson": ["logpmf", "pmf", "cdf", "entropy"],
    "geom": ["logpmf", "pmf"],
    "binom": ["logpmf", "pmf"],
    "nbinom": ["logpmf", "pmf"],
    "betabinom": ["logpmf", "pmf"],
}


def ops(base):
    def tol(dist, dt):
        if dt == "float32":
            return F32_LOOSE.get(dist, TOL[dt])
        return F64_LOOSE.get(dist, TOL[dt])

    def check_float_inputs(ins):
        for i in ins:
            if i["dtype"] == "bfloat16" or i["dtype"] == "float16":
                raise base.Skip("16-bit floats are not compared here")

    def result(dist, v, dt, fn=None):
        rtol, atol = tol(dist, dt)
        if fn == "entropy":  # JAX's sums are truncated, its large-mu form asymptotic
            rtol, atol = 2e-5, 1e-6
        return base.Result(base.round_to(v, dt), dt, rtol=rtol, atol=atol)

    def univariate(dist, fn):
        def f(p, ins, x64):
            check_float_inputs(ins)
            xs, dt, _ = base.promote_inputs(ins, x64, inexact=True)
            args = np.broadcast_arrays(*[base.to_f64(x) for x in xs])
            if args[0].size == 0:  # some SciPy methods (poisson.entropy's vectorize) refuse
                return result(dist, np.zeros(args[0].shape), dt, fn)
            with np.errstate(all="ignore"):
                v = getattr(getattr(st, dist), fn)(*args)
            return result(dist, np.asarray(v, np.float64).reshape(args[0].shape), dt, fn)
        return f

    def mvn(fn):
        def f(p, ins, x64):
            xs, dt, _ = base.promote_inputs(ins, x64, inexact=True)
            x, mean, cov = [base.to_f64(a) for a in xs]
            v = getattr(st.multivariate_normal, fn)(x, mean, cov)
            return result("multivariate_normal", np.asarray(v).reshape(x.shape[:-1]), dt)
        return f

    def dirichlet(fn):
        def f(p, ins, x64):
            xs, dt, _ = base.promote_inputs(ins, x64, inexact=True)
            x, alpha = [base.to_f64(a) for a in xs]
            out_shape = x.shape[1:]
            if x.shape[0] == alpha.shape[0] - 1:
                x = np.concatenate([x, (1 - x.sum(0))[None]], 0)
            # SciPy insists on sums within ~1e-15 of 1: points rounded to float32 are
            # renormalized in float64 (a change of ~1e-7 relative, inside the tolerance)
            x2 = x.reshape(x.shape[0], -1)
            x2 = x2 / x2.sum(0)
            v = np.array([getattr(st.dirichlet, fn)(x2[:, j], alpha) for j in
                          range(x2.shape[1])])
            return result("dirichlet", v.reshape(out_shape), dt)
        return f

    def multinomial(fn):
        def f(p, ins, x64):
            for i in ins[:2]:
                if not base.is_int(i["dtype"]):
                    raise base.JaxError("ValueError", "x and n must be of integer type")
            _, dt, _ = base.promote_inputs(ins[2:], x64, inexact=True)
            x = np.asarray(ins[0]["a"]).astype(np.int64)
            n = np.asarray(ins[1]["a"]).astype(np.int64)
            pr = base.to_f64(base.convert(ins[2]["a"], ins[2]["dtype"], dt))
            n = np.broadcast_to(n, x.shape[:-1])
            with np.errstate(all="ignore"):
                v = np.array([getattr(st.multinomial, fn)(xi, ni, pr) for xi, ni in
                              zip(x.reshape(-1, x.shape[-1]), n.ravel())])
                # JAX: -inf (0) where the counts do not sum to n; SciPy agrees
            return result("multinomial", v.reshape(x.shape[:-1]), dt)
        return f

    def mode(part):
        def f(p, ins, x64):
            a = np.asarray(ins[0]["a"])
            axis = p.get("axis")
            keepdims = bool(p.get("keepdims", False))
            r = st.mode(a, axis=axis, keepdims=keepdims)
            if part == "value":
                return base.Result(np.asarray(r.mode).astype(base.storage(ins[0]["dtype"])),
                                   ins[0]["dtype"])
            return base.Result(np.asarray(r.count).astype(np.int32), "int32")
        return f

    def rankdata(p, ins, x64):
        a = base.to_f64(ins[0]["a"])
        method = p.get("method", "average")
        v = st.rankdata(a, method=method, axis=p.get("axis"))
        if method == "average":
            dt = base.canonicalize("float64", x64)
            return base.Result(base.round_to(v, dt), dt)
        dt = base.canonicalize("int64", x64)
        return base.Result(np.asarray(v).astype(dt), dt)

    def sem(p, ins, x64):
        dt = base.to_inexact(ins[0]["dtype"], x64)
        a = base.to_f64(base.convert(ins[0]["a"], ins[0]["dtype"], dt))
        v = st.sem(a, axis=p.get("axis", 0), ddof=p.get("ddof", 1),
                   nan_policy=p.get("nan_policy", "propagate"))
        if p.get("keepdims"):
            ax = p.get("axis", 0)
            v = np.expand_dims(v, tuple(range(a.ndim)) if ax is None else ax)
        return result("sem", np.asarray(v, np.float64), dt)

    def kde_logpdf(p, ins, x64):
        dt = ins[0]["dtype"]
        data, w, pts = [base.to_f64(i["a"]) for i in ins]
        bw = p.get("bw", "scott")
        k = st.gaussian_kde(data, bw_method=bw, weights=w)
        return result("gaussian_kde", k.logpdf(pts), dt)

    out = {}
    for dist, fns in UNIVARIATE.items():
        for fn in fns:
            out["scipy.stats.%s.%s" % (dist, fn)] = univariate(dist, fn)
    for fn in ("logpdf", "pdf"):
        out["scipy.stats.multivariate_normal." + fn] = mvn(fn)
        out["scipy.stats.dirichlet." + fn] = dirichlet(fn)
    for fn in ("logpmf", "pmf"):
        out["scipy.stats.multinomial." + fn] = multinomial(fn)
    out["scipy.stats.mode.value"] = mode("value")
    out["scipy.stats.mode.count"] = mode("count")
    out["scipy.stats.rankdata"] = rankdata
    out["scipy.stats.sem"] = sem
    out["scipy.stats.gaussian_kde.logpdf"] = kde_logpdf
    return out
