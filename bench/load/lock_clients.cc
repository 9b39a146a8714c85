#include "bench/load/lock_clients.h"

#include <cstdio>
#include <thread>
#include <utility>

namespace leasehold::bench {
namespace {

Status unexpected(std::string_view command, const resp::Value& reply) {
  return Status(ErrorCode::kInternal,
                std::string(command) + " replied " + reply.debug_string());
}

std::string random_value(std::mt19937_64& rng) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(buf, 16);
}

}  // namespace

void LockClient::mark_granted() {
  Clock::time_point granted = Clock::now();
  // Taken now: a pipelined client stamps its next ACQUIRE before step() returns.
  acquire_latency_ = granted - acquire_sent_;
  handoff_ = std::chrono::nanoseconds(-1);
  if (release_clock_ == nullptr) return;
  std::int64_t released = release_clock_->load(std::memory_order_acquire);
  std::int64_t now = granted.time_since_epoch().count();
  if (released > 0 && released <= now) handoff_ = std::chrono::nanoseconds(now - released);
}

void LockClient::mark_release_sent() {
  if (release_clock_ == nullptr) return;
  release_clock_->store(Clock::now().time_since_epoch().count(), std::memory_order_release);
}

LeaseholdLockClient::LeaseholdLockClient(RespConnection conn, std::string lock_name,
                                         std::string owner, std::int64_t session_ttl_ms,
                                         bool wait, bool pipeline)
    : lock_name_(std::move(lock_name)),
      owner_(std::move(owner)),
      ttl_text_(std::to_string(session_ttl_ms)),
      conn_(std::move(conn)),
      wait_(wait),
      pipeline_(pipeline) {}

Status LeaseholdLockClient::setup() {
  auto reply = conn_.call({"SESSION.OPEN", ttl_text_, "OWNER", owner_});
  if (!reply) return reply.status();
  if (reply->type != resp::Type::kInteger) return unexpected("SESSION.OPEN", *reply);
  session_ = std::to_string(reply->integer);
  return Status::ok();
}

std::vector<std::string_view> LeaseholdLockClient::acquire_command() const {
  if (wait_) return {"LOCK.ACQUIRE", lock_name_, session_, "WAIT", "0"};
  return {"LOCK.ACQUIRE", lock_name_, session_};
}

Result<std::string> LeaseholdLockClient::read_grant() {
  acquire_pending_ = false;
  auto acquired = conn_.receive();
  if (!acquired) return acquired.status();
  if (acquired->type != resp::Type::kInteger) return unexpected("LOCK.ACQUIRE", *acquired);
  return std::to_string(acquired->integer);
}

Status LeaseholdLockClient::read_release_ok() {
  auto released = conn_.receive();
  if (!released) return released.status();
  if (released->type != resp::Type::kSimpleString || released->str != "OK") {
    return unexpected("LOCK.RELEASE", *released);
  }
  return Status::ok();
}

Result<bool> LeaseholdLockClient::step(Clock::time_point /*give_up*/) {
  if (!acquire_pending_) {
    mark_acquire_sent();
    if (Status s = conn_.send({acquire_command()}); !s) return s;
    acquire_pending_ = true;
  }
  auto token = read_grant();
  if (!token) return token.status();
  mark_granted();
  std::vector<std::string_view> release = {"LOCK.RELEASE", lock_name_, session_, *token};
  mark_release_sent();
  if (pipeline_) {
    mark_acquire_sent();  // the next cycle's ACQUIRE goes out with this RELEASE
    if (Status s = conn_.send({release, acquire_command()}); !s) return s;
    acquire_pending_ = true;
  } else if (Status s = conn_.send({release}); !s) {
    return s;
  }
  if (Status s = read_release_ok(); !s) return s;
  return true;
}

Status LeaseholdLockClient::finish() {
  if (session_.empty()) return Status::ok();
  if (acquire_pending_) {
    auto token = read_grant();
    if (!token) return token.status();
    if (Status s = conn_.send({{"LOCK.RELEASE", lock_name_, session_, *token}}); !s) return s;
    if (Status s = read_release_ok(); !s) return s;
  }
  auto reply = conn_.call({"SESSION.CLOSE", session_});
  if (!reply) return reply.status();
  if (reply->is_error()) return unexpected("SESSION.CLOSE", *reply);
  return Status::ok();
}

RedisLockClient::RedisLockClient(RespConnection conn, std::string key, std::int64_t lease_ms,
                                 std::chrono::microseconds retry_delay, std::uint64_t seed)
    : conn_(std::move(conn)),
      key_(std::move(key)),
      lease_text_(std::to_string(lease_ms)),
      retry_delay_(retry_delay),
      rng_(seed) {}

Result<bool> RedisLockClient::step(Clock::time_point give_up) {
  std::string value = random_value(rng_);
  mark_acquire_sent();
  for (;;) {
    auto set = conn_.call({"SET", key_, value, "NX", "PX", lease_text_});
    if (!set) return set.status();
    if (set->type == resp::Type::kSimpleString && set->str == "OK") break;
    if (!set->is_null()) return unexpected("SET NX PX", *set);
    if (Clock::now() >= give_up) return false;
    if (retry_delay_.count() > 0) std::this_thread::sleep_for(retry_delay_);
  }
  mark_granted();
  mark_release_sent();
  auto del = conn_.call({"EVAL", kRedisReleaseScript, "1", key_, value});
  if (!del) return del.status();
  if (del->type != resp::Type::kInteger || del->integer != 1) {
    return unexpected("EVAL compare-and-delete", *del);
  }
  return true;
}

}  // namespace leasehold::bench
