// NumPy .npy files: save and load concrete arrays (np.save / np.load of one array).
//
// Supported: every numeric dtype NumPy has (bool, int8..int64, uint8..uint64, float16,
// float32, float64), C and Fortran order (read; Fortran data is transposed to row-major),
// format versions 1.0, 2.0 and 3.0 (read), any byte order (read; big-endian data is swapped).
// Written files use version 1.0, little-endian descriptors, C order and NumPy's 64-byte header
// alignment, so np.load reads them.
//
// Not supported, each with a clear error: bfloat16 (NumPy has no such dtype: convert to
// float32 first), structured/object/string/complex dtypes (TypeError), ranks above kMaxRank.
#pragma once

#include <string>

#include "tessera/array.h"

namespace tessera::io {

// Writes `a` to `path` (np.save's format; no ".npy" suffix is added). The data goes to a
// temporary file in the target's directory that is renamed over the target only once completely
// written, so a failed save never leaves a partial or corrupt file or a temporary behind (an
// existing file is kept byte for byte). Like np.save, a symlink is followed: its target gets the
// new contents and the link stays. A replaced file keeps its mode and (where permitted) its owner
// and group; a new file gets 0666 & ~umask. Devices and FIFOs are written through. Throws
// TypeError for bfloat16/extended dtypes, ConcretizationError for tracers, ValueError (naming the
// path and the OS error) when the file cannot be written or the path is a directory.
void save_npy(const std::string& path, const Array& a);

// Reads one array from a .npy file. The result has the file's dtype exactly, like
// np.load (it is not canonicalized to 32 bits: use astype for jnp.load's behaviour).
// Every size in the header is checked before it is used: a malformed file (bad magic or version,
// a header beyond the file, a malformed dict, negative or overflowing dimensions, rank above
// kMaxRank, data shorter than the shape needs) raises ValueError naming the path and the problem;
// a dtype NumPy has but Tessera lacks raises TypeError. Bytes after the data are ignored, as
// np.load ignores them. The file is never modified and a failed load returns nothing.
Array load_npy(const std::string& path);

}  // namespace tessera::io
