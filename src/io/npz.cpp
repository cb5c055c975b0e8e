// NumPy .npz files: a zip archive of .npy members (zip.h), read with the .npy header checks of
// npy_header.cpp applied to each member before any of its data is inflated.
#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "io/file_util.h"
#include "io/npy.h"
#include "io/zip.h"
#include "tessera/errors.h"
#include "tessera/io.h"

namespace tessera::io {
namespace {

using detail::quoted;

// Deflate cannot expand data more than 1032:1 (a 258-byte match per ~2 bits); a member claiming
// more is forged. The constant covers the headers of tiny members.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kRatioSlack = 4096;
// Bytes a member may hold past its .npy data (np.load ignores them; NumPy writes none).
constexpr uint64_t kMaxTrailing = uint64_t{1} << 16;

std::string strip_tag(std::string msg, std::string_view op) {
  const std::string tag = "[" + std::string(op) + "] ";
  if (msg.rfind(tag, 0) == 0) msg.erase(0, tag.size());
  return msg;
}

Array read_member(std::span<const uint8_t> archive, const zip::Entry& e, std::string_view file) {
  constexpr std::string_view op = "load_npz";
  auto member_bad = [&](const std::string& problem) { zip::bad_member(op, file, e.name, problem); };
  if (e.method == zip::kDeflated && e.usize > e.csize * kMaxDeflateRatio + kRatioSlack) {
    member_bad("it declares " + std::to_string(e.usize) + " bytes inflated from " +
               std::to_string(e.csize) + " (more than deflate's 1032:1 ratio allows: a zip bomb?)");
  }
  zip::MemberReader reader(archive, e, op, file);
  // Errors of the .npy layer name the member; they are re-raised naming the archive too.
  const std::string member_name = e.name;
  try {
    uint8_t head[npy::kMaxPreambleLen];
    const size_t head_len = static_cast<size_t>(std::min<uint64_t>(e.usize, sizeof head));
    reader.read(head, head_len);
    const auto pre = npy::parse_preamble({head, head_len}, e.usize, member_name);
    // The header (at most kMaxHeaderLen bytes, checked by parse_preamble) follows the preamble.
    std::string text(pre.header_len, '\0');
    const size_t already = head_len - std::min(head_len, pre.header_offset);
    std::memcpy(text.data(), head + pre.header_offset, std::min(already, text.size()));
    if (text.size() > already) reader.read(text.data() + already, text.size() - already);
    // Bytes of `head` past the header are the data's first bytes (only for tiny headers).
    const size_t head_data = already > text.size() ? already - text.size() : 0;
    const npy::Header h = npy::parse_header(pre, text, e.usize, member_name);
    const uint64_t needed = h.data_offset + h.nbytes;  // <= e.usize (parse_header checks)
    if (e.usize - needed > kMaxTrailing) {
      member_bad("it declares " + std::to_string(e.usize) + " bytes but its .npy header needs " +
                 std::to_string(needed) + " (refused: a zip bomb?)");
    }
    Array out = empty_array(Aval{h.shape, h.dtype, false}, "load_npz");
    char* dst = static_cast<char*>(out.buffer("load_npz")->data());
    const bool in_place = !h.fortran_order || h.shape.size() < 2;
    Array scratch = in_place ? out : empty_array(Aval{h.shape, h.dtype, false}, "load_npz");
    char* raw = static_cast<char*>(scratch.buffer("load_npz")->data());
    const size_t from_head = static_cast<size_t>(std::min<uint64_t>(head_data, h.nbytes));
    if (from_head) std::memcpy(raw, head + head_len - head_data, from_head);
    reader.read(raw + from_head, static_cast<size_t>(h.nbytes - from_head));
    npy::decode_payload(h, raw, dst);
    // The trailing bytes (bounded above) still count for the CRC.
    uint8_t sink[4096];
    while (reader.remaining() > 0) {
      reader.read(sink, static_cast<size_t>(std::min<uint64_t>(reader.remaining(), sizeof sink)));
    }
    reader.finish();
    return out;
  } catch (const TypeError& err) {
    throw TypeError(op_message(op, quoted(file) + ", member " + strip_tag(err.what(), "load_npy")));
  } catch (const ValueError& err) {
    const std::string msg = err.what();
    if (msg.rfind("[load_npy] ", 0) != 0) throw;  // already names the archive
    throw ValueError(op_message(op, quoted(file) + ", member " + strip_tag(msg, "load_npy")));
  }
}

void check_keys(const NamedArrays& arrays, const std::string& where) {
  std::unordered_set<std::string> seen;
  for (const auto& [key, a] : arrays) {
    if (!seen.insert(key).second) {
      throw ValueError(op_message("save_npz", "the key " + quoted(zip::printable(key)) +
                                                  " appears twice (saving to " + where + ")"));
    }
    if (key.size() + 4 > 0xffff) {
      throw ValueError(op_message("save_npz", "the key " + quoted(zip::printable(key, 40)) +
                                                  " is " + std::to_string(key.size()) +
                                                  " bytes long; zip names hold at most 65535"));
    }
    npy::check_savable(a, "save_npz", "member " + quoted(zip::printable(key)) + " of " + where);
    (void)a.raw_data("save_npz");  // raises for tracers before anything is written
  }
}

void write_npz(detail::Sink& sink, const NamedArrays& arrays, bool compressed) {
  zip::Writer w(sink);
  for (const auto& [key, a] : arrays) {
    const std::string header = npy::build_header(a);
    const std::string_view pieces[] = {
        header, {static_cast<const char*>(a.raw_data("save_npz")), a.nbytes()}};
    w.add(key + ".npy", pieces, compressed);
  }
  w.finish();
}

}  // namespace

const Array& npz_get(const NamedArrays& arrays, std::string_view key) {
  for (const auto& [k, a] : arrays)
    if (k == key) return a;
  std::string keys;
  for (const auto& [k, a] : arrays) keys += (keys.empty() ? "" : ", ") + quoted(k);
  throw ValueError(op_message("npz_get", quoted(key) + " is not a file in the archive (it holds " +
                                             (keys.empty() ? "nothing" : keys) + ")"));
}

void save_npz(const std::string& path, const NamedArrays& arrays, bool compressed) {
  check_keys(arrays, quoted(path));
  detail::atomic_write("save_npz", path,
                       [&](detail::Sink& sink) { write_npz(sink, arrays, compressed); });
}

std::string save_npz_bytes(const NamedArrays& arrays, bool compressed) {
  check_keys(arrays, "memory");
  detail::StringSink sink;
  write_npz(sink, arrays, compressed);
  return std::move(sink.out);
}

NamedArrays load_npz_bytes(std::span<const uint8_t> bytes, std::string_view name) {
  const std::vector<zip::Entry> entries = zip::read_directory(bytes, "load_npz", name);
  NamedArrays out;
  std::unordered_set<std::string> keys;
  for (const zip::Entry& e : entries) {
    std::string key = e.name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    if (!keys.insert(key).second) {
      zip::bad_member("load_npz", name, e.name,
                      "its key " + quoted(zip::printable(key)) + " is also another member's");
    }
    out.emplace_back(std::move(key), read_member(bytes, e, name));
  }
  return out;
}

NamedArrays load_npz(const std::string& path) {
  const std::vector<uint8_t> bytes = detail::read_file("load_npz", path);
  return load_npz_bytes(bytes, path);
}

}  // namespace tessera::io
