// cluster/cluster_member.cc: ClusterMember and the member part of its Impl:
// open (recovery from etcd), the follow path (the log watch's entries applied
// on the loop thread), the elected leader for redirects, and a step-down
// reported by the node. Campaign: cluster_campaign.cc; catch-up:
// cluster_catch_up.cc; the Impl and its threads: cluster_member_impl.h.
#include "cluster/cluster_member.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "cluster/cluster_member_impl.h"
#include "cluster/etcd_security.h"
#include "etcd/election.h"

namespace leasehold::cluster {
namespace {

constexpr std::size_t kMaxHeldEntries = 100'000;

}  // namespace

ClusterMember::Impl::Impl(ClusterOptions options, node::Executor post, FatalHandler on_fatal)
    : options_(std::move(options)), post_(std::move(post)), on_fatal_(std::move(on_fatal)) {}

ClusterMember::Impl::~Impl() {
  stop_all_.request_stop();
  cv_.notify_all();
  if (campaign_thread_.joinable()) campaign_thread_.join();
  if (catch_up_thread_.joinable()) catch_up_thread_.join();
  leader_watch_.reset();
  log_watch_.reset();
  barrier_.reset();
  if (node_ != nullptr) {
    // The node may outlive the member: its reads must not pass unconfirmed.
    node_->set_read_barrier([post = post_](std::function<void(Status)> done) {
      post([done = std::move(done)] { done(Status(ErrorCode::kUnavailable, "shutting down")); });
    });
  }
  loop_->alive = false;
  if (log_ != nullptr) log_->set_term(std::nullopt);
}

Status ClusterMember::Impl::open(node::NodeOptions node_options, node::Clock& clock) {
  auto co = etcd_client_options(options_);
  if (!co) return co.status();
  auto client = etcd::Client::create(*co);
  if (!client) return client.status();
  client_ = std::shared_ptr<etcd::Client>(std::move(client).value());
  log::EtcdLogOptions lo;
  lo.client = client_;
  lo.prefix = options_.prefix();
  lo.local_dir = options_.data_dir;
  lo.append_timeout = options_.append_timeout;
  node_options.cluster_mode = true;
  node_options.max_batch_bytes = std::min(node_options.max_batch_bytes, log::kEtcdMaxBatchBytes);
  // Recovery reads etcd. A just-started (or loaded, or down) etcd may miss
  // the first calls' deadline: retry kUnavailable for startup_wait (0: until
  // etcd answers), with backoff.
  const bool wait_forever = options_.startup_wait.count() == 0;
  const auto recover_until = std::chrono::steady_clock::now() + options_.startup_wait;
  std::chrono::milliseconds pause{200};
  bool access_checked = false;
  for (int attempt = 1;; ++attempt) {
    Status st = access_checked ? Status::ok() : client_->check_access(options_.prefix() + "/");
    if (st) {
      access_checked = true;
      auto log = log::EtcdLog::open(lo);
      if (!log) return log.status();
      log::EtcdLog* raw_log = log->get();
      auto node = node::Node::open(node_options, std::move(log).value(), clock, post_);
      if (node) {
        log_ = raw_log;  // owned by the node from here on (only then: ~Impl uses it)
        owned_node_ = std::move(node).value();
        break;
      }
      st = node.status();
    } else if (st.code() == ErrorCode::kInternal) {  // e.g. no permission
      // A role without rights is the deployment's configuration, not a bug:
      // the start fails as a refused configuration (exit 64).
      return Status(ErrorCode::kInvalidArgument,
                    "etcd access to the key prefix " + options_.prefix() + "/ refused: " + st.message());
    }
    if (st.code() != ErrorCode::kUnavailable || (!wait_forever && std::chrono::steady_clock::now() >= recover_until)) {
      return st;
    }
    spdlog::warn("cluster recovery: etcd unavailable, retrying in {} ms attempt={} error=\"{}\"", pause.count(),
                 attempt, st.to_string());
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(2 * pause, std::chrono::seconds(2));
  }
  node_ = owned_node_.get();
  applied_.store(node_->applied_index());
  node_->set_primary_address("", "no primary elected yet");
  node_->set_step_down_listener([this](const Status& why) { on_node_stepped_down(why); });
  barrier_ = std::make_unique<ReadBarrier>(client_, options_.prefix(), *node_, post_, [this](const Status& why) {
    if (node_->role() != node::Role::kPrimary) return;
    node_->step_down(why);
    on_node_stepped_down(why);
  });
  node_->set_read_barrier([this](std::function<void(Status)> done) { barrier_->request(std::move(done)); });
  spdlog::info("cluster node recovered prefix={} applied_index={} revision={}", options_.prefix(),
               node_->applied_index(), log_->read_revision());

  auto watch = start_log_watch(log_->read_revision() + 1, watch_generation_);
  if (!watch) return watch.status();
  set_log_watch(std::move(watch).value());
  auto leader_watch = start_leader_watch();
  if (!leader_watch) return leader_watch.status();
  set_leader_watch(std::move(leader_watch).value());
  refresh_leader();
  campaign_thread_ = std::thread([this] { campaign_loop(); });
  catch_up_thread_ = std::thread([this] { catch_up_loop(); });
  return Status::ok();
}

std::unique_ptr<node::Node> ClusterMember::Impl::take_node() { return std::move(owned_node_); }

std::string ClusterMember::Impl::primary_tls_address(const std::string& primary) const {
  return !primary.empty() && primary == leader_plain_ ? leader_tls_ : std::string();
}

Status ClusterMember::Impl::reload_etcd_password() {
  if (options_.etcd_password_file.empty()) return Status::ok();
  auto pass = read_etcd_password(options_.etcd_password_file);
  if (!pass) return pass.status();
  client_->set_password(std::move(pass).value());
  return Status::ok();
}

std::string ClusterMember::Impl::election_prefix() const { return options_.prefix() + "/election"; }

void ClusterMember::Impl::on_loop(std::function<void(Impl&)> task) {
  post_([loop = loop_, this, task = std::move(task)] {
    if (loop->alive) task(*this);
  });
}

void ClusterMember::Impl::fatal_later(Status why) {
  on_loop([why = std::move(why)](Impl& self) {
    spdlog::critical("cluster member failed error=\"{}\"", why.to_string());
    if (self.on_fatal_) self.on_fatal_(why);
  });
}

void ClusterMember::Impl::on_log_events(const std::vector<etcd::WatchEvent>& events) {
  std::vector<std::pair<log::LogIndex, std::string>> entries;
  for (const etcd::WatchEvent& e : events) {
    if (e.type != etcd::WatchEvent::Type::kPut) continue;  // deletions: log prefix after a snapshot
    auto index = log::EtcdLog::parse_log_key(options_.prefix(), e.kv.key);
    if (index) entries.emplace_back(*index, e.kv.value);
  }
  if (entries.empty()) return;
  on_loop([entries = std::move(entries)](Impl& self) {
    for (auto& [index, value] : entries) {
      self.log_->observe(index);
      self.held_.emplace(index, std::move(value));
    }
    self.apply_held();
  });
}

void ClusterMember::Impl::apply_held() {
  const log::LogIndex applied = node_->applied_index();
  held_.erase(held_.begin(), held_.upper_bound(applied));
  if (recovering_.load()) {
    // The catch-up applies the log up to its read; keep what the new watch
    // delivers after it. Too much: read again after this catch-up.
    if (held_.size() > kMaxHeldEntries) {
      held_.clear();
      recover_again_ = Status(ErrorCode::kLimitExceeded, "too many log entries held during a catch-up");
    }
    return;
  }
  if (node_->role() == node::Role::kStandby) {
    while (!held_.empty()) {
      auto it = held_.begin();
      auto batch = log::EtcdLog::entry_batch(it->second);
      Status st = batch ? node_->follow(it->first, *batch) : batch.status();
      if (!st) {
        if (st.code() == ErrorCode::kCorruption) return fatal_later(st);
        return request_catch_up(st);  // a log gap: reload from etcd
      }
      held_.erase(it);
    }
  } else if (held_.size() > kMaxHeldEntries) {
    // Another node writes the log: step down, drop them, catch up from etcd.
    held_.clear();
    return request_catch_up(Status(ErrorCode::kLimitExceeded, "too many log entries not applied by the primary"));
  }
  refresh_applied();
}

void ClusterMember::Impl::refresh_applied() {
  applied_.store(node_->applied_index());
  // Only the promotion wait needs to hear of it: waking the campaign and
  // catch-up threads for every commit of a primary costs two context
  // switches each (W2 on etcd gained 13% without them).
  if (promotion_waiting_.load()) cv_.notify_all();
}

void ClusterMember::Impl::refresh_leader() {
  const std::uint64_t read = leader_reads_.fetch_add(1) + 1;
  etcd::Election election(*client_, election_prefix());
  auto leader = election.leader();
  if (!leader) request_leader_refresh(kLeaderRetry);
  std::string own;
  {
    std::lock_guard lock(mu_);
    own = own_key_;
  }
  on_loop([leader = std::move(leader), own, read](Impl& self) {
    if (read < self.leader_read_applied_) return;  // a later read was applied already
    self.leader_read_applied_ = read;
    if (self.node_->role() == node::Role::kPrimary) return;
    if (!leader) return self.node_->set_primary_address("", leader.status().message());
    if (!leader->has_value()) return self.node_->set_primary_address("", "no primary elected");
    if ((*leader)->key == own) {
      return self.node_->set_primary_address("", "this node was elected and is catching up");
    }
    AdvertisedAddresses addresses = decode_advertised((*leader)->value);
    if (addresses.plain == self.options_.advertise) {
      // Our own key from a term this standby left, until its resign or lease
      // expiry deletes it (a watch event, so another read follows).
      return self.node_->set_primary_address("", "the election still names this node, which stepped down");
    }
    self.leader_plain_ = addresses.plain;
    self.leader_tls_ = std::move(addresses.tls);
    self.node_->set_primary_address(std::move(addresses.plain), "");
  });
}

void ClusterMember::Impl::leave_primary_role(const Status& why) {
  want_standby_watches(true);  // a standby follows the log and the election again
  log_->set_term(std::nullopt);
  barrier_->set_term(std::nullopt);
  node_->set_primary_address("",
                             why.code() == ErrorCode::kUnavailable ? why.message() : "stepped down: " + why.message());
  request_leader_refresh(std::chrono::milliseconds(0));  // read after this step-down
}

void ClusterMember::Impl::request_leader_refresh(std::chrono::milliseconds after) {
  const SteadyTime due = std::chrono::steady_clock::now() + after;
  {
    std::lock_guard lock(mu_);
    if (!leader_refresh_requested_ || due < leader_refresh_due_) leader_refresh_due_ = due;
    leader_refresh_requested_ = true;
  }
  cv_.notify_all();
}

void ClusterMember::Impl::on_node_stepped_down(const Status& why) {
  spdlog::warn("stepped down error=\"{}\"", why.to_string());
  leave_primary_role(why);
  apply_held();
  {
    std::lock_guard lock(mu_);
    stepped_down_ = true;
    step_down_why_ = why;
  }
  cv_.notify_all();
}

Result<std::unique_ptr<ClusterMember>> ClusterMember::start(const ClusterOptions& options,
                                                            node::NodeOptions node_options, node::Clock& clock,
                                                            node::Executor post, FatalHandler on_fatal) {
  if (!options.enabled()) return Status(ErrorCode::kInvalidArgument, "cluster mode needs --etcd endpoints");
  if (options.cluster_name.empty() || options.cluster_name.find('/') != std::string::npos) {
    return Status(ErrorCode::kInvalidArgument, "cluster name must be non-empty without '/'");
  }
  if (options.advertise.empty()) return Status(ErrorCode::kInvalidArgument, "cluster mode needs --advertise host:port");
  if (options.lease_ttl_s < 1 || options.lease_ttl_s > 600) {
    return Status(ErrorCode::kInvalidArgument, "etcd lease TTL must be 1..600 s");
  }
  if (!post) return Status(ErrorCode::kInvalidArgument, "cluster member needs an executor");
  auto impl = std::make_unique<Impl>(options, std::move(post), std::move(on_fatal));
  if (Status st = impl->open(std::move(node_options), clock); !st) return st;
  return std::unique_ptr<ClusterMember>(new ClusterMember(std::move(impl)));
}

ClusterMember::ClusterMember(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterMember::~ClusterMember() = default;
std::unique_ptr<node::Node> ClusterMember::take_node() { return impl_->take_node(); }
std::string ClusterMember::primary_tls_address(const std::string& primary) const {
  return impl_->primary_tls_address(primary);
}
Status ClusterMember::reload_etcd_password() { return impl_->reload_etcd_password(); }

CampaignStatus ClusterMember::campaign_status() const { return impl_->campaign_status(); }

}  // namespace leasehold::cluster
