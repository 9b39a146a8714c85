#include "server/fd_table_reserve.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace leasehold::server {

Result<FdReservation> reserve_fd_table(std::size_t n) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return Status(ErrorCode::kIoError, std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < n) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? n : std::min<rlim_t>(n, limit.rlim_max);
    if (raised.rlim_cur > limit.rlim_cur) {
      if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
        return Status(ErrorCode::kIoError, "setrlimit(RLIMIT_NOFILE, " + std::to_string(raised.rlim_cur) +
                                               "): " + std::strerror(errno));
      }
      limit = raised;
    }
  }
  FdReservation out;
  out.limit = limit.rlim_cur == RLIM_INFINITY ? n : static_cast<std::size_t>(limit.rlim_cur);
  const std::size_t want = std::min(n, out.limit);
  if (want == 0) return out;
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(ErrorCode::kIoError, std::string("open /dev/null: ") + std::strerror(errno));
  // The lowest free slot at or above want - 1: the table grows to hold it.
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(want - 1));
  const int err = errno;
  ::close(fd);
  if (high < 0) {
    return Status(ErrorCode::kIoError,
                  "fcntl(F_DUPFD, " + std::to_string(want - 1) + "): " + std::strerror(err));
  }
  ::close(high);
  out.slots = static_cast<std::size_t>(high) + 1;
  return out;
}

}  // namespace leasehold::server
