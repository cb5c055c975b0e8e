// Internals of the .npy reader and writer (tessera/io.h is the public API): the header format in
// npy_header.cpp, file access and the atomic save in npy.cpp. Exposed for the fuzz target and the
// tests, which feed bytes without touching the file system.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "tessera/array.h"
#include "tessera/io.h"

namespace tessera::io {

namespace npy {

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr size_t kMagicLen = 6;
// Magic, version (2 bytes) and the header length (2 bytes in 1.0, 4 in 2.0/3.0).
inline constexpr size_t kMaxPreambleLen = kMagicLen + 2 + 4;
// Far above any valid header (rank <= kMaxRank keeps those under 2 KiB); bounds what a corrupt
// length field makes us read.
inline constexpr size_t kMaxHeaderLen = size_t{1} << 20;

// "[load_npy] '<name>' is not a valid .npy file: <problem>" as a ValueError.
[[noreturn]] void bad_file(std::string_view name, const std::string& problem);

struct Preamble {
  int major = 1;
  size_t header_offset = 0;  // where the dict literal starts
  size_t header_len = 0;
};
// `head` holds the first min(file_size, kMaxPreambleLen) bytes of a file of `file_size` bytes.
// Checks the magic, the version and that the header lies within the file.
Preamble parse_preamble(std::span<const uint8_t> head, uint64_t file_size, std::string_view name);

struct Header {
  DType dtype = DType::kFloat32;
  bool swap = false;           // big-endian multi-byte data
  bool fortran_order = false;  // column-major payload
  Shape shape;
  uint64_t data_offset = 0;
  uint64_t nbytes = 0;  // payload size: shape's element count times the item size
};
// Parses the header dict (`text`, header_len bytes) and checks the shape (check_shape) and that
// the payload fits in the file. Longer files are accepted: np.load ignores trailing bytes.
Header parse_header(const Preamble& pre, std::string_view text, uint64_t file_size,
                    std::string_view name);

// The header np.save writes for `a` (see tessera/io.h): little-endian descriptor, C order, data
// aligned to 64, version 1.0 unless too long.
std::string build_header(const Array& a);
// Raises for arrays no .npy file can hold: an empty handle (ValueError), an extended dtype such as
// PRNG keys (TypeError). `where` names the destination in the message.
void check_savable(const Array& a, std::string_view op, const std::string& where);
// The descriptor NumPy writes for `d` ("<f4"), or "" when NumPy has no such dtype.
std::string descr_of(DType d);

// Turns the file's payload (`src`, h.nbytes bytes) into Tessera's layout in `dst`: byte swapped to
// native order, bools normalized to 0/1, Fortran order transposed to row-major.
void decode_payload(const Header& h, const char* src, char* dst);

}  // namespace npy
}  // namespace tessera::io
