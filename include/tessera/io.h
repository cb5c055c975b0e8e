// NumPy .npy files: save and load concrete arrays (np.save / np.load of one array).
//
// Supported: every numeric dtype NumPy has (bool, int8..int64, uint8..uint64, float16,
// float32, float64), C order only, format versions 1.0, 2.0 and 3.0 (read), any byte order
// (read; big-endian data is swapped). Written files use version 1.0 (2.0 when the header
// needs it), little-endian descriptors and NumPy's 64-byte header alignment, so
// np.load reads them.
//
// Not supported, each with a clear error: bfloat16 (NumPy has no such dtype: convert to
// float32 first), fortran_order=True, structured/object/string/complex dtypes.
#pragma once

#include <string>

#include "tessera/array.h"

namespace tessera::io {

// Writes `a` to `path` (np.save's format; no ".npy" suffix is added). The data goes to a
// temporary file in the same directory that is renamed over `path` only once completely
// written, so a failed save never leaves a partial or corrupt file (an existing file at
// `path` is kept unchanged). Throws TypeError for bfloat16/extended dtypes,
// ConcretizationError for tracers, ValueError (naming the path and the OS error) when
// the file cannot be written.
void save_npy(const std::string& path, const Array& a);

// Reads one array from a .npy file. The result has the file's dtype exactly, like
// np.load (it is not canonicalized to 32 bits: use astype for jnp.load's behaviour).
// Malformed or unsupported files raise ValueError/TypeError naming the path and the
// problem; the file is never modified.
Array load_npy(const std::string& path);

}  // namespace tessera::io
