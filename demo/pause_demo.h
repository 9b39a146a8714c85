// demo/pause_demo.h: `leasehold demo pause`, the seeds' GC-pause scenario
// (Kleppmann's critique of lease-only locks) end to end on one machine,
// against a real leasehold server.
//
// One run:
//   1. worker A (its own process) opens a session with a short TTL, acquires
//      the lock, starts its write, and is frozen by SIGSTOP mid-write: the
//      whole process, its keepalive thread too, so the server expires it;
//   2. worker B (another process) is granted the lock (a higher token) and
//      writes its result;
//   3. after `pause`, A gets SIGCONT and finishes its write with its old token.
// The demo does this twice: against an UNFENCED ledger (A's stale write
// lands over B's: corrupted) and against a FENCED one (A's write is rejected
// as stale: B's data intact). It prints a timeline and one verdict per run.
//
// Services: a private `leasehold server` unless `endpoints` is set; for the
// ledger, PostgreSQL at `pg_conninfo`, else a private cluster started from
// `pg_bin_dir`; when PostgreSQL is not available (and `resource` allows it)
// both runs use files instead (plain writes vs FencedFileWriter), and the
// demo says so. Everything private is stopped and deleted at the end.
//
// Errors (setup only): kInvalidArgument (bad options), kUnavailable (a
// service could not be started or reached), kIoError. A run that goes wrong
// midway is not an error: it is reported as an unexpected outcome.
// Thread-safety: run one demo at a time per object; no shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "demo/ledger.h"
#include "demo/timeline.h"
#include "leasehold/status.h"

namespace leasehold::demo {

enum class ResourceChoice : std::uint8_t { kAuto, kPostgres, kFile };
Result<ResourceChoice> parse_resource_choice(const std::string& text);  // auto|postgres|file

struct PauseDemoOptions {
  std::string leasehold_binary;  // runs the workers and the private server
  std::string endpoints;         // "" : start a private server
  std::string lock = "demo/job-42";
  std::chrono::milliseconds ttl{2000};    // the workers' session TTL
  std::chrono::milliseconds pause{4000};  // how long A stays frozen (> ttl)
  ResourceChoice resource = ResourceChoice::kAuto;
  std::string pg_conninfo;  // "" : a private cluster
  std::string pg_bin_dir = "/usr/lib/postgresql/15/bin";
  // Polled while waiting; true aborts the demo (Ctrl-C). May be empty.
  std::function<bool()> cancelled;
};

enum class Outcome : std::uint8_t {
  kCorrupted,  // the stale writer's data replaced the newer holder's
  kSafe,       // the newer holder's data survived; the stale write changed nothing
  kBroken,     // the scenario did not play out (a worker failed, timed out, ...)
};

struct RunReport {
  bool fenced = false;
  std::string resource;  // Ledger::describe()
  std::uint64_t token_a = 0;
  std::uint64_t token_b = 0;
  std::optional<EventKind> write_a;  // kWrote / kRejected / kFailed; unset: never tried
  std::optional<EventKind> write_b;
  std::optional<LedgerRecord> final_record;
  std::chrono::milliseconds frozen_for{0};
  Outcome outcome = Outcome::kBroken;
  bool as_expected = false;  // unfenced: kCorrupted; fenced: kSafe
  std::string verdict;       // "VERDICT fenced: SAFE (stale write rejected)"
};

struct PauseDemoReport {
  LedgerStore store = LedgerStore::kPostgres;
  std::string store_note;  // where the ledger lives, or why files were used
  std::vector<RunReport> runs;  // unfenced, fenced
  bool all_as_expected() const;
};

// Runs the demo, printing the timeline to `out`.
Result<PauseDemoReport> run_pause_demo(const PauseDemoOptions& options, std::ostream& out);

}  // namespace leasehold::demo
