// File access for tessera::io: atomic saves and whole-file reads (see file_util.h).
#include "io/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "tessera/errors.h"

namespace tessera::io::detail {
namespace {

// A write(2) failure inside atomic_write's sink: turned into the ValueError there.
struct WriteFailure {
  int err;
};

class FdSink final : public Sink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  void write(const void* data, size_t n) override {
    auto p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, std::min<size_t>(n, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw WriteFailure{errno};
      }
      p += w;
      n -= static_cast<size_t>(w);
      size_ += static_cast<uint64_t>(w);
    }
  }
  uint64_t size() const override { return size_; }

 private:
  int fd_;
  uint64_t size_ = 0;
};

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
std::string resolve_symlinks(std::string_view op, const std::string& path) {
  std::string p = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    if (hops == 40) {
      throw ValueError(op_message(op, "cannot write " + quoted(path) + ": " + os_error(ELOOP)));
    }
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
    ssize_t n;
    while ((n = ::readlink(p.c_str(), buf.data(), buf.size())) >= 0 &&
           static_cast<size_t>(n) == buf.size())
      buf.resize(buf.size() * 2);  // the link grew since lstat
    if (n <= 0) {
      throw ValueError(op_message(op, "cannot write " + quoted(path) +
                                          ": cannot read the symlink " + quoted(p) + ": " +
                                          os_error(n < 0 ? errno : ENOENT)));
    }
    std::string link(buf.data(), static_cast<size_t>(n));
    p = link[0] == '/' ? link : dir_of(p) + "/" + link;
  }
}

}  // namespace

std::string printable(std::string_view s, size_t max) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 32 && c < 127 && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::close() {
  const int fd = fd_;
  fd_ = -1;
  return ::close(fd) == 0 ? 0 : errno;
}

std::string quoted(std::string_view s) {
  std::string out(1, '\'');
  out += s;
  out += '\'';
  return out;
}

std::string os_error(int err) { return std::strerror(err); }

void atomic_write(std::string_view op, const std::string& path,
                  const std::function<void(Sink&)>& emit) {
  if (path.empty()) throw ValueError(op_message(op, "the path is empty"));
  const std::string target = resolve_symlinks(op, path);
  const std::string what =
      quoted(path) + (target == path ? "" : " (a symlink to " + quoted(target) + ")");
  auto error = [&](const std::string& why) -> ValueError {
    return ValueError(op_message(op, "cannot write " + what + ": " + why));
  };

  struct stat st {};
  bool exists = true;
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) throw error(os_error(errno));
    exists = false;
  }
  if (exists && S_ISDIR(st.st_mode)) throw error("it is a directory");

  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO (/dev/stdout): it cannot be replaced by a rename, so write through it as
    // np.save does.
    Fd fd(::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (fd.get() < 0) throw error(os_error(errno));
    FdSink sink(fd.get());
    try {
      emit(sink);
    } catch (const WriteFailure& f) {
      throw error("write failed: " + os_error(f.err));
    }
    if (int err = fd.close()) throw error("close failed: " + os_error(err));
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
  FdSink sink(fd.get());
  try {
    emit(sink);
  } catch (const WriteFailure& f) {
    fail("write failed", f.err);
  } catch (...) {
    fd.close();
    ::unlink(tmp.c_str());
    throw;
  }
  // fsync before the rename: after a crash the target is the old file or the complete new one,
  // never a renamed but still empty one.
  if (::fsync(fd.get()) != 0 && errno != EINVAL) fail("fsync failed", errno);
  if (int err = fd.close()) {
    ::unlink(tmp.c_str());
    throw error("close failed: " + os_error(err) + " (any existing file is unchanged)");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw error("rename failed: " + os_error(err) + " (any existing file is unchanged)");
  }
  // Make the rename itself durable (best effort: some file systems refuse fsync on directories).
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() >= 0) (void)::fsync(dfd.get());
}

std::vector<uint8_t> read_file(std::string_view op, const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    throw ValueError(op_message(op, "cannot open " + quoted(path) + ": " + os_error(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw ValueError(op_message(op, "cannot stat " + quoted(path) + ": " + os_error(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw ValueError(op_message(op, quoted(path) + " is a directory, not a file"));
  }
  if (!S_ISREG(st.st_mode)) {
    throw ValueError(op_message(op, quoted(path) +
                                        " is not a regular file (a device, FIFO or socket); " +
                                        std::string(op) + " reads files"));
  }
  std::vector<uint8_t> out(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t r =
        ::pread(fd.get(), out.data() + done, std::min<size_t>(out.size() - done, size_t{1} << 30),
                static_cast<off_t>(done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw ValueError(op_message(op, "reading " + quoted(path) + " failed: " + os_error(errno)));
    }
    if (r == 0) {
      throw ValueError(op_message(op, quoted(path) +
                                          " changed while it was read: " + std::to_string(done) +
                                          " of " + std::to_string(out.size()) + " expected bytes"));
    }
    done += static_cast<size_t>(r);
  }
  return out;
}

}  // namespace tessera::io::detail
