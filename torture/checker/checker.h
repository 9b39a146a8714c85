// torture/checker/checker.h: the safety and liveness checks of a torture
// history (torture/history.h). Each check is a pure function of the merged
// records; it returns the violations it found (empty: the property held).
//
//   check_fencing          (a) per key, the register's accepted tokens rise
//                          strictly in acceptance order; a register write by
//                          a live holder is never refused; FENCE.PUT never
//                          acknowledges a token lower than one acknowledged
//                          before it was sent.
//   check_token_order      (b) grant tokens are unique, except that the
//                          grants one applied command made share its token
//                          (docs/core.md): readers woken together, or the
//                          waiters of several locks granted at the end of a
//                          lock-delay or a quarantine. Such grants were all
//                          pending at one instant, answered in the same
//                          stretch (between two crashes, or inside one
//                          crash's window), and never two writers (or a
//                          writer and readers) of one lock. A grant
//                          acknowledged before another acquire was sent has
//                          the lower token (tokens are one server-wide
//                          revision).
//   check_mutual_exclusion (c) per lock, live holds (`hold` records, and
//                          compat keys from SET NX to DELIFEQ or expiry)
//                          never overlap unless all are shared; a semaphore
//                          never has more than its limit.
//   check_durability       (d) every grant sent after a crash's restart has
//                          a token above every grant acknowledged before the
//                          crash; a FENCE.GET never shows a token below a
//                          FENCE.PUT acknowledged before the get was sent;
//                          a worker (which acquires only while it holds
//                          nothing) is never refused as "already holding"
//                          (a lost release); a release sent while the
//                          holder's session was live is never refused as
//                          not holding (a lost grant, or a SEQ retry of a
//                          done release forgotten).
//   check_liveness         (e) every `liveness` record is ok.
//   check_linearizable     per key, the fenced store (fput/fget) and the
//                          compat keys (cset/cdel) are linearizable
//                          (torture/checker/linearizability.h).
//
// Lease runs. A history whose `durability` record says "lease" comes from a
// server that answers before its writes are durable (`--durability lease`,
// docs/server.md). An unclean restart of it may lose what was answered but
// not yet written; it expires every session (and so every compat key set
// with PX), and grants nothing, a SET NX answering nil, until the longest
// TTL in use plus the drift bound has passed. So in such a history a crash
// empties every compat key, and a SET NX refused while a quarantine may
// have been in force is no evidence about its key (check_linearizable).
// Every other check is the same: tokens, fenced values and mutual exclusion
// (the quarantine outlasts every pre-crash holder's safe deadline) keep
// their promises in both modes.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torture/history.h"

namespace leasehold::torture {

struct Violation {
  std::string check;    // "fencing", "token-order", "mutual-exclusion", ...
  std::string message;  // what broke, with the records' times and tokens
};

struct CheckOptions {
  // The clock drift bound of the contract (docs/client.md): a compat key set
  // with PX px is not expired by the server before
  // px - (drift_factor * px + drift_fixed) after the SET was sent.
  double drift_factor = 0.01;
  std::int64_t drift_fixed_ns = 2'000'000;
  // Linearizability search budget per key (states explored); past it the
  // key is reported as "unchecked", not as a violation.
  std::size_t linearizability_budget = 2'000'000;
};

std::vector<Violation> check_fencing(const std::vector<Op>& history);
std::vector<Violation> check_token_order(const std::vector<Op>& history);
std::vector<Violation> check_mutual_exclusion(const std::vector<Op>& history, const CheckOptions& options = {});
std::vector<Violation> check_durability(const std::vector<Op>& history);
std::vector<Violation> check_liveness(const std::vector<Op>& history);
// `unchecked`, when given, receives the keys whose search ran out of budget.
std::vector<Violation> check_linearizable(const std::vector<Op>& history, const CheckOptions& options = {},
                                          std::vector<std::string>* unchecked = nullptr);

// What a lease run's history says about its crashes (see "Lease runs"
// above); nullopt for a history without a "lease" durability record.
struct LeaseRun {
  std::vector<const Op*> crashes;  // the history's crash records
  // Upper bound on a quarantine's length in real time: the longest TTL in
  // use (the durability record's, or a longer PX) plus the drift bound,
  // divided by 0.98 (a server clock up to 2 % slow).
  std::int64_t quarantine_ns = 0;
  // Whether `op` was sent before the end of a window in which a quarantine
  // may have been in force (a crash's kill to its answering again, plus
  // quarantine_ns) and answered after the window began.
  bool may_be_quarantined(const Op& op) const;
};
std::optional<LeaseRun> lease_run(const std::vector<Op>& history, const CheckOptions& options = {});

// Every check above, in that order.
std::vector<Violation> check_all(const std::vector<Op>& history, const CheckOptions& options = {},
                                 std::vector<std::string>* unchecked = nullptr);

// The live holds of compat keys: one `hold` record (mode exclusive, key
// "compat:<key>") per acknowledged SET NX, live until the first DELIFEQ of
// that value was sent or the earliest time the server may expire it.
std::vector<Op> compat_holds(const std::vector<Op>& history, const CheckOptions& options = {});

}  // namespace leasehold::torture
