// node/node_lifecycle.h: the two ends of a node's life.
//
// OpenGate: the outcome of this start's Reopen (node/revision_guard.h): set
// at open when there is none, else once it is applied (OK) or failed;
// Node::when_opened waits for it. It also keeps the end of the quarantine
// that Reopen sets (log time; 0 = none), known before it is applied.
//
// Shutdown: whether shutdown() was called, whether it completed, and the
// callbacks waiting for that (node/node_shutdown.cc).
//
// Errors: none. Ownership: owns the waiting callbacks until handed out; the
// node runs them. Thread-safety: loop thread only.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "leasehold/status.h"
#include "core/types.h"

namespace leasehold::node {

class OpenGate {
 public:
  using Waiter = std::function<void(Status)>;

  const std::optional<Status>& outcome() const { return outcome_; }
  bool opened() const { return outcome_ && outcome_->is_ok(); }
  void wait(Waiter done) { waiters_.push_back(std::move(done)); }
  // Sets the outcome once (later calls change nothing and return no one)
  // and returns the waiters to answer with it.
  std::vector<Waiter> settle(Status outcome);

  core::LogMillis reopen_quarantine_until() const { return reopen_quarantine_until_; }
  void set_reopen_quarantine_until(core::LogMillis until) { reopen_quarantine_until_ = until; }

 private:
  std::optional<Status> outcome_;
  std::vector<Waiter> waiters_;
  core::LogMillis reopen_quarantine_until_ = 0;
};

class Shutdown {
 public:
  using Waiter = std::function<void()>;

  bool requested() const { return requested_; }
  void request() { requested_ = true; }
  void wait(Waiter done) { waiters_.push_back(std::move(done)); }
  bool complete() const { return complete_; }
  // Marks it complete and returns the waiters to answer (none the second time).
  std::vector<Waiter> complete_now();

 private:
  bool requested_ = false;
  bool complete_ = false;
  std::vector<Waiter> waiters_;
};

}  // namespace leasehold::node
