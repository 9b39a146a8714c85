// demo/event_sink.h: how a demo worker process reports its events: one
// encode_event() line per write(2) to `fd` (its stdout, a pipe the demo
// reads), stamped relative to the run's start on steady_clock (timeline.h).
// A write error (the demo is gone) is ignored.
// Thread-safety: one thread per sink.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>

#include "demo/timeline.h"

namespace leasehold::demo {

class EventSink {
 public:
  EventSink(int fd, std::int64_t start_ns) : fd_(fd), start_(from_steady_ns(start_ns)) {}

  void emit(EventKind kind, std::string text, std::uint64_t token = 0, std::uint64_t value = 0) {
    Event e;
    e.at_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start_)
                  .count();
    e.kind = kind;
    e.token = token;
    e.value = value;
    e.text = std::move(text);
    const std::string line = encode_event(e);
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the demo is gone; nothing to tell
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  const int fd_;
  const SteadyClock::time_point start_;
};

}  // namespace leasehold::demo
