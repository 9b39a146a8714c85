// leasehold_capbench: the capacity benchmark (docs/bench.md,
// "Capacity"). For each session count N it starts a fresh `leasehold
// server`, then measures, with a PING probe every millisecond watching for
// event-loop stalls throughout:
//   open       N SESSION.OPENs (pipelined, several connections): sessions/s,
//              RSS and RSS per session;
//   keepalive  unpipelined SESSION.KEEPALIVEs from many connections with the
//              N sessions live: keepalives/s;
//   restart    SIGTERM (clean) and then SIGKILL restarts: the time until the
//              server answers PING again with all N sessions, and the
//              stalls in the first seconds after it does.
// It prints one table and the goals (10M sessions under 1.5 GB RSS, no
// stall over 10 ms). A benchmark: nothing here fails on a slow machine.
//
// Exit status: 0 when every phase ran, 1 when one hit an error (the table
// says which), 2 on bad usage.
#include <CLI/CLI.hpp>

#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "bench/capacity/page_fault_probe.h"
#include "bench/capacity/server_run.h"
#include "bench/capacity/session_load.h"
#include "bench/capacity/stall_probe.h"

namespace {

using leasehold::bench::Endpoint;
using leasehold::bench::PageFaultCost;
using leasehold::bench::probe_page_faults;
using leasehold::bench::ServerRun;
using leasehold::bench::StallProbe;
using leasehold::bench::StallWindow;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string binary;
  std::string work_dir;
  std::vector<std::uint64_t> sessions = {1'000'000, 10'000'000};
  std::int64_t ttl_ms = 3'600'000;
  int open_connections = 8;
  int open_depth = 128;
  int keepalive_connections = 1000;
  int keepalive_threads = 8;
  int load_nice = 0;
  long long keepalive_ms = 10'000;
  long long after_restart_ms = 3'000;
  long long phase_timeout_s = 900;
  double stall_ms = 10;
  std::vector<std::string> restarts = {"term", "kill"};
  std::vector<std::string> server_args;
  std::chrono::milliseconds io_timeout{30'000};
};

struct PhaseRow {
  std::uint64_t sessions = 0;
  std::string phase;
  std::string result;
  std::uint64_t rss = 0;       // bytes after the phase; 0: not measured
  double rss_per_session = -1;
  StallWindow stalls;
  bool probed = false;
  std::string error;
  // The server's own meter (INFO loop_turns_over_10ms during the phase,
  // loop_longest_turn_ms since the server started): its stalls, apart
  // from the probe's queueing. Empty when not read.
  std::string server_turns;
  double server_longest_ms = -1;
  // The same turns in the loop thread's CPU time (INFO
  // loop_turns_over_10ms_on_cpu during the phase, loop_longest_turn_cpu_ms
  // since start): what is left once the kernel's descheduling is taken out.
  std::string server_cpu_turns;
  double server_longest_cpu_ms = -1;
  // Keepalive phase: the mean round trip that queueing alone gives at the
  // measured rate (Little's law: clients in line / completions per second).
  double queueing_floor_ms = -1;
  // The turns over 10 ms with at most 10 ms of CPU time, by why the loop
  // thread was off the CPU (INFO loop_turns_over_10ms_blocked and
  // _preempted during the phase; server/observability/loop_turn_meter.h): it slept, or it
  // waited for a core. -1 when not read.
  std::int64_t server_blocked_turns = -1;
  std::int64_t server_preempted_turns = -1;
  // The counts behind server_turns and server_cpu_turns; -1 when not read.
  std::int64_t server_turns_over = -1;
  std::int64_t server_cpu_turns_over = -1;
};

std::string fmt(const char* format, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string mib(std::uint64_t bytes) { return bytes == 0 ? "-" : fmt("%.0f MiB", static_cast<double>(bytes) / 1048576.0); }

// The longest stalls of a window, at most `n`, as "12.3 ms at 4.5 s, ...".
std::string worst(const StallWindow& w, std::size_t n) {
  auto over = w.over;
  std::sort(over.begin(), over.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
  std::string out;
  for (std::size_t i = 0; i < over.size() && i < n; ++i) {
    if (!out.empty()) out += ", ";
    out += fmt("%.0f ms", over[i].ms) + fmt(" at %.1f s", over[i].at_s);
  }
  return out;
}

class CapacityRun {
 public:
  explicit CapacityRun(Options o) : o_(std::move(o)) {}

  std::vector<PhaseRow> run() {
    std::vector<PhaseRow> rows;
    for (std::uint64_t n : o_.sessions) run_size(n, rows);
    return rows;
  }

 private:
  Clock::time_point deadline() const { return Clock::now() + std::chrono::seconds(o_.phase_timeout_s); }

  void progress(const PhaseRow& r) {
    std::cerr << "capbench: N=" << r.sessions << " " << r.phase << ": " << r.result
              << fmt(", longest stall %.1f ms", r.stalls.max_ms) << (r.error.empty() ? "" : "  ERROR " + r.error)
              << std::endl;
  }

  // Counts of the server's turns over 10 ms at a phase's start: busy wall
  // time, and the loop thread's CPU time.
  struct TurnCounts {
    std::int64_t wall = 0;
    std::int64_t cpu = 0;
    std::int64_t blocked = 0;
    std::int64_t preempted = 0;
  };

  TurnCounts turn_counts(const ServerRun& server) const {
    return {server.info_field("loop_turns_over_10ms", o_.io_timeout).value_or(0),
            server.info_field("loop_turns_over_10ms_on_cpu", o_.io_timeout).value_or(0),
            server.info_field("loop_turns_over_10ms_blocked", o_.io_timeout).value_or(0),
            server.info_field("loop_turns_over_10ms_preempted", o_.io_timeout).value_or(0)};
  }

  // A count since the phase's start into `out`; `before` becomes the count
  // now. Leaves both alone if INFO fails.
  void read_turn_count(const ServerRun& server, const char* field, std::int64_t& before, std::int64_t& out) {
    auto count = server.info_field(field, o_.io_timeout);
    if (!count) return;
    out = *count - before;
    before = *count;
  }

  // One pair of INFO fields: the count since the phase's start into
  // `count` (read_turn_count), and "count (longest so far)" into `text` and
  // `longest`. Leaves all of them alone if INFO fails.
  void read_turn_field(const ServerRun& server, const char* count_field, const char* longest_field,
                       std::int64_t& before, std::int64_t& count, std::string& text, double& longest) {
    auto max_ms = server.info_number(longest_field, o_.io_timeout);
    if (!max_ms) return;
    read_turn_count(server, count_field, before, count);
    if (count < 0) return;
    text = std::to_string(count) + fmt(" (%.1f ms)", *max_ms);
    longest = *max_ms;
  }

  // Fills row.server_turns (busy wall time) and row.server_cpu_turns (the
  // loop thread's CPU time) from INFO.
  void read_server_turns(const ServerRun& server, PhaseRow& row, TurnCounts& before) {
    read_turn_field(server, "loop_turns_over_10ms", "loop_longest_turn_ms", before.wall, row.server_turns_over,
                    row.server_turns, row.server_longest_ms);
    read_turn_field(server, "loop_turns_over_10ms_on_cpu", "loop_longest_turn_cpu_ms", before.cpu,
                    row.server_cpu_turns_over, row.server_cpu_turns, row.server_longest_cpu_ms);
    read_turn_count(server, "loop_turns_over_10ms_blocked", before.blocked, row.server_blocked_turns);
    read_turn_count(server, "loop_turns_over_10ms_preempted", before.preempted, row.server_preempted_turns);
  }

  void finish_probe(PhaseRow& row, StallProbe& probe) {
    row.stalls = probe.take();
    row.probed = true;
    if (!row.stalls.error.empty() && row.error.empty()) row.error = "stall probe: " + row.stalls.error;
  }

  void run_size(std::uint64_t n, std::vector<PhaseRow>& rows) {
    std::string dir = o_.work_dir + "/n" + std::to_string(n);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    leasehold::bench::ServerSpec spec;
    spec.binary = o_.binary;
    spec.data_dir = dir + "/data";
    spec.log_path = dir + "/server.log";
    spec.extra_args = {"--max-sessions", std::to_string(n + 1000), "--max-clients",
                       std::to_string(o_.keepalive_connections + 100), "--log-level", "warn"};
    spec.extra_args.insert(spec.extra_args.end(), o_.server_args.begin(), o_.server_args.end());
    ServerRun server(spec);
    auto fail = [&](const std::string& phase, const std::string& why) {
      PhaseRow r{n, phase, "-", 0, -1, {}, false, why, "", -1, "", -1};
      progress(r);
      rows.push_back(std::move(r));
    };
    if (auto s = server.start(deadline()); !s) return fail("start", s.to_string());

    StallProbe probe(server.endpoint(), o_.stall_ms, o_.io_timeout);
    if (auto s = probe.start(deadline()); !s) return fail("start", "stall probe: " + s.to_string());

    // Idle: the probe's own noise floor on this machine.
    {
      PhaseRow r{n, "idle (probe noise)", "", 0, -1, {}, false, "", "", -1, "", -1};
      std::this_thread::sleep_for(std::chrono::seconds(2));  // the measured idle window
      r.rss = server.rss_bytes();
      finish_probe(r, probe);
      r.result = fmt("%.0f PINGs", static_cast<double>(r.stalls.pings)) + fmt(", p99 %.2f ms", r.stalls.p99_ms);
      progress(r);
      rows.push_back(r);
    }
    std::uint64_t base_rss = server.rss_bytes();
    TurnCounts turns_over = turn_counts(server);

    // Open.
    auto snaps_before = server.info_field("snapshots_saved", o_.io_timeout).value_or(-1);
    auto opened = leasehold::bench::open_sessions(server.endpoint(), n, o_.ttl_ms, o_.open_connections,
                                                  o_.open_depth, deadline(), o_.io_timeout, o_.load_nice);
    PhaseRow open{n, "open", "", server.rss_bytes(), -1, {}, false, opened.error, "", -1, "", -1};
    finish_probe(open, probe);
    // INFO runs on the loop too (and is slow with many sessions): only
    // between windows, with the probe stopped, and timed as its own row.
    probe.stop();
    Clock::time_point info_start = Clock::now();
    auto snaps_after = server.info_field("snapshots_saved", o_.io_timeout).value_or(-1);
    double info_s = std::chrono::duration<double>(Clock::now() - info_start).count();
    auto live = server.info_field("sessions", o_.io_timeout).value_or(-1);
    read_server_turns(server, open, turns_over);
    if (!opened.ids.empty() && open.rss > base_rss) {
      open.rss_per_session = static_cast<double>(open.rss - base_rss) / static_cast<double>(opened.ids.size());
    }
    open.result = fmt("%.0f sessions/s", opened.per_s) + fmt(" (%.0f", static_cast<double>(opened.ids.size())) +
                  fmt(" in %.1f s; ", opened.seconds) + fmt("INFO sessions %.0f; ", static_cast<double>(live)) +
                  fmt("%.0f snapshots)", static_cast<double>(snaps_after - snaps_before));
    progress(open);
    rows.push_back(open);
    {
      PhaseRow info{n, "one INFO", fmt("%.3f s round trip (on an idle server)", info_s), 0, -1, {}, true, "", "", -1, "", -1};
      info.stalls.max_ms = info_s * 1000;  // the loop answers nobody else meanwhile
      if (info.stalls.max_ms > o_.stall_ms) info.stalls.over.push_back({0, info.stalls.max_ms});
      progress(info);
      rows.push_back(info);
    }
    if (opened.ids.empty()) return;
    if (auto s = probe.start(deadline()); !s) return fail("keepalive", "stall probe: " + s.to_string());

    // Keepalives.
    auto ka = leasehold::bench::keepalive_load(server.endpoint(), opened.ids, o_.keepalive_connections,
                                               o_.keepalive_threads, std::chrono::milliseconds(o_.keepalive_ms),
                                               o_.io_timeout, o_.load_nice);
    PhaseRow kr{n, "keepalive", "", server.rss_bytes(), -1, {}, false, ka.error, "", -1, "", -1};
    finish_probe(kr, probe);
    read_server_turns(server, kr, turns_over);
    kr.result = fmt("%.0f keepalives/s", ka.per_s) + fmt(" from %.0f conns", o_.keepalive_connections) +
                fmt(" (RTT p50 %.2f ms", ka.p50_ms) + fmt(", p99 %.2f ms)", ka.p99_ms);
    // Every connection (and the probe) always has one request in line.
    if (ka.per_s > 0) kr.queueing_floor_ms = (o_.keepalive_connections + 1) / ka.per_s * 1e3;
    progress(kr);
    rows.push_back(kr);

    // Restarts.
    for (const auto& how : o_.restarts) {
      int sig = how == "kill" ? SIGKILL : SIGTERM;
      probe.stop();
      Clock::time_point t0 = Clock::now();
      if (auto s = server.stop(sig, deadline()); !s) return fail("restart (" + how + ")", "stop: " + s.to_string());
      Clock::time_point t1 = Clock::now();
      if (auto s = server.start(deadline(), /*keep_port=*/true); !s) {
        return fail("restart (" + how + ")", s.to_string());
      }
      Clock::time_point t2 = Clock::now();
      if (auto s = probe.start(deadline()); !s) return fail("restart (" + how + ")", "stall probe: " + s.to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(o_.after_restart_ms));  // the measured window
      PhaseRow rr{n, "restart (" + how + ")", "", server.rss_bytes(), -1, {}, false, "", "", -1, "", -1};
      finish_probe(rr, probe);
      probe.stop();  // INFO below: outside the window
      auto after = server.info_field("sessions", o_.io_timeout).value_or(-1);
      auto replayed = server.info_field("replayed_entries", o_.io_timeout).value_or(-1);
      TurnCounts fresh_process;  // a new process: its counters start at 0
      read_server_turns(server, rr, fresh_process);
      turns_over = fresh_process;
      rr.result = fmt("stop %.2f s", std::chrono::duration<double>(t1 - t0).count()) +
                  fmt(", start to PONG %.2f s", std::chrono::duration<double>(t2 - t1).count()) +
                  fmt(" (INFO sessions %.0f", static_cast<double>(after)) +
                  fmt(", replayed %.0f entries)", static_cast<double>(replayed));
      if (after >= 0 && static_cast<std::uint64_t>(after) < opened.ids.size() && rr.error.empty()) {
        rr.error = "sessions lost over the restart";
      }
      progress(rr);
      rows.push_back(rr);
    }
    probe.stop();
    (void)server.stop(SIGTERM, deadline());
  }

  Options o_;
};

std::string format_rows(const std::vector<PhaseRow>& rows, double stall_ms) {
  std::vector<std::vector<std::string>> cells = {
      {"sessions", "phase", "result", "RSS", "RSS/session", "longest stall", "stalls > " + fmt("%.0f ms", stall_ms),
       "server turns > 10 ms (longest so far)", "of them on CPU > 10 ms (longest so far)",
       "the others: slept / waited for a core"}};
  std::vector<std::string> errors, evidence;
  for (const auto& r : rows) {
    cells.push_back({std::to_string(r.sessions), r.phase, r.result, mib(r.rss),
                     r.rss_per_session < 0 ? "-" : fmt("%.0f B", r.rss_per_session),
                     r.probed ? fmt("%.1f ms", r.stalls.max_ms) : "-",
                     r.probed ? std::to_string(r.stalls.over.size()) : "-",
                     r.server_turns.empty() ? "-" : r.server_turns,
                     r.server_cpu_turns.empty() ? "-" : r.server_cpu_turns,
                     r.server_blocked_turns < 0 || r.server_preempted_turns < 0
                         ? "-"
                         : std::to_string(r.server_blocked_turns) + " / " + std::to_string(r.server_preempted_turns)});
    if (!r.error.empty()) errors.push_back(std::to_string(r.sessions) + " " + r.phase + ": " + r.error);
    if (r.probed && !r.stalls.over.empty()) {
      evidence.push_back(std::to_string(r.sessions) + " " + r.phase + ": " + worst(r.stalls, 8));
    }
  }
  std::vector<std::size_t> width(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  std::ostringstream out;
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      bool left = i == 1 || i == 2;
      std::string fill(width[i] - line[i].size(), ' ');
      out << (i ? "  " : "") << (left ? line[i] + fill : fill + line[i]);
    }
    out << '\n';
  }
  if (!evidence.empty()) {
    out << "\nlongest stalls (PING round trip, seconds into the phase):\n";
    for (const auto& e : evidence) out << "  " << e << '\n';
  }
  if (!errors.empty()) {
    out << "\nerrors:\n";
    for (const auto& e : errors) out << "  " << e << '\n';
  }
  return out.str();
}

// Why the server's turns over 10 ms were long, over every phase that read
// them: its own work (on CPU), a sleep (a lock, the disk, a major fault), or
// a wait for a core the machine gave to other threads. The first two are
// the server's stalls; the third is the machine's limit when the load runs
// on the server's cores.
std::string format_turn_causes(const std::vector<PhaseRow>& rows) {
  std::int64_t on_cpu = 0, blocked = 0, preempted = 0, over = 0;
  bool read = false;
  for (const auto& r : rows) {
    if (r.server_blocked_turns < 0 || r.server_preempted_turns < 0 || r.server_turns_over < 0 ||
        r.server_cpu_turns_over < 0) {
      continue;
    }
    read = true;
    over += r.server_turns_over;
    on_cpu += r.server_cpu_turns_over;
    blocked += r.server_blocked_turns;
    preempted += r.server_preempted_turns;
  }
  if (!read) return "  why turns were long: n/a (INFO unreadable)\n";
  // A turn just over 10 ms of wall time with just under 10 ms of CPU, that
  // neither slept nor was preempted, was the server's work all the same.
  const std::int64_t on_cpu_otherwise = std::max<std::int64_t>(0, over - on_cpu - blocked - preempted);
  const std::int64_t own = over - preempted;
  std::ostringstream out;
  out << "  why the " << over << " turns over 10 ms were long (every phase): " << on_cpu + on_cpu_otherwise
      << " on CPU (the server's work), " << blocked << " slept (a lock, the disk, a page fault), " << preempted
      << " waited for a core\n";
  out << "  no stall of the server's own over 10 ms (turns over 10 ms that did not only wait for a core): " << own
      << " -> " << (own == 0 ? "met" : "NOT met") << '\n';
  if (preempted > 0) {
    out << "  limit: " << preempted
        << " turns over 10 ms only waited for a core: this machine runs the load's threads on the server's "
           "cores (see the load's nice value above)\n";
  }
  return out.str();
}

std::string format_goals(const std::vector<PhaseRow>& rows, double stall_ms, const PageFaultCost& faults) {
  std::ostringstream out;
  if (faults.us_per_page > 0) {
    out << "limit: first write to fresh memory " << fmt("%.2f us per 4 KiB page", faults.us_per_page) << ", "
        << fmt("%.1f ms per 10 MiB", faults.ms_per_10_mib)
        << " (this machine; a table that grows by 10 MiB in one step stalls at least that long)\n";
  }
  out << "Goals:\n";
  const PhaseRow* ten = nullptr;
  for (const auto& r : rows) {
    if (r.sessions == 10'000'000 && r.phase == "open" && r.error.empty()) ten = &r;
  }
  if (ten) {
    double gb = static_cast<double>(ten->rss) / 1e9;
    out << "  10M sessions under 1.5 GB RSS: " << fmt("%.2f GB", gb) << " -> " << (gb < 1.5 ? "met" : "NOT met")
        << '\n';
  } else {
    out << "  10M sessions under 1.5 GB RSS: n/a (no clean 10M open phase)\n";
  }
  // The stall goal is judged on the server's own meter: a turn of its
  // event loop is a stall (no timer, accept or other client meanwhile). The
  // probe's round trip also holds its wait in line behind the load, which
  // at saturation is queueing (printed beside it), not a stall.
  double server_longest = -1;
  for (const auto& r : rows) server_longest = std::max(server_longest, r.server_longest_ms);
  if (server_longest >= 0) {
    out << "  no event-loop stall over " << fmt("%.0f ms", stall_ms)
        << " (the server's meter, INFO loop_longest_turn_ms, every phase): longest turn "
        << fmt("%.1f ms", server_longest) << " -> " << (server_longest <= stall_ms ? "met" : "NOT met") << '\n';
  } else {
    out << "  no event-loop stall over " << fmt("%.0f ms", stall_ms) << ": n/a (INFO unreadable)\n";
  }
  double longest = 0, longest_quiet = 0;
  std::string where = "-", where_quiet = "-";
  for (const auto& r : rows) {
    if (!r.probed || r.phase.rfind("idle", 0) == 0) continue;
    const std::string name = std::to_string(r.sessions) + " " + r.phase;
    if (r.stalls.max_ms > longest) {
      longest = r.stalls.max_ms;
      where = name;
    }
    if (r.queueing_floor_ms < 0 && r.stalls.max_ms > longest_quiet) {
      longest_quiet = r.stalls.max_ms;
      where_quiet = name;
    }
  }
  out << "  the probe's longest PING round trip: " << fmt("%.1f ms", longest) << " (" << where << ")"
      << "; outside the keepalive phases " << fmt("%.1f ms", longest_quiet) << " (" << where_quiet << ")\n";
  for (const auto& r : rows) {
    if (r.queueing_floor_ms < 0) continue;
    out << "  limit: " << r.sessions << " keepalive: every connection and the probe always have one request in "
        << "line, so the mean round trip is at least " << fmt("%.1f ms", r.queueing_floor_ms)
        << " (Little's law: clients / keepalives per second; queueing at saturation, not a stall)\n";
  }
  double server_longest_cpu = -1;
  for (const auto& r : rows) server_longest_cpu = std::max(server_longest_cpu, r.server_longest_cpu_ms);
  if (server_longest_cpu >= 0) {
    out << "  (in the loop thread's CPU time, INFO loop_longest_turn_cpu_ms: longest turn "
        << fmt("%.1f ms", server_longest_cpu) << ")\n";
  }
  out << format_turn_causes(rows);
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  Options o;
  CLI::App app{"leasehold_capbench: sessions, RSS, keepalives, restarts and event-loop stalls"};
  long long io_timeout_ms = 30'000;
  app.add_option("--leasehold", o.binary, "path of the leasehold binary")->required();
  app.add_option("--work-dir", o.work_dir, "data dirs and server logs go here (one subdir per size)")->required();
  app.add_option("--sessions", o.sessions, "session counts, one fresh server each")
      ->delimiter(',')
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  app.add_option("--ttl-ms", o.ttl_ms, "session TTL (long enough to outlive the run)")->check(CLI::Range(1000LL, 86'400'000LL));
  app.add_option("--open-connections", o.open_connections, "connections opening sessions")->check(CLI::Range(1, 256));
  app.add_option("--open-depth", o.open_depth, "SESSION.OPENs per pipeline")->check(CLI::Range(1, 1000));
  app.add_option("--keepalive-connections", o.keepalive_connections, "connections, one KEEPALIVE in flight each")
      ->check(CLI::Range(1, 10'000));
  app.add_option("--keepalive-threads", o.keepalive_threads, "client threads serving those connections")
      ->check(CLI::Range(1, 256));
  app.add_option("--load-nice", o.load_nice,
                 "nice value of the load's threads (0 = the server's; the stall probe stays at the server's): "
                 "the load shares the server's cores, and at 0 the server's loop waits for a core behind it")
      ->check(CLI::Range(0, 19))
      ->capture_default_str();
  app.add_option("--keepalive-ms", o.keepalive_ms, "keepalive phase length")->check(CLI::Range(100LL, 600'000LL));
  app.add_option("--after-restart-ms", o.after_restart_ms, "stall window after each restart")
      ->check(CLI::Range(100LL, 600'000LL));
  app.add_option("--restarts", o.restarts, "term,kill: restarts to time, in order")->delimiter(',')
      ->check(CLI::IsMember({"term", "kill"}));
  app.add_option("--phase-timeout-s", o.phase_timeout_s, "bound on each phase")->check(CLI::Range(10LL, 7200LL));
  app.add_option("--stall-ms", o.stall_ms, "a PING round trip above this is a stall")->check(CLI::Range(0.1, 10'000.0));
  app.add_option("--io-timeout-ms", io_timeout_ms, "bound on every reply wait")->check(CLI::Range(100LL, 600'000LL));
  app.add_option("--server-arg", o.server_args, "extra `leasehold server` flag, repeatable (--server-arg=--x)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.io_timeout = std::chrono::milliseconds(io_timeout_ms);

  double stall_ms = o.stall_ms;
  std::cout << "clients: " << o.open_connections << " open and " << o.keepalive_threads
            << " keepalive threads at nice " << o.load_nice
            << " (--load-nice; the stall probe and the server at the caller's)" << std::endl;
  const PageFaultCost faults_before = probe_page_faults();
  auto rows = CapacityRun(o).run();
  const PageFaultCost faults_after = probe_page_faults();
  PageFaultCost faults = faults_before;  // the lower of the two: the machine's cost, not its noise
  if (faults_after.us_per_page > 0 && (faults.us_per_page < 0 || faults_after.us_per_page < faults.us_per_page)) {
    faults = faults_after;
  }
  std::cout << "\n" << format_rows(rows, stall_ms) << '\n' << format_goals(rows, stall_ms, faults);
  for (const auto& r : rows) {
    if (!r.error.empty()) return 1;
  }
  return 0;
}
