"""jax.config: config.update("jax_enable_x64", True) and friends."""
from tessera import _tessera


class Config:
    """The options Tessera honours; unknown names raise AttributeError as JAX's do."""

    _known = ("jax_enable_x64",)

    def update(self, name, value):
        if name == "jax_enable_x64":
            _tessera.set_x64(bool(value))
            return
        raise AttributeError(f"Unrecognized config option: {name}")

    @property
    def jax_enable_x64(self):
        return _tessera.x64_enabled()

    @property
    def x64_enabled(self):
        return _tessera.x64_enabled()

    def read(self, name):
        if name == "jax_enable_x64":
            return _tessera.x64_enabled()
        raise AttributeError(f"Unrecognized config option: {name}")


config = Config()
