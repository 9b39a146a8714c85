// client/client_core.h: endpoints, redirects, backoff and the connection pool
// behind leasehold::client::Client (internal).
//
// call() runs one command on a pooled connection: it dials lazily (endpoints
// in order, starting with the last one that worked or the latest redirect
// target), follows -REDIRECT, and on a connection failure retries per the
// CallSpec within the deadline, pausing with jittered exponential backoff.
// A server error reply becomes the matching Status (see connection.h).
//
// Thread-safety: all members are safe to call from many threads.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "client/connection.h"
#include "leasehold/client.h"

namespace leasehold::client::detail {

enum class Retry : std::uint8_t {
  kIfNotSent,  // retry only when the request never left (dial failures)
  kSafe,       // the command is idempotent: retry after any connection failure
};

struct CallSpec {
  Deadline deadline;      // nullopt: no deadline for the reply (a wait forever)
  Retry retry = Retry::kSafe;
  int interrupt_fd = -1;  // cuts every wait short when readable
  int* retries = nullptr;  // when set, counts re-sends after connection failures
};

// Jittered exponential backoff: the n-th pause is uniform in [cap/2, cap]
// where cap = min(max, initial * 2^n).
class Backoff {
 public:
  Backoff(Millis initial, Millis max) : initial_(initial), max_(max) {}
  Millis next();
  void reset() { attempt_ = 0; }

 private:
  Millis initial_;
  Millis max_;
  int attempt_ = 0;
  std::minstd_rand rng_{std::random_device{}()};
};

// Sleeps for `pause` (not past `deadline`); false when the interrupt fd fired.
bool pause_interruptibly(Millis pause, Deadline deadline, int interrupt_fd);

class ClientCore {
 public:
  explicit ClientCore(ClientOptions options) : options_(std::move(options)) {}

  const ClientOptions& options() const { return options_; }
  std::string current_endpoint() const;

  // The reply value; server errors come back as a Status.
  Result<resp::Value> call(const std::vector<std::string>& args, const CallSpec& spec);

  // A dedicated (unpooled) connection to the preferred endpoint, retrying all
  // endpoints with backoff until `deadline`.
  Result<std::unique_ptr<Connection>> dial(Clock::time_point deadline, int interrupt_fd);
  // Remember `target` (from "-REDIRECT host:port") as the primary. Returns
  // kRedirect when the text is not an endpoint.
  // Remembers the primary named by a -REDIRECT; `tls`: the answering
  // endpoint's scheme, which the redirect keeps.
  Status note_redirect(const std::string& target, bool tls);
  // The TLS context for tls:// endpoints, made on first use.
  Result<std::shared_ptr<TlsClientContext>> tls_context();

 private:
  Result<std::unique_ptr<Connection>> dial_once(Clock::time_point deadline, int interrupt_fd);
  Result<std::unique_ptr<Connection>> checkout(Clock::time_point dial_deadline, int interrupt_fd);
  void checkin(std::unique_ptr<Connection> conn);
  void forget_one();

  const ClientOptions options_;
  mutable std::mutex mu_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::size_t open_ = 0;                  // idle + checked out
  std::optional<Endpoint> redirect_;      // the primary, when a redirect named it
  std::shared_ptr<TlsClientContext> tls_;  // guarded by mu_
  std::size_t next_index_ = 0;            // where the endpoint list starts
  std::string current_;                   // last endpoint dialled successfully
};

// LOCK.ACQUIRE per `request` (see Client::acquire), with every wait cut short
// when `interrupt_fd` becomes readable. `retries` as in CallSpec.
Result<std::optional<std::uint64_t>> acquire_call(ClientCore& core, const AcquireRequest& request,
                                                  int interrupt_fd, int* retries);

}  // namespace leasehold::client::detail
