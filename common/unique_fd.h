// common/unique_fd.h: UniqueFd, the owner of one POSIX file descriptor.
//
// Closes the descriptor (if >= 0) when destroyed; movable, not copyable.
// close() errors are ignored: use it for descriptors whose close cannot lose
// data (sockets, read-only or already fsynced files). Thread-safety: one
// owner at a time, like the descriptor itself.
#pragma once

#include <unistd.h>

#include <utility>

namespace leasehold {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the descriptor held, if any.
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace leasehold
