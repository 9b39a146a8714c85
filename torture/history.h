// torture/history.h: one operation of a torture run, and the JSON-lines
// file format the workers, the nemesis and the checker share.
//
// Every record is one flat JSON object on one line. Times are nanoseconds
// of CLOCK_MONOTONIC (std::chrono::steady_clock on Linux), which is one
// clock for every process of the machine, so the histories of the harness
// and of its worker processes merge into one.
//
// Record kinds (`op`):
//   acquire   LOCK.ACQUIRE (key = lock name, mode, limit); ok + token, fail
//             (not granted / refused), unknown (no reply: the grant may exist)
//   release   LOCK.RELEASE of `token`
//   hold      derived by the worker after a granted acquire: the hold was
//             live from `inv` (the grant's reply) to `cmp` = min(release
//             sent, the session's safe deadline at that time)
//   reg       a write to the harness's fenced register (key, token): ok =
//             accepted, fail = refused (a higher token was already there);
//             `cmp2` is the safe deadline of the writer's session at the
//             write (0 when unknown)
//   fput      FENCE.PUT key value lock=aux token: ok + token, fail (STALE), unknown
//   fget      FENCE.GET key: ok with value/token (token 0, value "" = nil)
//   cset      SET key value NX PX px TOKEN: ok + token, fail (nil), unknown
//   cdel      DELIFEQ key value: ok (1), fail (0), unknown
//   fault     the nemesis: kind in `value`, injected at inv, healed at cmp
//   crash     the server was killed at inv and answered again at cmp
//   liveness  the post-heal acquire: ok within the bound, else fail
//   durability  the server's mode when it is not the default: value
//             "lease" (`--durability lease`), limit = the longest session
//             TTL the workers ask for, ms (one record, first)
// Outcome unknown has cmp = the time the client gave up; the checker treats
// it as "may take effect any time after inv".
// Thread-safety: HistoryWriter is safe from many threads (one mutex);
// the rest are plain values and free functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::torture {

enum class Outcome : std::uint8_t { kOk, kFail, kUnknown };
std::string_view outcome_name(Outcome outcome);

struct Op {
  std::string op;        // record kind, see above
  int process = 0;       // worker id; -1 the harness / nemesis
  std::string key;       // lock name, fenced key or compat key
  std::string mode;      // exclusive / shared / semaphore (acquire, hold)
  std::int64_t limit = 0;  // semaphore permits; compat: PX ms
  std::int64_t inv = 0;  // ns, CLOCK_MONOTONIC
  std::int64_t cmp = 0;  // ns, CLOCK_MONOTONIC
  std::int64_t cmp2 = 0;  // reg: the writer's safe deadline (ns), 0 unknown
  Outcome out = Outcome::kOk;
  std::uint64_t token = 0;
  std::uint64_t session = 0;
  std::string value;     // fput/fget/cset/cdel value; fault kind
  std::string aux;       // fput: the lock name; free text otherwise
};

// Nanoseconds of steady_clock now / of a time point.
std::int64_t now_ns();
std::int64_t to_ns(std::chrono::steady_clock::time_point t);

// One line of JSON (without the newline).
std::string to_json(const Op& op);
// Parses one line written by to_json. kInvalidArgument on anything else.
Result<Op> from_json(std::string_view line);
// Every record of a file. A line that does not parse (e.g. a process
// killed mid-line) is never skipped silently: with `unparsable` given, it is
// appended there as "PATH:LINE: why" and reading goes on (the caller fails
// the run); without it, it is an error, kInvalidArgument "PATH:LINE: why".
// kIoError when the file cannot be read.
Result<std::vector<Op>> read_history(const std::string& path, std::vector<std::string>* unparsable = nullptr);

// Appends records to a file, one line each, flushed per record so that a
// killed process loses at most the record it was writing.
class HistoryWriter {
 public:
  // kIoError when the file cannot be opened for append.
  static Result<std::unique_ptr<HistoryWriter>> open(const std::string& path);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;
  // Appends one record and flushes it to the file. A failed write or flush
  // (e.g. a full disk) aborts the process: an operation that happened but
  // is missing from the history could hide a violation.
  void write(const Op& op);

 private:
  explicit HistoryWriter(std::FILE* file) : file_(file) {}
  std::mutex mu_;
  std::FILE* file_;
};

}  // namespace leasehold::torture
