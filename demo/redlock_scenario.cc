// demo/redlock_scenario.cc: see the header.
#include "demo/redlock_scenario.h"

#include <signal.h>

#include <thread>

#include "client/connection.h"
#include "demo/child_process.h"
#include "demo/loopback.h"
#include "demo/pause_scenario.h"
#include "leasehold/client.h"

namespace leasehold::demo {
namespace {

using std::chrono::milliseconds;

std::string redis_endpoints(const std::vector<std::uint16_t>& ports, std::size_t reachable) {
  std::string out;
  for (std::size_t i = 0; i < ports.size(); ++i) {
    // Cut off from A: a loopback port nobody listens on (connect is refused).
    const std::uint16_t port = i < reachable ? ports[i] : 1;
    out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  }
  return out;
}

// One command on a Redis server; nullopt when it failed.
std::optional<resp::Value> redis_call(std::uint16_t port, const std::vector<std::string>& args) {
  const auto deadline = client::Clock::now() + milliseconds(2000);
  auto conn = client::detail::Connection::dial({"127.0.0.1", port}, deadline, -1, client::detail::Handshake{});
  if (!conn) return std::nullopt;
  auto reply = (*conn)->roundtrip(args, deadline, -1, {});
  if (!reply) return std::nullopt;
  return std::move(reply).value();
}

class Run {
 public:
  Run(const RedlockRunConfig& config, Timeline& timeline) : c_(config), tl_(timeline) {
    report_.leasehold = config.leasehold;
  }

  RedlockRunReport run() {
    execute();
    judge();
    a_.kill_now();
    b_.kill_now();
    return report_;
  }

 private:
  Result<ChildProcess> spawn(const std::string& role, bool pause_first) const {
    const bool clock = c_.scenario == RedlockScenario::kClockJump;
    const milliseconds wait = pause_first ? milliseconds(15000) : c_.ttl * 3 + milliseconds(20000);
    ChildSpec spec;
    if (c_.leasehold) {
      spec.argv = {c_.leasehold_binary, "demo", "worker", "--role", role, "--endpoints", c_.leasehold_endpoint,
                   "--store", "file", "--fenced"};
    } else {
      const std::string servers = redis_endpoints(c_.redis_ports, clock && role == "A" ? 3 : c_.redis_ports.size());
      spec.argv = {c_.leasehold_binary, "demo", "redlock-worker", "--role", role, "--servers", servers};
    }
    const std::vector<std::string> common = {"--lock", c_.lock, "--ttl-ms", std::to_string(c_.ttl.count()),
                                             "--wait-ms", std::to_string(wait.count()), "--entry", c_.ledger.entry,
                                             "--start-ns", std::to_string(steady_ns(tl_.start()))};
    spec.argv.insert(spec.argv.end(), common.begin(), common.end());
    if (pause_first) spec.argv.push_back("--pause-before-write");
    spec.env = {{kLedgerLocationEnv, c_.ledger.location}};
    spec.pipe_stdout = true;
    spec.die_with_parent = true;
    return ChildProcess::spawn(spec);
  }

  // Prints `who`'s events until `stop` (or its end of output). False when
  // the run broke (report_.broken says why).
  bool follow(ChildProcess& p, const std::string& who, EventKind stop, milliseconds within) {
    const auto deadline = SteadyClock::now() + within;
    while (true) {
      if (c_.cancelled && c_.cancelled()) return broke("interrupted");
      auto line = p.read_line(std::min(deadline, SteadyClock::now() + milliseconds(200)));
      if (!line && line.status().code() == ErrorCode::kTimedOut && SteadyClock::now() < deadline) continue;
      if (!line) return broke("worker " + who + ": " + line.status().message());
      if (!line->has_value()) {
        return stop == EventKind::kDone ? true : broke("worker " + who + " ended early");
      }
      auto e = decode_event(**line);
      if (!e) {
        tl_.print(who, **line);
        continue;
      }
      on_event(who, *e);
      if (!report_.broken.empty()) return false;
      if (e->kind == stop) return true;
    }
  }

  void on_event(const std::string& who, const Event& e) {
    const bool a = who == "A";
    if (e.kind == EventKind::kAcquired) {
      (a ? report_.a_acquired : report_.b_acquired) = true;
      (a ? report_.token_a : report_.token_b) = e.token;
      if (a) a_session_ = e.value;
    } else if (e.kind == EventKind::kWrote || e.kind == EventKind::kRejected || e.kind == EventKind::kFailed) {
      (a ? report_.write_a : report_.write_b) = e.kind;
    } else if (e.kind == EventKind::kError) {
      report_.broken = "worker " + who + ": " + e.text;
    }
    if (e.kind != EventKind::kDone) tl_.print_at(e.at_ns, who, e.kind == EventKind::kError ? "ERROR " + e.text : e.text);
    if (!a && e.kind == EventKind::kAcquired && report_.a_acquired) {
      tl_.print_at(e.at_ns, "demo",
                   c_.leasehold ? "B is granted token " + std::to_string(e.token) + " > A's " +
                                      std::to_string(report_.token_a) + ": the fenced ledger can tell them apart"
                                : "DOUBLE GRANT: B holds the lock, and frozen A still believes it does too");
    }
  }

  bool broke(const std::string& why) {
    if (report_.broken.empty()) report_.broken = why;
    return false;
  }

  // Brings about the scenario's failure while A is frozen.
  bool make_failure() {
    const bool clock_fault = c_.scenario == RedlockScenario::kClockJump && c_.leasehold && !c_.clock_rate.empty();
    if (c_.scenario == RedlockScenario::kClockJump && !clock_fault) {
      if (c_.leasehold) {
        auto cl = checker();
        if (!cl || !(*cl)->revoke(c_.lock)) return broke("LOCK.REVOKE failed");
        tl_.print("demo", "libfaketime is not available, so no real clock fault: forces the same early expiry "
                          "on leasehold with LOCK.REVOKE " + c_.lock);
        return true;
      }
      auto r = redis_call(c_.redis_ports[2], {"PEXPIRE", c_.lock, "1"});
      if (!r || r->integer != 1) return broke("could not expire the key on redis #3");
      tl_.print("demo", "redis #3's clock jumps forward: A's key there expires early (forced: PEXPIRE " + c_.lock +
                            " 1); A still counts 3/5");
      return true;
    }
    const auto frozen = SteadyClock::now();
    if (clock_fault) {
      tl_.print("demo", "the leasehold server's clock runs " + c_.clock_rate +
                            "x fast (libfaketime, FAKETIME=\"+0 x" + c_.clock_rate +
                            "\"): its monotonic clock races ahead, so A's " + seconds_text(c_.ttl) +
                            " lease runs out early in real time ...");
    } else {
      tl_.print("demo", "A stays frozen past its " + seconds_text(c_.ttl) + " TTL ...");
    }
    const auto deadline = SteadyClock::now() + c_.ttl * 3 + milliseconds(15000);
    while (SteadyClock::now() < deadline) {
      if (c_.cancelled && c_.cancelled()) return broke("interrupted");
      if (c_.leasehold ? lease_gone() : keys_gone()) {
        if (clock_fault) {
          const auto real = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - frozen);
          tl_.print("demo", "the server's fast clock expired A's session after " + seconds_text(real) +
                                " of real time" +
                                (real < c_.ttl ? ", before A's own clock reached its " + seconds_text(c_.ttl) +
                                                     " TTL: A still believes it holds the lock"
                                               : " (a loaded machine: A's TTL had passed too)"));
        } else {
          tl_.print("demo", c_.leasehold ? "the server expired A's session: the lock is free"
                                         : "A's keys have expired on all 5 Redis servers");
        }
        return true;
      }
      std::this_thread::sleep_for(milliseconds(50));  // deliberate: the poll interval of a bounded condition wait
    }
    return broke("A's lease did not lapse in time");
  }

  bool keys_gone() const {
    for (auto port : c_.redis_ports) {
      auto r = redis_call(port, {"GET", c_.lock});
      if (!r || r->type != resp::Type::kNull) return false;
    }
    return true;
  }

  bool lease_gone() {
    auto cl = checker();
    if (!cl) return false;
    auto info = (*cl)->lock_info(c_.lock);
    if (!info) return false;
    if (!info->has_value()) return true;
    for (const auto& h : (*info)->holders) {
      if (h.session == a_session_) return false;
    }
    return true;
  }

  Result<std::shared_ptr<client::Client>> checker() {
    if (checker_) return checker_;
    auto eps = client::parse_endpoints(c_.leasehold_endpoint);
    if (!eps) return eps.status();
    client::ClientOptions o;
    o.endpoints = *eps;
    auto cl = client::Client::create(o);
    if (!cl) return cl.status();
    checker_ = *cl;
    return checker_;
  }

  void execute() {
    if (c_.scenario == RedlockScenario::kClockJump && !c_.leasehold) {
      tl_.print("demo", "A is cut off from redis #4 and #5 (a network partition): it reaches #1-#3 only");
    }
    auto a = spawn("A", true);
    if (!a) return void(broke("cannot start worker A: " + a.status().message()));
    a_ = std::move(*a);
    if (!follow(a_, "A", EventKind::kPausing, milliseconds(20000))) return;
    if (!a_.wait_stopped(SteadyClock::now() + milliseconds(10000))) return void(broke("worker A did not stop"));
    tl_.print("demo", "A is frozen (SIGSTOP): every thread of its process stops");
    if (!make_failure()) return;
    auto b = spawn("B", false);
    if (!b) return void(broke("cannot start worker B: " + b.status().message()));
    b_ = std::move(*b);
    if (!follow(b_, "B", EventKind::kDone, c_.ttl * 3 + milliseconds(30000))) return;
    tl_.print("demo", "resumes A (SIGCONT)");
    a_.signal(SIGCONT);
    if (!follow(a_, "A", EventKind::kDone, milliseconds(30000))) return;
    auto ledger = open_ledger(c_.ledger);
    if (!ledger) return void(broke("ledger: " + ledger.status().message()));
    auto record = (*ledger)->read();
    if (!record) return void(broke("ledger: " + record.status().message()));
    report_.final_record = *record;
    tl_.print("ledger", "final record: writer=" + record->writer + " \"" + record->body + "\"");
  }

  void judge() {
    auto& r = report_;
    if (!r.broken.empty() || !r.final_record) return;
    const bool both_wrote = r.write_a == EventKind::kWrote && r.write_b == EventKind::kWrote;
    if (r.a_acquired && r.b_acquired && both_wrote && r.final_record->writer == "A") {
      r.outcome = Outcome::kCorrupted;
    } else if (r.write_b == EventKind::kWrote && r.write_a != EventKind::kWrote && r.final_record->writer == "B") {
      r.outcome = Outcome::kSafe;
    } else {
      r.broken = "unexpected: A " + std::string(r.write_a ? event_kind_name(*r.write_a) : "no write") + ", B " +
                 std::string(r.write_b ? event_kind_name(*r.write_b) : "no write") + ", ledger by " +
                 r.final_record->writer;
    }
  }

  const RedlockRunConfig& c_;
  Timeline& tl_;
  RedlockRunReport report_;
  ChildProcess a_;
  ChildProcess b_;
  std::uint64_t a_session_ = 0;
  std::shared_ptr<client::Client> checker_;
};

}  // namespace

RedlockRunReport run_redlock_run(const RedlockRunConfig& config, Timeline& timeline) {
  return Run(config, timeline).run();
}

}  // namespace leasehold::demo
