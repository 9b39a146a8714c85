// bench/load/ceiling.h: the physical ceiling of a durable lock service on
// this machine, measured in the same run as the table:
//
//   fsync  p50 of fdatasync() after an in-place 4 KiB write into a
//          preallocated file, in the data dir's filesystem: the cheapest
//          durable write the disk offers, and what the log's journal does
//          per group commit (log/entry_journal.h). Not an append: that
//          also writes the file's new size (0.04-0.05 ms more on the test
//          VM), a cost the journal does not pay;
//   RTT    p50 of a PING round trip to the leasehold server on loopback.
//
// From them: the W2 hand-off ceiling 1 / (fsync + RTT) grants/s (each
// hand-off is one durable commit plus a round trip to the new holder) and
// the W1 batching ceiling C / (2 x (fsync + RTT)) cycles/s (every client
// needs two commits per cycle; at best all C are in every commit).
//
// Errors: the probes return kIoError (file or socket) or kTimedOut; a probe
// that fails leaves the ceiling out of the report, never the run.
// Thread-safety: pure functions and blocking probes; call from one thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench/load/load_runner.h"
#include "bench/load/resp_connection.h"
#include "leasehold/status.h"

namespace leasehold::bench {

struct ProbeBounds {
  int max_samples = 300;
  std::chrono::milliseconds max_time{2000};
};

// The short probe taken before every cell.
inline constexpr ProbeBounds kBetweenCellsProbe{40, std::chrono::milliseconds(300)};

// p50/p99 of fdatasync() after each in-place 4 KiB write into a fresh file in
// `dir` (64 blocks, written and fsynced before the timed writes; removed
// afterwards), at most bounds.max_samples or bounds.max_time.
Result<LatencySummary> probe_fsync(const std::string& dir, ProbeBounds bounds = {});

// p50/p99 of PING round trips on one new connection to `endpoint`
// (bounds: 2000 samples, 2 s).
Result<LatencySummary> probe_ping(const Endpoint& endpoint, std::chrono::milliseconds io_timeout);

// One run's ceiling. fsync: probed before the cells, after them and briefly
// before every cell (other tenants' I/O moves it within seconds); the
// ceiling uses the median of all those p50s. RTT: probed before and after
// the cells; the mean of the two p50s (a probe that did not run counts as
// absent).
struct Ceiling {
  std::string fsync_dir;
  std::string rtt_target;           // the target the PINGs went to
  double fsync_before_us = -1, fsync_after_us = -1;
  std::vector<double> fsync_between_us;  // one p50 per cell, taken before it
  double rtt_before_us = -1, rtt_after_us = -1;

  double fsync_us() const;          // -1 when never measured
  double rtt_us() const;
  bool valid() const { return fsync_us() > 0 && rtt_us() > 0; }
  // 1 / (fsync + RTT), per second.
  double handoff_per_s() const;
  // C / (2 x (fsync + RTT)), per second.
  double batching_per_s(int clients) const;
};

// "ceiling: fdatasync p50 ... -> W2 hand-off ceiling ..., W1 batching ceiling ..."
std::string format_ceiling(const Ceiling& c);

}  // namespace leasehold::bench
