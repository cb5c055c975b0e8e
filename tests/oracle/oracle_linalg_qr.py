"""SciPy references for the raw Householder QR primitives (src/prims/linalg_householder.cpp;
sweep rows in tests/cpp/util/sweep_rows_linalg_qr.cpp, cases of tests/cpp/test_linalg_qr_raw.cpp):
LAPACK through scipy.linalg.lapack in float64, matrix by matrix over the leading dims.

  linalg.geqrf               dgeqrf(a): param out "h" (the factored matrix) or "taus"
  linalg.geqp3               dgeqp3(a) with every column free (the jpvt operand must be zero):
                             out "h", "jpvt" (1-based, LAPACK's) or "taus"
  linalg.householder_product dorgqr(a, taus)
  linalg.qr_pivoting         scipy.linalg.qr(a, pivoting=True, mode=p["mode"]): out "q", "r",
                             "p"; "full" / "economic" / "r" as SciPy; p["normalize"]: q's
                             first k columns and r's first k rows scaled by sign(diag r)
  linalg.qr_raw              numpy.linalg.qr(a, mode="raw") (out "h" / "tau", NumPy's
                             transposed h) or scipy.linalg.qr(a, mode="raw", pivoting=p["pivoting"])
                             (out "sh" / "stau" / "sr" / "sp": ((h, tau), R[, P]))
Empty matrices (which SciPy's wrappers refuse) get the values LAPACK's definitions give: nothing
to factor, Q the identity's leading columns, taus empty.

Pivoted references run in the input's precision (sgeqp3 for float32): the pivot choice is
discrete, and ?geqp3 downdates its partial column norms, which in float32 carry errors up to
about eps / sqrt(eps) relative, so a float64 run may legitimately pick another column where two
norms are within 1e-4 of each other. Everything else is computed in float64.
"""

import numpy as np


def ops(base):
    Result = base.Result
    from scipy.linalg import lapack
    import scipy.linalg as sl

    def tol(dt, scale):
        e = 1e-12 if dt == "float64" else 3e-5
        return dict(rtol=e * 10, atol=e * 10 * max(1.0, scale))

    def per_matrix(a, fn, outs):
        """fn(one matrix) -> tuple of arrays of shapes `outs`; stacked over a's leading dims."""
        batch = a.shape[:-2]
        count = int(np.prod(batch, dtype=np.int64))
        flat = a.reshape((count,) + a.shape[-2:])
        res = [fn(x) for x in flat]
        return [np.stack([r[i] for r in res]).reshape(batch + shp) if count
                else np.zeros(batch + shp) for i, shp in enumerate(outs)]

    def geqrf_one(x):
        m, n = x.shape
        if m == 0 or n == 0:
            return x.copy(), np.zeros(0)
        h, tau, _, info = lapack.dgeqrf(x)
        assert info == 0
        return h, tau

    def pivot_precision(a, dt):
        return a.astype(np.float32) if dt == "float32" else a

    def geqp3_one(x):
        m, n = x.shape
        if m == 0 or n == 0:  # LAPACK factors nothing; every column stays where it is
            return x.copy(), np.arange(1, n + 1, dtype=np.int32), np.zeros(0)
        h, jpvt, tau, _, info = (lapack.sgeqp3 if x.dtype == np.float32 else lapack.dgeqp3)(x)
        assert info == 0
        return h, jpvt.astype(np.int32), tau

    def geqrf(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        m, n = a.shape[-2:]
        k = min(m, n)
        h, tau = per_matrix(a, geqrf_one, [(m, n), (k,)])
        out = h if p["out"] == "h" else tau
        return Result(out.astype(base.storage(dt)), dt, **tol(dt, (m + n) * 4))

    def geqp3(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        assert not np.any(np.asarray(ins[1]["a"])), "geqp3's oracle takes free columns only"
        m, n = a.shape[-2:]
        k = min(m, n)
        h, jpvt, tau = per_matrix(pivot_precision(a, dt), geqp3_one, [(m, n), (n,), (k,)])
        if p["out"] == "jpvt":
            return Result(jpvt.astype(np.int32), "int32")
        out = h if p["out"] == "h" else tau
        return Result(out.astype(base.storage(dt)), dt, **tol(dt, (m + n) * 4))

    def householder_product(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        taus = np.asarray(ins[1]["a"], np.float64)
        dt = ins[0]["dtype"]
        m, n = a.shape[-2:]
        k = taus.shape[-1]
        count = int(np.prod(a.shape[:-2], dtype=np.int64))
        af, tf = a.reshape((count, m, n)), taus.reshape((count, k))
        q = np.zeros(af.shape)
        for i in range(count):
            if m == 0 or n == 0:
                continue
            if k == 0:
                q[i] = np.eye(m, n)
                continue
            q[i], _, info = lapack.dorgqr(af[i], tf[i])
            assert info == 0
        q = q.reshape(a.shape)
        scale = (m + n) * 4 * max(1.0, float(np.abs(taus).max(initial=0.0))) ** 2
        return Result(q.astype(base.storage(dt)), dt, **tol(dt, scale))

    def qr_pivoting(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        m, n = a.shape[-2:]
        k = min(m, n)
        mode = p["mode"]
        qc = m if mode in ("full", "r") else k

        def one(x):
            if m == 0 or n == 0:  # JAX's empty-matrix convention: p is zero
                return np.eye(m, qc), np.zeros((qc, n)), np.zeros(n, np.int32)
            if mode == "r":
                r, piv = sl.qr(x, mode="r", pivoting=True)
                return np.zeros((m, qc)), r, piv
            q, r, piv = sl.qr(x, mode=mode, pivoting=True)
            return q, r, piv

        q, r, piv = per_matrix(pivot_precision(a, dt), one, [(m, qc), (qc, n), (n,)])
        if p["out"] == "p":
            return Result(piv.astype(np.int32), "int32")
        if p.get("normalize") and k > 0:  # R's diagonal made positive (the sweep rows' form)
            d = np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., :k]
            q = q.copy()
            q[..., :, :k] *= d[..., None, :]
            r = r.copy()
            r[..., :k, :] *= d[..., :, None]
        out = q if p["out"] == "q" else r
        return Result(out.astype(base.storage(dt)), dt, **tol(dt, (m + n) * 4))

    def qr_raw(p, ins, x64):
        a = np.asarray(ins[0]["a"], np.float64)
        dt = ins[0]["dtype"]
        m, n = a.shape[-2:]
        k = min(m, n)
        o = p["out"]
        if o in ("h", "tau"):
            if a.size == 0:
                h, tau = np.swapaxes(a, -1, -2).copy(), np.zeros(a.shape[:-2] + (k,))
            else:
                h, tau = np.linalg.qr(a, mode="raw")
            out = h if o == "h" else tau
        else:
            piv = bool(p["pivoting"])

            def one(x):
                if m == 0 or n == 0:
                    return x.copy(), np.zeros(0), np.zeros((k, n)), np.arange(n, dtype=np.int32)
                res = sl.qr(x, mode="raw", pivoting=piv)
                (h, tau), r = res[0], res[1]
                return h, tau, r, (res[2] if piv else np.arange(n, dtype=np.int32))

            h, tau, r, pp = per_matrix(pivot_precision(a, dt) if piv else a, one,
                                       [(m, n), (k,), (k, n), (n,)])
            if o == "sp":
                return Result(pp.astype(np.int32), "int32")
            out = {"sh": h, "stau": tau, "sr": r}[o]
        return Result(np.ascontiguousarray(out).astype(base.storage(dt)), dt,
                      **tol(dt, (m + n) * 4))

    return {"linalg.geqrf": geqrf, "linalg.geqp3": geqp3,
            "linalg.householder_product": householder_product,
            "linalg.qr_pivoting": qr_pivoting, "linalg.qr_raw": qr_raw}
