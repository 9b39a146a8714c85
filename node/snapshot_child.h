// node/snapshot_child.h: encodes a snapshot of the state machine in a forked
// child process, so the node's loop thread pays for fork() only, not for
// the encoding (NodeOptions::snapshot_in_child).
//
// fork() gives the child a copy-on-write image of the parent's memory at that
// instant: the child's state machine is exactly the parent's at the call,
// however the parent goes on changing its own. The child encodes it
// (StateMachine::snapshot(), the same bytes the parent would produce), writes
// them to a pipe and exits; finish() reads them in the parent. The parent's
// cost is the fork itself (copying page tables: milliseconds per GB of
// memory) plus, while the child runs, copying the pages the parent writes.
//
// The child runs no other code of the parent's: no threads (fork copies only
// the calling thread), no locks but malloc's (fork-safe in glibc), no
// destructors or atexit handlers (it leaves with _exit). It dies with the
// thread that forked it (PR_SET_PDEATHSIG), so it never outlives the node's
// loop by more than its encoding.
//
// Errors: start() returns kUnavailable when pipe() or fork() failed (e.g.
// no memory for the page tables); the caller encodes in process instead.
// finish() returns kIoError when reading failed or the child did not exit
// with status 0 (it crashed, was killed, or could not write).
// Ownership: a SnapshotChild owns the child and the pipe's read end; the
// destructor of one not finished kills and reaps the child.
// Thread-safety: start() on the node's loop thread (it reads the state);
// finish() on any one thread, once.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/unique_fd.h"
#include "core/state_machine.h"
#include "leasehold/status.h"

namespace leasehold::node {

class SnapshotChild {
 public:
  static Result<SnapshotChild> start(const core::StateMachine& state);

  SnapshotChild(SnapshotChild&& other) noexcept;
  SnapshotChild& operator=(SnapshotChild&&) = delete;
  SnapshotChild(const SnapshotChild&) = delete;
  SnapshotChild& operator=(const SnapshotChild&) = delete;
  ~SnapshotChild();

  // Blocks until the child wrote everything and exited; its bytes.
  Result<std::string> finish();

 private:
  SnapshotChild(pid_t pid, UniqueFd from_child) : pid_(pid), from_child_(std::move(from_child)) {}

  pid_t pid_ = -1;  // -1 once reaped
  UniqueFd from_child_;
};

}  // namespace leasehold::node
