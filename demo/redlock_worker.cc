// demo/redlock_worker.cc: see the header.
#include "demo/redlock_worker.h"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include "demo/event_sink.h"
#include "leasehold/redlock.h"

namespace leasehold::demo {

int run_redlock_worker(const RedlockWorkerConfig& config) {
  using std::chrono::milliseconds;
  EventSink events(config.event_fd, config.start_ns);
  auto fail = [&](const std::string& what, const Status& st) {
    events.emit(EventKind::kError, what + ": " + st.to_string());
    return 1;
  };
  auto servers = client::parse_endpoints(config.servers);
  if (!servers) return fail("bad servers", servers.status());
  const std::size_t n = servers->size();
  client::RedlockOptions ro;
  ro.servers = std::move(*servers);
  ro.server_timeout = milliseconds(500);
  ro.retry_count = 1;
  auto redlock = client::Redlock::create(std::move(ro));
  if (!redlock) return fail("redlock", redlock.status());
  LedgerTarget target = config.ledger;
  target.fenced = false;  // no token to fence with
  auto ledger = open_ledger(target);
  if (!ledger) return fail("cannot open the ledger", ledger.status());

  const auto give_up = SteadyClock::now() + config.acquire_wait;
  std::optional<client::RedlockLease> lease;
  bool said_waiting = false;
  while (!(lease = (*redlock)->try_once(config.lock, config.ttl))) {
    if (SteadyClock::now() >= give_up) {
      return fail("Redlock " + config.lock + " not acquired", Status(ErrorCode::kTimedOut, "no majority"));
    }
    if (!said_waiting) {
      events.emit(EventKind::kInfo, "tries Redlock " + config.lock + ": no majority yet, retrying");
      said_waiting = true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  auto left = [&] { return std::chrono::duration_cast<milliseconds>(lease->valid_until() - SteadyClock::now()); };
  events.emit(EventKind::kAcquired,
              "acquired Redlock " + config.lock + " on " + std::to_string(lease->granted_by.size()) + "/" +
                  std::to_string(n) + " servers, validity " + seconds_text(left()) + " (no fencing token)",
              0, lease->granted_by.size());
  LedgerRecord record{config.role, 0,
                      "billing job-42 result computed by worker " + config.role + " under Redlock"};
  if (config.pause_before_write) {
    events.emit(EventKind::kInfo, "checks its lease: Redlock validity left " + seconds_text(left()) +
                                      " -> goes on writing");
    events.emit(EventKind::kPausing, "is about to hit a stop-the-world pause mid-write");
    ::kill(::getpid(), SIGSTOP);
    const auto remaining = left();
    events.emit(EventKind::kInfo, std::string("wakes up and finishes its write; its validity ") +
                                      (remaining.count() > 0 ? "still shows " + seconds_text(remaining) + " left"
                                                             : "ran out " + seconds_text(-remaining) + " ago") +
                                      ", but it decided before the pause");
  }
  const Status written = (*ledger)->write(record);
  if (written) {
    events.emit(EventKind::kWrote, "write LANDED (unfenced): ledger = '" + record.body + "'");
  } else {
    events.emit(EventKind::kFailed, "write FAILED: " + written.to_string());
  }
  const std::size_t released = (*redlock)->unlock(*lease);
  events.emit(EventKind::kInfo, "releases: its value was still there on " + std::to_string(released) + "/" +
                                    std::to_string(n) + " servers");
  events.emit(EventKind::kDone, "done");
  return 0;
}

}  // namespace leasehold::demo
