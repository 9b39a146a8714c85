// cluster/cluster_campaign.cc: the campaign thread of ClusterMember::Impl
// (cluster_member_impl.h): hold an etcd lease, win the election, catch up to
// the highest log index etcd holds, promote, and step down when the lease is
// lost or the node stepped down; then campaign again with a new lease.
#include <spdlog/spdlog.h>

#include "cluster/cluster_member_impl.h"
#include "cluster/etcd_security.h"
#include "etcd/election.h"
#include "etcd/keepalive.h"

namespace leasehold::cluster {

bool ClusterMember::Impl::sleep_for(std::chrono::milliseconds d, const std::stop_token& stop) {
  std::unique_lock lock(mu_);
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop.stop_requested() && std::chrono::steady_clock::now() < until) {
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  return !stop.stop_requested();
}

void ClusterMember::Impl::campaign_loop() {
  const std::stop_token all = stop_all_.get_token();
  while (!all.stop_requested()) {
    auto grant = client_->lease_grant(options_.lease_ttl_s);
    if (!grant) {
      on_loop([why = grant.status()](Impl& self) {
        if (self.node_->role() == node::Role::kStandby) self.node_->set_primary_address("", why.message());
      });
      sleep_for(std::chrono::milliseconds(200), all);
      continue;
    }
    campaign_with_lease(*grant, all);
    (void)client_->lease_revoke(grant->id);  // best effort: the key goes now, not after the TTL
    {
      std::lock_guard lock(mu_);
      own_key_.clear();
    }
    if (!all.stop_requested()) sleep_for(std::chrono::milliseconds(100), all);
  }
}

void ClusterMember::Impl::campaign_with_lease(const etcd::LeaseGrant& grant, const std::stop_token& all) {
  std::stop_source lease_stop;
  std::stop_callback link(all, [&] { lease_stop.request_stop(); });
  Status lost_why;
  auto keepalive = etcd::LeaseKeepAlive::start(*client_, grant.id, grant.ttl_seconds, [&](const Status& why) {
    {
      std::lock_guard lock(mu_);
      lost_why = why;
    }
    lease_stop.request_stop();
    cv_.notify_all();
  });
  if (!keepalive) return;
  etcd::Election election(*client_, election_prefix());
  auto won = election.campaign(grant.id, encode_advertised({options_.advertise, options_.advertise_tls}),
                               std::chrono::steady_clock::now() + std::chrono::hours(24 * 365),
                               lease_stop.get_token());
  if (!won) return;
  const SteadyTime elected_at = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    own_key_ = won->key;
    stepped_down_ = false;
  }
  // Catch up: everything etcd holds now must be applied before we serve.
  log::LogIndex target = 0;
  for (;;) {
    if (lease_stop.stop_requested()) return;
    auto highest = log::EtcdLog::highest_index(*client_, options_.prefix());
    if (highest) {
      target = highest->first;
      break;
    }
    sleep_for(std::chrono::milliseconds(50), lease_stop.get_token());
  }
  {
    std::unique_lock lock(mu_);
    while (!lease_stop.stop_requested() && (applied_.load() < target || recovering_.load())) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  if (lease_stop.stop_requested()) return;
  const auto catch_up_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - elected_at);
  on_loop([key = *won, target, catch_up_ms](Impl& self) {
    if (self.node_->role() == node::Role::kPrimary) return;
    if (self.recovering_.load()) {
      // A catch-up began after the check above: not caught up; resign.
      {
        std::lock_guard lock(self.mu_);
        self.stepped_down_ = true;
        self.step_down_why_ = Status(ErrorCode::kUnavailable, "elected while catching up the log; campaigning again");
      }
      self.cv_.notify_all();
      return;
    }
    self.log_->set_term(key);
    self.barrier_->set_term(key);
    self.node_->promote();
    self.node_->set_primary_address("", "");
    spdlog::info("promoted to primary key={} term={} caught_up_to={} catch_up_ms={}", key.key,
                 key.create_revision, target, catch_up_ms.count());
  });
  {
    std::unique_lock lock(mu_);
    while (!lease_stop.stop_requested() && !stepped_down_) cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  Status why;
  {
    std::lock_guard lock(mu_);
    why = stepped_down_ ? step_down_why_
                        : (lost_why.is_ok() ? Status(ErrorCode::kUnavailable, "shutting down") : lost_why);
  }
  spdlog::warn("leaving primary role error=\"{}\"", why.to_string());
  on_loop([why](Impl& self) {
    self.log_->set_term(std::nullopt);
    self.barrier_->set_term(std::nullopt);
    self.node_->step_down(why);
    self.apply_held();
    if (self.node_->role() == node::Role::kStandby) {
      self.node_->set_primary_address(
          "", why.code() == ErrorCode::kUnavailable ? why.message() : "stepped down: " + why.message());
    }
  });
  (void)election.resign();
}

}  // namespace leasehold::cluster
