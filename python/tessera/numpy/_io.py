"""jnp.save / jnp.load / jnp.savez / jnp.savez_compressed over Tessera's C++ .npy/.npz code
(tessera/io.h): NumPy's file formats, byte-identical .npy files and .npz members, bfloat16 saved
as '<V2' (JAX's and ml_dtypes' convention, which jax.numpy.load reads back as bfloat16).

Differences from JAX, which calls NumPy: files are parsed by Tessera's hardened reader (a
malformed file raises ValueError/TypeError naming the file, never a crash); pickled data and object
arrays are never read or written (allow_pickle only changes the error message); an .npz file is
read whole when opened, so its arrays are Tessera arrays (canonicalized like .npy results) and
closing it only marks it closed."""
import collections.abc as _abc
import os as _os

from tessera import _tessera

_C = _tessera.io

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_PREFIXES = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first member, or an empty zip
_MMAP_MODES = (None, "r", "r+", "w+", "c", "readonly", "readwrite", "write", "copyonwrite")


def save(file, arr, allow_pickle=True, fix_imports=True):
    """np.save: writes `arr` to `file` in .npy format (".npy" is appended to a path lacking it;
    a file object gets the bytes written at its position). Tessera arrays are saved with their
    dtype (bfloat16 as '<V2'); other array-likes as np.asarray makes them, exact dtype kept, as
    np.save does, but in native byte order and C order (np.save would keep a big-endian
    descriptor or fortran_order True: the values are the same, the bytes differ). The write to a
    path is atomic (temporary file, fsync, rename). Object arrays
    raise TypeError (Tessera never pickles, whatever allow_pickle says). fix_imports only
    concerns pickles and is accepted for compatibility."""
    del allow_pickle, fix_imports
    if hasattr(file, "write"):
        file.write(_C.save_npy_bytes(arr))
        return
    path = _os.fsdecode(_os.fspath(file))
    if not path.endswith(".npy"):
        path += ".npy"
    _C.save_npy(path, arr)


def _savez(file, args, kwds, compressed):
    namedict = dict(kwds)
    for i, val in enumerate(args):
        key = "arr_%d" % i
        if key in namedict:
            raise ValueError("Cannot use un-named variables and keyword %s" % key)
        namedict[key] = val
    items = list(namedict.items())
    if hasattr(file, "write"):
        file.write(_C.save_npz_bytes(items, compressed))
        return
    path = _os.fsdecode(_os.fspath(file))
    if not path.endswith(".npz"):
        path += ".npz"
    _C.save_npz(path, items, compressed)


def savez(file, *args, **kwds):
    """np.savez: several arrays in one uncompressed .npz archive (".npz" appended to a path
    lacking it). Positional arrays are named arr_0, arr_1, ...; keyword arrays keep their names.
    Each member "<name>.npy" holds exactly the bytes jnp.save writes."""
    _savez(file, args, kwds, False)


def savez_compressed(file, *args, **kwds):
    """np.savez_compressed: like savez, with deflated members."""
    _savez(file, args, kwds, True)


class NpzFile(_abc.Mapping):
    """What load returns for an .npz file: a read-only mapping from array names to Tessera arrays
    (np.load's NpzFile: `files`, keys with or without ".npy", close() and `with` support)."""

    def __init__(self, items, name):
        self._arrays = dict(items)
        self.files = [k for k, _ in items]
        self._name = name
        self.closed = False

    def __getitem__(self, key):
        if self.closed:
            raise ValueError("I/O operation on a closed NpzFile (%r)" % self._name)
        if key in self._arrays:
            return self._arrays[key]
        if isinstance(key, str) and key.endswith(".npy") and key[:-4] in self._arrays:
            return self._arrays[key[:-4]]
        raise KeyError("%s is not a file in the archive" % key)

    def __contains__(self, key):
        return key in self._arrays or (isinstance(key, str) and key.endswith(".npy")
                                       and key[:-4] in self._arrays)

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)

    def close(self):
        self.closed = True
        self._arrays = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "NpzFile %r with keys: %s" % (self._name, ", ".join(self.files[:5]) +
                                             ("..." if len(self.files) > 5 else ""))


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
         max_header_size=10000):
    """jnp.load: a .npy file gives a Tessera array (64-bit dtypes canonicalized to 32 bits unless
    x64 is enabled, as jnp.load's asarray does; '<V2' data is bfloat16), an .npz file an NpzFile
    mapping names to such arrays. `file` is a path (str, bytes, os.PathLike) or a file object,
    read from its position to the end. The data is always copied into Tessera arrays, so
    mmap_mode only selects NumPy's read path there and is accepted (validated) for
    compatibility. Pickled files and object arrays are refused whatever allow_pickle says
    (allow_pickle=False semantics); fix_imports, encoding and max_header_size concern pickles and
    NumPy's header parser (Tessera bounds headers itself) and are validated only."""
    del fix_imports, max_header_size
    if mmap_mode not in _MMAP_MODES:
        raise ValueError("mmap_mode must be one of %r, got %r" % (_MMAP_MODES, mmap_mode))
    if encoding not in ("ASCII", "latin1", "bytes"):
        raise ValueError("encoding must be 'ASCII', 'latin1', or 'bytes'")
    if hasattr(file, "read"):
        data = file.read()
        if not isinstance(data, bytes):
            raise TypeError("load: the file object must be opened in binary mode (read() "
                            "returned %s)" % type(data).__name__)
        name = str(getattr(file, "name", "<file object>"))
        if data.startswith(_ZIP_PREFIXES):
            return NpzFile(_C.load_npz_bytes(data, name), name)
        if data.startswith(_NPY_MAGIC):
            return _C.load_npy_bytes(data, name)
        magic = data[:6]
    else:
        path = _os.fsdecode(_os.fspath(file))
        name = path
        with open(path, "rb") as f:
            magic = f.read(6)
        if magic.startswith(_ZIP_PREFIXES):
            return NpzFile(_C.load_npz(path), path)
        if magic == _NPY_MAGIC:
            return _C.load_npy(path)
    if not allow_pickle:
        raise ValueError("Cannot load file containing pickled data when allow_pickle=False")
    raise ValueError("[load] %r is neither a .npy nor an .npz file (it starts with %r); Tessera "
                     "does not read pickled data" % (name, magic))
