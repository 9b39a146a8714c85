// server/deferred_pumps.h: connections whose replies were filled, pumped
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
// Ownership: holds weak references only. Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace leasehold::server {

class Connection;

class DeferredPumps {
 public:
  void add(std::weak_ptr<Connection> connection) { pending_.push_back(std::move(connection)); }

  // Pumps every added connection, including those added by these pumps,
  // until none is left.
  void run();

  bool empty() const { return pending_.empty(); }

 private:
  std::vector<std::weak_ptr<Connection>> pending_;
  std::vector<std::weak_ptr<Connection>> running_;  // kept to reuse its capacity
};

}  // namespace leasehold::server
