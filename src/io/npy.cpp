// NumPy .npy reading and writing: file access, the in-memory entry points and the atomic save.
// The header format and its checks are in npy_header.cpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "io/npy.h"
#include "tessera/errors.h"
#include "tessera/io.h"

namespace tessera::io {
namespace {

using detail::os_error;
using detail::quoted;

using detail::Fd;

// Reads up to n bytes at `offset`; returns how many were read (fewer only at end of file).
size_t pread_all(int fd, uint64_t offset, char* dst, size_t n, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, dst + done, std::min<size_t>(n - done, size_t{1} << 30),
                              static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw ValueError(
          op_message("load_npy", "reading " + quoted(path) + " failed: " + os_error(errno)));
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

}  // namespace

void npy::check_savable(const Array& a, std::string_view op, const std::string& where) {
  if (!a.defined()) {
    throw ValueError(op_message(op, "the Array handle is empty (default-constructed)"));
  }
  if (npy::descr_of(a.dtype()).empty()) {
    throw TypeError(op_message(op, "dtype " + std::string(dtype_name(a.dtype())) +
                                       " has no NumPy equivalent; cannot save " + a.aval().str() +
                                       " to " + where));
  }
}

std::string save_npy_bytes(const Array& a) {
  npy::check_savable(a, "save_npy", "memory");
  const char* data = static_cast<const char*>(a.raw_data("save_npy"));
  std::string out = npy::build_header(a);
  out.append(data, a.nbytes());
  return out;
}

void save_npy(const std::string& path, const Array& a) {
  npy::check_savable(a, "save_npy", quoted(path));
  const char* data = static_cast<const char*>(a.raw_data("save_npy"));  // raises for tracers
  const std::string header = npy::build_header(a);
  detail::atomic_write("save_npy", path, [&](detail::Sink& sink) {
    sink.write(header.data(), header.size());
    sink.write(data, a.nbytes());
  });
}

Array load_npy_bytes(std::span<const uint8_t> bytes, std::string_view name) {
  const auto pre = npy::parse_preamble(bytes.first(std::min(bytes.size(), npy::kMaxPreambleLen)),
                                       bytes.size(), name);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + pre.header_offset,
                              pre.header_len);
  const npy::Header h = npy::parse_header(pre, text, bytes.size(), name);
  Array out = empty_array(Aval{h.shape, h.dtype, false}, "load_npy");
  npy::decode_payload(h, reinterpret_cast<const char*>(bytes.data()) + h.data_offset,
                      static_cast<char*>(out.buffer("load_npy")->data()));
  return out;
}

Array load_npy(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    throw ValueError(
        op_message("load_npy", "cannot open " + quoted(path) + ": " + os_error(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw ValueError(
        op_message("load_npy", "cannot stat " + quoted(path) + ": " + os_error(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw ValueError(op_message("load_npy", quoted(path) + " is a directory, not a .npy file"));
  }
  if (!S_ISREG(st.st_mode)) {
    throw ValueError(op_message("load_npy", quoted(path) +
                                                " is not a regular file (a device, FIFO or "
                                                "socket); load_npy reads files"));
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  auto changed = [&](size_t got, uint64_t want) {
    throw ValueError(
        op_message("load_npy", quoted(path) + " changed while it was read: " + std::to_string(got) +
                                   " of " + std::to_string(want) + " expected bytes"));
  };

  uint8_t head[npy::kMaxPreambleLen];
  const size_t head_len = static_cast<size_t>(std::min<uint64_t>(file_size, sizeof head));
  if (size_t got = pread_all(fd.get(), 0, reinterpret_cast<char*>(head), head_len, path);
      got != head_len)
    changed(got, head_len);
  const auto pre = npy::parse_preamble({head, head_len}, file_size, path);
  std::string text(pre.header_len, '\0');
  if (size_t got = pread_all(fd.get(), pre.header_offset, text.data(), text.size(), path);
      got != text.size())
    changed(got, text.size());
  const npy::Header h = npy::parse_header(pre, text, file_size, path);

  Array out = empty_array(Aval{h.shape, h.dtype, false}, "load_npy");
  char* dst = static_cast<char*>(out.buffer("load_npy")->data());
  // Plain C-order data is read in place; other layouts go through a scratch copy.
  const bool in_place = !h.fortran_order || h.shape.size() < 2;
  Array scratch = in_place ? out : empty_array(Aval{h.shape, h.dtype, false}, "load_npy");
  char* raw = static_cast<char*>(scratch.buffer("load_npy")->data());
  if (size_t got = pread_all(fd.get(), h.data_offset, raw, h.nbytes, path); got != h.nbytes)
    changed(got, h.nbytes);
  npy::decode_payload(h, raw, dst);  // in place: memcpy of a range onto itself is skipped
  return out;
}

}  // namespace tessera::io
