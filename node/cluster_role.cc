// node/cluster_role.cc: the node's role in its cluster (node/cluster_role.h).
#include "node/cluster_role.h"

namespace leasehold::node {

Status ClusterRole::refusal() const {
  if (!primary_address_.empty()) return Status(ErrorCode::kRedirect, primary_address_);
  return Status(ErrorCode::kUnavailable, unavailable_reason_);
}

void ClusterRole::set_primary_address(std::string address, std::string unavailable_reason) {
  primary_address_ = std::move(address);
  unavailable_reason_ = std::move(unavailable_reason);
}

std::pair<log::LogIndex, std::string> ClusterRole::take_deferred_follow() {
  auto next = std::move(deferred_follows_.front());
  deferred_follows_.pop_front();
  return next;
}

}  // namespace leasehold::node
