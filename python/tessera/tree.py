"""The jax.tree namespace: short names for the functions of tessera.tree_util.

    import tessera as jax
    jax.tree.map(lambda x: 2 * x, params)
"""

from tessera.tree_util import tree_all as all  # noqa: A001
from tessera.tree_util import tree_broadcast as broadcast
from tessera.tree_util import tree_flatten as flatten
from tessera.tree_util import tree_flatten_with_path as flatten_with_path
from tessera.tree_util import tree_leaves as leaves
from tessera.tree_util import tree_leaves_with_path as leaves_with_path
from tessera.tree_util import tree_map as map  # noqa: A001
from tessera.tree_util import tree_map_with_path as map_with_path
from tessera.tree_util import tree_reduce as reduce
from tessera.tree_util import tree_reduce_associative as reduce_associative
from tessera.tree_util import tree_structure as structure
from tessera.tree_util import tree_transpose as transpose
from tessera.tree_util import tree_unflatten as unflatten

__all__ = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "reduce_associative", "structure", "transpose", "unflatten",
]
