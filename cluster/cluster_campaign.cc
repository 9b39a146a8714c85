// cluster/cluster_campaign.cc: the campaign thread of ClusterMember::Impl
// (cluster_member_impl.h): hold an etcd lease, win the election, catch up to
// the highest log index etcd holds, promote, and step down when the lease is
// lost or the node stepped down; then campaign again with a new lease.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <vector>

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

const char* phase_name(CampaignStatus::Phase phase) {
  switch (phase) {
    case CampaignStatus::Phase::kNoLease: return "no-lease";
    case CampaignStatus::Phase::kCandidate: return "candidate";
    case CampaignStatus::Phase::kCatchingUp: return "catching-up";
    case CampaignStatus::Phase::kPrimary: return "primary";
    case CampaignStatus::Phase::kSteppingDown: return "stepping-down";
  }
  return "unknown";
}

void ClusterMember::Impl::set_phase(CampaignStatus::Phase phase, std::string detail) {
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    changed = phase != phase_ || detail != phase_detail_;
    if (phase != phase_) phase_since_ = std::chrono::steady_clock::now();
    phase_ = phase;
    phase_detail_ = detail;
  }
  // One line per step (outside the lock), so a kept log shows where a campaign stalled.
  if (changed) spdlog::info("campaign phase={} detail=\"{}\"", phase_name(phase), detail);
}

CampaignStatus ClusterMember::Impl::campaign_status() const {
  std::lock_guard lock(mu_);
  CampaignStatus st;
  st.phase = phase_;
  st.detail = phase_detail_;
  st.in_phase =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - phase_since_);
  st.abandoned_leases = abandoned_leases_.size();
  st.abandoned_leases_revoked = abandoned_leases_revoked_;
  st.log_watch = log_watch_running_;
  st.leader_watch = leader_watch_running_;
  return st;
}

void ClusterMember::Impl::revoke_or_keep(std::int64_t lease) {
  const Status st = client_->lease_revoke(lease);  // the key goes now, not after the TTL
  if (st.is_ok() || st.code() == ErrorCode::kNotFound) return;
  spdlog::warn("could not revoke the election lease {:x}, revoking it once etcd answers error=\"{}\"", lease,
               st.to_string());
  std::lock_guard lock(mu_);
  abandoned_leases_.push_back(lease);
}

void ClusterMember::Impl::revoke_abandoned() {
  std::vector<std::int64_t> leases;
  {
    std::lock_guard lock(mu_);
    leases = abandoned_leases_;
  }
  for (const std::int64_t lease : leases) {
    // An etcd that restarted gave every lease a fresh TTL: without this its
    // key would stand ahead of ours for that long although nobody holds it.
    const Status st = client_->lease_revoke(lease);
    if (!st.is_ok() && st.code() != ErrorCode::kNotFound) return;  // etcd gone again: the next grant retries
    spdlog::info("revoked an abandoned election lease {:x} ({})", lease, st.is_ok() ? "revoked" : "already gone");
    std::lock_guard lock(mu_);
    std::erase(abandoned_leases_, lease);
    ++abandoned_leases_revoked_;
  }
}

void ClusterMember::Impl::campaign_loop() {
  const std::stop_token all = stop_all_.get_token();
  while (!all.stop_requested()) {
    auto grant = client_->lease_grant(options_.lease_ttl_s);
    if (!grant) {
      set_phase(CampaignStatus::Phase::kNoLease, "lease grant failed: " + grant.status().to_string());
      // A standby keeps redirecting to the primary while it cannot campaign;
      // whether etcd still names one is for a fresh read of the election to say.
      request_leader_refresh(std::chrono::milliseconds(0));
      sleep_for(std::chrono::milliseconds(200), all);
      continue;
    }
    revoke_abandoned();
    campaign_with_lease(*grant, all);
    revoke_or_keep(grant->id);
    {
      std::lock_guard lock(mu_);
      own_key_.clear();
    }
    set_phase(CampaignStatus::Phase::kNoLease, "");
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
  set_phase(CampaignStatus::Phase::kCandidate, fmt::format("lease {:x}", grant.id));
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
  set_phase(CampaignStatus::Phase::kCatchingUp, "elected as " + won->key);
  // Catch up: everything etcd holds now must be applied before we serve.
  log::LogIndex target = 0;
  for (;;) {
    if (lease_stop.stop_requested()) return;
    auto highest = log::EtcdLog::highest_index(*client_, options_.prefix());
    if (highest) {
      target = highest->first;
      break;
    }
    set_phase(CampaignStatus::Phase::kCatchingUp,
              fmt::format("elected as {}; reading the highest log index failed: {}", won->key,
                          highest.status().to_string()));
    sleep_for(std::chrono::milliseconds(50), lease_stop.get_token());
  }
  set_phase(CampaignStatus::Phase::kCatchingUp, fmt::format("elected as {}; to log index {}", won->key, target));
  {
    std::unique_lock lock(mu_);
    promotion_waiting_.store(true);  // before reading applied_: see refresh_applied()
    while (!lease_stop.stop_requested() && (applied_.load() < target || recovering_.load())) {
      // applied_ follows the log watch. An own append that completed after
      // its entry came back on the watch (and after a step-down made the
      // node defer that entry) advances the node without any new event, so
      // waiting for the watch alone could wait forever: ask the node.
      lock.unlock();
      on_loop([](Impl& self) { self.refresh_applied(); });
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
    promotion_waiting_.store(false);
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
    self.want_standby_watches(false);  // it applies its own appends and knows it leads
    self.node_->set_primary_address("", "");
    self.set_phase(CampaignStatus::Phase::kPrimary, key.key);
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
  set_phase(CampaignStatus::Phase::kSteppingDown, why.to_string());
  spdlog::warn("leaving primary role error=\"{}\"", why.to_string());
  on_loop([why](Impl& self) {
    self.node_->step_down(why);
    self.leave_primary_role(why);
    self.apply_held();
  });
  (void)election.resign();
}

}  // namespace leasehold::cluster
