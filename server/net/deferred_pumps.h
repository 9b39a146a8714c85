// server/net/deferred_pumps.h: connections whose replies were filled, pumped
// (replies moved to the output buffer, written, the next requests started)
// once per loop phase instead of once per reply.
//
// Why: a group commit answers a whole batch at once. Pumping the connection
// for each filled reply made one write(2) per reply: 1,024 of them for a
// batch of pipelined SESSION.OPENs. Deferred, the replies a connection got
// in one phase go out in one write.
//
// When: the server calls run() from its check handle (right after poll: the
// node's commits and the reads answered there) and from its prepare handle
// (right before poll: what timers and closes answered), so a reply never
// waits through a poll. A connection is added at most once per run
// (Connection tracks it); a connection that is gone by then is skipped.
//
// Order: connections added with `waited` (their oldest request was a
// blocking one, e.g. LOCK.ACQUIRE ... WAIT, and it is now answered) are
// pumped before the others added in the same pass. A hand-off's batch
// answers the release and grants the lock to the next waiter; the lock is
// idle until that waiter learns it holds it, while the releasing client's
// "+OK" gates nothing, so the grant's write(2) (which on loopback also runs
// the receiver's TCP path and wakes its thread) goes first. Within one
// connection replies still leave in request order; across connections no
// order was ever promised.
//
// Ownership: holds weak references only. Thread-safety: loop thread only.
// A template over the pumped type (anything with run_deferred_pump()) so
// the order can be tested without sockets; the server uses DeferredPumps.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace leasehold::server {

class Connection;

template <typename Pumped>
class DeferredPumpsOf {
 public:
  void add(std::weak_ptr<Pumped> pumped, bool waited) {
    (waited ? first_ : pending_).push_back(std::move(pumped));
  }

  // Pumps every added connection, including those added by these pumps,
  // until none is left. Each pass pumps what the previous one added, the
  // waited ones first; a pump only adds another connection whose reply it
  // filled, which adds nothing again unless that connection gets yet
  // another reply: the passes end.
  void run() {
    while (!first_.empty() || !pending_.empty()) {
      running_first_.clear();
      running_.clear();
      running_first_.swap(first_);
      running_.swap(pending_);
      for (const std::weak_ptr<Pumped>& weak : running_first_) pump(weak);
      for (const std::weak_ptr<Pumped>& weak : running_) pump(weak);
    }
    running_first_.clear();
    running_.clear();
  }

  bool empty() const { return first_.empty() && pending_.empty(); }

 private:
  static void pump(const std::weak_ptr<Pumped>& weak) {
    if (auto pumped = weak.lock()) pumped->run_deferred_pump();
  }

  std::vector<std::weak_ptr<Pumped>> first_;
  std::vector<std::weak_ptr<Pumped>> pending_;
  // Kept to reuse their capacity.
  std::vector<std::weak_ptr<Pumped>> running_first_;
  std::vector<std::weak_ptr<Pumped>> running_;
};

using DeferredPumps = DeferredPumpsOf<Connection>;

}  // namespace leasehold::server
