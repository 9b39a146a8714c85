// cluster/read_barrier.h: the linearizable-read barrier of a cluster primary
// (docs/cluster.md, "Reads").
//
// Before a primary answers a read it proves, with one etcd round trip, that
// it still holds its election key and learns how far the log goes:
//   txn  if create_revision(own election key) == term
//        then range P/log/ (highest key only)
// etcd runs a txn through Raft (linearizable), so when it succeeds, at its
// revision R this node was still primary and the highest log index was N.
// Then the barrier waits until the node applied N (Node::when_applied): every
// write acknowledged by anyone before the read started is then visible.
//
// BATCHING: one confirmation is in flight at a time. Reads that arrive while
// it is in flight wait for the NEXT one (their read may have started after
// the in-flight txn was issued, so that one proves nothing for them); all of
// them share it. Under load: at most one etcd txn per round trip.
//
// ERRORS (the done's Status):
//   kUnavailable "etcd unavailable: ..."  etcd did not confirm in time
//   kRedirect <address>                   deposed, the new primary is known
//   kUnavailable "deposed: ..."           deposed, no new primary known yet
//   the node's standby refusal            not (or no longer) primary
// A deposed barrier also calls the deposed handler (the member steps down).
//
// Threading: every method runs on the loop thread; every done runs on it
// later (through the Executor), never inside request(). One background thread
// makes the etcd calls. Destroying the barrier (loop thread) joins it (at
// most one etcd call timeout); pending dones are then dropped without a call.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "etcd/client.h"
#include "etcd/key_queue.h"
#include "leasehold/status.h"
#include "log/log.h"
#include "node/clock.h"
#include "node/node.h"

namespace leasehold::cluster {

class ReadBarrier {
 public:
  using Done = std::function<void(Status)>;
  using DeposedHandler = std::function<void(const Status& why)>;

  // `prefix`: "/leasehold/<cluster>". `node` must outlive the barrier.
  ReadBarrier(std::shared_ptr<etcd::Client> client, std::string prefix, node::Node& node, node::Executor post,
              DeposedHandler on_deposed);
  ~ReadBarrier();
  ReadBarrier(const ReadBarrier&) = delete;
  ReadBarrier& operator=(const ReadBarrier&) = delete;

  // The election key this node holds as primary (nullopt: not primary).
  void set_term(std::optional<etcd::QueueKey> term);
  // Calls `done` once a confirmation that started after this call succeeded
  // and its log index is applied, or with the error (see ERRORS).
  void request(Done done);

  // Confirmations started since construction (for tests and INFO).
  std::uint64_t confirmations() const { return confirmations_; }

 private:
  struct Outcome {
    Status status;               // OK, or the error for every waiter
    log::LogIndex target = 0;    // highest log index at the txn's revision
    bool deposed = false;
  };
  void start_next();
  void finish(const etcd::QueueKey& term, Outcome outcome);
  void worker_loop();
  Outcome confirm(const etcd::QueueKey& term) const;

  std::shared_ptr<etcd::Client> client_;
  std::string prefix_;
  node::Node& node_;
  node::Executor post_;
  DeposedHandler on_deposed_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // loop thread only

  // Loop thread.
  std::optional<etcd::QueueKey> term_;
  std::vector<Done> next_;      // wait for the next confirmation
  std::vector<Done> in_flight_; // share the confirmation in flight
  bool confirming_ = false;
  std::uint64_t confirmations_ = 0;

  // Handed to the worker thread.
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<etcd::QueueKey> request_;  // guarded by mu_
  bool stopping_ = false;                  // guarded by mu_
  std::thread worker_;
};

}  // namespace leasehold::cluster
