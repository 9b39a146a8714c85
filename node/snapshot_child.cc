#include "node/snapshot_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace leasehold::node {
namespace {

Status errno_status(ErrorCode code, const char* what) {
  return Status(code, std::string("snapshot child: ") + what + ": " + std::strerror(errno));
}

// In the child: encode, write, leave. Never returns.
[[noreturn]] void run_child(const core::StateMachine& state, pid_t parent, int fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(2);  // the forking thread is already gone
  ::signal(SIGPIPE, SIG_DFL);             // a reader that went away ends the child
  const std::string bytes = state.snapshot();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    done += static_cast<std::size_t>(n);
  }
  ::_exit(0);
}

// Waits for `pid`; its wait status, or -1.
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

}  // namespace

Result<SnapshotChild> SnapshotChild::start(const core::StateMachine& state) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno_status(ErrorCode::kUnavailable, "pipe");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return errno_status(ErrorCode::kUnavailable, "fork");
  if (pid == 0) run_child(state, parent, write_end.get());
  return SnapshotChild(pid, std::move(read_end));  // write_end closes here: EOF when the child exits
}

SnapshotChild::SnapshotChild(SnapshotChild&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), from_child_(std::move(other.from_child_)) {}

SnapshotChild::~SnapshotChild() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);  // not reaped yet, so the pid is still ours
  reap(pid_);
}

Result<std::string> SnapshotChild::finish() {
  std::string bytes;
  Status read_error;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(from_child_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_error = errno_status(ErrorCode::kIoError, "read");
    if (n <= 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  from_child_.reset();
  const int status = reap(std::exchange(pid_, -1));
  if (!read_error.is_ok()) return read_error;
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status(ErrorCode::kIoError, "snapshot child failed (wait status " + std::to_string(status) + ")");
  }
  return bytes;
}

}  // namespace leasehold::node
