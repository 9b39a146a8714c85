#include "demo/pause_scenario.h"

#include <signal.h>

#include <cstdio>
#include <thread>

#include "demo/child_process.h"

namespace leasehold::demo {
namespace {

using std::chrono::milliseconds;

std::string record_text(const LedgerRecord& r) {
  return "writer=" + r.writer + " token=" + std::to_string(r.token) + " \"" + r.body + "\"";
}

// What one worker reported, as far as the verdict needs it.
struct WorkerView {
  std::string role;
  ChildProcess process;
  std::uint64_t token = 0;
  std::uint64_t session = 0;
  std::optional<EventKind> write;
  std::uint64_t rejected_by = 0;
  bool finished = false;  // kDone or end of output
};

class ScenarioRun {
 public:
  ScenarioRun(const ScenarioConfig& config, Timeline& timeline, client::Client* checker)
      : config_(config), tl_(timeline), checker_(checker) {}

  RunReport run();

 private:
  Result<ChildProcess> spawn_worker(const std::string& role, bool pause_first) const;
  // Reads and prints `w`'s events until `stop` (or kDone / end of output).
  // False (with broken_ set) on an error event, a timeout or cancellation.
  bool follow(WorkerView& w, std::optional<EventKind> stop, SteadyClock::time_point deadline);
  void on_event(WorkerView& w, const Event& e);
  void confirm_a_expired(std::int64_t granted_at_ns);
  bool cancelled() const { return config_.cancelled && config_.cancelled(); }
  void judge();

  const ScenarioConfig& config_;
  Timeline& tl_;
  client::Client* checker_;
  RunReport report_;
  std::string broken_;
  WorkerView a_{"A", {}, 0, 0, {}, 0, false};
  WorkerView b_{"B", {}, 0, 0, {}, 0, false};
  bool a_frozen_ = false;
};

Result<ChildProcess> ScenarioRun::spawn_worker(const std::string& role, bool pause_first) const {
  const milliseconds wait = pause_first ? milliseconds(10000) : config_.ttl * 3 + milliseconds(10000);
  ChildSpec spec;
  spec.argv = {config_.leasehold_binary, "demo", "worker",
               "--role", role,
               "--endpoints", config_.endpoints,
               "--lock", config_.lock,
               "--ttl-ms", std::to_string(config_.ttl.count()),
               "--wait-ms", std::to_string(wait.count()),
               "--store", ledger_store_name(config_.ledger.store),
               "--entry", config_.ledger.entry,
               "--start-ns", std::to_string(steady_ns(tl_.start()))};
  if (config_.ledger.fenced) spec.argv.push_back("--fenced");
  if (pause_first) spec.argv.push_back("--pause-before-write");
  spec.env = {{kLedgerLocationEnv, config_.ledger.location}};
  spec.pipe_stdout = true;
  spec.die_with_parent = true;
  return ChildProcess::spawn(spec);
}

void ScenarioRun::on_event(WorkerView& w, const Event& e) {
  switch (e.kind) {
    case EventKind::kAcquired:
      w.token = e.token;
      w.session = e.value;
      break;
    case EventKind::kWrote:
    case EventKind::kRejected:
    case EventKind::kFailed:
      w.write = e.kind;
      w.rejected_by = e.value;
      break;
    case EventKind::kError:
      broken_ = "worker " + w.role + ": " + e.text;
      break;
    case EventKind::kDone:
      w.finished = true;
      break;
    default:
      break;
  }
  if (e.kind != EventKind::kDone) {
    tl_.print_at(e.at_ns, w.role, e.kind == EventKind::kError ? "ERROR " + e.text : e.text);
  }
  if (e.kind == EventKind::kAcquired && &w == &b_ && a_frozen_) confirm_a_expired(e.at_ns);
}

bool ScenarioRun::follow(WorkerView& w, std::optional<EventKind> stop,
                         SteadyClock::time_point deadline) {
  while (true) {
    if (cancelled()) {
      broken_ = "interrupted";
      return false;
    }
    const auto slice = std::min(deadline, SteadyClock::now() + milliseconds(200));
    auto line = w.process.read_line(slice);
    if (!line && line.status().code() == ErrorCode::kTimedOut && SteadyClock::now() < deadline) {
      continue;
    }
    if (!line) {
      broken_ = "worker " + w.role + ": " + line.status().message();
      return false;
    }
    if (!line->has_value()) {  // end of output: the worker exited
      w.finished = true;
      if (stop && *stop != EventKind::kDone) {
        broken_ = "worker " + w.role + " ended before it reported " +
                  std::string(event_kind_name(*stop));
        return false;
      }
      return broken_.empty();
    }
    auto event = decode_event(**line);
    if (!event) {
      tl_.print(w.role, **line);  // stray output: show it as it is
      continue;
    }
    on_event(w, *event);
    if (!broken_.empty()) return false;
    if (stop && event->kind == *stop) return true;
  }
}

// Stamped with B's grant: it says what the server's state was at that moment.
void ScenarioRun::confirm_a_expired(std::int64_t granted_at_ns) {
  if (checker_ == nullptr || a_.session == 0) return;
  auto sessions = checker_->list_sessions();
  if (!sessions) return;  // only commentary; the verdict does not depend on it
  bool alive = false;
  for (const auto& s : *sessions) alive = alive || s.id == a_.session;
  tl_.print_at(granted_at_ns, "server", alive ? "A's session " + std::to_string(a_.session) + " is still listed"
                            : "A's session " + std::to_string(a_.session) +
                                  " is gone: no keepalive within its " + seconds_text(config_.ttl) +
                                  " TTL, so it expired and the lock passed to B");
}

RunReport ScenarioRun::run() {
  report_.fenced = config_.ledger.fenced;
  auto ledger = open_ledger(config_.ledger);
  if (ledger) {
    report_.resource = (*ledger)->describe();
    tl_.note("resource: " + report_.resource);
  }
  Status prepared = ledger ? (*ledger)->prepare("billing job-42: not run yet") : ledger.status();
  if (!prepared) broken_ = "ledger: " + prepared.to_string();

  if (broken_.empty()) {
    auto a = spawn_worker("A", true);
    if (a) a_.process = std::move(*a); else broken_ = a.status().to_string();
  }
  const auto a_deadline = SteadyClock::now() + milliseconds(20000);
  if (broken_.empty() && follow(a_, EventKind::kPausing, a_deadline)) {
    if (Status s = a_.process.wait_stopped(SteadyClock::now() + milliseconds(5000)); !s) {
      broken_ = "worker A did not stop: " + s.to_string();
    }
  }
  const auto stopped_at = SteadyClock::now();
  if (broken_.empty()) {
    a_frozen_ = true;
    tl_.print("A", "** FROZEN by SIGSTOP (stop-the-world pause): every thread stops, its "
                   "keepalive thread too **");
    auto b = spawn_worker("B", false);
    if (b) b_.process = std::move(*b); else broken_ = b.status().to_string();
  }
  if (broken_.empty()) {
    follow(b_, EventKind::kDone, stopped_at + config_.ttl * 3 + milliseconds(20000));
  }
  if (broken_.empty()) {
    while (SteadyClock::now() < stopped_at + config_.pause && !cancelled()) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    report_.frozen_for = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - stopped_at);
    tl_.print("A", "resumed by SIGCONT after " + seconds_text(report_.frozen_for) + " frozen");
    a_frozen_ = false;
    a_.process.signal(SIGCONT);
    follow(a_, EventKind::kDone, SteadyClock::now() + milliseconds(20000));
  }
  for (WorkerView* w : {&a_, &b_}) {
    if (!broken_.empty()) w->process.kill_now();  // A may still be frozen
    auto code = w->process.wait_exit(SteadyClock::now() + milliseconds(5000));
    if (!code) w->process.kill_now();
    if (broken_.empty() && (!code || *code != 0)) {
      broken_ = "worker " + w->role + (code ? " exited with status " + std::to_string(*code)
                                            : std::string(" did not exit"));
    }
  }
  if (ledger) {
    auto final_record = (*ledger)->read();
    if (final_record) {
      report_.final_record = *final_record;
      tl_.print("ledger", "now holds: " + record_text(*final_record));
    } else if (broken_.empty()) {
      broken_ = "cannot read the ledger: " + final_record.status().to_string();
    }
  }
  judge();
  return report_;
}

void ScenarioRun::judge() {
  report_.token_a = a_.token;
  report_.token_b = b_.token;
  report_.write_a = a_.write;
  report_.write_b = b_.write;
  const std::string name = report_.fenced ? "fenced" : "unfenced";
  const LedgerRecord* fin = report_.final_record ? &*report_.final_record : nullptr;
  const bool b_landed = b_.write == EventKind::kWrote && b_.token > a_.token && a_.token > 0;
  const bool holds_a = fin != nullptr && fin->writer == "A" && fin->token == a_.token;
  const bool holds_b = fin != nullptr && fin->writer == "B" && fin->token == b_.token;
  std::string why;
  if (!broken_.empty()) {
    report_.outcome = Outcome::kBroken;
    why = "BROKEN (" + broken_ + ")";
  } else if (b_landed && a_.write == EventKind::kWrote && holds_a) {
    report_.outcome = Outcome::kCorrupted;
    why = report_.fenced ? "CORRUPTED (the stale write was accepted: fencing did not work)"
                         : "CORRUPTED (stale writer A overwrote B)";
  } else if (b_landed && a_.write == EventKind::kRejected && holds_b) {
    report_.outcome = Outcome::kSafe;
    why = "SAFE (stale write rejected)";
  } else if (b_landed && holds_b) {
    report_.outcome = Outcome::kSafe;
    why = "SAFE (B's data survived, but A's write did not land for another reason)";
  } else {
    report_.outcome = Outcome::kBroken;
    why = "UNEXPECTED (tokens A=" + std::to_string(a_.token) + " B=" + std::to_string(b_.token) +
          ", ledger " + (fin ? record_text(*fin) : std::string("unreadable")) + ")";
  }
  report_.as_expected = report_.fenced ? (report_.outcome == Outcome::kSafe && a_.write == EventKind::kRejected)
                                       : report_.outcome == Outcome::kCorrupted;
  if (report_.outcome == Outcome::kCorrupted && !report_.fenced) {
    tl_.note("  B's result (token " + std::to_string(b_.token) +
             ") is lost: A's result, computed under a lease that had already expired, replaced it.");
  } else if (report_.outcome == Outcome::kSafe && a_.write == EventKind::kRejected) {
    tl_.note("  The ledger still holds B's result (token " + std::to_string(b_.token) +
             "); A's late write (token " + std::to_string(a_.token) + ") changed nothing.");
  }
  report_.verdict = "VERDICT " + name + ": " + why;
  tl_.note(report_.verdict);
}

}  // namespace

RunReport run_pause_scenario(const ScenarioConfig& config, Timeline& timeline,
                             client::Client* checker) {
  ScenarioRun run(config, timeline, checker);
  return run.run();
}

}  // namespace leasehold::demo
