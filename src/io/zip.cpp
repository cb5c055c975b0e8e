// The .npz zip reader and writer (see zip.h). Every number read from the archive is checked
// against the archive's size before it locates or sizes anything.
#include "io/zip.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <limits>
#include <unordered_set>

#include "io/file_util.h"
#include "tessera/errors.h"

namespace tessera::io::zip {
namespace {

using detail::quoted;

constexpr uint32_t kLocalSig = 0x04034b50;         // "PK\3\4"
constexpr uint32_t kCentralSig = 0x02014b50;       // "PK\1\2"
constexpr uint32_t kEndSig = 0x06054b50;           // "PK\5\6"
constexpr uint32_t kZip64EndSig = 0x06064b50;      // "PK\6\6"
constexpr uint32_t kZip64LocatorSig = 0x07064b50;  // "PK\6\7"
constexpr size_t kLocalLen = 30, kCentralLen = 46, kEndLen = 22, kZip64EndLen = 56,
                 kZip64LocatorLen = 20;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t k32 = 0xffffffffu;
constexpr uint16_t k16 = 0xffffu;

uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t get64(const uint8_t* p) { return get32(p) | (static_cast<uint64_t>(get32(p + 4)) << 32); }

void put16(std::string& s, uint64_t v) {
  for (int b = 0; b < 2; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
}
void put32(std::string& s, uint64_t v) {
  for (int b = 0; b < 4; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
}
void put64(std::string& s, uint64_t v) {
  for (int b = 0; b < 8; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
}

// [offset, offset + len) lies within [0, limit) (without overflow).
bool fits(uint64_t offset, uint64_t len, uint64_t limit) {
  return offset <= limit && len <= limit - offset;
}

std::string num(uint64_t v) { return std::to_string(v); }

}  // namespace

void bad_archive(std::string_view op, std::string_view file, const std::string& problem) {
  throw ValueError(op_message(op, quoted(file) + " is not a valid .npz file: " + problem));
}

void bad_member(std::string_view op, std::string_view file, std::string_view member,
                const std::string& problem) {
  throw ValueError(
      op_message(op, quoted(file) + ", member " + quoted(printable(member)) + ": " + problem));
}

std::vector<Entry> read_directory(std::span<const uint8_t> bytes, std::string_view op,
                                  std::string_view file) {
  const uint64_t size = bytes.size();
  const uint8_t* b = bytes.data();
  auto bad = [&](const std::string& problem) { bad_archive(op, file, problem); };

  // ---- the end of central directory record: the last signature that leaves room for it ----
  if (size < kEndLen) {
    bad("it has " + num(size) + " bytes, fewer than a zip end record (" + num(kEndLen) + ")");
  }
  const uint64_t lowest = size > kEndLen + 0xffff ? size - kEndLen - 0xffff : 0;
  uint64_t end_pos = size - kEndLen;
  for (;; --end_pos) {
    if (get32(b + end_pos) == kEndSig &&
        fits(end_pos + kEndLen, get16(b + end_pos + 20), size))  // the comment fits
      break;
    if (end_pos == lowest) bad("no zip end-of-central-directory record (not a zip archive?)");
  }
  const uint8_t* e = b + end_pos;
  uint64_t disk = get16(e + 4), cd_disk = get16(e + 6);
  uint64_t count_disk = get16(e + 8), count = get16(e + 10);
  uint64_t cd_size = get32(e + 12), cd_offset = get32(e + 16);
  uint64_t cd_limit = end_pos;  // the directory ends before the end record(s)

  // ---- ZIP64: a locator just before the end record points at the ZIP64 end record ----
  if (end_pos >= kZip64LocatorLen && get32(e - kZip64LocatorLen) == kZip64LocatorSig) {
    const uint8_t* loc = e - kZip64LocatorLen;
    const uint64_t z_pos = get64(loc + 8);
    const uint32_t disks = get32(loc + 16);
    if (get32(loc + 4) != 0 || disks > 1) bad("multi-disk (spanned) archives are not supported");
    if (!fits(z_pos, kZip64EndLen, end_pos - kZip64LocatorLen)) {
      bad("the ZIP64 end record offset " + num(z_pos) + " lies outside the archive (" + num(size) +
          " bytes)");
    }
    const uint8_t* z = b + z_pos;
    if (get32(z) != kZip64EndSig) bad("the ZIP64 locator does not point at a ZIP64 end record");
    disk = get32(z + 16);
    cd_disk = get32(z + 20);
    count_disk = get64(z + 24);
    count = get64(z + 32);
    cd_size = get64(z + 40);
    cd_offset = get64(z + 48);
    cd_limit = z_pos;
  }
  if (disk != 0 || cd_disk != 0 || count_disk != count) {
    bad("multi-disk (spanned) archives are not supported (disk " + num(disk) + ", directory disk " +
        num(cd_disk) + ", " + num(count_disk) + " of " + num(count) + " entries on this disk)");
  }
  if (!fits(cd_offset, cd_size, cd_limit)) {
    bad("the central directory (offset " + num(cd_offset) + ", " + num(cd_size) +
        " bytes) lies past its end record at offset " + num(cd_limit));
  }
  if (count > cd_size / kCentralLen) {
    bad("the end record claims " + num(count) + " entries but the " + num(cd_size) +
        "-byte central directory holds at most " + num(cd_size / kCentralLen));
  }

  // ---- the central directory ----
  std::vector<Entry> entries;
  entries.reserve(static_cast<size_t>(count));
  std::unordered_set<std::string> names;
  const uint64_t cd_end = cd_offset + cd_size;
  uint64_t p = cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string which = "central directory entry " + num(i);
    if (!fits(p, kCentralLen, cd_end)) bad(which + " runs past the central directory");
    const uint8_t* c = b + p;
    if (get32(c) != kCentralSig) {
      bad(which + " at offset " + num(p) + " has no central header signature");
    }
    Entry en;
    en.flags = get16(c + 8);
    en.method = get16(c + 10);
    en.crc = get32(c + 16);
    en.csize = get32(c + 20);
    en.usize = get32(c + 24);
    const uint64_t name_len = get16(c + 28), extra_len = get16(c + 30), comment_len = get16(c + 32);
    const uint64_t entry_disk = get16(c + 34);
    en.header_offset = get32(c + 42);
    if (!fits(p + kCentralLen, name_len + extra_len + comment_len, cd_end)) {
      bad(which + "'s name, extra field or comment runs past the central directory");
    }
    en.name.assign(reinterpret_cast<const char*>(c + kCentralLen), name_len);
    auto member_bad = [&](const std::string& problem) { bad_member(op, file, en.name, problem); };
    // ZIP64 extra: the 8-byte values of the fields whose 4-byte versions are 0xffffffff, in the
    // order uncompressed size, compressed size, header offset.
    const uint8_t* x = c + kCentralLen + name_len;
    const uint8_t* x_end = x + extra_len;
    bool need_usize = en.usize == k32, need_csize = en.csize == k32,
         need_offset = en.header_offset == k32;
    while (x_end - x >= 4) {
      const uint16_t id = get16(x), len = get16(x + 2);
      if (len > x_end - x - 4) member_bad("an extra field runs past its entry");
      if (id == kZip64ExtraId) {
        const uint8_t* v = x + 4;
        const uint8_t* v_end = v + len;
        auto take = [&](uint64_t& field, bool& needed, const char* what) {
          if (!needed) return;
          if (v_end - v < 8) member_bad(std::string("the ZIP64 extra field lacks the ") + what);
          field = get64(v);
          v += 8;
          needed = false;
        };
        take(en.usize, need_usize, "uncompressed size");
        take(en.csize, need_csize, "compressed size");
        take(en.header_offset, need_offset, "local header offset");
      }
      x += 4 + len;
    }
    (void)entry_disk;  // single-disk archives checked above; zipfile ignores this field
    if (name_len == 0) member_bad("the member has an empty name");
    if (!names.insert(en.name).second) member_bad("the name appears twice in the archive");
    if (en.flags & 0x41) member_bad("the member is encrypted, which is not supported");
    if (en.method != kStored && en.method != kDeflated) {
      member_bad("compression method " + num(en.method) +
                 " is not supported (only stored (0) and deflated (8) members are read)");
    }
    if (en.method == kStored && en.csize != en.usize) {
      member_bad("a stored member's sizes differ (" + num(en.csize) + " bytes stored, " +
                 num(en.usize) + " declared)");
    }

    // ---- its local header ----
    if (!fits(en.header_offset, kLocalLen, cd_offset)) {
      member_bad("the local header offset " + num(en.header_offset) +
                 " lies past the member data (the central directory starts at " + num(cd_offset) +
                 ")");
    }
    const uint8_t* l = b + en.header_offset;
    if (get32(l) != kLocalSig) {
      member_bad("no local header signature at offset " + num(en.header_offset));
    }
    const uint64_t l_name = get16(l + 26), l_extra = get16(l + 28);
    if (get16(l + 8) != en.method || (get16(l + 6) & 0x41) != (en.flags & 0x41)) {
      member_bad("the local header's method or flags disagree with the central directory");
    }
    if (!fits(en.header_offset + kLocalLen, l_name + l_extra, cd_offset)) {
      member_bad("the local header's name or extra field runs past the member data");
    }
    if (l_name != name_len || std::memcmp(l + kLocalLen, en.name.data(), name_len) != 0) {
      member_bad("the local header names it " +
                 quoted(printable({reinterpret_cast<const char*>(l + kLocalLen), l_name})));
    }
    en.data_offset = en.header_offset + kLocalLen + l_name + l_extra;
    if (!fits(en.data_offset, en.csize, cd_offset)) {
      member_bad("its " + num(en.csize) + " bytes of data at offset " + num(en.data_offset) +
                 " run past the member data (the central directory starts at " + num(cd_offset) +
                 ")");
    }
    entries.push_back(std::move(en));
    p += kCentralLen + name_len + extra_len + comment_len;
  }
  if (p != cd_end) {
    bad("the end record claims " + num(count) + " entries but they end " + num(cd_end - p) +
        " bytes before the central directory does");
  }

  // ---- members must not overlap (overlapping members make small zip bombs) ----
  std::vector<const Entry*> order;
  for (const Entry& en : entries) order.push_back(&en);
  std::sort(order.begin(), order.end(),
            [](const Entry* x, const Entry* y) { return x->header_offset < y->header_offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->data_offset + order[i - 1]->csize > order[i]->header_offset) {
      bad("members " + quoted(printable(order[i - 1]->name)) + " and " +
          quoted(printable(order[i]->name)) + " overlap");
    }
  }
  return entries;
}

// ---- MemberReader ----

MemberReader::MemberReader(std::span<const uint8_t> archive, const Entry& e, std::string_view op,
                           std::string_view file)
    : data_(archive.subspan(static_cast<size_t>(e.data_offset), static_cast<size_t>(e.csize))),
      e_(e),
      op_(op),
      file_(file),
      crc_(crc32(0, nullptr, 0)) {
  if (e.method == kDeflated) {
    z_ = std::make_unique<z_stream>();
    std::memset(z_.get(), 0, sizeof(z_stream));
    if (inflateInit2(z_.get(), -MAX_WBITS) != Z_OK) {
      z_.reset();
      throw ValueError(op_message(op, "zlib could not start inflating " + quoted(file)));
    }
  }
}

MemberReader::~MemberReader() {
  if (z_) inflateEnd(z_.get());
}

void MemberReader::fail(const std::string& problem) const {
  bad_member(op_, file_, e_.name, problem);
}

void MemberReader::read(void* dst, size_t n) {
  if (n > remaining()) throw_internal("zip", "MemberReader::read past the declared size");
  auto* out = static_cast<uint8_t*>(dst);
  if (!z_) {
    if (n) std::memcpy(out, data_.data() + produced_, n);
  } else {
    size_t done = 0;
    while (done < n) {
      if (stream_end_) {
        fail("the deflate data ends after " + num(produced_ + done) + " bytes but " +
             num(e_.usize) + " are declared (truncated member)");
      }
      // zlib's counters are 32-bit: feed and drain at most 1 GiB at a time.
      const uint64_t in_left = data_.size() - consumed_;
      z_->next_in = const_cast<Bytef*>(data_.data() + consumed_);
      z_->avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, uint64_t{1} << 30));
      z_->next_out = out + done;
      z_->avail_out = static_cast<uInt>(std::min<size_t>(n - done, size_t{1} << 30));
      const uInt in_before = z_->avail_in, out_before = z_->avail_out;
      const int rc = inflate(z_.get(), Z_NO_FLUSH);
      consumed_ += in_before - z_->avail_in;
      done += out_before - z_->avail_out;
      if (rc == Z_STREAM_END) {
        stream_end_ = true;
      } else if (rc == Z_DATA_ERROR) {
        fail(std::string("corrupt deflate data (") + (z_->msg ? z_->msg : "zlib data error") + ")");
      } else if (rc == Z_MEM_ERROR) {
        throw ValueError(op_message(op_, "zlib ran out of memory inflating " + quoted(file_)));
      } else if (rc == Z_OK || rc == Z_BUF_ERROR) {
        if (in_before == z_->avail_in && out_before == z_->avail_out) {  // no progress
          if (consumed_ == data_.size()) {
            fail("the deflate data is truncated: it ends after " + num(produced_ + done) + " of " +
                 num(e_.usize) + " declared bytes");
          }
          fail("zlib made no progress inflating (corrupt deflate data)");
        }
      } else if (rc != Z_OK) {
        fail("zlib inflate failed with code " + std::to_string(rc));
      }
    }
  }
  crc_ = crc32_z(crc_, out, n);
  produced_ += n;
}

void MemberReader::finish() {
  if (produced_ != e_.usize) throw_internal("zip", "MemberReader::finish before the end");
  if (z_ && !stream_end_) {
    // The declared size is reached: the stream must end here, not produce more.
    uint8_t extra[1];
    const uint64_t in_left = data_.size() - consumed_;
    z_->next_in = const_cast<Bytef*>(data_.data() + consumed_);
    z_->avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, uint64_t{1} << 30));
    z_->next_out = extra;
    z_->avail_out = 1;
    const int rc = inflate(z_.get(), Z_NO_FLUSH);
    if (z_->avail_out == 0) {
      fail("the deflate data inflates past its declared size of " + num(e_.usize) + " bytes");
    }
    if (rc == Z_DATA_ERROR) {
      fail(std::string("corrupt deflate data (") + (z_->msg ? z_->msg : "zlib data error") + ")");
    }
    if (rc != Z_STREAM_END) fail("the deflate data is truncated (no end of stream)");
    stream_end_ = true;
  }
  if (crc_ != e_.crc) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%08lx, the directory says 0x%08lx",
                  static_cast<unsigned long>(crc_), static_cast<unsigned long>(e_.crc));
    fail(std::string("CRC-32 mismatch: the data has ") + buf + " (corrupt file)");
  }
}

// ---- Writer ----

void Writer::add(const std::string& name, std::span<const std::string_view> pieces, bool compress) {
  if (!have_time_) {
    // The modification time as zipfile stores it: local time, DOS format, 1980 at the earliest.
    const std::time_t now = std::time(nullptr);
    std::tm t{};
    localtime_r(&now, &t);
    const int year = std::max(t.tm_year + 1900, 1980);
    dos_date_ = static_cast<uint16_t>(((year - 1980) << 9) | ((t.tm_mon + 1) << 5) | t.tm_mday);
    dos_time_ = static_cast<uint16_t>((t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec / 2));
    have_time_ = true;
  }
  uLong crc = crc32(0, nullptr, 0);
  uint64_t usize = 0;
  for (auto piece : pieces) {
    crc = crc32_z(crc, reinterpret_cast<const Bytef*>(piece.data()), piece.size());
    usize += piece.size();
  }
  std::string packed;
  if (compress) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
      throw ValueError(op_message("save_npz", "zlib could not start deflating"));
    }
    std::vector<Bytef> buf(size_t{1} << 16);
    for (size_t k = 0; k < pieces.size(); ++k) {
      const bool last = k + 1 == pieces.size();
      const Bytef* in = reinterpret_cast<const Bytef*>(pieces[k].data());
      size_t left = pieces[k].size();
      do {
        const uInt chunk = static_cast<uInt>(std::min<size_t>(left, size_t{1} << 30));
        z.next_in = const_cast<Bytef*>(in);
        z.avail_in = chunk;
        in += chunk;
        left -= chunk;
        const int flush = last && left == 0 ? Z_FINISH : Z_NO_FLUSH;
        int rc;
        do {
          z.next_out = buf.data();
          z.avail_out = static_cast<uInt>(buf.size());
          rc = deflate(&z, flush);
          packed.append(reinterpret_cast<const char*>(buf.data()), buf.size() - z.avail_out);
        } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
      } while (left > 0);
    }
    if (pieces.empty()) {
      z.avail_in = 0;
      int rc;
      do {
        z.next_out = buf.data();
        z.avail_out = static_cast<uInt>(buf.size());
        rc = deflate(&z, Z_FINISH);
        packed.append(reinterpret_cast<const char*>(buf.data()), buf.size() - z.avail_out);
      } while (rc != Z_STREAM_END);
    }
    deflateEnd(&z);
  }
  const uint64_t csize = compress ? packed.size() : usize;
  const uint64_t offset = sink_.size();
  const bool utf8 = std::any_of(name.begin(), name.end(),
                                [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; });

  // The local header as zipfile writes it with force_zip64: sizes 0xffffffff, the real ones in
  // a ZIP64 extra field.
  std::string h;
  put32(h, kLocalSig);
  put16(h, 45);  // version needed: ZIP64
  put16(h, utf8 ? 0x800 : 0);
  put16(h, compress ? kDeflated : kStored);
  put16(h, dos_time_);
  put16(h, dos_date_);
  put32(h, crc);
  put32(h, k32);
  put32(h, k32);
  put16(h, name.size());
  put16(h, 20);
  h += name;
  put16(h, kZip64ExtraId);
  put16(h, 16);
  put64(h, usize);
  put64(h, csize);
  sink_.write(h.data(), h.size());
  if (compress) {
    sink_.write(packed.data(), packed.size());
  } else {
    for (auto piece : pieces) sink_.write(piece.data(), piece.size());
  }
  entries_.push_back({name, static_cast<uint16_t>(compress ? kDeflated : kStored),
                      static_cast<uint32_t>(crc), csize, usize, offset});
}

void Writer::finish() {
  const uint64_t cd_offset = sink_.size();
  std::string cd;
  for (const Central& c : entries_) {
    std::string extra;
    if (c.usize >= k32) put64(extra, c.usize);
    if (c.csize >= k32) put64(extra, c.csize);
    if (c.offset >= k32) put64(extra, c.offset);
    const bool utf8 = std::any_of(c.name.begin(), c.name.end(),
                                  [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; });
    put32(cd, kCentralSig);
    put16(cd, (3 << 8) | 45);  // made by: Unix, ZIP64-capable
    put16(cd, 45);
    put16(cd, utf8 ? 0x800 : 0);
    put16(cd, c.method);
    put16(cd, dos_time_);
    put16(cd, dos_date_);
    put32(cd, c.crc);
    put32(cd, std::min<uint64_t>(c.csize, k32));
    put32(cd, std::min<uint64_t>(c.usize, k32));
    put16(cd, c.name.size());
    put16(cd, extra.empty() ? 0 : extra.size() + 4);
    put16(cd, 0);                     // comment
    put16(cd, 0);                     // disk
    put16(cd, 0);                     // internal attributes
    put32(cd, uint64_t{0600} << 16);  // external attributes: a regular file, rw-------
    put32(cd, std::min<uint64_t>(c.offset, k32));
    cd += c.name;
    if (!extra.empty()) {
      put16(cd, kZip64ExtraId);
      put16(cd, extra.size());
      cd += extra;
    }
  }
  const uint64_t count = entries_.size(), cd_size = cd.size();
  if (count >= k16 || cd_offset >= k32 || cd_size >= k32) {
    const uint64_t z_pos = cd_offset + cd_size;
    put32(cd, kZip64EndSig);
    put64(cd, kZip64EndLen - 12);
    put16(cd, 45);
    put16(cd, 45);
    put32(cd, 0);
    put32(cd, 0);
    put64(cd, count);
    put64(cd, count);
    put64(cd, cd_size);
    put64(cd, cd_offset);
    put32(cd, kZip64LocatorSig);
    put32(cd, 0);
    put64(cd, z_pos);
    put32(cd, 1);
  }
  put32(cd, kEndSig);
  put16(cd, 0);
  put16(cd, 0);
  put16(cd, std::min<uint64_t>(count, k16));
  put16(cd, std::min<uint64_t>(count, k16));
  put32(cd, std::min<uint64_t>(cd_size, k32));
  put32(cd, std::min<uint64_t>(cd_offset, k32));
  put16(cd, 0);
  sink_.write(cd.data(), cd.size());
}

}  // namespace tessera::io::zip
