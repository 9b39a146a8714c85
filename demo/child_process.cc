#include "demo/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>

#include "common/child_exec.h"

namespace leasehold::demo {
namespace {


Status errno_status(std::string_view what) {
  return Status(ErrorCode::kIoError, std::string(what) + ": " + std::strerror(errno));
}

[[noreturn]] void child_fail(int report_fd) {
  int e = errno;
  [[maybe_unused]] auto n = ::write(report_fd, &e, sizeof e);
  ::_exit(127);
}

[[noreturn]] void run_child(const ChildSpec& spec, const proc::ExecPlan& plan, int report_fd,
                            int stdout_write_fd, int log_fd, pid_t parent) {
  proc::reset_signals_in_child({SIGINT, SIGTERM, SIGPIPE, SIGHUP});
  if (spec.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
  }
  if (stdout_write_fd >= 0 && ::dup2(stdout_write_fd, STDOUT_FILENO) < 0) child_fail(report_fd);
  if (log_fd >= 0) {
    if (stdout_write_fd < 0 && ::dup2(log_fd, STDOUT_FILENO) < 0) child_fail(report_fd);
    if (::dup2(log_fd, STDERR_FILENO) < 0) child_fail(report_fd);
  }
  if (spec.run_as) {
    const gid_t gid = spec.run_as->second;
    if (::setgroups(1, &gid) != 0 || ::setgid(gid) != 0 || ::setuid(spec.run_as->first) != 0) {
      child_fail(report_fd);
    }
  }
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) child_fail(report_fd);
  ::execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  child_fail(report_fd);
}

}  // namespace

Result<ChildProcess> ChildProcess::spawn(const ChildSpec& spec) {
  if (spec.argv.empty()) return Status(ErrorCode::kInvalidArgument, "spawn: empty argv");
  // Built before fork: only async-signal-safe calls happen in the child.
  const proc::ExecPlan plan = proc::plan_exec(spec.argv, spec.env);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno_status("pipe2");
  int out[2] = {-1, -1};
  if (spec.pipe_stdout && ::pipe2(out, O_CLOEXEC) != 0) {
    ::close(report[0]);
    ::close(report[1]);
    return errno_status("pipe2");
  }
  int log_fd = -1;
  if (!spec.output_path.empty()) {
    log_fd = ::open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      Status st = errno_status("open " + spec.output_path);
      for (int fd : {report[0], report[1], out[0], out[1]}) {
        if (fd >= 0) ::close(fd);
      }
      return st;
    }
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    Status st = errno_status("fork");
    for (int fd : {report[0], report[1], out[0], out[1], log_fd}) {
      if (fd >= 0) ::close(fd);
    }
    return st;
  }
  if (pid == 0) run_child(spec, plan, report[1], out[1], log_fd, parent);

  ::close(report[1]);
  if (out[1] >= 0) ::close(out[1]);
  if (log_fd >= 0) ::close(log_fd);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  ChildProcess child(pid, out[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    child.kill_now();
    return Status(ErrorCode::kIoError,
                  "cannot start " + spec.argv[0] + ": " + std::strerror(child_errno));
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      out_fd_(std::exchange(other.out_fd_, -1)),
      exit_code_(std::exchange(other.exit_code_, std::nullopt)),
      buffer_(std::move(other.buffer_)),
      eof_(other.eof_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_now();
    close_pipe();
    pid_ = std::exchange(other.pid_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    exit_code_ = std::exchange(other.exit_code_, std::nullopt);
    buffer_ = std::move(other.buffer_);
    eof_ = other.eof_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  kill_now();
  close_pipe();
}

void ChildProcess::close_pipe() {
  if (out_fd_ >= 0) ::close(out_fd_);
  out_fd_ = -1;
}

Result<std::optional<std::string>> ChildProcess::read_line(SteadyClock::time_point deadline) {
  while (true) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return std::optional<std::string>(std::move(line));
    }
    if (buffer_.size() > kMaxLineBytes) {
      return Status(ErrorCode::kLimitExceeded, "child output line over 64 KiB");
    }
    if (eof_ || out_fd_ < 0) return std::optional<std::string>();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - SteadyClock::now());
    if (left.count() <= 0) return Status(ErrorCode::kTimedOut, "no output from the child in time");
    pollfd pfd{out_fd_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) return errno_status("poll");
    if (r <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(out_fd_, chunk, sizeof chunk);
    if (n < 0 && errno != EINTR && errno != EAGAIN) return errno_status("read");
    if (n == 0) eof_ = true;
    if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

Status ChildProcess::wait_stopped(SteadyClock::time_point deadline) {
  while (true) {
    if (exit_code_) return Status(ErrorCode::kInternal, "the child exited instead of stopping");
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG | WUNTRACED);
    if (r == pid_ && WIFSTOPPED(status)) return Status::ok();
    if (r == pid_ && (WIFEXITED(status) || WIFSIGNALED(status))) {
      exit_code_ = proc::exit_code_of(status, -1);
      continue;
    }
    if (SteadyClock::now() >= deadline) {
      return Status(ErrorCode::kTimedOut, "the child did not stop in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void ChildProcess::signal(int sig) const {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

bool ChildProcess::exited() {
  if (exit_code_) return true;
  if (pid_ <= 0) return true;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ && (WIFEXITED(status) || WIFSIGNALED(status))) {
    exit_code_ = proc::exit_code_of(status, -1);
    return true;
  }
  return false;
}

Result<int> ChildProcess::wait_exit(SteadyClock::time_point deadline) {
  while (!exited()) {
    if (SteadyClock::now() >= deadline) {
      return Status(ErrorCode::kTimedOut, "the child did not exit in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return exit_code_.value_or(-1);
}

void ChildProcess::kill_now() {
  if (pid_ <= 0 || exit_code_) return;
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  exit_code_ = r == pid_ ? proc::exit_code_of(status, -1) : -1;
}

Result<int> run_to_completion(const ChildSpec& spec, std::chrono::milliseconds timeout) {
  auto child = ChildProcess::spawn(spec);
  if (!child) return child.status();
  auto code = child->wait_exit(SteadyClock::now() + timeout);
  if (!code) {
    child->kill_now();
    return Status(ErrorCode::kTimedOut, spec.argv[0] + " did not finish within " +
                                            std::to_string(timeout.count()) + " ms");
  }
  return *code;
}

}  // namespace leasehold::demo
