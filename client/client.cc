#include "leasehold/client.h"

#include <algorithm>
#include <charconv>

#include "client/client_core.h"
#include "client/decode.h"

namespace leasehold::client {
namespace {

using detail::CallSpec;
using detail::Retry;

constexpr std::size_t kMaxEndpoints = 64;
constexpr std::size_t kListPage = 1000;  // items per SESSION.LIST / LOCK.LIST page

std::string ms_arg(Millis ms) { return std::to_string(ms.count()); }

}  // namespace

std::string Endpoint::to_string() const {
  const std::string scheme = tls ? "tls://" : "";
  if (host.find(':') != std::string::npos) return scheme + "[" + host + "]:" + std::to_string(port);
  return scheme + host + ":" + std::to_string(port);
}

Result<Endpoint> parse_endpoint(std::string_view text) {
  const std::string original(text);
  auto bad = [&](std::string_view why) {
    return Status(ErrorCode::kInvalidArgument, "bad endpoint '" + original + "': " + std::string(why));
  };
  std::string_view host;
  std::string_view port;
  const bool tls = text.substr(0, 6) == "tls://";
  if (tls) text.remove_prefix(6);
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("expected [ipv6]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("expected host:port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return bad("write IPv6 as [addr]:port");
  }
  if (host.empty()) return bad("empty host");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
    return bad("port must be 1..65535");
  }
  return Endpoint{std::string(host), static_cast<std::uint16_t>(value), tls};
}

Result<std::vector<Endpoint>> parse_endpoints(std::string_view text) {
  std::vector<Endpoint> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      auto ep = parse_endpoint(item);
      if (!ep) return ep.status();
      out.push_back(*ep);
      if (out.size() > kMaxEndpoints) {
        return Status(ErrorCode::kInvalidArgument, "too many endpoints (at most 64)");
      }
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.empty()) return Status(ErrorCode::kInvalidArgument, "no endpoint given");
  return out;
}

std::string_view lock_mode_name(LockMode mode) {
  switch (mode) {
    case LockMode::kExclusive: return "exclusive";
    case LockMode::kShared: return "shared";
    case LockMode::kSemaphore: return "semaphore";
  }
  return "exclusive";
}

std::optional<std::string> ServerInfo::get(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return v;
  }
  return std::nullopt;
}

ServerInfo parse_info(std::string_view text) {
  ServerInfo info;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() == '#') {
      line.remove_prefix(1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      info.fields.emplace_back("#", std::string(line));
    } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
      info.fields.emplace_back(std::string(line.substr(0, colon)),
                               std::string(line.substr(colon + 1)));
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return info;
}

Result<std::shared_ptr<Client>> Client::create(ClientOptions options) {
  if (options.endpoints.empty()) {
    return Status(ErrorCode::kInvalidArgument, "no endpoint given");
  }
  if (options.call_timeout <= Millis(0) || options.connect_timeout <= Millis(0)) {
    return Status(ErrorCode::kInvalidArgument, "timeouts must be > 0");
  }
  if (options.max_connections == 0) options.max_connections = 1;
  if (options.backoff_initial <= Millis(0)) options.backoff_initial = Millis(1);
  if (options.backoff_max < options.backoff_initial) options.backoff_max = options.backoff_initial;
  auto core = std::make_unique<detail::ClientCore>(std::move(options));
  return std::shared_ptr<Client>(new Client(std::move(core)));
}

Client::Client(std::unique_ptr<detail::ClientCore> core) : core_(std::move(core)) {}
Client::~Client() = default;

const ClientOptions& Client::options() const { return core_->options(); }
std::string Client::current_endpoint() const { return core_->current_endpoint(); }

namespace {
CallSpec bounded(const detail::ClientCore& core, Retry retry = Retry::kSafe) {
  return CallSpec{Clock::now() + core.options().call_timeout, retry, -1};
}
}  // namespace

Status Client::ping() {
  auto r = core_->call({"PING"}, bounded(*core_));
  return r ? Status::ok() : r.status();
}

Result<std::string> Client::info(std::string_view section) {
  std::vector<std::string> args{"INFO"};
  if (!section.empty()) args.emplace_back(section);
  auto r = core_->call(args, bounded(*core_));
  if (!r) return r.status();
  return detail::decode_text(*r, "INFO");
}

Result<std::uint64_t> Client::open_session(Millis ttl, std::string_view owner) {
  return open_session(ttl, owner, std::nullopt, {});
}

Result<std::uint64_t> Client::open_session(Millis ttl, std::string_view owner, std::optional<Millis> close_grace,
                                           std::string_view reqid) {
  std::vector<std::string> args{"SESSION.OPEN", ms_arg(ttl)};
  if (!owner.empty()) {
    args.emplace_back("OWNER");
    args.emplace_back(owner);
  }
  if (close_grace) {
    args.emplace_back("ONCLOSE");
    args.emplace_back(ms_arg(*close_grace));
  }
  if (!reqid.empty()) {
    args.emplace_back("REQID");
    args.emplace_back(reqid);
  }
  auto r = core_->call(args, bounded(*core_, reqid.empty() ? Retry::kIfNotSent : Retry::kSafe));
  if (!r) return r.status();
  auto id = detail::decode_integer(*r, "SESSION.OPEN");
  if (!id) return id.status();
  return static_cast<std::uint64_t>(*id);
}

Result<Millis> Client::keepalive(std::uint64_t session) {
  auto r = core_->call({"SESSION.KEEPALIVE", std::to_string(session)}, bounded(*core_));
  if (!r) return r.status();
  auto ms = detail::decode_integer(*r, "SESSION.KEEPALIVE");
  if (!ms) return ms.status();
  return Millis(*ms);
}

Status Client::close_session(std::uint64_t session) {
  auto r = core_->call({"SESSION.CLOSE", std::to_string(session)}, bounded(*core_));
  return r ? detail::decode_ok(*r, "SESSION.CLOSE") : r.status();
}

Result<std::vector<SessionInfo>> Client::list_sessions_page(std::uint64_t after, std::size_t count) {
  auto r = core_->call({"SESSION.LIST", "AFTER", std::to_string(after), "COUNT", std::to_string(count)},
                       bounded(*core_));
  if (!r) return r.status();
  std::vector<SessionInfo> out;
  for (const auto& v : r->elements) {
    auto s = detail::decode_session(v);
    if (!s) return s.status();
    out.push_back(std::move(*s));
  }
  return out;
}

Result<std::vector<SessionInfo>> Client::list_sessions() {
  std::vector<SessionInfo> out;
  std::uint64_t after = 0;
  while (true) {
    auto page = list_sessions_page(after, kListPage);
    if (!page) return page.status();
    if (page->empty()) return out;
    after = page->back().id;
    for (auto& s : *page) out.push_back(std::move(s));
  }
}

Status Client::kill_session(std::uint64_t session) {
  auto r = core_->call({"SESSION.KILL", std::to_string(session)}, bounded(*core_));
  return r ? detail::decode_ok(*r, "SESSION.KILL") : r.status();
}

Result<std::optional<std::uint64_t>> Client::acquire(const AcquireRequest& req) {
  return detail::acquire_call(*core_, req, -1, nullptr);
}

namespace detail {
Result<std::optional<std::uint64_t>> acquire_call(ClientCore& core, const AcquireRequest& req,
                                                  int interrupt_fd, int* retries) {
  std::vector<std::string> args{"LOCK.ACQUIRE", req.name, std::to_string(req.session)};
  if (req.mode == LockMode::kShared) args.emplace_back("SHARED");
  if (req.mode == LockMode::kSemaphore) {
    args.emplace_back("LIMIT");
    args.push_back(std::to_string(req.limit));
  }
  Deadline deadline = Clock::now() + core.options().call_timeout;
  if (req.wait) {
    args.emplace_back("WAIT");
    args.push_back(ms_arg(*req.wait));
    if (req.wait->count() == 0) {
      deadline.reset();
    } else {
      deadline = *deadline + *req.wait;
    }
  }
  if (req.delay.count() > 0) {
    args.emplace_back("DELAY");
    args.push_back(ms_arg(req.delay));
  }
  if (req.lease.count() > 0) {
    args.emplace_back("LEASE");
    args.push_back(ms_arg(req.lease));
  }
  if (req.seq != 0) {
    args.emplace_back("SEQ");
    args.push_back(std::to_string(req.seq));
  }
  auto r = core.call(args, CallSpec{deadline, req.seq != 0 ? Retry::kSafe : Retry::kIfNotSent,
                                    interrupt_fd, retries});
  if (!r) return r.status();
  if (r->is_null()) return std::optional<std::uint64_t>{};
  auto token = decode_integer(*r, "LOCK.ACQUIRE");
  if (!token) return token.status();
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(*token));
}
}  // namespace detail

Status Client::release(std::string_view name, std::uint64_t session, std::uint64_t token,
                       std::uint64_t seq) {
  std::vector<std::string> args{"LOCK.RELEASE", std::string(name), std::to_string(session),
                                std::to_string(token)};
  if (seq != 0) {
    args.emplace_back("SEQ");
    args.push_back(std::to_string(seq));
  }
  auto r = core_->call(args, bounded(*core_, seq != 0 ? Retry::kSafe : Retry::kIfNotSent));
  return r ? detail::decode_ok(*r, "LOCK.RELEASE") : r.status();
}

Status Client::extend(std::string_view name, std::uint64_t session, std::uint64_t token, Millis lease) {
  // Idempotent in effect (a repeat moves the end a little later), but the
  // caller bounds its deadline from before the first send: retried only
  // when never sent.
  auto r = core_->call({"LOCK.EXTEND", std::string(name), std::to_string(session), std::to_string(token),
                        std::to_string(lease.count())},
                       bounded(*core_, Retry::kIfNotSent));
  return r ? detail::decode_ok(*r, "LOCK.EXTEND") : r.status();
}

Result<std::uint64_t> Client::transfer(std::string_view name, std::uint64_t from, std::uint64_t token,
                                       std::uint64_t to) {
  // Not repeated after a lost reply: a repeat would find the old token stale.
  auto r = core_->call({"LOCK.TRANSFER", std::string(name), std::to_string(from), std::to_string(token),
                        std::to_string(to)},
                       bounded(*core_, Retry::kIfNotSent));
  if (!r) return r.status();
  auto t = detail::decode_integer(*r, "LOCK.TRANSFER");
  if (!t) return t.status();
  return static_cast<std::uint64_t>(*t);
}

Result<std::optional<LockInfo>> Client::lock_info(std::string_view name) {
  auto r = core_->call({"LOCK.INFO", std::string(name)}, bounded(*core_));
  if (!r) return r.status();
  if (r->is_null()) return std::optional<LockInfo>{};
  auto info = detail::decode_lock(*r);
  if (!info) return info.status();
  return std::optional<LockInfo>(std::move(*info));
}

Result<std::vector<HistoryEntry>> Client::lock_history(std::string_view name, std::size_t count) {
  auto r = core_->call({"LOCK.HISTORY", std::string(name), "COUNT", std::to_string(count)}, bounded(*core_));
  if (!r) return r.status();
  std::vector<HistoryEntry> out;
  for (const auto& v : r->elements) {
    auto entry = detail::decode_history(v);
    if (!entry) return entry.status();
    out.push_back(std::move(*entry));
  }
  return out;
}

Result<std::vector<LockInfo>> Client::list_locks_page(std::string_view prefix, std::string_view after,
                                                      std::size_t count) {
  // The prefix is always sent (possibly empty) so that it is never taken for an option.
  std::vector<std::string> args{"LOCK.LIST", std::string(prefix)};
  if (!after.empty()) {
    args.emplace_back("AFTER");
    args.emplace_back(after);
  }
  args.emplace_back("COUNT");
  args.push_back(std::to_string(count));
  auto r = core_->call(args, bounded(*core_));
  if (!r) return r.status();
  std::vector<LockInfo> out;
  for (const auto& v : r->elements) {
    auto info = detail::decode_lock(v);
    if (!info) return info.status();
    out.push_back(std::move(*info));
  }
  return out;
}

Result<std::vector<LockInfo>> Client::list_locks(std::string_view prefix, std::size_t count) {
  std::vector<LockInfo> out;
  std::string after;
  while (out.size() < count) {
    auto page = list_locks_page(prefix, after, std::min(count - out.size(), kListPage));
    if (!page) return page.status();
    if (page->empty()) break;
    after = page->back().name;
    for (auto& l : *page) out.push_back(std::move(l));
  }
  return out;
}

Status Client::revoke(std::string_view name) {
  auto r = core_->call({"LOCK.REVOKE", std::string(name)}, bounded(*core_));
  return r ? detail::decode_ok(*r, "LOCK.REVOKE") : r.status();
}

Status Client::cancel_wait(std::string_view name, std::uint64_t session) {
  auto r = core_->call({"LOCK.CANCEL", std::string(name), std::to_string(session)},
                       bounded(*core_));
  return r ? detail::decode_ok(*r, "LOCK.CANCEL") : r.status();
}

Result<std::uint64_t> Client::fence_put(std::string_view key, std::string_view value,
                                        std::string_view lock, std::uint64_t token) {
  // A write: repeating it after a lost reply could turn an applied put into
  // a definite error (e.g. stale_token once the lock moved on), so it is
  // retried only when it was never sent; a lost reply is kUnreachable.
  auto r = core_->call({"FENCE.PUT", std::string(key), std::string(value), std::string(lock),
                        std::to_string(token)},
                       bounded(*core_, Retry::kIfNotSent));
  if (!r) return r.status();
  auto t = detail::decode_integer(*r, "FENCE.PUT");
  if (!t) return t.status();
  return static_cast<std::uint64_t>(*t);
}

Result<std::optional<FencedValue>> Client::fence_get(std::string_view key) {
  auto r = core_->call({"FENCE.GET", std::string(key)}, bounded(*core_));
  if (!r) return r.status();
  return detail::decode_fenced(*r);
}

}  // namespace leasehold::client
