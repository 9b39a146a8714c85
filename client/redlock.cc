// client/redlock.cc: Redlock over N independent servers (see the header).
#include "leasehold/redlock.h"

#include <random>
#include <thread>

#include "client/connection.h"

namespace leasehold::client {

namespace {

constexpr std::string_view kReleaseScript =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n"
    "    return redis.call(\"del\",KEYS[1])\n"
    "else\n"
    "    return 0\n"
    "end";

std::string random_value() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 20; ++i) {
    const unsigned byte = rd() & 0xffu;
    out += kHex[byte >> 4];
    out += kHex[byte & 0xfu];
  }
  return out;
}

}  // namespace

std::chrono::microseconds redlock_drift(Millis ttl) {
  return std::chrono::microseconds(ttl.count() * 10 + 2000);  // 1% of ttl (in us) + 2 ms
}

std::chrono::microseconds redlock_validity(Millis ttl, std::chrono::microseconds elapsed) {
  return std::chrono::duration_cast<std::chrono::microseconds>(ttl) - elapsed - redlock_drift(ttl);
}

struct Redlock::Impl {
  RedlockOptions options;
  std::vector<std::unique_ptr<detail::Connection>> conns;
  std::mt19937_64 rng{std::random_device{}()};

  Clock::time_point now() const { return options.clock ? options.clock() : Clock::now(); }

  // One command on server i, bounded by server_timeout; nullopt on failure.
  std::optional<resp::Value> call(std::size_t i, const std::vector<std::string>& args) {
    const auto deadline = Clock::now() + options.server_timeout;
    auto& conn = conns[i];
    if (conn == nullptr || conn->broken() || !conn->healthy_for_reuse()) {
      conn.reset();
      auto dialed = detail::Connection::dial(options.servers[i], deadline, -1, detail::Handshake{});
      if (!dialed) return std::nullopt;
      conn = std::move(dialed).value();
    }
    auto reply = conn->roundtrip(args, deadline, -1, {});
    if (!reply) {
      conn.reset();
      return std::nullopt;
    }
    return std::move(reply).value();
  }

  std::size_t release_all(std::string_view resource, const std::string& value) {
    std::size_t released = 0;
    for (std::size_t i = 0; i < conns.size(); ++i) {
      auto r = call(i, {"EVAL", std::string(kReleaseScript), "1", std::string(resource), value});
      if (r && r->type == resp::Type::kInteger && r->integer == 1) ++released;
    }
    return released;
  }
};

Redlock::Redlock(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Redlock::~Redlock() = default;

Result<std::unique_ptr<Redlock>> Redlock::create(RedlockOptions options) {
  if (options.servers.empty() || options.servers.size() > 64) {
    return Status(ErrorCode::kInvalidArgument, "Redlock needs 1 to 64 servers");
  }
  if (options.server_timeout.count() <= 0 || options.retry_count < 1 || options.retry_delay_max.count() < 0) {
    return Status(ErrorCode::kInvalidArgument, "server_timeout > 0, retry_count >= 1, retry_delay_max >= 0");
  }
  auto impl = std::make_unique<Impl>();
  impl->conns.resize(options.servers.size());
  impl->options = std::move(options);
  return std::unique_ptr<Redlock>(new Redlock(std::move(impl)));
}

std::size_t Redlock::quorum() const { return impl_->options.servers.size() / 2 + 1; }

std::optional<RedlockLease> Redlock::try_once(std::string_view resource, Millis ttl) {
  if (ttl.count() <= 0) return std::nullopt;
  RedlockLease lease;
  lease.resource = std::string(resource);
  lease.value = random_value();
  lease.acquired_at = impl_->now();
  for (std::size_t i = 0; i < impl_->conns.size(); ++i) {
    auto r = impl_->call(i, {"SET", lease.resource, lease.value, "NX", "PX", std::to_string(ttl.count())});
    if (r && r->type == resp::Type::kSimpleString && r->str == "OK") lease.granted_by.push_back(i);
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(impl_->now() - lease.acquired_at);
  lease.validity = redlock_validity(ttl, elapsed);
  if (lease.granted_by.size() >= quorum() && lease.validity.count() > 0) return lease;
  impl_->release_all(lease.resource, lease.value);
  return std::nullopt;
}

std::optional<RedlockLease> Redlock::lock(std::string_view resource, Millis ttl) {
  for (int attempt = 0; attempt < impl_->options.retry_count; ++attempt) {
    if (auto lease = try_once(resource, ttl)) return lease;
    if (attempt + 1 < impl_->options.retry_count && impl_->options.retry_delay_max.count() > 0) {
      std::uniform_int_distribution<std::int64_t> pause(0, impl_->options.retry_delay_max.count());
      std::this_thread::sleep_for(Millis(pause(impl_->rng)));
    }
  }
  return std::nullopt;
}

std::size_t Redlock::unlock(const RedlockLease& lease) { return impl_->release_all(lease.resource, lease.value); }

}  // namespace leasehold::client
