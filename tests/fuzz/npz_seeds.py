#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_npz (tests/fuzz/corpus/npz/): small valid .npz archives made by
NumPy (np.savez: stored, np.savez_compressed: deflated; both with zipfile's ZIP64 local extras),
a few variants NumPy's zipfile writes in other situations (data descriptors for unseekable
outputs, ZIP64 end records, an archive comment, an empty archive, a bfloat16 '<V2' member) and a
few malformed ones (bad_*). Rerun to regenerate; regression inputs found by fuzzing are kept
beside them under other names."""
import io
import os
import struct
import zipfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "npz")


def save(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def npz(fn, **arrays):
    buf = io.BytesIO()
    fn(buf, **arrays)
    return buf.getvalue()


class Unseekable(io.RawIOBase):
    """A write-only stream without seek/tell: zipfile writes data descriptors to it."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


def with_zip64_end(data):
    """The same archive with a ZIP64 end record and locator (zipfile writes them past 65535
    members or 4 GiB)."""
    end = data.rfind(b"PK\x05\x06")
    _, _, _, _, count, cd_size, cd_offset, _ = struct.unpack("<IHHHHIIH", data[end:end + 22])
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_size, cd_offset)
    loc = struct.pack("<IIQI", 0x07064B50, 0, end, 1)
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:end] + z64 + loc + eocd


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(7)
    small = {
        "f4": rng.standard_normal((2, 3)).astype(np.float32),
        "i8": np.arange(5, dtype=np.int64),
        "b": np.array([True, False, True]),
        "u2": np.array(7, dtype=np.uint16),
    }
    save("stored.npz", npz(np.savez, **small))
    save("deflated.npz", npz(np.savez_compressed, **small))
    save("positional.npz", npz(np.savez, arr_0=np.zeros((0, 3), np.float16)))
    for t in ["int8", "int16", "int32", "uint8", "uint32", "uint64", "float16", "float64"]:
        x = (rng.standard_normal(4) * 50).astype(t)
        save("one_%s.npz" % t, npz(np.savez_compressed, x=x))
    save("big_endian.npz", npz(np.savez, x=np.arange(6, dtype=">i4").reshape(2, 3),
                               y=np.ones(3, ">f8")))
    save("fortran.npz", npz(np.savez_compressed, x=np.asfortranarray(
        rng.standard_normal((3, 4)).astype(np.float32))))
    save("empty.npz", npz(np.savez))
    save("zip64_end.npz", with_zip64_end(npz(np.savez, **small)))
    s = Unseekable()
    with zipfile.ZipFile(s, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for k, v in small.items():
            with z.open(k + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, v)
    save("data_descriptors.npz", bytes(s.buf))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.comment = b"an archive comment"
        b = io.BytesIO()
        np.save(b, np.arange(3, dtype=np.int16))
        z.writestr("x.npy", b.getvalue())
    save("comment.npz", buf.getvalue())
    # bfloat16 as Tessera (and ml_dtypes) writes it: descr '<V2'.
    bits = np.array([0x3F80, 0xC000, 0x7FC0], dtype="<u2")
    b = io.BytesIO()
    np.save(b, bits)
    member = b.getvalue().replace(b"'<u2'", b"'<V2'")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("bf.npy", member)
    save("bfloat16.npz", buf.getvalue())
    # Malformed seeds.
    good = bytearray(npz(np.savez, **small))
    bad = bytearray(good)
    bad[100] ^= 0x55
    save("bad_crc.npz", bytes(bad))
    save("bad_truncated.npz", bytes(good[:len(good) // 2]))
    bad = bytearray(good)
    cd = bad.find(b"PK\x01\x02")
    bad[cd + 8] |= 1  # encrypted
    save("bad_encrypted.npz", bytes(bad))
    bad = bytearray(good)
    bad[cd + 10] = 12  # bzip2
    save("bad_method.npz", bytes(bad))
    save("bad_object.npz", npz(np.savez, o=np.array([1, "a"], dtype=object)))
    bomb_payload = member + b"\0" * 200000  # far more than the header needs
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb.npy", bomb_payload)
    save("bad_bomb.npz", buf.getvalue())


if __name__ == "__main__":
    main()
