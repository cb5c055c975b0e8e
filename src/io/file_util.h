// File access shared by the .npy and .npz readers and writers (internal; tessera/io.h is the
// public API): whole-file reads with typed errors and the atomic save (temporary file, fsync,
// rename) that both save_npy and save_npz use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::io::detail {

// 's' -> "'s'" (built by appends: GCC 12 flags the operator+ chain with a false -Wrestrict).
std::string quoted(std::string_view s);
std::string os_error(int err);
// A name or header excerpt for a message: non-printable bytes as \xNN, at most `max` bytes.
std::string printable(std::string_view s, size_t max = 200);

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  // Closes now and reports close's error (0 or an errno).
  int close();

 private:
  int fd_;
};

// Where bytes go while a file is saved: write() either takes all `n` bytes or throws.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const void* p, size_t n) = 0;
  // Bytes written so far.
  virtual uint64_t size() const = 0;
};

class StringSink final : public Sink {
 public:
  void write(const void* p, size_t n) override {
    if (n) out.append(static_cast<const char*>(p), n);
  }
  uint64_t size() const override { return out.size(); }
  std::string out;
};

// Saves a file as np.save would leave it, but atomically: `emit` writes the whole contents into a
// uniquely named hidden temporary in the target's directory,
//   "." + the first 64 bytes of the target's file name + ".tmp" + <pid> + "." + <random>,
// which is fsync'ed and then renamed over the target (followed through symlinks, as open() does),
// so a reader sees either the old file or the complete new one, and a writer killed mid-save
// leaves at most such a temporary (never a file with the target's name). A replaced file keeps its
// mode and (where permitted) owner; a new one gets 0666 & ~umask. Devices and FIFOs are written
// through. `op` names the caller in errors: ValueError "[op] cannot write 'path': <why>". An
// exception thrown by `emit` removes the temporary and propagates unchanged.
void atomic_write(std::string_view op, const std::string& path,
                  const std::function<void(Sink&)>& emit);

// Reads a whole regular file (not a directory, FIFO or device: those raise ValueError naming
// `op` and the path, as do open/read errors and a file that shrinks while it is read).
std::vector<uint8_t> read_file(std::string_view op, const std::string& path);

}  // namespace tessera::io::detail
