// demo/child_process.h: the processes of the demo (workers, a private
// leasehold server, PostgreSQL's initdb/pg_ctl), started with fork/exec and
// controlled by signal.
//
// A ChildProcess owns one child. Its stdout can be a pipe the parent reads
// line by line (read_line), a log file, or inherited. The destructor sends
// SIGKILL (after SIGCONT, so a stopped child dies too) and reaps the child,
// so an aborted demo never leaves workers behind. Children started with
// `die_with_parent` also get SIGKILL from the kernel if the demo dies.
//
// Errors: spawn() returns kIoError when fork/exec fails (exec failure is
// reported through a close-on-exec pipe, so a missing binary is an error,
// not a child exiting 127). Waits return kTimedOut at their deadline.
// Thread-safety: one owner per object.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::demo {

using SteadyClock = std::chrono::steady_clock;

struct ChildSpec {
  std::vector<std::string> argv;                          // argv[0]: a path
  std::vector<std::pair<std::string, std::string>> env;   // added to ours
  bool pipe_stdout = false;       // true: read it with read_line()
  std::string output_path;        // stdout+stderr appended here ("" and !pipe_stdout: inherit)
  bool die_with_parent = false;   // PR_SET_PDEATHSIG SIGKILL
  std::optional<std::pair<uid_t, gid_t>> run_as;  // switch user (we are root)
  std::string cwd;                // "" : ours
};

class ChildProcess {
 public:
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;

  static Result<ChildProcess> spawn(const ChildSpec& spec);
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // The next line of the child's piped stdout (without '\n'); nullopt at
  // end of file. Errors: kTimedOut at `deadline`, kLimitExceeded for a line
  // over kMaxLineBytes, kIoError.
  Result<std::optional<std::string>> read_line(SteadyClock::time_point deadline);

  // Waits until the child is stopped (SIGSTOP / SIGTSTP). Errors:
  // kTimedOut, kInternal if it exited instead.
  Status wait_stopped(SteadyClock::time_point deadline);
  void signal(int sig) const;
  // Waits for exit; returns the exit code (128+signal if killed).
  // Errors: kTimedOut.
  Result<int> wait_exit(SteadyClock::time_point deadline);
  // True if the child has exited (reaps it).
  bool exited();
  // SIGCONT + SIGKILL, reap. Idempotent.
  void kill_now();

 private:
  ChildProcess(pid_t pid, int out_fd) : pid_(pid), out_fd_(out_fd) {}
  void close_pipe();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::optional<int> exit_code_;
  std::string buffer_;
  bool eof_ = false;
};

// Runs a child to its end (`timeout` bounded; killed then). Returns its exit
// code. Errors: spawn errors, kTimedOut.
Result<int> run_to_completion(const ChildSpec& spec, std::chrono::milliseconds timeout);

}  // namespace leasehold::demo
