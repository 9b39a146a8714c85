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

LeaseholdLockClient::LeaseholdLockClient(RespConnection conn, std::string lock_name,
                                         std::string owner, std::int64_t session_ttl_ms,
                                         bool wait)
    : conn_(std::move(conn)),
      lock_name_(std::move(lock_name)),
      owner_(std::move(owner)),
      ttl_text_(std::to_string(session_ttl_ms)),
      wait_(wait) {}

Status LeaseholdLockClient::setup() {
  auto reply = conn_.call({"SESSION.OPEN", ttl_text_, "OWNER", owner_});
  if (!reply) return reply.status();
  if (reply->type != resp::Type::kInteger) return unexpected("SESSION.OPEN", *reply);
  session_ = std::to_string(reply->integer);
  return Status::ok();
}

Result<bool> LeaseholdLockClient::step(Clock::time_point /*give_up*/) {
  Result<resp::Value> acquired =
      wait_ ? conn_.call({"LOCK.ACQUIRE", lock_name_, session_, "WAIT", "0"})
            : conn_.call({"LOCK.ACQUIRE", lock_name_, session_});
  if (!acquired) return acquired.status();
  if (acquired->type != resp::Type::kInteger) return unexpected("LOCK.ACQUIRE", *acquired);
  std::string token = std::to_string(acquired->integer);
  auto released = conn_.call({"LOCK.RELEASE", lock_name_, session_, token});
  if (!released) return released.status();
  if (released->type != resp::Type::kSimpleString || released->str != "OK") {
    return unexpected("LOCK.RELEASE", *released);
  }
  return true;
}

Status LeaseholdLockClient::finish() {
  if (session_.empty()) return Status::ok();
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
  for (;;) {
    auto set = conn_.call({"SET", key_, value, "NX", "PX", lease_text_});
    if (!set) return set.status();
    if (set->type == resp::Type::kSimpleString && set->str == "OK") break;
    if (!set->is_null()) return unexpected("SET NX PX", *set);
    if (Clock::now() >= give_up) return false;
    if (retry_delay_.count() > 0) std::this_thread::sleep_for(retry_delay_);
  }
  auto del = conn_.call({"EVAL", kRedisReleaseScript, "1", key_, value});
  if (!del) return del.status();
  if (del->type != resp::Type::kInteger || del->integer != 1) {
    return unexpected("EVAL compare-and-delete", *del);
  }
  return true;
}

}  // namespace leasehold::bench
