// node/revision_guard.h: fencing tokens never go backwards, whatever happened
// to the disk (DESIGN.md section 6, "The revision record").
//
// Two parts, both used by the embedded node only (in cluster mode etcd holds
// the log and its revision):
//
// plan_reopen() decides, once at open and after the log was replayed,
// whether and how the node may start. It compares the replayed revision R
// with the durable record (log/revision_record.h):
//   - no record and an empty log: a new data dir; start.
//   - a record from a CLEAN shutdown at revision C: R == C starts as is;
//     R < C means revisions R+1..C are missing from the log: REFUSE.
//   - a record from an UNCLEAN stop (crash, kill -9, power cut): R below its
//     durable_revision means the log lost acknowledged data: REFUSE.
//     Otherwise start, but above the reserved block: the first command is
//     Reopen{reserved_through + 1} (core/command.h), because a crash may also
//     have cost the log a tail that nothing can detect. With
//     `quarantine_after_unclean_stop` (the `lease` durability mode) that
//     Reopen also expires every session and grants nothing for the longest
//     TTL in use plus the drift bound.
//   - no valid record (both copies missing or damaged) but a non-empty log:
//     REFUSE (nothing bounds the tokens already handed out).
// A refusal is kCorruption whose message names the files, the missing range
// and the way out. `recover_lost_log` (--recover-lost-log) turns a refusal
// into a recovery: Reopen{floor above every revision the record (or
// `revision_floor`, --revision-floor, required when there is no valid
// record) allows, expire every session, quarantine = longest TTL + drift},
// so that no token is reused and no holder's safe deadline is broken.
//
// RevisionGuard then keeps the record ahead of the node while it runs:
// before each append it bounds the revisions the batch can produce (one per
// command; a Reopen jumps to its floor) and the TTLs it carries, and
// rewrites the record (synchronously: two small fsynced files, once per
// `block` revisions or when a longer TTL appears) when either would pass it.
// At a clean shutdown it marks the record clean at the final revision.
//
// Errors: the store function's (kIoError); the node treats them like a
// failed log write and stops taking writes.
// Thread-safety: the node's loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/command.h"
#include "leasehold/status.h"
#include "log/revision_record.h"

namespace leasehold::node {

struct RevisionGuardOptions {
  // Writes the record durably (embedded: log::store_revision_record on the
  // data dir). Required.
  std::function<Status(const log::RevisionRecord&)> store;
  // What was found at start (log::load_revision_record).
  log::LoadedRevisionRecord loaded;
  // Revisions reserved per record write.
  std::uint64_t block = 1u << 20;
  // --recover-lost-log and --revision-floor (see above).
  bool recover_lost_log = false;
  core::Revision revision_floor = 0;
  // The longest TTL a session may have (limits.max_ttl_ms): the quarantine
  // when no record says what was in use.
  std::uint64_t max_ttl_fallback_ms = 0;
  // `lease` durability (this run acknowledges before fsync): recorded in the
  // record; an unclean stop of a run that had it also expires every session
  // and starts a quarantine.
  bool lease = false;
};

// The clock-rate margin added to every quarantine: 1% of the TTL plus 2 ms
// (the drift bound of the contract, docs/client.md). The TTL counts as at
// most core::kMaxSessionTtlMs (no session can have more), so the sum never
// wraps.
std::uint64_t with_drift_margin(std::uint64_t ttl_ms);

struct ReopenPlan {
  log::RevisionRecord record;          // the record the node starts from
  // Store `record` before the node serves. False only for a clean start,
  // whose record stays clean until the first append (so a start that fails
  // before it writes anything leaves a clean data dir).
  bool store_now = true;
  std::optional<core::Reopen> reopen;  // the first command to propose
  std::vector<std::string> notices;    // warnings for the operator's log
};

// True when the plan's Reopen expires every session or pauses grants.
bool owes_quarantine(const ReopenPlan& plan);

// `revision`: the replayed state's revision; `log_empty`: the log holds no
// entry and no snapshot; `log_where`: the log's description for messages.
Result<ReopenPlan> plan_reopen(const RevisionGuardOptions& options, core::Revision revision, bool log_empty,
                               const std::string& log_where);

class RevisionGuard {
 public:
  using Store = std::function<Status(const log::RevisionRecord&)>;

  // The session TTLs the state machine accepts (core::accepted_ttls). A
  // command asking for another TTL is refused when applied, so the guard
  // never records its TTL: a refused SESSION.OPEN must not set the quarantine.
  using TtlRange = core::TtlRange;
  // `record` is what is stored; `bound` is the highest revision the state
  // can reach from what was appended so far (at open: the replayed
  // revision); `lease`: this run acknowledges before durability (recorded
  // before the first append). `quarantine_owed`: this start proposed a
  // Reopen that expires every session and pauses grants (after a lease-mode
  // run stopped uncleanly); until that Reopen is durable, the record keeps
  // its lease flag whatever this run's mode, so a stop before then is
  // quarantined again by the next start.
  RevisionGuard(Store store, log::RevisionRecord record, core::Revision bound, std::uint64_t block, bool lease,
                TtlRange ttls = {}, bool quarantine_owed = false);

  // Called before `batch` is appended, with the revision known durable in
  // the log. Rewrites the record when the batch could pass its block,
  // carries a longer TTL, or is the first after a clean start (the record
  // stops being clean). On error nothing of the batch may be appended.
  Status before_append(const std::vector<core::Command>& batch, core::Revision durable);
  // Marks the record clean at `revision` (the log's last, fully synced).
  Status mark_clean(core::Revision revision);

  const log::RevisionRecord& record() const { return record_; }
  std::uint64_t record_writes() const { return writes_; }

 private:
  Store store_;
  log::RevisionRecord record_;
  core::Revision bound_;
  std::uint64_t block_;
  bool lease_;
  TtlRange ttls_;
  bool owed_;                     // a quarantining Reopen not yet known durable
  bool reopen_appended_ = false;  // an append carrying that Reopen has started
  std::uint64_t writes_ = 0;
};

}  // namespace leasehold::node
