// common/process_group.h: a command run in its own process group, so that
// everything it starts (children, grandchildren, `cmd &`) can be stopped
// together. Used by `leasehold lock -- CMD`.
//
// ProcessGroup::start forks; the child makes itself the leader of a new
// process group (pgid == its pid) before exec, the parent sets the same
// group too (no race with the first signal). When stdin is a terminal whose
// foreground group is the caller's, the new group becomes the foreground
// group (CMD can read the terminal and gets Ctrl-C / Ctrl-Z itself); the
// caller's group gets the terminal back when the object is destroyed.
// The caller becomes a child subreaper (PR_SET_CHILD_SUBREAPER): descendants
// orphaned by their parent are re-parented to it and reaped by reap(), so a
// group whose members all exited is seen as empty (no zombies left to init).
//
// Stopping: stop(grace) sends SIGTERM to the whole group, and tick() sends
// SIGKILL to the whole group once `grace` has passed. Processes that left the
// group (setsid / setpgid, e.g. daemons) are out of its reach.
//
// Errors: start() returns kIoError when fork or pipe fails; when exec fails
// (the child reports its errno through a close-on-exec pipe and is reaped),
// kNotFound for ENOENT, else kIoError, both naming the command and the OS
// error: "cannot run 'cmd': No such file or directory".
// Thread-safety: one owner thread. The destructor does not stop the group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>

#include "common/child_exec.h"
#include "leasehold/status.h"

namespace leasehold::proc {

class ProcessGroup {
 public:
  using Clock = std::chrono::steady_clock;

  // Runs `plan` in a new process group. `pdeath_signal` (0: none) is sent to
  // the command if the caller's thread dies (even by SIGKILL).
  static Result<std::unique_ptr<ProcessGroup>> start(const ExecPlan& plan, int pdeath_signal);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  pid_t pgid() const { return pgid_; }
  // Reaps every exited child without blocking (the command and re-parented
  // orphans). Handles Ctrl-Z of a foreground command (see the .cc).
  void reap();
  // The command's wait status once it has exited (reap() saw it).
  std::optional<int> command_status() const { return status_; }
  // True when no process of the group is left (kill(-pgid, 0) == ESRCH).
  bool empty() const;
  // Sends `sig` to every process of the group (nothing when it is empty),
  // and to the command itself if it moved to another group.
  void signal(int sig) const;
  // SIGTERM (and SIGCONT) to the group now, then kill_after(grace).
  void stop(Clock::duration grace);
  // SIGKILL to the group at now + grace; an earlier SIGKILL time is kept.
  void kill_after(Clock::duration grace);
  bool stopping() const { return kill_at_.has_value(); }
  bool killed() const { return killed_; }
  // Sends the SIGKILL when it is due.
  void tick();

 private:
  ProcessGroup(pid_t pid, bool foreground) : pgid_(pid), foreground_(foreground) {}
  void on_command_stopped();

  pid_t pgid_;
  bool foreground_;  // the group owns the terminal (restored by the destructor)
  std::optional<int> status_;
  std::optional<Clock::time_point> kill_at_;
  bool killed_ = false;
};

}  // namespace leasehold::proc
