// torture/run.cc: see run.h.
#include "torture/run.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "common/clock_fault.h"
#include "testkit/eventually.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"
#include "torture/final_checks.h"
#include "torture/history_check.h"
#include "torture/nemesis.h"
#include "torture/target.h"

namespace leasehold::torture {
namespace {


using std::chrono::milliseconds;

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// The client-side faults of run.h (the server-side ones come from the Target).
void add_worker_faults(const RunConfig& c, Nemesis& nemesis, std::vector<testing::Subprocess>& workers,
                       const std::string& clock_file, const std::string& holding_dir, std::uint64_t seed) {
  const milliseconds ttl(c.ttl_ms);
  if (wants_fault(c, "pause-client") && !workers.empty()) {
    auto rng = std::make_shared<std::mt19937_64>(seed ^ 0x5bd1e995ULL);
    auto victim = std::make_shared<std::size_t>(0);
    nemesis.add({"pause-client",
                 [&workers, rng, victim, holding_dir] {
                   // Prefer a worker that holds a lock now with its fenced
                   // writes still to come (the seeds' GC pause: it wakes
                   // and writes with a stale token), then any holder
                   // (worker.h: the holding files).
                   std::vector<std::size_t> holders, before_write;
                   for (std::size_t i = 0; i < workers.size(); ++i) {
                     std::ifstream in(holding_dir + "/holding-" + std::to_string(i));
                     const int state = in.get();
                     if (state == '2') before_write.push_back(i);
                     if (state == '1' || state == '2') holders.push_back(i);
                   }
                   if (!before_write.empty()) holders.swap(before_write);
                   if (holders.empty()) {
                     *victim = std::uniform_int_distribution<std::size_t>(0, workers.size() - 1)(*rng);
                   } else {
                     *victim = holders[std::uniform_int_distribution<std::size_t>(0, holders.size() - 1)(*rng)];
                   }
                   workers[*victim].signal(SIGSTOP);
                   return Status();
                 },
                 [&workers, victim] { workers[*victim].signal(SIGCONT); return Status(); },
                 ttl * 3 / 2, ttl * 5 / 2, false});
  }
  if (wants_fault(c, "clock-wall") && c.clock == "wall") {
    auto rng = std::make_shared<std::mt19937_64>(seed ^ 0x27d4eb2fULL);
    nemesis.add({"clock-wall",
                 [clock_file, rng] {
                   const bool ahead = std::uniform_int_distribution<int>(0, 1)(*rng) == 1;
                   return write_text(clock_file, ahead ? "+3600\n" : "-3600\n")
                              ? Status()
                              : Status(ErrorCode::kIoError, "cannot write " + clock_file);
                 },
                 [clock_file] {
                   return write_text(clock_file, "+0\n") ? Status()
                                                          : Status(ErrorCode::kIoError, "cannot write " + clock_file);
                 },
                 ttl, ttl * 3, false});
  }
}

}  // namespace

Result<std::vector<Violation>> check_file(const std::string& path) {
  if (!std::filesystem::exists(path)) return Status(ErrorCode::kIoError, "cannot read " + path);
  auto checked = check_history_files({path});
  if (!checked) return checked.status();
  return std::move(checked->violations);
}

const std::vector<std::string>& run_modes() {
  static const std::vector<std::string> modes = {"embedded", "embedded-lease", "cluster-1etcd", "cluster-3etcd"};
  return modes;
}

bool is_lease_mode(const std::string& mode) { return mode == "embedded-lease"; }

Result<RunResult> run_once(const RunConfig& c) {
  RunResult result;
  result.seed = c.seed;
  result.clock = c.clock;
  testing::TempDir tmp("torture");
  const std::string reg = tmp.file("register");
  std::filesystem::create_directories(reg);
  const std::string clock_file = tmp.file("faketime");
  if (!write_text(clock_file, "+0\n")) return Status(ErrorCode::kIoError, "cannot write " + clock_file);

  Env server_env = c.extra_server_env;
  Env worker_env;
  // libfaketime, as common/clock_fault.h sets it up (the demo's clock fault too).
  if (c.clock == "wall") {
    const Env wall = wall_clock_env(clock_file);
    server_env.insert(server_env.end(), wall.begin(), wall.end());
    worker_env = wall;
  } else if (c.clock.rfind("rate:", 0) == 0) {
    const Env rate = rate_clock_env(c.clock.substr(5), LEASEHOLD_CLOCK_WAIT_SHIM);
    server_env.insert(server_env.end(), rate.begin(), rate.end());
  }

  auto harness_history = HistoryWriter::open(tmp.file("harness.jsonl"));
  if (!harness_history) return harness_history.status();
  HistoryWriter& harness = *harness_history.value();
  if (is_lease_mode(c.mode)) {
    // Tells the checker what a crash may lose (checker.h, "lease runs").
    Op durability;
    durability.op = "durability";
    durability.process = -1;
    durability.key = durability.value = "lease";
    durability.limit = c.ttl_ms;
    durability.inv = durability.cmp = now_ns();
    harness.write(durability);
  }

  auto made = make_target(c, tmp.path(), server_env);
  if (!made) return made.status();
  Target& target = *made.value();

  std::vector<testing::Subprocess> workers;
  for (int i = 0; i < c.workers; ++i) {
    testing::SpawnOptions opts;
    opts.env = worker_env;
    opts.stderr_path = tmp.file("worker-" + std::to_string(i) + ".stderr");
    std::vector<std::string> argv{
        c.self_exe, "worker", "--endpoints", target.endpoints(), "--id", std::to_string(i), "--seed",
        std::to_string(c.seed * 1000 + static_cast<std::uint64_t>(i)), "--seconds", std::to_string(c.seconds),
        "--ttl", std::to_string(c.ttl_ms), "--keys", std::to_string(c.keys), "--history",
        tmp.file("worker-" + std::to_string(i) + ".jsonl"), "--register", reg};
    if (c.close_grace_ms >= 0) argv.insert(argv.end(), {"--close-grace", std::to_string(c.close_grace_ms)});
    auto p = testing::Subprocess::spawn(argv, opts);
    if (!p) {  // the run goes on with the workers that started
      result.stopped_early = "worker " + std::to_string(i) + " did not start: " + p.status().to_string();
      break;
    }
    workers.push_back(std::move(p).value());
  }

  {
    Nemesis nemesis(c.seed, harness, milliseconds(c.ttl_ms / 4), milliseconds(c.ttl_ms * 2));
    target.add_faults(c, nemesis);
    add_worker_faults(c, nemesis, workers, clock_file, reg, c.seed);
    // Faults during the first three quarters; the rest runs healed. The
    // nemesis runs on this thread: processes it restarts must not die with
    // a shorter-lived thread (target.h).
    std::stop_source stop;
    std::jthread timer([&stop, ms = c.seconds * 750](std::stop_token cancelled) {
      (void)wait_or_stop(cancelled, milliseconds(ms));
      stop.request_stop();
    });
    nemesis.run(stop.get_token());
    result.faults = nemesis.counts();
  }
  for (std::size_t i = 0; i < workers.size(); ++i) {
    testing::Subprocess& w = workers[i];
    w.signal(SIGCONT);
    const std::optional<int> code = w.wait(testing::scaled(milliseconds(c.seconds * 1000 + 30'000)));
    if (!code) {
      w.kill9();
      ++result.faults["worker-hung"];
    } else if (*code != 0 && result.stopped_early.empty()) {
      // Its history may lack an operation it made (e.g. a failed history
      // write), so a violation could be missed; what it did record is
      // still checked below, and the run counts as stopped early.
      std::ifstream err(tmp.file("worker-" + std::to_string(i) + ".stderr"));
      std::string said((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
      if (said.size() > 400) said = said.substr(said.size() - 400);
      result.stopped_early =
          "worker " + std::to_string(i) + " exited with status " + std::to_string(*code) + ": " + said;
    }
  }
  // A last crash (with power-cut: a power cut in embedded mode):
  // everything acknowledged must survive it.
  if (wants_fault(c, "kill") || wants_fault(c, "power-cut")) {
    Op crash;
    crash.op = "crash";
    crash.process = -1;
    crash.key = crash.value = "kill-final";
    crash.inv = now_ns();
    Status st = target.crash_and_recover();
    crash.cmp = now_ns();
    crash.out = st ? Outcome::kOk : Outcome::kFail;
    if (!st) crash.aux = st.to_string();
    harness.write(crash);
    if (!st) {
      // Nothing answers to check liveness or read the final state against:
      // a liveness finding, and the history so far is still checked.
      result.no_primary = st.to_string();
      if (result.stopped_early.empty()) result.stopped_early = "no primary after the final crash: " + st.to_string();
    }
  }
  if (result.no_primary.empty()) {
    run_final_checks(target.endpoints(), c.keys, testing::scaled(milliseconds(c.ttl_ms * 3 + 10'000)), harness);
  }
  target.stop();

  std::vector<std::string> files = {tmp.file("harness.jsonl")};
  for (int i = 0; i < c.workers; ++i) files.push_back(tmp.file("worker-" + std::to_string(i) + ".jsonl"));
  files.push_back(reg + "/register.jsonl");  // last, in acceptance order
  auto checked = check_history_files(files);
  if (!checked) return checked.status();
  const std::vector<Op>& history = checked->history;
  result.ops = checked->ops;
  result.violations = std::move(checked->violations);
  result.unchecked = std::move(checked->unchecked);
  const bool failed = !result.violations.empty() || !result.stopped_early.empty();
  if ((failed || c.keep_history) && !c.failures_dir.empty()) {
    // A passing history kept on request goes next to the failures, not among them.
    const std::string dir = failed ? c.failures_dir : c.failures_dir + "/../histories";
    std::filesystem::create_directories(dir);
    result.history_path = dir + "/" + c.mode + "-seed-" + std::to_string(c.seed) + ".jsonl";
    std::ofstream out(result.history_path, std::ios::trunc);
    out << "{\"op\":\"meta\",\"p\":-1,\"key\":\"\",\"inv\":0,\"cmp\":0,\"out\":\"ok\",\"token\":0,\"aux\":\"seed "
        << c.seed << " clock " << c.clock << " seconds " << c.seconds << " workers " << c.workers << "\"}\n";
    for (const Op& op : history) out << to_json(op) << "\n";
    for (const std::string& log : target.log_paths()) {  // e.g. <history>.server.stderr, <history>.node0.stderr.2
      std::error_code ignored;  // a process may have written nothing
      std::filesystem::copy_file(log, result.history_path + "." + std::filesystem::path(log).filename().string(),
                                 std::filesystem::copy_options::overwrite_existing, ignored);
    }
  }
  return result;
}

}  // namespace leasehold::torture
