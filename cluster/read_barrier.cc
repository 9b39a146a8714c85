// cluster/read_barrier.cc: confirm leadership in etcd, then wait for the
// apply (see the header).
#include "cluster/read_barrier.h"

#include "cluster/etcd_security.h"
#include "etcd/election.h"
#include "log/etcd_log.h"

namespace leasehold::cluster {

ReadBarrier::ReadBarrier(std::shared_ptr<etcd::Client> client, std::string prefix, node::Node& node,
                         node::Executor post, DeposedHandler on_deposed)
    : client_(std::move(client)),
      prefix_(std::move(prefix)),
      node_(node),
      post_(std::move(post)),
      on_deposed_(std::move(on_deposed)) {
  worker_ = std::thread([this] { worker_loop(); });
}

ReadBarrier::~ReadBarrier() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
  *alive_ = false;
}

void ReadBarrier::set_term(std::optional<etcd::QueueKey> term) { term_ = std::move(term); }

void ReadBarrier::request(Done done) {
  if (!done) return;
  next_.push_back(std::move(done));
  if (!confirming_) start_next();
}

void ReadBarrier::start_next() {
  if (confirming_ || next_.empty()) return;
  if (!term_ || node_.role() != node::Role::kPrimary) {
    // Not primary: when_applied answers with the node's standby refusal.
    std::vector<Done> waiters = std::move(next_);
    next_.clear();
    for (Done& done : waiters) node_.when_applied(0, std::move(done));
    return;
  }
  confirming_ = true;
  ++confirmations_;
  in_flight_ = std::move(next_);
  next_.clear();
  {
    std::lock_guard lock(mu_);
    request_ = *term_;
  }
  cv_.notify_all();
}

void ReadBarrier::worker_loop() {
  for (;;) {
    etcd::QueueKey term;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || request_.has_value(); });
      if (stopping_) return;
      term = std::move(*request_);
      request_.reset();
    }
    Outcome outcome = confirm(term);
    post_([alive = alive_, this, term = std::move(term), outcome = std::move(outcome)]() mutable {
      if (*alive) finish(term, std::move(outcome));
    });
  }
}

ReadBarrier::Outcome ReadBarrier::confirm(const etcd::QueueKey& term) const {
  const std::string log_prefix = log::EtcdLog::log_prefix(prefix_);
  etcd::RangeOptions highest;
  highest.limit = 1;
  highest.keys_only = true;
  highest.sort_order = etcd::SortOrder::kDescend;
  highest.sort_target = etcd::SortTarget::kKey;
  auto r = client_->txn({etcd::still_owned(term)},
                        {etcd::TxnOp::get(log_prefix, etcd::prefix_end(log_prefix), highest)});
  Outcome out;
  if (!r) {
    std::string msg = r.status().message();
    if (msg.rfind("etcd unavailable", 0) != 0) msg = "etcd unavailable: " + msg;
    out.status = Status(ErrorCode::kUnavailable, msg);
    return out;
  }
  if (!r->succeeded) {
    out.deposed = true;
    const std::string why = "deposed: election key " + term.key + " is gone (lease expired or revoked)";
    etcd::Election election(*client_, prefix_ + "/election");
    auto leader = election.leader();
    if (leader && leader->has_value() && (*leader)->key != term.key && !(*leader)->value.empty()) {
      out.status = Status(ErrorCode::kRedirect, decode_advertised((*leader)->value).plain);
    } else {
      out.status = Status(ErrorCode::kUnavailable, why);
    }
    return out;
  }
  const auto* got = r->responses.empty() ? nullptr : std::get_if<etcd::RangeResult>(&r->responses[0]);
  if (got != nullptr && !got->kvs.empty()) {
    out.target = log::EtcdLog::parse_log_key(prefix_, got->kvs.front().key).value_or(0);
  }
  // No log key: everything was folded into a snapshot this node already
  // applied (only the primary stores snapshots), so target 0 is right.
  return out;
}

void ReadBarrier::finish(const etcd::QueueKey& term, Outcome outcome) {
  confirming_ = false;
  std::vector<Done> waiters = std::move(in_flight_);
  in_flight_.clear();
  const bool same_term = term_ && term_->key == term.key && term_->create_revision == term.create_revision;
  if (outcome.deposed && same_term && on_deposed_) {
    on_deposed_(Status(ErrorCode::kConflict, "deposed: election key " + term.key + " is gone (read barrier)"));
  }
  if (outcome.status.is_ok() && same_term) {
    // Share one apply wait among every waiter of this confirmation.
    auto shared = std::make_shared<std::vector<Done>>(std::move(waiters));
    node_.when_applied(outcome.target, [shared](Status st) {
      for (Done& done : *shared) done(st);
    });
  } else {
    Status error = outcome.status.is_ok()
                       ? Status(ErrorCode::kUnavailable, "the primary term changed during the read barrier")
                       : outcome.status;
    auto shared = std::make_shared<std::vector<Done>>(std::move(waiters));
    post_([alive = alive_, shared, error] {
      if (!*alive) return;
      for (Done& done : *shared) done(error);
    });
  }
  start_next();
}

}  // namespace leasehold::cluster
