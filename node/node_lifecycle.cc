// node/node_lifecycle.cc: opening and shutdown state (node/node_lifecycle.h).
#include "node/node_lifecycle.h"

namespace leasehold::node {

std::vector<OpenGate::Waiter> OpenGate::settle(Status outcome) {
  if (outcome_) return {};
  outcome_ = std::move(outcome);
  std::vector<Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  return waiters;
}

std::vector<Shutdown::Waiter> Shutdown::complete_now() {
  complete_ = true;
  std::vector<Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  return waiters;
}

}  // namespace leasehold::node
