// A small zip reader and writer for .npz files (internal; tessera/io.h is the public API), over
// zlib. Read: stored and deflated members of single-disk archives, ZIP64 records (as Python's
// zipfile writes them for np.savez), every offset, length and count of the directory checked
// against the file before it is used, member data CRC-32 checked. Write: what np.savez writes
// (stored or deflated members, each local header with a ZIP64 extra field as zipfile's
// force_zip64 writes it; ZIP64 central records and end record only where a size, offset or count
// needs them).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/file_util.h"

namespace tessera::io::zip {

inline constexpr uint16_t kStored = 0;
inline constexpr uint16_t kDeflated = 8;

// One member, from the central directory (sizes and offsets already taken from ZIP64 extras).
struct Entry {
  std::string name;
  uint16_t method = kStored;
  uint16_t flags = 0;
  uint32_t crc = 0;
  uint64_t csize = 0;          // compressed size
  uint64_t usize = 0;          // uncompressed size
  uint64_t header_offset = 0;  // local file header
  uint64_t data_offset = 0;    // first byte of the member's (compressed) data
};

// "[op] 'file' is not a valid .npz file: <problem>" as a ValueError.
[[noreturn]] void bad_archive(std::string_view op, std::string_view file,
                              const std::string& problem);
// "[op] 'file', member 'name': <problem>" as a ValueError.
[[noreturn]] void bad_member(std::string_view op, std::string_view file, std::string_view member,
                             const std::string& problem);
// A name or header excerpt for a message (file_util.h's).
inline std::string printable(std::string_view s, size_t max = 120) {
  return detail::printable(s, max);
}

// Parses and checks the directory of the archive `bytes`: the end record (and the ZIP64 end
// record and locator), every central entry and its local header. Refuses (ValueError naming
// `file` and the member): offsets or lengths past the end, an entry count that disagrees with the
// directory's size, members that overlap each other or the directory, duplicate names, local
// headers that disagree with the directory, encrypted members, methods other than stored and
// deflated, multi-disk archives. Returns the entries in directory order.
std::vector<Entry> read_directory(std::span<const uint8_t> bytes, std::string_view op,
                                  std::string_view file);

// Streams one member's uncompressed bytes. read() yields at most the declared size; finish()
// checks that the data ends exactly there (a deflate stream producing more or fewer bytes than
// declared is refused, so a lying size cannot make us inflate without bound) and that the CRC-32
// matches.
class MemberReader {
 public:
  MemberReader(std::span<const uint8_t> archive, const Entry& e, std::string_view op,
               std::string_view file);
  ~MemberReader();
  MemberReader(const MemberReader&) = delete;
  MemberReader& operator=(const MemberReader&) = delete;
  // Fills dst[0, n) with the next n bytes; n must not pass the declared size.
  void read(void* dst, size_t n);
  uint64_t remaining() const { return e_.usize - produced_; }
  void finish();

 private:
  [[noreturn]] void fail(const std::string& problem) const;
  std::span<const uint8_t> data_;
  Entry e_;
  std::string_view op_, file_;
  uint64_t produced_ = 0;
  uint64_t consumed_ = 0;  // compressed bytes handed to zlib
  uLong crc_;
  bool stream_end_ = false;
  std::unique_ptr<z_stream> z_;
};

// Writes an archive member by member to `sink` (whose size() gives the offsets).
class Writer {
 public:
  explicit Writer(detail::Sink& sink) : sink_(sink) {}
  // One member made of the concatenation of `pieces`, stored or deflated (zlib's default level,
  // as zipfile's ZIP_DEFLATED).
  void add(const std::string& name, std::span<const std::string_view> pieces, bool compress);
  // The central directory and end records.
  void finish();

 private:
  struct Central {
    std::string name;
    uint16_t method;
    uint32_t crc;
    uint64_t csize, usize, offset;
  };
  detail::Sink& sink_;
  std::vector<Central> entries_;
  uint16_t dos_time_ = 0, dos_date_ = 0;
  bool have_time_ = false;
};

}  // namespace tessera::io::zip
