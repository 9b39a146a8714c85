// node/cluster_role.h: ClusterRole, what a node is in its cluster
// (NodeOptions::cluster_mode; node/node_cluster.cc): primary or standby,
// where a standby sends clients (the primary's address, or why there is
// none), the hooks cluster/ installs (step-down listener, read barrier),
// and the entries a standby saw appended by another node while its own last
// append was still in flight (followed once that append completed).
// An embedded node is always primary and uses none of the rest.
//
// Errors: refusal() is the error a standby answers writes and keepalives
// with: kRedirect (the primary's address) or kUnavailable (the reason).
// Ownership: owns the hooks and the deferred entries' bytes.
// Thread-safety: loop thread only.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "leasehold/status.h"
#include "log/log.h"
#include "node/node.h"

namespace leasehold::node {

class ClusterRole {
 public:
  using StepDownListener = std::function<void(const Status&)>;
  using ReadBarrier = std::function<void(std::function<void(Status)>)>;

  Role role() const { return role_; }
  bool primary() const { return role_ == Role::kPrimary; }
  void set_role(Role role) { role_ = role; }

  Status refusal() const;
  const std::string& primary_address() const { return primary_address_; }
  void set_primary_address(std::string address, std::string unavailable_reason);
  void clear_primary_address() { primary_address_.clear(); }

  const StepDownListener& step_down_listener() const { return step_down_listener_; }
  void set_step_down_listener(StepDownListener listener) { step_down_listener_ = std::move(listener); }
  const ReadBarrier& read_barrier() const { return read_barrier_; }
  void set_read_barrier(ReadBarrier barrier) { read_barrier_ = std::move(barrier); }

  // Entries seen while an own append was in flight, in log order.
  void defer_follow(log::LogIndex index, std::string_view batch) { deferred_follows_.emplace_back(index, batch); }
  bool has_deferred_follows() const { return !deferred_follows_.empty(); }
  std::pair<log::LogIndex, std::string> take_deferred_follow();
  void clear_deferred_follows() { deferred_follows_.clear(); }

 private:
  Role role_ = Role::kPrimary;
  std::string primary_address_;
  std::string unavailable_reason_ = "no primary elected";
  StepDownListener step_down_listener_;
  ReadBarrier read_barrier_;
  std::deque<std::pair<log::LogIndex, std::string>> deferred_follows_;
};

}  // namespace leasehold::node
