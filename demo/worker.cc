#include "demo/worker.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "demo/event_sink.h"
#include "demo/timeline.h"
#include "leasehold/client.h"
#include "leasehold/lock_guard.h"
#include "leasehold/session.h"

namespace leasehold::demo {
namespace {

using client::Millis;


// Waits (bounded) until the client library has noticed the loss, so the
// timeline can say how the worker learned it.
void report_loss(const client::LockGuard& guard, EventSink& events) {
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(1500);
  while (!guard.lost() && SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const Status st = guard.status();
  events.emit(EventKind::kLost,
              "learns afterwards that its lease is gone: " +
                  (st.message().empty() ? std::string(error_code_name(st.code())) : st.message()),
              guard.token());
}

}  // namespace

int run_worker(const WorkerConfig& config) {
  EventSink events(config.event_fd, config.start_ns);
  auto fail = [&](const std::string& what, const Status& st) {
    events.emit(EventKind::kError, what + ": " + st.to_string());
    return 1;
  };

  auto endpoints = client::parse_endpoints(config.endpoints);
  if (!endpoints) return fail("bad endpoints", endpoints.status());
  client::ClientOptions co;
  co.endpoints = std::move(*endpoints);
  co.call_timeout = Millis(3000);
  co.name = "demo-worker-" + config.role;
  auto cl = client::Client::create(std::move(co));
  if (!cl) return fail("client", cl.status());

  auto ledger = open_ledger(config.ledger);
  if (!ledger) return fail("cannot open the ledger", ledger.status());

  client::SessionOptions so;
  so.ttl = config.ttl;
  so.owner = "demo worker " + config.role + " pid " + std::to_string(::getpid());
  auto session = client::Session::open(*cl, so);
  if (!session) return fail("cannot open a session", session.status());
  events.emit(EventKind::kInfo, "opened session " + std::to_string((*session)->id()) + " (TTL " +
                                    seconds_text(config.ttl) + ", keepalive thread running)");

  auto guard = client::LockGuard::acquire(**session, config.lock, config.acquire_wait);
  if (!guard) return fail("lock " + config.lock + " not acquired", guard.status());
  const std::uint64_t token = guard->token();
  events.emit(EventKind::kAcquired,
              "acquired lock " + config.lock + "  token=" + std::to_string(token), token,
              (*session)->id());

  LedgerRecord record{config.role, token,
                      "billing job-42 result computed by worker " + config.role + " under token " +
                          std::to_string(token)};
  events.emit(EventKind::kInfo, "starts its write to the ledger (token " + std::to_string(token) + ")",
              token);

  if (config.pause_before_write) {
    const auto left = std::chrono::duration_cast<Millis>((*session)->safe_deadline() -
                                                         SteadyClock::now());
    events.emit(EventKind::kInfo,
                std::string("checks its lease: ") + (guard->valid() ? "valid" : "NOT valid") +
                    ", safe for another " + seconds_text(left) + " -> goes on writing",
                token);
    events.emit(EventKind::kPausing, "is about to hit a stop-the-world pause mid-write", token);
    ::kill(::getpid(), SIGSTOP);  // the whole process stops here until SIGCONT
    events.emit(EventKind::kInfo,
                "wakes up and finishes its write with token " + std::to_string(token) +
                    " (it cannot tell it was paused)",
                token);
  }

  const Status written = (*ledger)->write(record);
  if (written) {
    events.emit(EventKind::kWrote, "write LANDED: ledger = '" + record.body + "'", token);
  } else if (written.code() == ErrorCode::kStaleToken) {
    auto highest = (*ledger)->highest();
    const std::uint64_t h = highest && highest->has_value() ? **highest : 0;
    events.emit(EventKind::kRejected,
                "write REJECTED stale token " + std::to_string(token) + " < " + std::to_string(h) +
                    " (the resource has seen token " + std::to_string(h) + ")",
                token, h);
  } else {
    events.emit(EventKind::kFailed, "write FAILED: " + written.to_string(), token);
  }

  if (config.pause_before_write) report_loss(*guard, events);
  (void)guard->release();
  (void)(*session)->close();
  events.emit(EventKind::kDone, "done", token);
  return written || written.code() == ErrorCode::kStaleToken ? 0 : 1;
}

}  // namespace leasehold::demo
