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

#include "io/npy.h"
#include "tessera/errors.h"
#include "tessera/io.h"

namespace tessera::io {
namespace {

// Built by appends: GCC 12 flags the equivalent operator+ chain with a false -Wrestrict.
std::string quoted(std::string_view s) {
  std::string out(1, '\'');
  out += s;
  out += '\'';
  return out;
}
std::string os_error(int err) { return std::strerror(err); }

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports close's error (0 or an errno).
  int close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

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

void check_savable(const Array& a, const std::string& where) {
  if (!a.defined()) {
    throw ValueError(op_message("save_npy", "the Array handle is empty (default-constructed)"));
  }
  if (a.dtype() == DType::kBFloat16) {
    throw TypeError(
        op_message("save_npy", "NumPy has no bfloat16; convert to float32 first (saving " +
                                   a.aval().str() + " to " + where + ")"));
  }
  if (npy::descr_of(a.dtype()).empty()) {
    throw TypeError(op_message("save_npy", "dtype " + std::string(dtype_name(a.dtype())) +
                                               " has no NumPy equivalent; cannot save " +
                                               a.aval().str() + " to " + where));
  }
}

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Follows `path` through symlinks to the file np.save would write (open() follows them too): the
// link stays a link and its target gets the new contents. A dangling link yields its target.
std::string resolve_symlinks(const std::string& path) {
  std::string p = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    if (hops == 40) {
      throw ValueError(
          op_message("save_npy", "cannot write " + quoted(path) + ": " + os_error(ELOOP)));
    }
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
    ssize_t n;
    while ((n = ::readlink(p.c_str(), buf.data(), buf.size())) >= 0 &&
           static_cast<size_t>(n) == buf.size())
      buf.resize(buf.size() * 2);  // the link grew since lstat
    if (n <= 0) {
      throw ValueError(op_message("save_npy", "cannot write " + quoted(path) +
                                                  ": cannot read the symlink " + quoted(p) + ": " +
                                                  os_error(n < 0 ? errno : ENOENT)));
    }
    std::string link(buf.data(), static_cast<size_t>(n));
    p = link[0] == '/' ? link : dir_of(p) + "/" + link;
  }
}

}  // namespace

std::string save_npy_bytes(const Array& a) {
  check_savable(a, "memory");
  const char* data = static_cast<const char*>(a.raw_data("save_npy"));
  std::string out = npy::build_header(a);
  out.append(data, a.nbytes());
  return out;
}

void save_npy(const std::string& path, const Array& a) {
  check_savable(a, quoted(path));
  if (path.empty()) throw ValueError(op_message("save_npy", "the path is empty"));
  const void* data = a.raw_data("save_npy");  // raises for tracers and deleted arrays
  const std::string header = npy::build_header(a);
  const std::string target = resolve_symlinks(path);
  const std::string what =
      quoted(path) + (target == path ? "" : " (a symlink to " + quoted(target) + ")");
  auto error = [&](const std::string& why) -> ValueError {
    return ValueError(op_message("save_npy", "cannot write " + what + ": " + why));
  };

  struct stat st {};
  bool exists = true;
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) throw error(os_error(errno));
    exists = false;
  }
  if (exists && S_ISDIR(st.st_mode)) throw error("it is a directory");

  auto write_all = [&](int fd, const char* p, size_t n) -> int {
    while (n > 0) {
      const ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return 0;
  };
  const char* bytes = static_cast<const char*>(data);

  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO (/dev/stdout): it cannot be replaced by a rename, so write through it as
    // np.save does.
    Fd fd(::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (fd.get() < 0) throw error(os_error(errno));
    int err = write_all(fd.get(), header.data(), header.size());
    if (!err) err = write_all(fd.get(), bytes, a.nbytes());
    if (!err) err = fd.close();
    if (err) throw error("write failed: " + os_error(err));
    return;
  }

  // Write a uniquely named hidden sibling of the target, then rename it over the target: readers
  // see either the old file or the complete new one. The name is kept short (NAME_MAX).
  const std::string dir = dir_of(target);
  std::string stem(1, '.');
  stem += base_of(target).substr(0, 64);
  stem += ".tmp";
  std::random_device rd;
  std::string tmp;
  int raw_fd = -1;
  for (int attempt = 0; attempt < 16 && raw_fd < 0; ++attempt) {
    tmp = dir + "/" + stem + std::to_string(::getpid()) + "." + std::to_string(rd());
    // 0600 while it is written when it replaces a file (its mode is copied below); a new file
    // gets open's usual 0666 & ~umask, as np.save's open() gives it.
    raw_fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
    if (raw_fd < 0 && errno != EEXIST) break;
  }
  if (raw_fd < 0) throw error(os_error(errno) + " (in directory " + quoted(dir) + ")");
  Fd fd(raw_fd);
  auto fail = [&](const std::string& step, int err) {
    fd.close();
    ::unlink(tmp.c_str());
    throw error(step + ": " + os_error(err) +
                " (nothing was written; any existing file is "
                "unchanged)");
  };
  if (exists) {
    // Keep the replaced file's owner and mode. Only root may give a file away: without that
    // right the owner becomes the saver and set-id bits are dropped.
    mode_t mode = st.st_mode & 07777;
    if (::fchown(fd.get(), st.st_uid, st.st_gid) != 0) {
      if (errno != EPERM) fail("fchown failed", errno);
      mode &= 0777;
    }
    if (::fchmod(fd.get(), mode) != 0) fail("fchmod failed", errno);
  }
  if (int err = write_all(fd.get(), header.data(), header.size())) fail("write failed", err);
  if (int err = write_all(fd.get(), bytes, a.nbytes())) fail("write failed", err);
  // No fsync: the rename protects readers from partial files when a save fails or the process
  // dies; durability across power loss is not promised (np.save does not either).
  if (int err = fd.close()) {
    ::unlink(tmp.c_str());
    throw error("close failed: " + os_error(err) + " (any existing file is unchanged)");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw error("rename failed: " + os_error(err) + " (any existing file is unchanged)");
  }
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
