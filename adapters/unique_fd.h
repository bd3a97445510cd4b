// Small RAII owners of OS resources (fmt's include/fmt/os.h habit): a file descriptor closed
// exactly once, whatever path leaves the scope, and a pipe / socket pair made of two of them.
// Every fork / exec / worker channel of the tool holds its descriptors in these, never as bare
// ints closed by hand on each error path.
#ifndef SAMPCERT_ADAPTERS_UNIQUE_FD_H_
#define SAMPCERT_ADAPTERS_UNIQUE_FD_H_

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace sampcert {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  // Gives up ownership without closing (the descriptor now belongs to the caller).
  int release() { return std::exchange(fd_, -1); }
  // Closes the current descriptor (if any; EINTR is not retried: on Linux the descriptor is
  // released even then) and takes `fd`.
  void reset(int fd = -1) {
    if (fd_ >= 0) {
      const int saved = errno;  // a destructor must not clobber the errno a caller reports
      ::close(fd_);
      errno = saved;
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Two connected ends: [0] reads and [1] writes for a pipe; both ways for a socket pair.
struct FdPair {
  UniqueFd ends[2];
  UniqueFd& operator[](int i) { return ends[i]; }
  const UniqueFd& operator[](int i) const { return ends[i]; }
};

// pipe2(O_CLOEXEC) into `out`; false with errno set on failure (out untouched).
inline bool MakePipe(FdPair* out, int flags = O_CLOEXEC) {
  int fds[2];
  if (::pipe2(fds, flags) != 0) return false;
  out->ends[0].reset(fds[0]);
  out->ends[1].reset(fds[1]);
  return true;
}

// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC) into `out`; false with errno set on failure.
inline bool MakeSocketPair(FdPair* out) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return false;
  out->ends[0].reset(fds[0]);
  out->ends[1].reset(fds[1]);
  return true;
}

}  // namespace sampcert

#endif  // SAMPCERT_ADAPTERS_UNIQUE_FD_H_
