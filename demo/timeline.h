// demo/timeline.h: the demo's readable timeline and the event lines workers
// send to the demo over their stdout.
//
// Time: every line carries the offset from the run's start, measured on
// std::chrono::steady_clock. On Linux that is CLOCK_MONOTONIC, shared by
// all processes of the machine, so a worker given the run's start (as
// nanoseconds of steady_clock's epoch) stamps its events on the same axis.
//
// Thread-safety: Timeline serialises print() with a mutex; the free
// functions are pure.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "demo/child_process.h"
#include "leasehold/status.h"

namespace leasehold::demo {

// What a worker reports. The demo reacts to kinds; text is for people.
enum class EventKind : std::uint8_t {
  kInfo,      // a step, for the timeline
  kAcquired,  // token = the granted token, value = the session id
  kPausing,   // (worker A) about to be frozen mid-write
  kWrote,     // token = the token written with
  kRejected,  // stale: token = ours, value = the resource's highest
  kFailed,    // the write failed for another reason
  kLost,      // the worker learned its lease is gone
  kDone,      // last event of a worker that ran to its end
  kError,     // the worker gave up (text says why)
};

std::string_view event_kind_name(EventKind kind);

struct Event {
  std::int64_t at_ns = 0;  // offset from the run's start
  EventKind kind = EventKind::kInfo;
  std::uint64_t token = 0;
  std::uint64_t value = 0;
  std::string text;  // one line, no tabs or newlines
};

// "EV\t<at_ns>\t<kind>\t<token>\t<value>\t<text>\n". Tabs and newlines in
// text become spaces.
std::string encode_event(const Event& event);
// The inverse; kInvalidArgument for a line that is not an event.
Result<Event> decode_event(std::string_view line);

// "2.00s": a duration for the timeline.
std::string seconds_text(std::chrono::milliseconds ms);

// Nanoseconds of steady_clock's epoch (to hand a run's start to a worker).
std::int64_t steady_ns(SteadyClock::time_point t);
SteadyClock::time_point from_steady_ns(std::int64_t ns);

// Prints "t=+1.234s  A       text" lines to `out` and keeps them.
class Timeline {
 public:
  Timeline(std::ostream& out, SteadyClock::time_point start) : out_(out), start_(start) {}

  SteadyClock::time_point start() const { return start_; }
  std::int64_t now_ns() const;

  // A line at the current time.
  void print(std::string_view actor, std::string_view text);
  // A line at `at_ns` (an event's own stamp).
  void print_at(std::int64_t at_ns, std::string_view actor, std::string_view text);
  // A line without a time stamp (headers, verdicts).
  void note(std::string_view text);

  std::vector<std::string> lines() const;

 private:
  std::ostream& out_;
  const SteadyClock::time_point start_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // guarded by mu_; a demo prints < 100 lines
};

}  // namespace leasehold::demo
