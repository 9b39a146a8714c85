// etcd/auth.h: INTERNAL to etcd/ (includes gRPC; never include it from
// other layers). etcd user authentication: the token that every call and
// stream carries as the gRPC metadata "token".
//
// etcd's Auth.Authenticate trades the user name and password for a token
// (a "simple" token, valid on every member, until it is idle for
// --auth-token-ttl or the auth store changes). The token is fetched on
// first use and kept; when etcd answers that it is invalid, expired or
// stale ("invalid auth token", "revision of auth store is old") or that the
// request has no user ("user name is empty", e.g. auth was enabled after we
// started), the caller drops it with invalidate() and the next token()
// authenticates again. Such a refusal happens before etcd applies anything,
// so the caller may repeat the request once with the new token.
// etcd with authentication disabled answers Authenticate with "authentication
// is not enabled": the token is then "" (no metadata is sent) until a call
// says the user name is missing.
//
// Errors of token():
//   kInvalidArgument "etcd authentication as user 'U' failed via <endpoint>:
//                    wrong user name or password" (and other refusals);
//   kUnavailable     no member answered in time (as other calls).
// Thread-safety: all members are safe to call concurrently; at most one
// Authenticate call runs at a time (the others wait for its token).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "leasehold/status.h"

namespace leasehold::etcd::detail {

class Connections;

class Auth {
 public:
  Auth(std::string user, std::string password) : user_(std::move(user)), password_(std::move(password)) {}

  bool enabled() const { return !user_.empty(); }
  const std::string& user() const { return user_; }
  // The password for the next authentication (a reloaded password file).
  void set_password(std::string password);

  // The token to send, authenticating first when none is held (one unary
  // call under the failover rule, ending by `deadline`).
  Result<std::string> token(Connections& connections, std::chrono::steady_clock::time_point deadline);
  // Drops `token` after etcd refused it; no-op if it was already replaced.
  void invalidate(const std::string& token);

  // True when etcd's answer means the token must be renewed (see above).
  static bool needs_new_token(const grpc::Status& status);
  // Adds the token to a call's or stream's metadata ("" adds nothing).
  static void attach(grpc::ClientContext& context, const std::string& token);

 private:
  const std::string user_;
  std::mutex authenticate_mu_;  // one Authenticate call at a time
  mutable std::mutex mu_;
  std::string password_;              // guarded by mu_
  std::optional<std::string> token_;  // guarded by mu_
};

}  // namespace leasehold::etcd::detail
