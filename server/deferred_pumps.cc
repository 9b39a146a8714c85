#include "server/deferred_pumps.h"

#include "server/connection.h"

namespace leasehold::server {

void DeferredPumps::run() {
  // Each pass pumps what the previous one added; a pump only adds another
  // connection whose reply it filled, which adds nothing again unless that
  // connection gets yet another reply: the passes end.
  while (!pending_.empty()) {
    running_.clear();
    running_.swap(pending_);
    for (const std::weak_ptr<Connection>& weak : running_) {
      if (auto connection = weak.lock()) connection->run_deferred_pump();
    }
  }
  running_.clear();
}

}  // namespace leasehold::server
