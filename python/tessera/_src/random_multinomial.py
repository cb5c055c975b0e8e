"""jax.random.multinomial: counts of n draws over the categories of p (the last axis), JAX's
algorithm: the categories in order, each count a binomial draw of what remains with probability
p_i / (the mass of the categories not yet drawn), one key per category from split(key, k), a scan
over the categories. Equal to JAX's in distribution (binomial's note applies)."""


def multinomial(key, n, p, *, shape=None, dtype=float, unroll=1):
    from tessera import lax
    from tessera import numpy as jnp
    from tessera import random
    p = jnp.asarray(p)
    n = jnp.asarray(n)
    if p.ndim < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories), "
                         f"got shape {tuple(p.shape)}.")
    dt = jnp.result_type(n, p, float)
    n, p = n.astype(dt), p.astype(dt)
    if shape is None:
        shape = tuple(p.shape)
    else:
        shape = tuple(int(s) for s in shape)
        if len(shape) < 1 or shape[-1] != p.shape[-1]:
            raise ValueError(f"multinomial: shape {shape} must end with the number of categories "
                             f"{p.shape[-1]} of p.")
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)
    p = jnp.moveaxis(p, -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = random.split(key, ratios.shape[0])

    def step(rest, ratio_key):
        ratio, k = ratio_key
        count = random.binomial(k, rest, jnp.clip(ratio, 0, 1), dtype=rest.dtype)
        return rest - count, count

    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
