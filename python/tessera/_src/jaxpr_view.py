"""JAX's objects for reading a jaxpr: ClosedJaxpr.jaxpr and .eqns give a Jaxpr whose eqns are
JaxprEqns (primitive, params, invars, outvars), with Vars and Literals carrying their avals.
They are read-only snapshots built from the C++ jaxpr (ClosedJaxpr._view); names are the ones
the printed jaxpr shows, and sub-jaxprs in params are ClosedJaxprs again."""
from tessera import _tessera
from tessera._src import dtypes as _dtypes
from tessera._src.api import ShapeDtypeStruct


class ShapedArray(ShapeDtypeStruct):
    """An aval: shape, dtype and weak type, printed as JAX's f32[3]."""

    __slots__ = ()

    def str_short(self, short_dtypes=True):
        names = {"float": "f", "int": "i", "uint": "u", "bfloat": "bf", "bool": "bool"}
        d = str(self.dtype)
        for long, short in names.items():
            if d.startswith(long) and d[len(long):].isdigit():
                d = short + d[len(long):]
        return f"{d}[{','.join(str(s) for s in self.shape)}]"

    def __str__(self):
        return self.str_short()

    def __repr__(self):
        w = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{w})"


def _aval(t):
    shape, dtype, weak = t
    a = ShapedArray.__new__(ShapedArray)
    a.shape, a.weak_type = tuple(shape), bool(weak)
    try:
        a.dtype = _dtypes.dtype_of_name(dtype)
    except (TypeError, ValueError):  # extended dtypes (key<fry>) keep their name
        a.dtype = dtype
    return a


class Var:
    """A variable of a jaxpr (printed by its name; `_` for a dropped output). One object per
    variable of a Jaxpr, so `is`, == and dict keys work as in JAX."""

    __slots__ = ("_name", "aval")

    def __init__(self, name, aval):
        self._name, self.aval = name, aval

    def __repr__(self):
        return self._name


class DropVar(Var):
    __slots__ = ()


class Literal:
    """A rank-0 constant used by an equation: .val (an Array) and .aval."""

    __slots__ = ("val", "aval", "_text")

    def __init__(self, val, aval, text):
        self.val, self.aval, self._text = val, aval, text

    def __repr__(self):
        return f"{self._text}:{self.aval.str_short()}"


class Primitive:
    """An equation's primitive, by name (eqn.primitive.name == "add")."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Primitive) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _atom(t, names):
    """A Var (the one object `names` holds for its name) or a fresh Literal."""
    if t[0] == "lit":
        return Literal(t[1], _aval(t[2]), t[3])
    if t[1] == "_":
        return DropVar(t[1], _aval(t[2]))
    v = names.get(t[1])
    if v is None:
        v = names[t[1]] = Var(t[1], _aval(t[2]))
    return v


class JaxprEqn:
    """One equation: outvars = primitive[params] invars."""

    __slots__ = ("invars", "outvars", "primitive", "params", "effects", "_text")

    def __init__(self, d, names):
        self.invars = [_atom(a, names) for a in d["invars"]]
        self.outvars = [_atom(a, names) for a in d["outvars"]]
        self.primitive = Primitive(d["primitive"])
        self.params = dict(d["params"])
        self.effects = set(d["effects"])
        self._text = d["text"]

    def __repr__(self):
        return self._text


class Jaxpr:
    """constvars, invars, eqns and outvars of a traced function."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "effects", "_text")

    def __init__(self, d):
        names = {}
        self.constvars = [_atom(a, names) for a in d["constvars"]]
        self.invars = [_atom(a, names) for a in d["invars"]]
        self.eqns = [JaxprEqn(e, names) for e in d["eqns"]]
        self.outvars = [_atom(a, names) for a in d["outvars"]]
        self.effects = set(d["effects"])
        self._text = d["text"]

    def __str__(self):
        return self._text

    __repr__ = __str__

    def pretty_print(self, **kwargs):
        return self._text

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]


ClosedJaxpr = _tessera.ClosedJaxpr


def _closed_jaxpr(self):
    # Built once per ClosedJaxpr object (immutable): an interpreter's loop over .jaxpr.eqns
    # does not rebuild the view.
    j = self.__dict__.get("_jaxpr_view")
    if j is None:
        j = self._jaxpr_view = Jaxpr(self._view())
    return j


ClosedJaxpr.jaxpr = property(_closed_jaxpr, doc="The Jaxpr (constvars bound to .consts).")
ClosedJaxpr.eqns = property(lambda self: _closed_jaxpr(self).eqns, doc="jaxpr.eqns")
ClosedJaxpr.literals = property(lambda self: self.consts, doc="The constants (JAX's name).")
ClosedJaxpr.effects = property(lambda self: _closed_jaxpr(self).effects)
