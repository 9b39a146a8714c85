// torture/main.cc: the `leasehold-torture` command (docs/torture.md).
//
//   leasehold-torture run [--mode embedded|embedded-lease|cluster-1etcd|cluster-3etcd|mixed] [--seed N|random] [--runs N] [--seconds S] [--workers N] [--ttl MS] [--keys N]
//                         [--faults a,b,...] [--clock none|wall|rate:X|random] [--onclose-grace off|MS|random]
//                         [--server-arg ARG]... [--server-env K=V]... [--failures DIR]
//                         [--keep-history] [--report FILE] [--summary FILE] [--commit ID]
//                         [--expect-violation CHECK[,CHECK...]] [--allow-violation CHECK[,CHECK...]]
//                         [--expect-fault KIND]...
//   leasehold-torture check FILE...        re-checks kept histories
//   leasehold-torture report --totals FILE --page FILE [SUMMARY...]
//                                          folds `run --summary` files into the aggregate
//                                          (totals_file.h) and rewrites the page's torture section
//   leasehold-torture worker ...           one workload process (spawned by `run`)
// Exit codes: 0 no violation (with --expect-violation: at least one
// violation of a named check, and none but of those and the
// --allow-violation checks; with --allow-violation alone: none but of
// those); 1 violations (with --expect-violation: none of a named check,
// or one of another check), or a run without a fault named by
// --expect-fault (counted by the nemesis name, e.g. kill-primary in
// cluster modes); 2 usage errors, a malformed aggregate or summary, and
// runs that could not be checked or did not go to the end (a worker
// exited, no primary after the final crash) when nothing above applies.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "torture/expected_violation.h"
#include "torture/kill_children_on_signal.h"
#include "torture/report.h"
#include "torture/run.h"
#include "torture/run_summary.h"
#include "torture/totals_file.h"
#include "torture/worker.h"
#include "testkit/temp_dir.h"

namespace {

using namespace leasehold::torture;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "leasehold-torture: %s (see docs/torture.md)\n", why.c_str());
  std::exit(2);
}

long long number(const std::string& flag, const std::string& text, long long lo, long long hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi) usage("bad value for " + flag + ": " + text);
  return v;
}

std::string self_exe() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

int worker_main(const std::vector<std::string>& args) {
  WorkerConfig c;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& f = args[i];
    const std::string& v = args[i + 1];
    if (f == "--endpoints") c.endpoints = v;
    else if (f == "--id") c.id = static_cast<int>(number(f, v, 0, 1000));
    else if (f == "--seed") c.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (f == "--seconds") c.seconds = static_cast<int>(number(f, v, 1, 86400));
    else if (f == "--ttl") c.ttl_ms = static_cast<int>(number(f, v, 100, 600000));
    else if (f == "--keys") c.keys = static_cast<int>(number(f, v, 1, 100));
    else if (f == "--close-grace") c.close_grace_ms = static_cast<int>(number(f, v, 0, 600000));
    else if (f == "--history") c.history = v;
    else if (f == "--register") c.register_dir = v;
    else usage("unknown worker flag " + f);
  }
  if (args.size() % 2 != 0) usage("worker flags come in pairs");
  if (c.close_grace_ms > c.ttl_ms) usage("--close-grace is over --ttl");
  return run_worker(c);
}

int check_main(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& f : files) {
    auto v = check_file(f);
    if (!v) {
      std::fprintf(stderr, "%s: %s\n", f.c_str(), v.status().to_string().c_str());
      return 2;
    }
    for (const auto& x : v.value()) std::printf("%s: VIOLATION %s: %s\n", f.c_str(), x.check.c_str(), x.message.c_str());
    std::printf("%s: %zu violations\n", f.c_str(), v->size());
    bad += static_cast<int>(v->size());
  }
  return bad == 0 ? 0 : 1;
}

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// Writes next to `path` and renames, so a reader never sees half a file.
bool write_text(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

// Folds the summary files into the aggregate and rewrites the page; on any
// bad input (a malformed aggregate or summary line) it writes nothing.
int report_main(const std::vector<std::string>& args) {
  std::string totals_path, page_path;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--totals" && i + 1 < args.size()) totals_path = args[++i];
    else if (args[i] == "--page" && i + 1 < args.size()) page_path = args[++i];
    else if (args[i].rfind("--", 0) == 0) usage("unknown report flag " + args[i]);
    else files.push_back(args[i]);
  }
  if (totals_path.empty() || page_path.empty()) usage("report wants --totals FILE --page FILE [SUMMARY...]");
  std::string totals_text, page;
  if (std::filesystem::exists(totals_path) && !read_text(totals_path, totals_text)) usage("cannot read " + totals_path);
  if (std::filesystem::exists(page_path) && !read_text(page_path, page)) usage("cannot read " + page_path);
  auto totals = parse_totals(totals_text);
  if (!totals) {
    std::fprintf(stderr, "leasehold-torture: %s: %s (nothing written)\n", totals_path.c_str(),
                 totals.status().message().c_str());
    return 2;
  }
  int folded = 0;
  std::vector<std::string> failing;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) usage("cannot read " + f);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (line.empty()) continue;
      auto run = parse_summary_line(line);
      if (!run) {
        std::fprintf(stderr, "leasehold-torture: %s:%d: %s (nothing written)\n", f.c_str(), number,
                     run.status().message().c_str());
        return 2;
      }
      totals->add(run.value());
      ++folded;
      std::string why = !run->checked ? "not checked: " + run->why : run->stopped_early;
      if (run->violation_count() > 0) {
        why = std::to_string(run->violation_count()) + " violations" + (why.empty() ? "" : "; " + why);
      }
      if (!why.empty()) failing.push_back("seed " + std::to_string(run->seed) + " (" + run->mode + "): " + why);
    }
  }
  auto text = write_totals(totals_text, totals.value());
  if (!text) usage(text.status().message());
  if (!write_text(totals_path, text.value())) usage("cannot write " + totals_path);
  if (!write_text(page_path, replace_section(page, "torture", render_markdown(totals.value())))) {
    usage("cannot write " + page_path);
  }
  for (const auto& f : failing) std::printf("torture: %s\n", f.c_str());
  std::printf("torture: %d runs folded into %s (now %d runs); %s rewritten\n", folded, totals_path.c_str(),
              totals->all().runs, page_path.c_str());
  return 0;
}

int run_main(const std::vector<std::string>& args) {
  RunConfig c;
  c.self_exe = self_exe();
  c.failures_dir = leasehold::testing::build_dir() + "/torture/failures";
  std::string seed_text = "random", clock = "none", report, summary;
  std::string onclose = "off";  // the workers' close grace: off, MS, or random (by seed)
  const char* commit_env = std::getenv("LEASEHOLD_COMMIT");
  std::string commit = commit_env != nullptr && *commit_env != '\0' ? commit_env : "unknown";
  int runs = 1;
  std::vector<std::string> expected_checks;  // --expect-violation: the checks the planted bug must trip
  std::vector<std::string> allowed_checks;   // --allow-violation: what the fault or bug also breaks
  std::vector<std::string> expect_faults;  // fault kinds every run must have injected
  int runs_missing_a_fault = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& f = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage(f + " needs a value");
      return args[++i];
    };
    if (f == "--seed") seed_text = value();
    else if (f == "--mode") c.mode = value();
    else if (f == "--runs") runs = static_cast<int>(number(f, value(), 1, 1'000'000));
    else if (f == "--seconds") c.seconds = static_cast<int>(number(f, value(), 2, 86400));
    else if (f == "--workers") c.workers = static_cast<int>(number(f, value(), 1, 64));
    else if (f == "--ttl") c.ttl_ms = static_cast<int>(number(f, value(), 200, 600000));
    else if (f == "--keys") c.keys = static_cast<int>(number(f, value(), 1, 100));
    else if (f == "--faults") c.faults = split(value(), ',');
    else if (f == "--clock") clock = value();
    else if (f == "--onclose-grace") onclose = value();
    else if (f == "--server-arg") c.extra_server_flags.push_back(value());
    else if (f == "--server-env") {
      const std::string& kv = value();
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) usage("--server-env wants K=V");
      c.extra_server_env.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
    } else if (f == "--failures") c.failures_dir = value();
    else if (f == "--keep-history") c.keep_history = true;
    else if (f == "--report") report = value();
    else if (f == "--summary") summary = value();
    else if (f == "--commit") commit = value();
    else if (f == "--expect-violation") {
      auto checks = parse_expected_checks(value());
      if (!checks) usage(f + ": " + checks.status().message());
      expected_checks = std::move(checks).value();
    } else if (f == "--allow-violation") {
      auto checks = parse_expected_checks(value());
      if (!checks) usage(f + ": " + checks.status().message());
      allowed_checks = std::move(checks).value();
    }
    else if (f == "--expect-fault") expect_faults.push_back(value());
    else usage("unknown flag " + f);
  }
  for (const auto& fault : c.faults) {
    const auto& known = known_fault_kinds();
    if (std::find(known.begin(), known.end(), fault) == known.end()) {
      usage("unknown fault " + fault);
    }
  }
  const std::string mode = c.mode;
  const std::vector<std::string>& modes = run_modes();
  if (mode != "mixed" && std::find(modes.begin(), modes.end(), mode) == modes.end()) {
    usage("unknown mode " + mode);
  }
  if (clock != "none" && clock != "wall" && clock != "random" && clock.rfind("rate:", 0) != 0) {
    usage("unknown clock " + clock);
  }
  if (onclose != "off" && onclose != "random") (void)number("--onclose-grace", onclose, 0, c.ttl_ms);
  // LEASEHOLD_TORTURE_SEED pins a "random" seed (to replay a ctest run).
  const char* pinned = std::getenv("LEASEHOLD_TORTURE_SEED");
  if (seed_text == "random" && pinned != nullptr && *pinned != '\0') seed_text = pinned;
  std::uint64_t seed = seed_text == "random" ? std::random_device{}() : std::strtoull(seed_text.c_str(), nullptr, 10);
  Totals totals;
  for (int r = 0; r < runs; ++r, ++seed) {
    c.seed = seed;
    c.clock = clock;
    if (mode == "mixed") {  // each mode in turn; faults a mode lacks are skipped
      c.mode = modes[static_cast<std::size_t>(r) % modes.size()];
    }
    // The workers' sessions: without ONCLOSE, or with a close grace. By
    // seed with "random": half without, a quarter with grace TTL/4, a
    // quarter TTL/2 (never 0: a reset the harness's proxy makes is not the
    // client's death, and with grace 0 the server ends the session before
    // the client can notice; docs/client.md).
    if (onclose == "off") {
      c.close_grace_ms = -1;
    } else if (onclose == "random") {
      const std::uint64_t pick = (seed * 0xD1B54A32D192ED03ULL) >> 62;
      c.close_grace_ms = pick < 2 ? -1 : pick == 2 ? c.ttl_ms / 4 : c.ttl_ms / 2;
    } else {
      c.close_grace_ms = static_cast<int>(number("--onclose-grace", onclose, 0, c.ttl_ms));
    }
    if (c.clock == "random") {  // by seed: half plain, a quarter wall steps, the rest 0.5 % fast or slow
      const std::uint64_t pick = (seed * 0x9E3779B97F4A7C15ULL) >> 60;
      c.clock = pick < 8 ? "none" : pick < 12 ? "wall" : pick < 14 ? "rate:1.005" : "rate:0.995";
    }
    std::printf("torture: %d/%d: mode %s seed %llu clock %s seconds %d workers %d onclose %s\n", r + 1, runs,
                c.mode.c_str(), static_cast<unsigned long long>(c.seed), c.clock.c_str(), c.seconds, c.workers,
                c.close_grace_ms < 0 ? "off" : (std::to_string(c.close_grace_ms) + " ms").c_str());
    std::fflush(stdout);
    const auto run_start = std::chrono::steady_clock::now();
    auto result = run_once(c);
    if (!result) {  // counted and reported; the other runs go on
      std::printf("torture: seed %llu could not run: %s\n", static_cast<unsigned long long>(c.seed),
                  result.status().to_string().c_str());
      std::fflush(stdout);
      const RunSummary failed = unchecked_run(c.mode, c.seed, result.status().to_string(), commit, utc_now());
      totals.add(failed);
      if (!summary.empty()) {
        std::ofstream out(summary, std::ios::app);
        out << summary_line(failed) << "\n";
      }
      continue;
    }
    std::string faults;
    for (const auto& [k, n] : result->faults) faults += " " + k + "=" + std::to_string(n);
    std::printf("torture: seed %llu: %zu ops, faults:%s, %zu violations%s\n", static_cast<unsigned long long>(c.seed),
                result->ops, faults.empty() ? " none" : faults.c_str(), result->violations.size(),
                result->history_path.empty() ? "" : (", history " + result->history_path).c_str());
    for (const auto& v : result->violations) std::printf("  VIOLATION %s: %s\n", v.check.c_str(), v.message.c_str());
    if (!result->no_primary.empty()) {
      std::printf("  LIVENESS no primary after the final crash: %s\n", result->no_primary.c_str());
    }
    if (!result->stopped_early.empty()) {
      std::printf("  STOPPED EARLY (history checked up to there): %s\n", result->stopped_early.c_str());
    }
    std::fflush(stdout);
    for (const auto& kind : expect_faults) {
      auto it = result->faults.find(kind);
      if (it != result->faults.end() && it->second > 0) continue;
      std::printf("torture: seed %llu: no %s fault was injected (--expect-fault)\n",
                  static_cast<unsigned long long>(c.seed), kind.c_str());
      ++runs_missing_a_fault;
    }
    const RunSummary done =
        summarize(c.mode, result.value(),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count(), commit,
                  utc_now());
    totals.add(done);
    if (!summary.empty()) {
      std::ofstream out(summary, std::ios::app);
      out << summary_line(done) << "\n";
    }
  }
  if (!report.empty()) {
    std::ofstream out(report, std::ios::trunc);
    out << render_markdown(totals);
    if (!out) usage("cannot write " + report);
  }
  const ModeTotals all = totals.all();
  std::printf("torture: %d runs, %llu ops, %d violations\n", all.runs, static_cast<unsigned long long>(all.ops),
              all.violations);
  if (runs_missing_a_fault > 0) return 1;
  if (!expected_checks.empty() || !allowed_checks.empty()) {
    const std::string unmet = unmet_expectation(expected_checks, allowed_checks, totals.checks);
    if (!unmet.empty()) {
      std::printf("torture: --expect-violation/--allow-violation not met: %s\n", unmet.c_str());
      return 1;
    }
    std::printf("torture: every violation was of an expected or allowed check\n");
    if (!expected_checks.empty()) return 0;
    // A control run whose violations are all allowed goes on like a clean one.
  } else if (all.violations > 0) {
    return 1;
  }
  if (all.not_checked > 0 || all.stopped_early > 0) {
    std::printf("torture: %d runs could not be checked, %d stopped early (%d with no primary after the final crash)\n",
                all.not_checked, all.stopped_early, all.no_primary);
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The server binary is found through LEASEHOLD_BUILD_DIR (testkit/):
  // default to the build directory this binary sits in (build/torture/..).
  if (std::getenv("LEASEHOLD_BUILD_DIR") == nullptr) {
    const auto dir = std::filesystem::path(self_exe()).parent_path().parent_path();
    ::setenv("LEASEHOLD_BUILD_DIR", dir.c_str(), 0);
  }
  if (args.empty()) usage("want a subcommand: run, check, report or worker");
  const std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "worker") return worker_main(args);
  install_kill_children_on_signal();
  if (sub == "check") return check_main(args);
  if (sub == "report") return report_main(args);
  if (sub == "run") return run_main(args);
  usage("unknown subcommand " + sub);
}
