// common/process_group.cc: see the header.
#include "common/process_group.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace leasehold::proc {
namespace {

// Hands the terminal on stdin to `pgid`. SIGTTOU is blocked meanwhile: a
// process outside the foreground group may then still call tcsetpgrp.
// Async-signal-safe (also used in the child between fork and exec).
void give_terminal(pid_t pgid) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &ttou, &old);
  ::tcsetpgrp(STDIN_FILENO, pgid);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

// `error_fd`: the write end of a close-on-exec pipe; exec failing writes
// its errno there (a successful exec closes it).
[[noreturn]] void exec_in_child(const ExecPlan& plan, pid_t parent, int pdeath_signal, bool foreground,
                                int error_fd) {
  ::setpgid(0, 0);
  if (foreground) give_terminal(::getpid());
  reset_signals_in_child({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU});
  if (pdeath_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, pdeath_signal);
    if (::getppid() != parent) ::_exit(128 + pdeath_signal);  // the parent died before prctl
  }
  ::execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
  const int err = errno;
  [[maybe_unused]] auto n = ::write(error_fd, &err, sizeof err);
  ::_exit(err == ENOENT ? 127 : 126);
}

// The errno the child wrote to `fd`, or 0 once exec succeeded (EOF).
int read_exec_errno(int fd) {
  int err = 0;
  std::size_t got = 0;
  while (got < sizeof err) {
    const ssize_t r = ::read(fd, reinterpret_cast<char*>(&err) + got, sizeof err - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    got += static_cast<std::size_t>(r);
  }
  return err;
}

}  // namespace

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::start(const ExecPlan& plan, int pdeath_signal) {
  // Orphaned descendants come to us (and are reaped by reap()), not to init.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const bool foreground = ::isatty(STDIN_FILENO) == 1 && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  const pid_t parent = ::getpid();
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) return Status(ErrorCode::kIoError, std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(error_pipe[0]);
    ::close(error_pipe[1]);
    return Status(ErrorCode::kIoError, std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) exec_in_child(plan, parent, pdeath_signal, foreground, error_pipe[1]);
  ::close(error_pipe[1]);
  const int exec_errno = read_exec_errno(error_pipe[0]);
  ::close(error_pipe[0]);
  if (exec_errno != 0) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (foreground) give_terminal(::getpgrp());
    return Status(exec_errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIoError,
                  "cannot run '" + std::string(plan.argv[0]) + "': " + std::strerror(exec_errno));
  }
  // Also here, so that a signal sent right after start() reaches the group.
  // EACCES (the child already ran exec) means it did it itself.
  ::setpgid(pid, pid);
  if (foreground) give_terminal(pid);
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(pid, foreground));
}

ProcessGroup::~ProcessGroup() {
  if (foreground_) give_terminal(::getpgrp());
}

void ProcessGroup::reap() {
  while (true) {
    int st = 0;
    const pid_t r = ::waitpid(-1, &st, WNOHANG | (foreground_ ? WUNTRACED : 0));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;  // nothing more now (0), or no children left (ECHILD)
    if (r != pgid_) continue;  // a re-parented orphan: reaped
    if (WIFSTOPPED(st)) {
      on_command_stopped();
      continue;
    }
    status_ = st;
  }
}

// Ctrl-Z stopped the foreground command: stop ourselves too, as a shell
// expects of its foreground job; when continued (`fg`), give the terminal back
// and continue the group.
void ProcessGroup::on_command_stopped() {
  give_terminal(::getpgrp());
  ::kill(::getpid(), SIGSTOP);
  give_terminal(pgid_);
  signal(SIGCONT);
}

bool ProcessGroup::empty() const { return ::kill(-pgid_, 0) != 0 && errno == ESRCH; }

void ProcessGroup::signal(int sig) const {
  ::kill(-pgid_, sig);
  if (!status_ && ::getpgid(pgid_) != pgid_) ::kill(pgid_, sig);  // the command left the group
}

void ProcessGroup::stop(Clock::duration grace) {
  signal(SIGTERM);
  signal(SIGCONT);  // a stopped process cannot act on SIGTERM
  kill_after(grace);
}

void ProcessGroup::kill_after(Clock::duration grace) {
  if (!kill_at_) kill_at_ = Clock::now() + grace;
}

void ProcessGroup::tick() {
  if (kill_at_ && !killed_ && Clock::now() >= *kill_at_) {
    killed_ = true;
    signal(SIGKILL);
  }
}

}  // namespace leasehold::proc
