// etcd/mutex.h: etcd's own distributed lock recipe (like etcd's
// concurrency.Mutex), used as the benchmark baseline for leasehold.
//
// lock(): put "<prefix>/<lease hex>" with the caller's lease in a txn
// guarded by create_revision == 0, then wait until no key under the prefix
// has a lower create revision (watching only the predecessor). The holder's
// create revision is a usable fencing token (it increases across holders).
// unlock(): delete the own key. A crashed holder's key goes with its lease.
//
// Thread-safety: one thread at a time per Mutex object. The Client must
// outlive the Mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>

#include "etcd/client.h"
#include "etcd/key_queue.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

class Mutex {
 public:
  Mutex(Client& client, std::string prefix);

  // Blocks until held. Errors: kTimedOut (deadline passed or stop
  // requested), kSessionExpired (lease gone), client errors. On any error
  // the own key is deleted (best effort) and the lock is not held.
  Status lock(std::int64_t lease, std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});
  // Releases; OK if not held. Errors: client errors (the key then stays
  // until its lease ends).
  Status unlock();

  // The held key (its create_revision is the fencing token), if held.
  const std::optional<QueueKey>& held() const { return held_; }

 private:
  Client& client_;
  std::string prefix_;
  std::optional<QueueKey> held_;
};

}  // namespace leasehold::etcd
