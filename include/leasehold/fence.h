// leasehold/fence.h: the resource side of fencing. A lock service cannot stop
// a paused holder from writing; only the resource can, by refusing tokens
// lower than the highest it has already admitted.
//
// A fence gate keeps, per resource key, the highest token it has admitted.
// admit(key, token) admits the token if it is >= that highest (equal so the
// current holder may write many times with its token) and records it
// atomically; a lower token is stale and changes nothing.
//
// Which gate is safe for what (see docs/fence.md):
//   InMemoryFenceGate  only when the guarded state lives in the same process
//                      and dies with it (a restart must also lose the data).
//   DurableFenceGate   (fence_durable.h) survives restarts and crashes and is
//                      atomic across threads and processes on one machine.
//   PostgresFence      (fence_postgres.h) check and write in one transaction.
//   FencedFileWriter   (fence_file.h) whole-file replacement guarded by a token.
//   admit_header       (fence_http.h) the Fencing-Token header check for HTTP.
//
// Thread-safety: every FenceGate implementation is safe to call from many
// threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold::fence {

// A fencing token as granted by leasehold: strictly increasing per lock.
using Token = std::uint64_t;

// The HTTP header that carries a token to a resource: "Fencing-Token: 42".
inline constexpr std::string_view kFencingTokenHeader = "Fencing-Token";

// Resource keys are 1..kMaxKeyBytes bytes of any content (no NUL for the
// durable gate; see fence_durable.h for its tighter limit).
inline constexpr std::size_t kMaxKeyBytes = 256;

// Parses a token as sent in a header, SQL parameter or file: 1..20 ASCII
// decimal digits, no sign, no spaces, at most 2^64-1.
// Errors: kInvalidArgument naming the problem.
Result<Token> parse_token(std::string_view text);

// The outcome of one admission that did not fail.
struct Admission {
  bool admitted = false;  // true: token >= highest, now recorded
  Token highest = 0;      // highest admitted token for the key after the call

  // OK if admitted, else kStaleToken "stale token <t> for '<key>': highest
  // admitted is <h>".
  Status to_status(std::string_view key, Token token) const;
};

// The gate interface.
class FenceGate {
 public:
  virtual ~FenceGate() = default;

  // Admits `token` for `key` if no token was admitted for the key yet or
  // token >= the highest admitted; records it before returning. A stale
  // token returns {admitted=false, highest} and changes nothing.
  // Errors: kInvalidArgument (bad key), kLimitExceeded (no room for a new
  // key), kIoError/kCorruption/kTimedOut (durable gates); on error nothing
  // was admitted.
  virtual Result<Admission> admit(std::string_view key, Token token) = 0;

  // The highest admitted token for `key`, or nullopt if none was admitted.
  // Errors as admit().
  virtual Result<std::optional<Token>> highest(std::string_view key) = 0;
};

// Validates a key against kMaxKeyBytes. Errors: kInvalidArgument.
Status validate_key(std::string_view key);

// A gate in this process's memory, guarded by one mutex. Holds at most
// `max_keys` keys; admitting a new key beyond that returns kLimitExceeded
// (existing keys keep working). Its state dies with the process, so it is
// safe only for resources whose state dies with it too.
class InMemoryFenceGate final : public FenceGate {
 public:
  static constexpr std::size_t kDefaultMaxKeys = 100000;

  explicit InMemoryFenceGate(std::size_t max_keys = kDefaultMaxKeys);

  Result<Admission> admit(std::string_view key, Token token) override;
  Result<std::optional<Token>> highest(std::string_view key) override;

  // Number of keys currently tracked.
  std::size_t size() const;

 private:
  const std::size_t max_keys_;
  mutable std::mutex mu_;
  std::map<std::string, Token, std::less<>> highest_;  // guarded by mu_
};

}  // namespace leasehold::fence
