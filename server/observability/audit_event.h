// server/observability/audit_event.h: what the audit history and the lock metrics see of an
// applied command: grants, releases, expiries, revokes, kills and lock-delays,
// derived from (command, ApplyResult, state after) by EventDeriver.
//
// The deriver is a VIEW of the applied command stream: it keeps only what the
// state machine forgets once a holder is gone (when a hold began, who owned
// it, when a wait was queued), rebuilt from the state machine at start.
//
// Thread-safety: none; the loop thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/command.h"
#include "core/reply.h"
#include "core/state_machine.h"

namespace leasehold::server {

enum class AuditKind : std::uint8_t {
  kGrant = 0,
  kRelease = 1,
  kExpiry = 2,     // a hold lost because its session expired or its ONCLOSE connection closed
                   // (lock set), or the session itself (lock empty)
  kRevoke = 3,     // LOCK.REVOKE took a hold
  kKill = 4,       // SESSION.KILL took a hold (lock set), or the session itself (lock empty)
  kLockDelay = 5,  // a lock-delay began; delay_ms is its length
  kLeaseEnded = 6, // a hold's lease (LOCK.ACQUIRE LEASE, max hold) ended it
  kTransfer = 7,   // LOCK.TRANSFER moved a hold: the old holder's end (the new one's is a grant)
};
inline constexpr std::uint8_t kAuditKindMax = 7;

// "grant", "release", "expiry", "revoke", "kill", "lock-delay", "lease-ended",
// "transfer".
std::string_view audit_kind_name(AuditKind kind);

// Why an event happened: the metrics' labels switch on it, and its text is
// the start of AuditEvent::reason. kUnknown only for a reason text this
// build does not know (a history record written by another version).
enum class AuditCause : std::uint8_t {
  kUnknown = 0,
  kAcquired,          // grant: at once
  kGrantedFromQueue,  // grant: a waiter woke
  kCompatSet,         // grant: SET NX on a compat key
  kReleased,          // release: by its own session's connection
  kReleasedByOther,   // release: LOCK.RELEASE from a connection not speaking for the session
  kSessionClosed,     // release: the session closed
  kCompatDelete,      // release: DEL of a compat key
  kCompatReplaced,    // release: the compat key was set again
  kSessionExpired,    // expiry
  kSessionKilled,     // kill
  kRevoked,           // revoke
  kLockDelay,         // lock-delay
  kLeaseEnded,        // lease-ended
  kTransferred,       // transfer: the hold moved to another session
  kTransferredIn,     // grant: received through LOCK.TRANSFER
  kConnectionClosed,  // expiry: the connection bound by SESSION.OPEN ONCLOSE closed ("closed")
};
inline constexpr std::uint8_t kAuditCauseMax = 16;  // kConnectionClosed: the last one
static_assert(static_cast<std::uint8_t>(AuditCause::kConnectionClosed) == kAuditCauseMax);

// The reason text of a cause ("acquired", "granted from the queue", ...).
std::string_view audit_cause_text(AuditCause cause);
// The cause whose text `reason` is, or, for kRevoked and kSessionKilled,
// starts with before " by <who>"; kUnknown otherwise.
AuditCause audit_cause_of(std::string_view reason);

struct AuditEvent {
  AuditKind kind = AuditKind::kGrant;
  std::string lock;          // empty for session-level expiry / kill
  core::SessionId session = 0;
  std::string owner;         // the session's owner label ("" when unknown)
  core::Token token = 0;     // the hold's token (0 when none)
  AuditCause cause = AuditCause::kUnknown;
  std::string reason;        // audit_cause_text(cause), and " by <who>" for an operator's revoke or kill
  std::int64_t wait_ms = -1;  // grants from the queue: time queued; -1 unknown / none
  std::int64_t hold_ms = -1;  // releases and losses: time held; -1 unknown
  std::int64_t delay_ms = 0;  // lock-delay: its length
  friend bool operator==(const AuditEvent&, const AuditEvent&) = default;
};

class EventDeriver {
 public:
  // Starts from `state` (its holders and queued waiters).
  void reset(const core::StateMachine& state);

  // The events of one applied command; `after` is the state once it applied.
  // Times (wait / hold / delay) are on the log clock (command.now).
  std::vector<AuditEvent> derive(const core::Command& command, const core::ApplyResult& result,
                                 const core::StateMachine& after);
  // The same into `out` (cleared first), so a caller that keeps `out`
  // allocates nothing per command once it has grown.
  void derive_into(const core::Command& command, const core::ApplyResult& result, const core::StateMachine& after,
                   std::vector<AuditEvent>& out);

 private:
  struct Hold {
    core::Token token = 0;
    core::LogMillis since = 0;
    std::string owner;
  };
  using Key = std::pair<core::SessionId, std::string>;  // (session, lock)
  using KeyView = std::pair<core::SessionId, std::string_view>;
  // Orders Key and KeyView alike, so a lookup needs no copy of the name.
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return a.first != b.first ? a.first < b.first : std::string_view(a.second) < std::string_view(b.second);
    }
  };
  using LockHolder = std::pair<std::string, core::SessionId>;  // (lock, session)
  struct LockHolderLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const int c = std::string_view(a.first).compare(std::string_view(b.first));
      return c != 0 ? c < 0 : a.second < b.second;
    }
  };

  void grant(const std::string& lock, core::SessionId session, core::Token token, AuditCause cause,
             core::LogMillis now, const core::StateMachine& after, std::vector<AuditEvent>& out);
  void end_hold(AuditKind kind, const std::string& lock, core::SessionId session, core::Token token,
                AuditCause cause, core::LogMillis now, std::vector<AuditEvent>& out);
  void forget_session(core::SessionId session);

  std::map<Key, Hold, KeyLess> holds_;
  std::set<LockHolder, LockHolderLess> holders_;  // holds_ by lock, for a compat key's delete
  std::map<Key, core::LogMillis, KeyLess> queued_;
};

}  // namespace leasehold::server
