// tests/fuzz/net_run.cc: the network fuzzer's run loop (see net_fuzzer.cc).
#include "tests/fuzz/net_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tests/fuzz/net_frames.h"
#include "testkit/eventually.h"
#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr char kCanaryLock[] = "net-fuzz-canary";
constexpr char kProbeLock[] = "net-fuzz-probe";
constexpr char kHeldLock[] = "net-fuzz-held";  // the lock the mid-wait episodes queue on
constexpr std::size_t kKeptConnections = 6;
constexpr std::size_t kPoolSessions = 8;
constexpr milliseconds kReplyBudget{30'000};  // generous: the machine may be loaded
// Extreme-numbers mode's --max-wait-ms: the longest WAIT the server accepts,
// so that a valid pipeline holding an accepted extreme WAIT is answered.
constexpr char kExtremeMaxWaitMs[] = "1000";

struct Counters {
  std::uint64_t frames = 0, mutated = 0, bytes = 0, pipelines = 0, replies = 0, connections = 0;
  std::uint64_t mid_frame_disconnects = 0, mid_wait_disconnects = 0, hello3 = 0, checks = 0, filtered = 0;
};

// Complete requests in a stream of valid frames.
std::uint64_t count_frames(const std::string& bytes) {
  resp::Parser parser(resp::Parser::Mode::kRequest);
  std::string_view rest(bytes);
  std::uint64_t n = 0;
  for (;;) {
    const resp::ParseOutcome o = parser.parse(rest);
    rest.remove_prefix(o.consumed);
    if (o.status != resp::ParseStatus::kValue) return n;
    ++n;
  }
}

// A map field: RESP3 map or RESP2 flat array of key, value.
const resp::Value* field(const resp::Value& v, std::string_view key) {
  for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2) {
    if (v.elements[i].str == key) return &v.elements[i + 1];
  }
  return nullptr;
}

class NetFuzzer {
 public:
  explicit NetFuzzer(const NetFuzzOptions& o) : opt_(o), gen_(o.seed) {}

  int run() {
    std::printf("net_fuzzer: seed=%llu seconds=%.0f frames=%llu%s\n", static_cast<unsigned long long>(opt_.seed),
                opt_.seconds, static_cast<unsigned long long>(opt_.max_frames),
                opt_.extreme_numbers.empty() ? "" : " extreme-numbers");
    std::fflush(stdout);
    if (!start()) return finish(false);
    // Deliberate: the run lasts --seconds (its fuzzing budget), not until a condition.
    const auto end = Clock::now() + milliseconds(static_cast<std::int64_t>(opt_.seconds * 1000));
    auto next_check = Clock::now();
    while (Clock::now() < end && (opt_.max_frames == 0 || n_.frames < opt_.max_frames)) {
      if (Clock::now() >= next_check) {
        if (!check()) return finish(false);
        next_check = Clock::now() + milliseconds(250);
      }
      if (!episode()) return finish(false);
    }
    return finish(check() && stop_server());
  }

 private:
  bool fail(const std::string& what) {
    std::fprintf(stderr, "net_fuzzer: FAILED (seed=%llu): %s\n", static_cast<unsigned long long>(opt_.seed),
                 what.c_str());
    return false;
  }

  int finish(bool ok) {
    std::printf(
        "net_fuzzer: %s seed=%llu frames=%llu mutated=%llu bytes=%llu pipelines=%llu replies=%llu "
        "connections=%llu mid_frame_disconnects=%llu mid_wait_disconnects=%llu hello3=%llu checks=%llu "
        "filtered=%llu extreme_numbers=%llu\n",
        ok ? "OK" : "FAILED", static_cast<unsigned long long>(opt_.seed),
        static_cast<unsigned long long>(n_.frames), static_cast<unsigned long long>(n_.mutated),
        static_cast<unsigned long long>(n_.bytes), static_cast<unsigned long long>(n_.pipelines),
        static_cast<unsigned long long>(n_.replies), static_cast<unsigned long long>(n_.connections),
        static_cast<unsigned long long>(n_.mid_frame_disconnects),
        static_cast<unsigned long long>(n_.mid_wait_disconnects), static_cast<unsigned long long>(n_.hello3),
        static_cast<unsigned long long>(n_.checks), static_cast<unsigned long long>(n_.filtered),
        static_cast<unsigned long long>(gen_.extreme_numbers_sent()));
    if (!ok) {  // the log's directory is removed when the run ends: its end goes in the report
      const std::string log = read_file(stderr_path_);
      std::printf("net_fuzzer: server log %s, last 4000 bytes:\n%s\n", stderr_path_.c_str(),
                  (log.size() > 4000 ? log.substr(log.size() - 4000) : log).c_str());
    }
    return ok ? 0 : 1;
  }

  std::optional<std::uint64_t> integer(RespClient& c, const std::vector<std::string>& args) {
    const resp::Value v = c.call(args, kReplyBudget);
    if (v.type != resp::Type::kInteger) {
      fail(args[0] + " answered " + v.debug_string());
      return std::nullopt;
    }
    return static_cast<std::uint64_t>(v.integer);
  }

  bool start() {
    if (!opt_.build_dir.empty()) ::setenv("LEASEHOLD_BUILD_DIR", opt_.build_dir.c_str(), 1);
    const std::string data = dir_.file("data");
    stderr_path_ = data + ".stderr";
    std::vector<std::string> flags;
    if (!opt_.extreme_numbers.empty()) {
      std::vector<std::string> seeds = read_number_seeds(opt_.extreme_numbers);
      if (seeds.empty()) return fail("no extreme-number seeds in " + opt_.extreme_numbers);
      gen_.set_extreme_numbers(std::move(seeds));
      flags = {"--max-wait-ms", kExtremeMaxWaitMs};
      probe_wait_ = kExtremeMaxWaitMs;
    }
    if (!server_.start(data, flags)) return fail("the server did not start (" + leasehold_binary() + ")");
    admin_ = server_.client();
    auto sid = integer(admin_, {"SESSION.OPEN", "60000", "OWNER", "canary"});
    if (!sid) return false;
    canary_session_ = *sid;
    auto token = integer(admin_, {"LOCK.ACQUIRE", kCanaryLock, std::to_string(canary_session_)});
    if (!token) return false;
    canary_token_ = max_token_ = *token;
    auto probe = integer(admin_, {"SESSION.OPEN", "60000", "OWNER", "probe"});
    if (!probe) return false;
    probe_session_ = *probe;
    protected_.sessions = {canary_session_, probe_session_};
    protected_.locks = {kCanaryLock, kProbeLock};
    return refill_pool();
  }

  // Keeps kPoolSessions live sessions for the frames to name (fuzz traffic may close or kill them).
  bool refill_pool() {
    std::vector<std::uint64_t> live;
    for (std::uint64_t id : pool_) {
      const resp::Value v = admin_.call({"SESSION.KEEPALIVE", std::to_string(id)}, kReplyBudget);
      if (v.type == resp::Type::kInteger) live.push_back(id);
    }
    while (live.size() < kPoolSessions) {
      auto id = integer(admin_, {"SESSION.OPEN", "20000", "OWNER", "pool"});
      if (!id) return false;
      live.push_back(*id);
    }
    pool_ = live;
    gen_.set_sessions(pool_);
    return true;
  }

  bool sanitizer_clean() {
    const std::string err = read_file(stderr_path_);
    for (const char* bad : {"AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:"}) {
      if (err.find(bad) != std::string::npos) return fail(std::string("sanitizer report (") + bad + ") in " + stderr_path_);
    }
    return true;
  }

  bool check() {
    ++n_.checks;
    if (!server_.process().running()) return fail("the server process exited");
    if (!sanitizer_clean()) return false;
    for (std::uint64_t id : {canary_session_, probe_session_}) {
      const resp::Value ka = admin_.call({"SESSION.KEEPALIVE", std::to_string(id)}, kReplyBudget);
      if (ka.type != resp::Type::kInteger) return fail("keepalive of protected session answered " + ka.debug_string());
    }
    const resp::Value info = admin_.call({"LOCK.INFO", kCanaryLock}, kReplyBudget);
    const resp::Value* holders = field(info, "holders");
    bool held = false;
    for (std::size_t i = 0; holders != nullptr && i < holders->elements.size(); ++i) {
      const resp::Value* s = field(holders->elements[i], "session");
      const resp::Value* t = field(holders->elements[i], "token");
      held = held || (s != nullptr && t != nullptr && static_cast<std::uint64_t>(s->integer) == canary_session_ &&
                      static_cast<std::uint64_t>(t->integer) == canary_token_);
    }
    if (!held) return fail("the canary lost its lock: LOCK.INFO answered " + info.debug_string());
    auto token = integer(admin_, {"LOCK.ACQUIRE", kProbeLock, std::to_string(probe_session_), "WAIT", probe_wait_});
    if (!token) return false;
    if (*token <= max_token_) {
      return fail("token went backwards: " + std::to_string(*token) + " after " + std::to_string(max_token_));
    }
    max_token_ = *token;
    gen_.set_token_hint(*token);
    const resp::Value rel = admin_.call({"LOCK.RELEASE", kProbeLock, std::to_string(probe_session_),
                                         std::to_string(*token)}, kReplyBudget);
    if (rel.type != resp::Type::kSimpleString) return fail("probe release answered " + rel.debug_string());
    return n_.checks % 8 != 0 || refill_pool();
  }

  bool stop_server() {
    const std::optional<int> code = server_.stop();
    if (!code) return fail("the server did not stop within 10 s of SIGTERM");
    if (*code != 0) return fail("the server exited with status " + std::to_string(*code));
    return sanitizer_clean();
  }

  RespClient connect() {
    ++n_.connections;
    return server_.client();
  }

  // Sends `bytes` in 1..4 pieces split at random points.
  void send_split(RespClient& c, const std::string& bytes) {
    std::size_t pos = 0;
    const std::uint64_t pieces = 1 + gen_.below(4);
    for (std::uint64_t i = 1; i < pieces && pos < bytes.size(); ++i) {
      const std::size_t len = gen_.below(bytes.size() - pos);
      (void)c.send_raw(bytes.substr(pos, len));
      pos += len;
    }
    (void)c.send_raw(bytes.substr(pos));
    n_.bytes += bytes.size();
  }

  // Valid frames (writes followed by reads of them, a few short waits),
  // then a sentinel ECHO; every reply must arrive.
  bool valid_pipeline(RespClient& c) {
    const std::string sentinel = "sentinel-" + std::to_string(++n_.pipelines);
    std::string bytes;
    std::vector<std::string> sent;  // each frame's words, for a failure report
    const auto add = [&](const std::vector<std::string>& args) {
      bytes += gen_.frame(args);
      std::string words;
      for (const std::string& a : args) words += (words.empty() ? "" : " ") + a;
      sent.push_back(std::move(words));
    };
    const std::uint64_t count = 1 + gen_.below(gen_.chance(20) ? 400 : 60);
    int waits = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::vector<std::string> args = gen_.command();
      const bool waiting = args.size() > 3 && args[0] == "LOCK.ACQUIRE" &&
                           std::find(args.begin(), args.end(), "WAIT") != args.end();
      // Each wait may last its deadline; one without (extreme numbers' WAIT 0) never ends.
      if (waiting && (is_endless_wait(args) || ++waits > 3)) continue;
      if (args[0] == "HELLO" && args[1] == "3") ++n_.hello3;
      add(args);
      if (args[0] == "SET" && gen_.chance(50)) add({"GET", args[1]});
      if (args[0] == "FENCE.PUT" && gen_.chance(50)) add({"FENCE.GET", args[1]});
      if (args[0] == "LOCK.ACQUIRE" && gen_.chance(50)) add({"LOCK.INFO", args[1]});
    }
    add({"ECHO", sentinel});
    if (touches_protected(bytes, protected_)) {
      ++n_.filtered;
      return true;
    }
    n_.frames += count_frames(bytes);
    send_split(c, bytes);
    const ScaledDeadline deadline(kReplyBudget);
    std::size_t answered = 0;  // replies of this pipeline (pushes aside, one per frame)
    std::string last_reply = "none";
    for (;;) {
      auto r = c.read(std::max(deadline.left(), milliseconds(1)));
      if (!r) {
        return fail("a valid pipeline lost its replies (" + r.status().to_string() + ")\n" +
                    stuck_report(sent, answered, last_reply));
      }
      ++n_.replies;
      if (r->type != resp::Type::kPush) {
        ++answered;
        last_reply = r->debug_string();
      }
      if (r->type == resp::Type::kBulkString && r->str == sentinel) return true;
    }
  }

  // Where a pipeline stopped: the frames around the first unanswered one
  // (the replies are in order), the last reply, and the server's INFO as
  // the admin connection sees it now.
  std::string stuck_report(const std::vector<std::string>& sent, std::size_t answered, const std::string& last) {
    std::string out = "  " + std::to_string(answered) + " of " + std::to_string(sent.size()) +
                      " frames answered; the last reply: " + last + "\n";
    const std::size_t from = answered >= 3 ? answered - 3 : 0;
    for (std::size_t i = from; i < sent.size() && i < answered + 3; ++i) {
      out += std::string(i == answered ? "  > " : "    ") + "frame " + std::to_string(i) + ": " +
             sent[i].substr(0, 200) + "\n";
    }
    const resp::Value info = admin_.call({"INFO"}, milliseconds(5000));
    out += "  INFO now: " + (info.is_error() ? info.debug_string() : info.str.substr(0, 6000));
    return out;
  }

  // Mutated frames among valid ones, then a disconnect (often mid-frame).
  bool mutated_pipeline() {
    std::string bytes;
    const std::uint64_t count = 1 + gen_.below(30);
    for (std::uint64_t i = 0; i < count; ++i) {
      std::string f = gen_.frame(gen_.command());
      if (gen_.chance(30)) {
        f = gen_.mutate(std::move(f));
        ++n_.mutated;
      }
      bytes += f;
    }
    const bool partial = gen_.chance(40);
    if (partial) bytes += gen_.mutate(gen_.frame(gen_.command())).substr(0, 1 + gen_.below(8));
    if (touches_protected(bytes, protected_)) {
      ++n_.filtered;
      return true;
    }
    n_.frames += count + (partial ? 1 : 0);
    RespClient c = connect();
    send_split(c, bytes);
    if (gen_.chance(50)) (void)c.wait_closed(milliseconds(gen_.below(30)));
    ++n_.mid_frame_disconnects;
    return true;
  }

  // A session holds kHeldLock; another connection queues on it with no
  // deadline (WAIT 0), maybe leaves a partial frame, and disconnects; the
  // holder then releases it or closes its session (racing the cancel).
  bool mid_wait_disconnect() {
    RespClient holder = connect();
    auto hs = integer(holder, {"SESSION.OPEN", "5000", "OWNER", "holder"});
    if (!hs) return false;
    const resp::Value got = holder.call({"LOCK.ACQUIRE", kHeldLock, std::to_string(*hs)}, kReplyBudget);
    RespClient waiter = connect();
    if (gen_.chance(50)) {
      (void)waiter.call({"HELLO", "3"}, kReplyBudget);
      ++n_.hello3;
    }
    auto ws = integer(waiter, {"SESSION.OPEN", "5000", "OWNER", "waiter"});
    if (!ws) return false;
    std::string bytes = gen_.frame(gen_.endless_wait(kHeldLock, *ws)) + gen_.frame({"PING"});
    if (gen_.chance(50)) bytes += gen_.frame({"SET", "k1", "v"}).substr(0, 1 + gen_.below(10));
    n_.frames += 5;
    send_split(waiter, bytes);
    if (gen_.chance(50)) (void)waiter.read(milliseconds(gen_.below(20)));
    waiter.close();
    ++n_.mid_wait_disconnects;
    if (got.type == resp::Type::kInteger && gen_.chance(50)) {
      (void)holder.send({"LOCK.RELEASE", kHeldLock, std::to_string(*hs), std::to_string(got.integer)});
    } else {
      (void)holder.send({"SESSION.CLOSE", std::to_string(*hs)});
    }
    return true;
  }

  bool episode() {
    const std::uint64_t pick = gen_.below(100);
    if (pick < 60) {
      // A new connection is used at once: the server closes one that never
      // completed a command within its idle timeout (30 s; a starved run).
      std::size_t pick_conn = gen_.below(kept_.size() + 1);
      if (kept_.size() < kKeptConnections || gen_.chance(5)) {
        if (kept_.size() >= kKeptConnections) kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(gen_.below(kept_.size())));
        kept_.push_back(connect());
        pick_conn = kept_.size() - 1;
      }
      RespClient& c = kept_[pick_conn % kept_.size()];
      if (!valid_pipeline(c)) return false;
      if (!c.connected()) return fail("the server closed a connection that sent only valid frames");
      return true;
    }
    if (pick < 90) return mutated_pipeline();
    return mid_wait_disconnect();
  }

  NetFuzzOptions opt_;
  FrameGen gen_;
  Counters n_;
  TempDir dir_{"netfuzz"};
  ServerProcess server_;
  std::string stderr_path_;
  RespClient admin_;
  std::vector<RespClient> kept_;
  std::vector<std::uint64_t> pool_;
  Protected protected_;
  std::uint64_t canary_session_ = 0, canary_token_ = 0, probe_session_ = 0, max_token_ = 0;
  std::string probe_wait_ = "30000";  // the probe's WAIT: within --max-wait-ms
};

}  // namespace

int run_net_fuzzer(const NetFuzzOptions& options) {
  NetFuzzOptions o = options;
  if (o.seed == 0) o.seed = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()) | 1U;
  NetFuzzer f(o);
  return f.run();
}

}  // namespace leasehold::testing
