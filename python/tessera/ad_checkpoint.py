"""jax.ad_checkpoint: checkpoint (remat), checkpoint_name, checkpoint_policies and the
saved-residuals utilities."""
from tessera._src.checkpoint import (
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    name_p,
    print_saved_residuals,
    remat,
    saved_residuals,
)

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "name_p",
           "print_saved_residuals", "remat", "saved_residuals"]
