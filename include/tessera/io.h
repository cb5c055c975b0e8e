// NumPy .npy and .npz files: save and load concrete arrays (np.save / np.load / np.savez /
// np.savez_compressed).
//
// .npy. Every Tessera dtype: bool, int8..int64, uint8..uint64, float16, float32, float64 and
// bfloat16. Read: C and Fortran order (Fortran data is transposed to row-major), format versions
// 1.0, 2.0 and 3.0, any byte order (big-endian data is swapped). Written files are byte for byte
// what NumPy 1.24's np.save writes for the same values: little-endian descriptors, C order, the
// header dict with NumPy's key order and its spare room for the first axis to grow to 21 digits,
// padded with spaces (a full 64 when already aligned) so the data starts at a multiple of 64,
// version 1.0 (2.0 only if the header passed 65535 bytes, which rank <= kMaxRank never reaches;
// NumPy's 3.0 is for non-latin-1 structured field names, which Tessera has no use for).
//
// bfloat16 convention. NumPy has no bfloat16, so Tessera writes descr '<V2' -- what np.save writes
// for ml_dtypes' (and hence JAX's) bfloat16 arrays, and what jax.numpy.load turns back into
// bfloat16. Plain np.load reads such a file as a |V2 array whose raw 2-byte values are the bfloat16
// bits (x.view('<u2') gives them as integers; x.view(ml_dtypes.bfloat16) as numbers). On read, the
// descriptors '<V2', '|V2', 'V2' and 'bfloat16' are bfloat16, '>V2' is byte-swapped bfloat16; any
// other void size is refused.
//
// .npz. A zip archive with one "<name>.npy" member per array, stored (np.savez) or deflated
// (np.savez_compressed), member names and member bytes identical to NumPy's (the zip timestamps
// and the archive's framing may differ). Read: stored and deflated members, ZIP64 records, CRC-32
// checked. allow_pickle=False semantics: object arrays are refused (TypeError).
//
// Malformed files never crash, hang or allocate without bound: every header size, directory
// offset, length and count is checked against the file first; a deflated member may not inflate
// past its declared size nor declare more than its .npy header needs (+64 KiB) or more than
// deflate can produce from its compressed bytes (1032:1). Problems raise ValueError (TypeError for
// a dtype NumPy has but Tessera lacks) naming the file, the member and the problem.
//
// Saves are atomic: the bytes go to a hidden temporary in the target's directory,
//   "." + <the first 64 bytes of the target's file name> + ".tmp" + <pid> + "." + <random number>,
// which is fsync'ed and renamed over the target. Readers see the old file or the complete new one;
// a failed save removes its temporary; a writer killed mid-save leaves at most such a temporary
// (never a file with the target's name, and never a name ending in .npy/.npz).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/array.h"

namespace tessera::io {

// Writes `a` to `path` (np.save's format; no ".npy" suffix is added), atomically as described
// above. Like np.save, a symlink is followed: its target gets the new contents and the link
// stays. A replaced file keeps its mode and (where permitted) its owner and group; a new file gets
// 0666 & ~umask. Devices and FIFOs are written through. Throws TypeError for extended dtypes
// (PRNG keys), ConcretizationError for tracers, ValueError (naming the path and the OS error)
// when the file cannot be written or the path is a directory.
void save_npy(const std::string& path, const Array& a);

// The bytes save_npy writes for `a`.
std::string save_npy_bytes(const Array& a);

// Reads one array from a .npy file. The result has the file's dtype exactly, like np.load (it is
// not canonicalized to 32 bits: use astype for jnp.load's behaviour). Every size in the header is
// checked before it is used: a malformed file (bad magic or version, a header beyond the file, a
// malformed dict, negative or overflowing dimensions, rank above kMaxRank, data shorter than the
// shape needs) raises ValueError naming the path and the problem; a dtype NumPy has but Tessera
// lacks (complex, strings, objects, ...) raises TypeError. Bytes after the data are ignored, as
// np.load ignores them. The file is never modified and a failed load returns nothing.
Array load_npy(const std::string& path);

// Parses an in-memory .npy file exactly as load_npy parses a file's bytes; `name` stands for the
// file in error messages.
Array load_npy_bytes(std::span<const uint8_t> bytes, std::string_view name);

// An .npz file's arrays, in archive order, each under its key (the member name without ".npy").
using NamedArrays = std::vector<std::pair<std::string, Array>>;

// The array named `key` in `arrays`; KeyError-like ValueError naming the keys when absent.
const Array& npz_get(const NamedArrays& arrays, std::string_view key);

// Writes `arrays` to `path` as np.savez (compressed = false: stored members) or
// np.savez_compressed (compressed = true: deflated) writes them: one member "<key>.npy" per array,
// in the given order, atomically like save_npy (no ".npz" suffix is added). Keys must be distinct
// and at most 65531 bytes (ValueError); every array must be savable by save_npy.
void save_npz(const std::string& path, const NamedArrays& arrays, bool compressed = false);

// The bytes save_npz writes.
std::string save_npz_bytes(const NamedArrays& arrays, bool compressed = false);

// Reads every member of an .npz file (the archive is read into memory first, then each member is
// checked and inflated straight into its array). A member named "<key>.npy" is returned under <key>, any
// other name as is; every member must be a .npy file (np.load would hand other members back as
// raw bytes: Tessera refuses them with a ValueError). Errors as described above.
NamedArrays load_npz(const std::string& path);

// Parses an in-memory .npz file exactly as load_npz parses a file's bytes.
NamedArrays load_npz_bytes(std::span<const uint8_t> bytes, std::string_view name);

}  // namespace tessera::io
