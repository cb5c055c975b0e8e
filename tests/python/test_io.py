"""jnp.save / jnp.load / jnp.savez / jnp.savez_compressed against NumPy: round trips of every
dtype on fresh random arrays (0-d, empty, large), files byte-identical to np.save's and .npz
members identical in names and bytes to np.savez's, NumPy reading ours and us reading NumPy's
(both byte orders, Fortran order, format versions 1.0/2.0/3.0, stored/deflated/ZIP64 archives),
malformed files raising typed errors, and allow_pickle=False semantics."""
import io
import os
import pathlib
import struct
import zipfile

import numpy as np
import pytest

import tessera.numpy as jnp

NP_TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64"]


def random_np(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind == "f":
        x = rng.standard_normal(size=shape).astype(dtype)
        if x.size:
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size)] = np.inf  # specials survive bit-exactly
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def random_shape(rng):
    kind = rng.integers(0, 4)
    if kind == 0:
        return ()
    if kind == 1:
        return (0, int(rng.integers(1, 4)))
    return tuple(int(d) for d in rng.integers(1, 5, size=rng.integers(1, 4)))


def bf16_bits(x):
    """The bfloat16 bits of a Tessera bfloat16 array, via the exact float32 widening."""
    return (np.asarray(x.astype(jnp.float32)).view(np.uint32) >> 16).astype(np.uint16)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---- .npy ----

@pytest.mark.parametrize("dtype", NP_TYPES)
def test_npy_round_trip_and_byte_identity(tmp_path, rng, x64, dtype):
    for k in range(4):
        x = random_np(rng, dtype, random_shape(rng) if k else ())
        t = jnp.asarray(x, dtype=dtype)
        ours, theirs = tmp_path / ("ours%d.npy" % k), tmp_path / ("theirs%d.npy" % k)
        jnp.save(ours, t)
        np.save(theirs, x)
        assert ours.read_bytes() == theirs.read_bytes(), (dtype, x.shape)
        back = jnp.load(ours)
        assert back.dtype == t.dtype and back.shape == x.shape
        assert same(np.asarray(back), x)
        assert same(np.load(ours), x)
        # NumPy array-likes are saved with their exact dtype, as np.save does.
        buf = io.BytesIO()
        jnp.save(buf, x)
        assert buf.getvalue() == theirs.read_bytes()


def test_npy_large_and_paths(tmp_path, rng):
    x = rng.standard_normal((1000, 1500)).astype(np.float32)
    jnp.save(str(tmp_path / "big"), jnp.asarray(x))  # ".npy" appended, as np.save does
    assert (tmp_path / "big.npy").exists()
    assert same(jnp.load(tmp_path / "big.npy"), x)
    assert same(np.load(tmp_path / "big.npy"), x)
    jnp.save(os.fsencode(str(tmp_path / "b.npy")), jnp.asarray(x[:2]))
    assert same(jnp.load(str(tmp_path / "b.npy")), x[:2])
    with open(tmp_path / "b.npy", "rb") as f:
        assert same(jnp.load(f), x[:2])
    assert sorted(os.listdir(tmp_path)) == ["b.npy", "big.npy"]  # no temporaries left


def test_load_canonicalizes_like_jnp_load(tmp_path, rng):
    for dtype, want in [("int64", "int32"), ("uint64", "uint32"), ("float64", "float32"),
                        ("int16", "int16"), ("float16", "float16")]:
        x = random_np(rng, dtype, (3, 2))
        np.save(tmp_path / "x.npy", x)
        y = jnp.load(tmp_path / "x.npy")
        assert y.dtype == np.dtype(want), dtype
        assert same(np.asarray(y), x.astype(want))


def test_load_keeps_64_bits_with_x64(tmp_path, rng, x64):
    x = random_np(rng, "int64", (5,))
    np.save(tmp_path / "x.npy", x)
    assert same(jnp.load(tmp_path / "x.npy"), x)


def test_bfloat16_convention(tmp_path, rng):
    x = jnp.asarray(rng.standard_normal((3, 5)).astype(np.float32)).astype(jnp.bfloat16)
    jnp.save(tmp_path / "bf.npy", x)
    raw = (tmp_path / "bf.npy").read_bytes()
    assert b"'descr': '<V2'" in raw
    plain = np.load(tmp_path / "bf.npy")  # plain NumPy: raw 2-byte values
    assert plain.dtype.kind == "V" and plain.dtype.itemsize == 2 and plain.shape == (3, 5)
    assert np.array_equal(plain.view("<u2"), bf16_bits(x))
    back = jnp.load(tmp_path / "bf.npy")
    assert back.dtype == jnp.bfloat16
    assert np.array_equal(bf16_bits(back), bf16_bits(x))


def test_reads_numpy_variants(tmp_path, rng):
    for dtype in NP_TYPES:
        x = random_np(rng, dtype, (2, 3, 4))
        want = x.astype(np.dtype(dtype).newbyteorder("="))
        variants = {
            "be": x.astype(x.dtype.newbyteorder(">")),
            "fortran": np.asfortranarray(x),
            "fortran_be": np.asfortranarray(x.astype(x.dtype.newbyteorder(">"))),
        }
        for name, v in variants.items():
            np.save(tmp_path / (name + ".npy"), v)
            got = jnp.load(tmp_path / (name + ".npy"))
            assert same(np.asarray(got), want.astype(got.dtype)), (dtype, name)
        if dtype == "float32":
            assert b"'fortran_order': True" in (tmp_path / "fortran.npy").read_bytes()
        for version in [(1, 0), (2, 0), (3, 0)]:
            with open(tmp_path / "v.npy", "wb") as f:
                np.lib.format.write_array(f, x, version=version)
            got = jnp.load(tmp_path / "v.npy")
            assert same(np.asarray(got), want.astype(got.dtype)), (dtype, version)


# ---- .npz ----

def npz_members(path_or_bytes):
    src = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    with zipfile.ZipFile(src) as z:
        assert z.testzip() is None
        return [(i.filename, i.compress_type, z.read(i)) for i in z.infolist()]


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_members_identical_to_numpy(tmp_path, rng, x64, compressed):
    arrays = {t: random_np(rng, t, random_shape(rng)) for t in NP_TYPES}
    positional = [random_np(rng, "float32", (4,)), random_np(rng, "int8", ())]
    save_t = jnp.savez_compressed if compressed else jnp.savez
    save_n = np.savez_compressed if compressed else np.savez
    save_t(tmp_path / "ours", *[jnp.asarray(p) for p in positional],
           **{k: jnp.asarray(v, dtype=k) for k, v in arrays.items()})
    save_n(tmp_path / "theirs", *positional, **arrays)
    ours, theirs = npz_members(tmp_path / "ours.npz"), npz_members(tmp_path / "theirs.npz")
    assert [(n, b) for n, _, b in ours] == [(n, b) for n, _, b in theirs]
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    assert all(m == method for _, m, _ in ours)
    with np.load(tmp_path / "ours.npz") as f:  # NumPy reads ours
        for k, v in arrays.items():
            assert same(f[k], v)
    for path in ["ours.npz", "theirs.npz"]:  # we read both
        with jnp.load(tmp_path / path) as f:
            assert f.files == list(arrays) + ["arr_0", "arr_1"]
            for k, v in arrays.items():
                assert same(f[k], v) and same(f[k + ".npy"], v)
            assert same(f["arr_0"], positional[0])
    # File objects both ways.
    buf = io.BytesIO()
    save_t(buf, a=jnp.asarray(positional[0]))
    buf.seek(0)
    f = jnp.load(buf)
    assert list(f) == ["a"] and same(f["a"], positional[0])


def test_npzfile_mapping(tmp_path, rng):
    x, y = random_np(rng, "float32", (3,)), random_np(rng, "int16", (2, 2))
    jnp.savez(tmp_path / "f.npz", x=x, y=y)
    f = jnp.load(tmp_path / "f.npz")
    assert isinstance(f, jnp.NpzFile)
    assert f.files == ["x", "y"] and list(f.keys()) == ["x", "y"] and len(f) == 2
    assert "x" in f and "x.npy" in f and "z" not in f
    with pytest.raises(KeyError, match="z is not a file in the archive"):
        f["z"]
    assert same(dict(f.items())["y"], y)
    with f:
        pass
    with pytest.raises(ValueError, match="closed"):
        f["x"]
    with pytest.raises(ValueError, match="Cannot use un-named variables and keyword arr_0"):
        jnp.savez(tmp_path / "g.npz", x, arr_0=y)
    jnp.savez(tmp_path / "empty.npz")
    assert len(jnp.load(tmp_path / "empty.npz")) == 0 and len(np.load(tmp_path / "empty.npz")) == 0


def test_npz_large_bfloat16_and_zip64(tmp_path, rng):
    big = rng.standard_normal((700, 900)).astype(np.float32)
    bf = jnp.asarray(big[:5]).astype(jnp.bfloat16)
    jnp.savez_compressed(tmp_path / "big.npz", big=jnp.asarray(big), bf=bf)
    with jnp.load(tmp_path / "big.npz") as f:
        assert same(f["big"], big)
        assert f["bf"].dtype == jnp.bfloat16 and np.array_equal(bf16_bits(f["bf"]), bf16_bits(bf))
    with np.load(tmp_path / "big.npz") as f:
        assert np.array_equal(f["bf"].view("<u2"), bf16_bits(bf))
    # NumPy's archives carry ZIP64 extras in their local headers (zipfile's force_zip64).
    np.savez(tmp_path / "np.npz", a=big[:3])
    raw = (tmp_path / "np.npz").read_bytes()
    n = struct.unpack("<H", raw[26:28])[0]
    extra = raw[30 + n:30 + n + struct.unpack("<H", raw[28:30])[0]]
    assert extra[:2] == b"\x01\x00"
    assert same(jnp.load(tmp_path / "np.npz")["a"], big[:3])


# ---- errors ----

def test_malformed_files_raise_typed_errors(tmp_path, rng):
    x = random_np(rng, "float32", (4, 4))
    np.save(tmp_path / "good.npy", x)
    good = (tmp_path / "good.npy").read_bytes()
    cases = {
        "truncated.npy": (good[:-5], ValueError, "the data is truncated"),
        "header_past_end.npy": (good[:40], ValueError, "the header claims"),
        "negative.npy": (good.replace(b"(4, 4)", b"(-4, 4)"), ValueError, "negative"),
        "unknown.npy": (good.replace(b"<f4", b"<q4"), ValueError, "not a valid dtype"),
        "complex.npy": (good.replace(b"<f4", b"<c8"), TypeError, "complex"),
    }
    for name, (data, exc, text) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(exc, match=text) as e:
            jnp.load(tmp_path / name)
        assert str(tmp_path / name) in str(e.value)
        with pytest.raises(exc, match=text):
            jnp.load(io.BytesIO(data))
    (tmp_path / "pickle.npy").write_bytes(b"\x80\x04junk")
    with pytest.raises(ValueError, match="pickled data when allow_pickle=False"):
        jnp.load(tmp_path / "pickle.npy")
    # .npz: a flipped data byte fails the CRC check; a cut archive has no end record.
    jnp.savez(tmp_path / "a.npz", x=x)
    raw = bytearray((tmp_path / "a.npz").read_bytes())
    raw[200] ^= 0xFF
    (tmp_path / "crc.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="member 'x.npy': CRC-32 mismatch"):
        jnp.load(tmp_path / "crc.npz")
    (tmp_path / "cut.npz").write_bytes((tmp_path / "a.npz").read_bytes()[:-30])
    with pytest.raises(ValueError, match="not a valid .npz file"):
        jnp.load(tmp_path / "cut.npz")
    with pytest.raises(ValueError, match="mmap_mode"):
        jnp.load(tmp_path / "a.npz", mmap_mode="q")


def test_object_arrays_are_refused(tmp_path):
    obj = np.array([1, "a"], dtype=object)
    np.save(tmp_path / "obj.npy", obj, allow_pickle=True)
    np.savez(tmp_path / "obj.npz", ok=np.arange(2), obj=obj)
    for allow in [False, True]:
        with pytest.raises(TypeError, match="Python objects"):
            jnp.load(tmp_path / "obj.npy", allow_pickle=allow)
        with pytest.raises(TypeError, match="member 'obj.npy'.*Python objects"):
            jnp.load(tmp_path / "obj.npz", allow_pickle=allow)
    with pytest.raises(TypeError, match="object arrays cannot be saved"):
        jnp.save(tmp_path / "o.npy", obj)
    with pytest.raises(TypeError, match="cannot be saved"):
        jnp.savez(tmp_path / "s.npz", s=np.array(["ab"]))
    assert not (tmp_path / "o.npy").exists() and not (tmp_path / "s.npz").exists()


def test_saves_are_atomic(tmp_path, rng):
    x = random_np(rng, "float32", (10,))
    jnp.savez(tmp_path / "keep.npz", x=x)
    before = (tmp_path / "keep.npz").read_bytes()
    with pytest.raises(TypeError):
        jnp.savez(tmp_path / "keep.npz", x=x, bad=np.array([object()]))
    assert (tmp_path / "keep.npz").read_bytes() == before
    os.mkdir(tmp_path / "sub.npy")
    with pytest.raises(ValueError, match="it is a directory"):
        jnp.save(pathlib.Path(tmp_path / "sub.npy"), x)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
