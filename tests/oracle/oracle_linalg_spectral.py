"""NumPy references for the spectral linear algebra rows of the sweep
(tests/cpp/util/sweep_rows_linalg_spectral.cpp), in float64 from np.linalg, reduced to the
functions of the results that are unique: eigenvalues and squared eigenvector entries of the
symmetrized input (linalg.eigh, param out "w" / "vsq"), singular values and squared singular
vector entries (linalg.svd, out "s" / "usq" / "vsq", reduced), and the QR factors normalized to
a positive diagonal of R (linalg.qr, out "q" / "r", reduced).
"""

import numpy as np


def ops(base):
    Result = base.Result

    def tol(dt, scale):
        e = 1e-12 if dt == "float64" else 3e-5
        return dict(rtol=e * 10, atol=e * 10 * max(1.0, scale))

    def eigh(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        a = (a + np.swapaxes(a, -1, -2)) / 2
        w, v = np.linalg.eigh(a)
        out = w if p["out"] == "w" else v * v
        n = a.shape[-1]
        return Result(out.astype(base.storage(dt)), dt, **tol(dt, n * max(1.0, np.abs(a).max(
            initial=0.0))))

    def svd(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        m, n = a.shape[-2:]
        k = min(m, n)
        if a.size == 0:
            u = np.zeros(a.shape[:-2] + (m, k))
            s = np.zeros(a.shape[:-2] + (k,))
            vh = np.zeros(a.shape[:-2] + (k, n))
        else:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
        out = {"s": s, "usq": u * u, "vsq": vh * vh}[p["out"]]
        return Result(out.astype(base.storage(dt)), dt, **tol(dt, (m + n) * 4))

    def qr(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        m, n = a.shape[-2:]
        k = min(m, n)
        if a.size == 0:
            q = np.zeros(a.shape[:-2] + (m, k))
            r = np.zeros(a.shape[:-2] + (k, n))
        else:
            q, r = np.linalg.qr(a)
            d = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
            q = q * d[..., None, :]
            r = r * d[..., :, None]
        out = q if p["out"] == "q" else r
        return Result(out.astype(base.storage(dt)), dt, **tol(dt, (m + n) * 4))

    return {"linalg.eigh": eigh, "linalg.svd": svd, "linalg.qr": qr}
