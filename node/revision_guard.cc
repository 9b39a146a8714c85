#include "node/revision_guard.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <variant>

#include "common/assert.h"
#include "common/unsafe_test_faults.h"

namespace leasehold::node {
namespace {

using State = log::LoadedRevisionRecord::State;

std::string num(std::uint64_t v) { return std::to_string(v); }

// The TTL a command asks the service to honour (0 = none).
std::uint64_t ttl_of(const core::Command& command) {
  return std::visit(
      [](const auto& b) -> std::uint64_t {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, core::OpenSession> || std::is_same_v<T, core::SetSessionTtl> ||
                      std::is_same_v<T, core::CompatSet>) {
          return b.ttl_ms;
        } else {
          return 0;
        }
      },
      command.body);
}

// Start above `above`, expire every session, quarantine for `ttl_ms` + drift.
ReopenPlan recovery(ReopenPlan plan, core::Revision above, std::uint64_t ttl_ms, core::Revision replayed,
                    std::uint64_t block) {
  core::Reopen reopen{above + 1, true, with_drift_margin(ttl_ms)};
  plan.record = log::RevisionRecord{reopen.revision_floor + block, replayed, ttl_ms, 0, false};
  plan.notices.push_back("recovering a lost log (--recover-lost-log): every session is expired, revisions restart at " +
                         num(reopen.revision_floor) + ", and no lock is granted for " + num(reopen.quarantine_ms) +
                         " ms (the longest session TTL plus the drift bound)");
  plan.reopen = reopen;
  return plan;
}

}  // namespace

std::uint64_t with_drift_margin(std::uint64_t ttl_ms) {
  const std::uint64_t ttl = std::min(ttl_ms, core::kMaxSessionTtlMs);
  return ttl + ttl / 100 + 2;
}

namespace {

Result<ReopenPlan> plan_for(const RevisionGuardOptions& o, core::Revision revision, bool log_empty,
                            const std::string& log_where) {
  const log::LoadedRevisionRecord& loaded = o.loaded;
  ReopenPlan plan;
  if (loaded.state == State::kValid) {
    for (const std::string& p : loaded.problems) {
      plan.notices.push_back("revision record: " + p + "; the other copy is used and both are rewritten");
    }
  }

  if (loaded.state != State::kValid) {
    if (loaded.state == State::kAbsent && log_empty) {  // a new data dir
      plan.record = log::RevisionRecord{o.block, 0, 0, 0, false};
      return plan;
    }
    std::string what = loaded.state == State::kAbsent ? "is missing" : "is damaged (";
    if (loaded.state == State::kCorrupt) {
      for (std::size_t i = 0; i < loaded.problems.size(); ++i) what += (i ? "; " : "") + loaded.problems[i];
      what += ")";
    }
    if (!o.recover_lost_log || o.revision_floor == 0) {
      return Status(ErrorCode::kCorruption,
                    "the revision record " + loaded.where + " " + what + ", but the log " + log_where +
                        " holds revisions up to " + num(revision) +
                        ": nothing proves that no fencing token above " + num(revision) +
                        " was handed out, so starting could hand out a token twice. If you know the highest "
                        "fencing token any resource has seen, restart with --recover-lost-log --revision-floor N "
                        "(N at least that token): every session is then expired, revisions restart above N, and "
                        "no lock is granted for the longest TTL allowed (--max-ttl-ms, " +
                        num(o.max_ttl_fallback_ms) + " ms) plus the drift bound");
    }
    return recovery(std::move(plan), std::max(revision, o.revision_floor), o.max_ttl_fallback_ms, revision, o.block);
  }

  const log::RevisionRecord& rec = loaded.record;
  std::string lost;
  if (rec.clean && revision < rec.clean_revision) {
    lost = "revisions " + num(revision + 1) + ".." + num(rec.clean_revision) +
           " are missing from the log (the last clean shutdown was at revision " + num(rec.clean_revision) + ")";
  } else if (!rec.clean && revision < rec.durable_revision) {
    lost = "revisions " + num(revision + 1) + ".." + num(rec.durable_revision) +
           " (at least) are missing from the log (revision " + num(rec.durable_revision) + " was durable in it)";
  }
  // UNSAFE TEST FAULT reuse-token-after-restart (common/unsafe_test_faults.h):
  // trust the log as found: no refusal of lost data, no jump above the block.
  if (unsafe::enabled(unsafe::TestFault::kReuseTokenAfterRestart)) {
    plan.record = log::RevisionRecord{revision + o.block, revision, rec.max_ttl_ms, 0, false};
    plan.notices.push_back("UNSAFE TEST FAULT reuse-token-after-restart: revisions continue at " +
                           num(revision + 1) + " whatever the revision record says");
    return plan;
  }
  if (!lost.empty()) {
    if (!o.recover_lost_log) {
      return Status(ErrorCode::kCorruption,
                    "the log " + log_where + " ends at revision " + num(revision) + ", but the revision record " +
                        loaded.where + " shows that it lost data: " + lost +
                        ". Starting would hand out fencing tokens that were already used. Restore the data dir "
                        "from a backup, or restart with --recover-lost-log: every session is then expired, "
                        "revisions restart above " +
                        num(std::max({rec.reserved_through, revision, o.revision_floor})) +
                        ", and no lock is granted for " + num(with_drift_margin(rec.max_ttl_ms)) +
                        " ms (the longest session TTL in use plus the drift bound)");
    }
    return recovery(std::move(plan), std::max({rec.reserved_through, revision, o.revision_floor}), rec.max_ttl_ms,
                    revision, o.block);
  }
  if (o.recover_lost_log) plan.notices.push_back("--recover-lost-log: the log is complete; starting normally");

  if (rec.clean && revision == rec.clean_revision) {  // a clean shutdown: continue exactly
    plan.record = rec;
    plan.store_now = false;  // stays clean until the first append (RevisionGuard)
    return plan;
  }
  // An unclean stop (or a log that moved past a clean record): the log may
  // have lost a tail that nothing can detect, so continue above the block.
  core::Reopen reopen{std::max(rec.reserved_through, revision) + 1, false, 0};
  if (rec.lease) {  // the stopped run acknowledged commands before they were durable
    reopen.expire_sessions = true;
    reopen.quarantine_ms = with_drift_margin(rec.max_ttl_ms);
    // UNSAFE TEST FAULT skip-quarantine (common/unsafe_test_faults.h):
    // grant at once, while pre-crash holders may still be within their TTL.
    if (unsafe::enabled(unsafe::TestFault::kSkipQuarantine)) reopen.quarantine_ms = 0;
  }
  plan.record = log::RevisionRecord{reopen.revision_floor + o.block, revision, rec.max_ttl_ms, 0, false};
  plan.notices.push_back("the last stop was not clean: revisions continue at " + num(reopen.revision_floor) +
                         ", above every revision that may have been handed out" +
                         (reopen.expire_sessions ? "; every session is expired and no lock is granted for " +
                                                       num(reopen.quarantine_ms) + " ms"
                                                 : std::string()));
  plan.reopen = reopen;
  return plan;
}

}  // namespace

bool owes_quarantine(const ReopenPlan& plan) {
  return plan.reopen && (plan.reopen->expire_sessions || plan.reopen->quarantine_ms > 0);
}

Result<ReopenPlan> plan_reopen(const RevisionGuardOptions& options, core::Revision revision, bool log_empty,
                               const std::string& log_where) {
  auto plan = plan_for(options, revision, log_empty, log_where);
  // This run's mode, for the next start; and while this start's quarantine
  // is not durable yet, the flag that makes the next start quarantine too
  // (an fsync-mode run that stops before its Reopen is written must not
  // erase the lease-mode crash before it).
  if (plan && plan->store_now) plan->record.lease = options.lease || owes_quarantine(*plan);
  return plan;
}

RevisionGuard::RevisionGuard(Store store, log::RevisionRecord record, core::Revision bound, std::uint64_t block,
                             bool lease, TtlRange ttls, bool quarantine_owed)
    : store_(std::move(store)),
      record_(record),
      bound_(bound),
      block_(std::max<std::uint64_t>(block, 1)),
      lease_(lease),
      ttls_(ttls),
      owed_(quarantine_owed) {}

Status RevisionGuard::before_append(const std::vector<core::Command>& batch, core::Revision durable) {
  core::Revision bound = bound_;
  std::uint64_t ttl = record_.max_ttl_ms;
  bool carries_reopen = false;
  for (const core::Command& command : batch) {
    if (const auto* reopen = std::get_if<core::Reopen>(&command.body)) {
      bound = std::max(bound + 1, reopen->revision_floor);
      carries_reopen = true;
    } else {
      ++bound;  // an applied command bumps the revision by one; a failed one not at all
    }
    // Only a TTL the state machine will accept: a refused one opens nothing.
    const std::uint64_t asked = ttl_of(command);
    if (asked >= ttls_.min_ms && asked <= ttls_.max_ms) ttl = std::max(ttl, asked);
  }
  bound_ = bound;
  // Appends are sequential, and in fsync mode this one starts only after the
  // previous one is durable: a Reopen appended before is in the log now. (In
  // lease mode the flag stays set anyway.)
  if (owed_ && reopen_appended_) owed_ = false;
  if (carries_reopen) reopen_appended_ = true;
  const bool lease_flag = lease_ || owed_;
  if (bound <= record_.reserved_through && ttl <= record_.max_ttl_ms && !record_.clean &&
      record_.lease == lease_flag) {
    return Status::ok();
  }
  log::RevisionRecord next = record_;
  if (bound > next.reserved_through) next.reserved_through = bound + block_;
  next.max_ttl_ms = ttl;
  next.durable_revision = std::max(next.durable_revision, durable);
  next.clean = false;
  next.clean_revision = 0;
  next.lease = lease_flag;
  if (Status st = store_(next); !st) return st;
  record_ = next;
  ++writes_;
  return Status::ok();
}

Status RevisionGuard::mark_clean(core::Revision revision) {
  LEASEHOLD_ASSERT(revision <= record_.reserved_through, "revision {} is above the reserved block {}", revision,
                   record_.reserved_through);
  log::RevisionRecord next = record_;
  next.clean = true;
  next.clean_revision = revision;
  next.durable_revision = std::max(next.durable_revision, revision);
  if (Status st = store_(next); !st) return st;
  record_ = next;
  ++writes_;
  return Status::ok();
}

}  // namespace leasehold::node
