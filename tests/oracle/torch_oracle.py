#!/usr/bin/python3
"""PyTorch oracle for Tessera's composition tests (tests/cpp/util/torch_oracle.{h,cpp}).

Usage: /usr/bin/python3 torch_oracle.py DIR

DIR/cases.json is a list of cases written by the C++ harness:
  {"id": 3, "key": "hvp/f64", "op": "hvp", "params": {...}, "inputs": ["in3_0.npy", ...]}
For every case this script computes the reference with torch autograd / functorch in the
inputs' dtype (float64 cases in float64, float32 cases in float32), writes each output to
DIR/out<id>_<k>.npy and one line per case to DIR/results.tsv:
  id <TAB> ok <TAB> number_of_outputs
  id <TAB> error <TAB> message            (a failure of this script for that case)

Each reference restates the function the C++ test writes with Tessera's lax/numpy ops; the
op table at the end maps each op name to its reference.
"""

import json
import os
import sys
import traceback

import numpy as np
import torch
import functorch as ft

torch.set_num_threads(1)


# ---------------------------------------------------------------- functions shared with C++


def f_scalar(x):
    # sin(x) * exp(x) / (1 + x^2)
    return torch.sin(x) * torch.exp(x) / (1 + x * x)


def f_tanh_sq(W, x):
    # R^n -> R: sum(tanh(W x))^2 + sum(sin(x) * x)
    return torch.sum(torch.tanh(W @ x)) ** 2 + torch.sum(torch.sin(x) * x)


def g_vec(W, x):
    # R^n -> R^m: tanh(W x) * sum(x * x) + exp(W x * 0.5)
    z = W @ x
    return torch.tanh(z) * torch.sum(x * x) + torch.exp(z * 0.5)


def loss_example(x, w):
    # per-example loss: sum(tanh(w x)^2) + log(1 + sum(x * x))
    return torch.sum(torch.tanh(w @ x) ** 2) + torch.log(1 + torch.sum(x * x))


def row_fn(r):
    # R^n -> R: log(sum(exp(r))) * tanh(sum(r * r))
    return torch.log(torch.sum(torch.exp(r))) * torch.tanh(torch.sum(r * r))


def uv_fn(u, v):
    # (k,), (k,) -> (k,): exp(u) * v - sum(u * v)
    return torch.exp(u) * v - torch.sum(u * v)


def pair_fn(x, w):
    # (n,), (m, n) -> ((m, n), (m, n))
    return torch.outer(torch.tanh(w @ x), x), w * torch.sum(x)


def f_hvp(A, x):
    # log(sum(exp(A x))) + sum(tanh(x)^2)
    return torch.log(torch.sum(torch.exp(A @ x))) + torch.sum(torch.tanh(x) ** 2)


def struct_loss(w, b, x, y):
    pred = torch.tanh(w @ x + b)
    err = pred - y
    return torch.mean(err * err), pred, torch.max(err)


def mlp_logits(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h1 = torch.tanh(x @ w1 + b1)
    h2 = torch.relu(h1 @ w2 + b2)
    return h2 @ w3 + b3


# ---------------------------------------------------------------- references


def ref_scalar_dd(ins, p):
    (xs,) = ins
    vals, d1, d2 = [], [], []
    for i in range(xs.shape[0]):
        x = xs[i].clone().requires_grad_(True)
        y = f_scalar(x)
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (gg,) = torch.autograd.grad(g, x)
        vals.append(y.detach())
        d1.append(g.detach())
        d2.append(gg)
    return [torch.stack(vals), torch.stack(d1), torch.stack(d2)]


def ref_hessian(ins, p):
    W, x, Xs, V = ins
    f = lambda v: f_tanh_sq(W, v)
    hvp = lambda z, t: ft.jvp(ft.grad(f), (z,), (t,))[1]
    return [
        ft.hessian(f)(x),
        ft.jacfwd(ft.jacrev(f))(x),
        ft.grad(f)(x),
        ft.vmap(ft.hessian(f))(Xs),
        ft.vmap(hvp)(Xs, V),
    ]


def ref_jac_vec(ins, p):
    W, x = ins
    g = lambda v: g_vec(W, v)
    return [ft.jacfwd(g)(x), ft.jacrev(g)(x), ft.jacfwd(ft.jacrev(g))(x)]


def ref_per_example(ins, p):
    X, W = ins
    gx = ft.vmap(ft.grad(loss_example), in_dims=(0, None))(X, W)
    gw = ft.vmap(ft.grad(loss_example, argnums=1), in_dims=(0, None))(X, W)
    # the gradient of the summed loss by the shared (unbatched) argument
    total = lambda w: torch.sum(ft.vmap(loss_example, in_dims=(0, None))(X, w))
    return [gx, gw, ft.grad(total)(W)]


def ref_grad_of_vmap(ins, p):
    (X,) = ins
    return [
        ft.grad(lambda Z: torch.sum(ft.vmap(row_fn)(Z)))(X),
        ft.vmap(row_fn)(X),
        ft.jacrev(ft.vmap(row_fn))(X),
    ]


def ref_vmap_vmap(ins, p):
    U, V = ins
    inner = ft.vmap(uv_fn, in_dims=(0, 1), out_dims=1)
    outer = ft.vmap(inner, in_dims=(1, 0), out_dims=0)
    return [outer(U, V)]


def ref_vmap_out_axes(ins, p):
    X, W = ins
    a, b = ft.vmap(pair_fn, in_dims=(0, None), out_dims=(1, -1))(X, W)
    return [a, b]


def ref_nested_dot(ins, p):
    X, Y, A, B = ins
    pairwise = ft.vmap(ft.vmap(torch.dot, in_dims=(None, 0)), in_dims=(0, None))(X, Y)
    batched = ft.vmap(ft.vmap(torch.dot))(A, B)
    return [pairwise, batched]


def ref_hvp(ins, p):
    A, x, v = ins
    f = lambda z: f_hvp(A, z)
    _, hv = ft.jvp(ft.grad(f), (x,), (v,))
    return [hv, ft.grad(f)(x)]


def ref_struct_aux(ins, p):
    w, b, x, y = [t.clone().requires_grad_(i < 3) for i, t in enumerate(ins)]
    loss, pred, mx = struct_loss(w, b, x, y)
    gw, gb, gx = torch.autograd.grad(loss, (w, b, x))
    return [loss.detach(), pred.detach(), mx.detach(), gw, gb, gx]


def ref_mlp(ins, p):
    params = [t.clone().requires_grad_(True) for t in ins[:6]]
    X, Y = ins[6], ins[7]
    logits = mlp_logits(params, X)
    loss = torch.nn.functional.cross_entropy(logits, torch.argmax(Y, dim=1))
    grads = torch.autograd.grad(loss, params)
    return [loss.detach()] + list(grads)


def ref_mlp_per_example(ins, p):
    params = tuple(ins[:6])
    X, Y = ins[6], ins[7]

    def loss1(ps, x, y):
        logp = torch.log_softmax(mlp_logits(ps, x), dim=-1)
        return -torch.sum(y * logp)

    grads = ft.vmap(ft.grad(loss1), in_dims=(None, 0, 0))(params, X, Y)
    return list(grads)


OPS = {
    "scalar_dd": ref_scalar_dd,
    "hessian": ref_hessian,
    "jac_vec": ref_jac_vec,
    "per_example": ref_per_example,
    "grad_of_vmap": ref_grad_of_vmap,
    "vmap_vmap": ref_vmap_vmap,
    "vmap_out_axes": ref_vmap_out_axes,
    "nested_dot": ref_nested_dot,
    "hvp": ref_hvp,
    "struct_aux": ref_struct_aux,
    "mlp": ref_mlp,
    "mlp_per_example": ref_mlp_per_example,
}


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)
    lines = []
    for c in cases:
        cid = c["id"]
        try:
            ins = [torch.from_numpy(np.load(os.path.join(d, name))) for name in c["inputs"]]
            outs = OPS[c["op"]](ins, c["params"])
            for k, o in enumerate(outs):
                # C order (Tessera reads no Fortran order); ascontiguousarray would make 0-d 1-d
                arr = np.array(o.detach().numpy(), order="C")
                np.save(os.path.join(d, "out%d_%d.npy" % (cid, k)), arr)
            lines.append("%d\tok\t%d" % (cid, len(outs)))
        except Exception as e:  # reported per case by the C++ side
            tb = traceback.extract_tb(e.__traceback__)[-1]
            msg = "%s: %s (line %d)" % (type(e).__name__, e, tb.lineno)
            lines.append("%d\terror\t%s" % (cid, msg.replace("\t", " ").replace("\n", " ")))
    with open(os.path.join(d, "results.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
