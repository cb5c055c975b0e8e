"""NumPy references for tessera::numpy's ufuncs (numpy_ufuncs.h) and manipulation/products
(numpy_manip.h), loaded by numpy_oracle.py.

  "np.ufunc":  {"fn": numpy name, "inexact": promote ints to float, "bool_out": result is bool,
                "int_ok": integers computed by NumPy in the promoted dtype}
               jnp's promotion (base.promote_inputs), then NumPy in float64 for floats (rounded
               once to the result dtype, transcendental tolerances) or in the dtype for ints.
  "np.manip":  {"fn": numpy name, "kwargs": {...}, "list": inputs passed as one list,
                "dtype": result dtype (default: the inputs' promoted dtype), "index": i (take
                element i of a list result), "float": compute in float64 and round}
"""

import numpy as np


def ops(base):
    def ufunc(p, ins, x64):
        xs, dt, weak = base.promote_inputs(ins, x64, inexact=bool(p.get("inexact")))
        fn = getattr(np, p["fn"])
        if base.is_float(dt) and p.get("native"):
            with np.errstate(all="ignore"):
                v = fn(*[np.asarray(x).astype(base.storage(dt)) for x in xs])
            return base.Result(v, dt, weak=weak)
        if base.is_float(dt):
            with np.errstate(all="ignore"):
                v = fn(*[base.to_f64(x) for x in xs])
            if p.get("bool_out"):
                return base.Result(np.asarray(v, bool), "bool", weak=False)
            rtol, atol = base.TRANSC_TOL[dt]
            return base.Result(base.round_to(v, dt), dt, weak=weak, rtol=rtol * 4, atol=atol * 4)
        if not p.get("int_ok", True):
            raise base.Skip("integer inputs")
        st = base.storage(dt)
        with np.errstate(all="ignore"):
            v = fn(*[np.asarray(x).astype(st) for x in xs])
        if p.get("bool_out"):
            return base.Result(np.asarray(v, bool), "bool", weak=False)
        return base.Result(np.asarray(v).astype(st), dt, weak=weak)

    def manip(p, ins, x64):
        xs, dt, _ = base.promote_inputs(ins, x64) if ins else ([], p.get("dtype"), False)
        st = base.storage(dt)
        arrs = [np.asarray(x).astype(st) for x in xs]
        if p.get("float"):
            arrs = [base.to_f64(a) for a in arrs]
        fn = getattr(np, p["fn"]) if "." not in p["fn"] else getattr(np.linalg, p["fn"][7:])
        kw = dict(p.get("kwargs") or {})
        for k, v in list(kw.items()):
            if isinstance(v, list):
                kw[k] = tuple(tuple(e) if isinstance(e, list) else e for e in v)
        with np.errstate(all="ignore"):
            lead = [p["prefix"]] if "prefix" in p else []
            if p.get("list"):
                v = fn(*lead, arrs, **kw)
            else:
                v = fn(*lead, *arrs, **kw)
        if "index" in p:
            v = v[p["index"]]
        out_dt = p.get("dtype") or dt
        if p.get("float"):
            rtol, atol = base.TRANSC_TOL[out_dt]
            if p.get("atol_of_max") and np.size(v):
                # Results of chained float32 adds whose intermediates reach max|v|: the
                # error is a few ulps of the largest magnitude (e.g. pad's odd reflection).
                atol = max(atol, 4 * float(np.finfo(np.float32).eps) * float(np.max(np.abs(v))))
            return base.Result(base.round_to(v, out_dt), out_dt, rtol=rtol * 4, atol=atol * 4)
        return base.Result(np.asarray(v).astype(base.storage(out_dt)), out_dt)

    def getitem(p, ins, x64):
        x = ins[0]["a"]
        idx = []
        for e in p["index"]:
            if e == "None":
                idx.append(None)
            elif e == "...":
                idx.append(Ellipsis)
            elif isinstance(e, int):
                idx.append(e)
            else:
                idx.append(slice(*e))
        try:
            v = x[tuple(idx)]
        except IndexError as err:
            raise base.JaxError("IndexError", str(err))
        return base.Result(np.array(v), ins[0]["dtype"])

    return {"np.ufunc": ufunc, "np.manip": manip, "np.getitem": getitem}
