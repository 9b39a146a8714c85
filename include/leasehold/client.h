// leasehold/client.h: a connection handle to a leasehold server or cluster,
// and the typed commands of docs/protocol.md.
//
// A Client holds a small pool of RESP3 connections (`HELLO 3`) to one of the
// configured endpoints. It connects lazily, follows `-REDIRECT host:port` to
// the primary, and reconnects with exponential backoff and jitter. Every call
// is bounded in time (ClientOptions::call_timeout, plus the lock wait for a
// blocking acquire).
//
// Errors are values; the codes a caller can act on:
//   kUnreachable      no endpoint answered (connect refused, reset, closed)
//   kTimedOut         the call's deadline passed (for a lock wait: not granted)
//   kNotHolder        the session does not hold the lock
//   kStaleToken       the token is not the current holder's
//   kSessionExpired   the session is not live (expired, closed, killed)
//   kNotFound         no such session / lock
//   kConflict         mode mismatch, already holding or waiting
//   kInvalidArgument  bad argument (rejected locally or by the server: -ERR)
//   kLimitExceeded, kUnavailable, kRedirect (too many hops), kInternal
// Server error prefixes map one-to-one per docs/protocol.md.
//
// Retries: a call whose connection fails is retried on a fresh connection
// (after backoff, within its deadline) when repeating it is harmless: reads,
// keepalives, and the SEQ-tagged LOCK.ACQUIRE / LOCK.RELEASE. SESSION.OPEN is
// retried only when the request was never sent.
//
// Thread-safety: a Client is safe to use from many threads at once; each call
// takes its own pooled connection (up to max_connections, further callers
// wait), so a blocking acquire on one thread does not stall others.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::client {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

struct Endpoint {
  std::string host;  // an IPv4/IPv6 literal or a resolvable name
  std::uint16_t port = 0;
  bool tls = false;  // "tls://host:port": TLS (ClientOptions::tls_*)
  std::string to_string() const;  // "host:port", "tls://host:port"
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// "host:port" (IPv6 as "[::1]:port"), optionally prefixed "tls://".
// kInvalidArgument names the problem.
Result<Endpoint> parse_endpoint(std::string_view text);
// A comma-separated list of endpoints; at least one, at most 64.
Result<std::vector<Endpoint>> parse_endpoints(std::string_view text);

struct ClientOptions {
  std::vector<Endpoint> endpoints;  // tried in order; at least one
  Millis connect_timeout{1000};     // one TCP connect plus HELLO
  Millis call_timeout{5000};        // one call, excluding a lock wait
  Millis backoff_initial{25};       // first reconnect pause (jittered)
  Millis backoff_max{1000};         // reconnect pause cap
  int max_redirects = 4;            // -REDIRECT hops followed per call
  std::size_t max_connections = 8;  // pooled connections
  std::string name;                 // CLIENT SETNAME, optional
  // Authentication (docs/security.md): when `password` is set, every
  // connection sends HELLO 3 AUTH <user> <password> ("" user = "default").
  // A refused AUTH fails the call with kInvalidArgument "WRONGPASS ...".
  std::string user;
  std::string password;
  // TLS, for tls:// endpoints: the CA that signed the server's certificate
  // (empty: the system's CAs) and, for servers that want one, this client's
  // certificate and key (PEM; its CN may name the user). The server's
  // certificate must match the endpoint's host (name or IP). A -REDIRECT
  // keeps the scheme of the endpoint that answered.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
};

enum class LockMode : std::uint8_t { kExclusive, kShared, kSemaphore };
// "exclusive" / "shared" / "semaphore"
std::string_view lock_mode_name(LockMode mode);

struct Holder {
  std::uint64_t session = 0;
  std::string owner;
  std::uint64_t token = 0;
  Millis held{0};
};

struct Waiter {
  std::uint64_t session = 0;
  std::string owner;
  LockMode mode = LockMode::kExclusive;
  Millis waited{0};
};

struct LockInfo {
  std::string name;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t limit = 1;
  std::vector<Holder> holders;
  std::vector<Waiter> waiters;
  std::uint64_t last_token = 0;
  Millis delay_remaining{0};
};

struct SessionInfo {
  std::uint64_t id = 0;
  std::string owner;
  Millis ttl{0};
  Millis remaining{0};
  std::uint64_t held = 0;
  std::uint64_t waiting = 0;
};

// One audit history record (LOCK.HISTORY; docs/operations.md).
struct HistoryEntry {
  std::uint64_t id = 0;
  std::int64_t time_ms = 0;      // wall clock, unix ms (display only)
  std::uint64_t log_index = 0;
  std::string event;             // grant, release, expiry, revoke, kill, lock-delay
  std::string lock;
  std::uint64_t session = 0;
  std::string owner;
  std::uint64_t token = 0;
  std::string reason;
  std::int64_t wait_ms = -1;     // -1: not applicable / unknown
  std::int64_t hold_ms = -1;
  std::int64_t delay_ms = 0;
};

struct FencedValue {
  std::string value;
  std::uint64_t token = 0;
};

// INFO output as (key, value) pairs in server order; "# Section" lines are
// kept as ("#", "Section").
struct ServerInfo {
  std::vector<std::pair<std::string, std::string>> fields;
  std::optional<std::string> get(std::string_view key) const;
};
ServerInfo parse_info(std::string_view text);

// One LOCK.ACQUIRE. `wait` unset: try once. `wait` = 0: wait without deadline.
struct AcquireRequest {
  std::string name;
  std::uint64_t session = 0;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t limit = 0;  // kSemaphore only, >= 1
  std::optional<Millis> wait;
  Millis delay{0};        // lock-delay if this holder's session expires
  std::uint64_t seq = 0;  // 0: none; else the idempotence key
  Millis lease{0};        // LEASE: the grant ends this long after it (0: none)
};

namespace detail {
class ClientCore;
}

class Client {
 public:
  // Validates options; does no I/O. kInvalidArgument on bad options.
  static Result<std::shared_ptr<Client>> create(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const ClientOptions& options() const;
  // The endpoint of the most recent successful connection ("" before any).
  std::string current_endpoint() const;

  Status ping();
  Result<std::string> info(std::string_view section = {});

  Result<std::uint64_t> open_session(Millis ttl, std::string_view owner);
  // SESSION.OPEN with ONCLOSE `close_grace` (nullopt: none) and REQID `reqid`
  // ("": none). With a reqid the open is retried after a lost reply like a
  // keepalive (the server returns the same session).
  Result<std::uint64_t> open_session(Millis ttl, std::string_view owner, std::optional<Millis> close_grace,
                                     std::string_view reqid);
  // The TTL now remaining (the full TTL). kSessionExpired when gone.
  Result<Millis> keepalive(std::uint64_t session);
  Status close_session(std::uint64_t session);
  // One page of SESSION.LIST: live sessions with id > `after`, in id order,
  // at most `count` (1..10000); an empty page is the end.
  Result<std::vector<SessionInfo>> list_sessions_page(std::uint64_t after, std::size_t count = 1000);
  // Every live session (pages through SESSION.LIST).
  Result<std::vector<SessionInfo>> list_sessions();
  Status kill_session(std::uint64_t session);

  // The token, or nullopt when not granted (try: busy; wait: deadline passed
  // or the wait was cancelled). The connection is held for the whole wait.
  Result<std::optional<std::uint64_t>> acquire(const AcquireRequest& request);
  Status release(std::string_view name, std::uint64_t session, std::uint64_t token,
                 std::uint64_t seq = 0);
  // LOCK.EXTEND: the grant's lease now ends `lease` from now. kStaleToken,
  // kNotHolder, kConflict (no lease), kLimitExceeded (over --max-hold).
  Status extend(std::string_view name, std::uint64_t session, std::uint64_t token, Millis lease);
  // LOCK.TRANSFER: moves the grant to session `to`; the new (higher) token.
  // kStaleToken, kNotHolder, kNotFound (`to` not live), kConflict (`to`
  // holds or waits for it), kInvalidArgument (NOPERM: another user's session).
  Result<std::uint64_t> transfer(std::string_view name, std::uint64_t from, std::uint64_t token,
                                 std::uint64_t to);
  // nullopt: the server keeps no state for an idle lock.
  Result<std::optional<LockInfo>> lock_info(std::string_view name);
  // One page of LOCK.LIST: locks named > `after` (empty: from the start)
  // starting with `prefix`, in name order, at most `count` (1..10000; the
  // server may return fewer, bounding the holders + waiters per reply); an
  // empty page is the end.
  Result<std::vector<LockInfo>> list_locks_page(std::string_view prefix, std::string_view after,
                                                std::size_t count = 1000);
  // The first `count` such locks (pages through LOCK.LIST).
  Result<std::vector<LockInfo>> list_locks(std::string_view prefix = {},
                                           std::size_t count = 1000);
  Status revoke(std::string_view name);
  // The lock's audit history, newest first, at most `count` records.
  Result<std::vector<HistoryEntry>> lock_history(std::string_view name, std::size_t count = 20);
  Status cancel_wait(std::string_view name, std::uint64_t session);

  // Writes `value` under `key` if `token` is a current holder's token of `lock`.
  Result<std::uint64_t> fence_put(std::string_view key, std::string_view value,
                                  std::string_view lock, std::uint64_t token);
  Result<std::optional<FencedValue>> fence_get(std::string_view key);

  // For the library's own session / guard code.
  detail::ClientCore& core() { return *core_; }

 private:
  explicit Client(std::unique_ptr<detail::ClientCore> core);
  std::unique_ptr<detail::ClientCore> core_;
};

}  // namespace leasehold::client
