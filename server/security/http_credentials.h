// server/security/http_credentials.h: which user of the users file an HTTP
// request is, from its Authorization header (docs/operations.md, HTTP access).
//
//   Basic <base64 of user:password>   the user's RESP password (AUTH user password)
//   Bearer <token>                    a token whose SHA-256 is one of a user's
//                                     token#<hex> rules (server/security/acl_user.h)
// No header: the open default user when authentication is off (no users
// file, no password), else no user. A header that names no enabled user, a
// wrong password or token, an unknown scheme or bad base64 is kBad. Secrets
// are compared by hash with CRYPTO_memcmp, every candidate (no early exit);
// nothing here logs.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "server/security/acl_user.h"

namespace leasehold::server {

struct HttpIdentity {
  enum class Outcome {
    kUser,     // `user` is set
    kNone,     // no credentials while authentication is required
    kBad,      // credentials that authenticate nobody
  };
  Outcome outcome = Outcome::kNone;
  const AclUser* user = nullptr;  // into the AclUsers given; valid while it is
};

// Bounds on what is decoded (longer is kBad).
inline constexpr std::size_t kMaxHttpCredentialBytes = 4096;

HttpIdentity identify_http(const AclUsers& users, const std::optional<std::string>& authorization);

// The WWW-Authenticate challenge of a 401 answer.
inline constexpr std::string_view kHttpAuthChallenge = "Basic realm=\"leasehold\", charset=\"UTF-8\"";

}  // namespace leasehold::server
