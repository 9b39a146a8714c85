// LEASE DURABILITY (`--durability lease`): commands are answered before they
// are durable, and the two promises still hold. kill -9 under load, then a
// restart: tokens above every earlier token, every session expired, no grant
// before the quarantine (the longest TTL in use plus the drift bound) ends.
// A clean restart has no quarantine. FENCE.PUT stays durable before it is
// acknowledged. Cluster mode refuses the lease mode.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "testkit/server_process.h"
#include "testkit/http_client.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kLease = {"--durability", "lease"};

std::int64_t info_field(RespClient& c, const std::string& name) {
  const auto value = info_value(c, "log", name);
  return value ? std::stoll(*value) : -1;
}

class LeaseMode : public ::testing::Test {
 protected:
  std::string data() const { return dir_.file("data"); }
  void start(const std::vector<std::string>& flags = kLease) {
    server_ = ServerProcess();
    ASSERT_TRUE(server_.start(data(), flags));
  }
  TempDir dir_{"lease-mode"};
  ServerProcess server_;
};

TEST_F(LeaseMode, KillNineUnderLoadThenTokensRiseAndTheQuarantineHolds) {
  start();
  constexpr std::int64_t kLongestTtl = 5000;
  {
    RespClient c = server_.client();
    // The longest TTL in use: the quarantine's length after a crash.
    ASSERT_EQ(c.call({"SESSION.OPEN", std::to_string(kLongestTtl)}).type, Type::kInteger);
    EXPECT_NE(c.call({"INFO", "server"}).str.find("durability:lease"), std::string::npos);
  }
  std::atomic<std::int64_t> high{0};
  std::atomic<int> cycles{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      RespClient c = server_.client();
      const Value s = c.call({"SESSION.OPEN", std::to_string(kLongestTtl)});
      if (s.type != Type::kInteger) return;
      const std::string session = std::to_string(s.integer);
      const std::string lock = "L" + std::to_string(w % 2);
      while (!stop.load()) {
        const Value t = c.call({"LOCK.ACQUIRE", lock, session, "WAIT", "2000"}, 3s);
        if (t.type != Type::kInteger) break;  // the server was killed
        std::int64_t seen = high.load();
        while (t.integer > seen && !high.compare_exchange_weak(seen, t.integer)) {
        }
        if (c.call({"LOCK.RELEASE", lock, session, std::to_string(t.integer)}, 3s) != Value::simple("OK")) break;
        if (c.call({"SESSION.KEEPALIVE", session}, 3s).type != Type::kInteger) break;
        cycles.fetch_add(1);
      }
    });
  }
  eventually([&] { return cycles.load() >= 300; }, 20s, 5ms);
  ASSERT_GE(cycles.load(), 300) << "the load never got going";
  server_.process().kill9();
  stop = true;
  for (auto& t : workers) t.join();

  const auto restarted = Clock::now();
  const std::uint16_t http_port = free_port();
  std::vector<std::string> flags = kLease;
  flags.insert(flags.end(), {"--http-listen", loopback(http_port)});
  start(flags);
  ASSERT_TRUE(wait_for_port(http_port, 10s));
  RespClient c = server_.client();
  const std::int64_t remaining = info_field(c, "quarantine_remaining_ms");
  EXPECT_GT(remaining, 0);
  EXPECT_LE(remaining, kLongestTtl + kLongestTtl / 100 + 2);
  // /readyz says so too: no grant now, and for how long.
  auto quarantined = http_get(http_port, "/readyz");
  ASSERT_TRUE(quarantined) << quarantined.status().to_string();
  EXPECT_EQ(quarantined->status, 503) << quarantined->body;
  EXPECT_NE(quarantined->body.find("quarantined after an unclean stop"), std::string::npos) << quarantined->body;
  const nlohmann::json ready_body = nlohmann::json::parse(quarantined->body, nullptr, false);
  ASSERT_TRUE(ready_body.contains("quarantine_remaining_ms")) << quarantined->body;
  EXPECT_GT(ready_body["quarantine_remaining_ms"].get<std::int64_t>(), 0);
  EXPECT_LE(ready_body["quarantine_remaining_ms"].get<std::int64_t>(), remaining);
  const Value s = c.call({"SESSION.OPEN", "60000"});
  ASSERT_EQ(s.type, Type::kInteger) << s.debug_string();
  EXPECT_GT(s.integer, high.load());
  const std::string session = std::to_string(s.integer);
  EXPECT_EQ(c.call({"LOCK.ACQUIRE", "L0", session}).type, Type::kNull);
  EXPECT_EQ(c.call({"SET", "k", "v", "NX", "PX", "60000"}).type, Type::kNull);
  const Value t = c.call({"LOCK.ACQUIRE", "L0", session, "WAIT", "60000"}, 60s);
  ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
  EXPECT_GT(t.integer, high.load());
  // No grant before the quarantine ended: it began after the restart began.
  EXPECT_GE(Clock::now() - restarted, std::chrono::milliseconds(kLongestTtl + kLongestTtl / 100 + 2));
  EXPECT_EQ(info_field(c, "quarantine_remaining_ms"), 0);
  auto ready = http_get(http_port, "/readyz");
  ASSERT_TRUE(ready) << ready.status().to_string();
  EXPECT_EQ(ready->status, 200) << ready->body;
}

// A SESSION.OPEN with a TTL the server refuses does not set the quarantine
// (it used to be recorded: 18264103043276783777 wrapped the quarantine to
// 0 ms); the longest TTL actually in use still does.
TEST_F(LeaseMode, ARefusedTtlDoesNotSetTheQuarantine) {
  start();
  {
    RespClient c = server_.client();
    EXPECT_EQ(c.call({"SESSION.OPEN", "18264103043276783777"}).type, Type::kError);
    EXPECT_EQ(c.call({"SESSION.OPEN", "86400001"}).type, Type::kError);  // over --max-ttl-ms
    const Value s = c.call({"SESSION.OPEN", "4000"});
    ASSERT_EQ(s.type, Type::kInteger) << s.debug_string();
    ASSERT_EQ(c.call({"LOCK.ACQUIRE", "L", std::to_string(s.integer)}).type, Type::kInteger);
  }
  server_.process().kill9();
  start();
  RespClient c = server_.client();
  const std::int64_t remaining = info_field(c, "quarantine_remaining_ms");
  EXPECT_GT(remaining, 0) << "the 4 s session's holder is protected";
  EXPECT_LE(remaining, 4000 + 40 + 2);
}

// After a lease-mode crash, a start in fsync mode that stops before its
// quarantine is written (here: its port is taken, so it exits after opening
// the data dir) must not erase that crash: the start after it still expires
// every session and quarantines.
TEST_F(LeaseMode, AFailedStartAfterALeaseCrashDoesNotEraseTheQuarantine) {
  start();
  {
    RespClient c = server_.client();
    const Value s = c.call({"SESSION.OPEN", "4000"});
    ASSERT_EQ(s.type, Type::kInteger) << s.debug_string();
    ASSERT_EQ(c.call({"LOCK.ACQUIRE", "L", std::to_string(s.integer)}).type, Type::kInteger);
  }
  server_.process().kill9();
  // An fsync-mode start that fails on a listening port another server holds.
  ServerProcess other;
  TempDir other_dir{"lease-mode-port"};
  ASSERT_TRUE(other.start(other_dir.file("data")));
  SpawnOptions opts;
  opts.stderr_path = data() + ".taken-port.stderr";
  auto failed = Subprocess::spawn({leasehold_binary(), "server", "--listen", loopback(other.port()), "--data-dir",
                                   data(), "--log-level", "warn"},
                                  opts);
  ASSERT_TRUE(failed) << failed.status().to_string();
  const std::optional<int> code = failed->wait(30s);
  ASSERT_TRUE(code) << "the start on a taken port did not exit";
  EXPECT_NE(*code, 0);
  EXPECT_NE(read_file(opts.stderr_path).find("address already in use"), std::string::npos)
      << "it failed for another reason (before opening the data dir?): " << read_file(opts.stderr_path);
  start({});  // fsync mode
  RespClient c = server_.client();
  const std::int64_t remaining = info_field(c, "quarantine_remaining_ms");
  EXPECT_GT(remaining, 0) << "the lease-mode crash's quarantine was lost";
  EXPECT_LE(remaining, 4000 + 40 + 2);
  // The start's Reopen is applied once its append is durable (fsync mode),
  // and no command is answered before: every pre-crash session is gone.
  const Value sessions = c.call({"SESSION.LIST"});
  EXPECT_EQ(sessions.debug_string().find("held"), std::string::npos)
      << "every session is expired: " << sessions.debug_string();
}

TEST_F(LeaseMode, CleanRestartHasNoQuarantine) {
  start();
  std::int64_t last = 0;
  {
    RespClient c = server_.client();
    const std::string session = std::to_string(c.call({"SESSION.OPEN", "5000"}).integer);
    for (int i = 0; i < 50; ++i) {
      const Value t = c.call({"LOCK.ACQUIRE", "L", session});
      ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
      last = t.integer;
      ASSERT_EQ(c.call({"LOCK.RELEASE", "L", session, std::to_string(t.integer)}), Value::simple("OK"));
    }
  }
  ASSERT_EQ(server_.stop(), std::optional<int>(0));
  start();
  RespClient c = server_.client();
  EXPECT_EQ(info_field(c, "quarantine_remaining_ms"), 0);
  const Value s = c.call({"SESSION.OPEN", "5000"});
  ASSERT_EQ(s.type, Type::kInteger);
  const Value t = c.call({"LOCK.ACQUIRE", "L", std::to_string(s.integer)});
  ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
  EXPECT_GT(t.integer, last);
  EXPECT_LT(t.integer, last + 10) << "a clean restart continues exactly";
}

TEST_F(LeaseMode, FencedValuesAreDurableBeforeTheyAreAcknowledged) {
  start();
  std::map<std::string, std::int64_t> acknowledged;  // key -> token
  {
    RespClient c = server_.client();
    const std::string session = std::to_string(c.call({"SESSION.OPEN", "5000"}).integer);
    const Value t = c.call({"LOCK.ACQUIRE", "owner", session});
    ASSERT_EQ(t.type, Type::kInteger);
    for (int i = 0; i < 40; ++i) {
      const std::string key = "k" + std::to_string(i);
      const Value r = c.call({"FENCE.PUT", key, "v" + std::to_string(i), "owner", std::to_string(t.integer)});
      ASSERT_EQ(r.type, Type::kInteger) << r.debug_string();
      acknowledged[key] = r.integer;
    }
  }
  server_.process().kill9();
  start();
  RespClient c = server_.client();
  for (const auto& [key, token] : acknowledged) {
    const Value v = c.call({"FENCE.GET", key});
    ASSERT_EQ(v.type, Type::kArray) << key << ": " << v.debug_string();
    ASSERT_EQ(v.elements.size(), 2U);
    EXPECT_EQ(v.elements[0].str, "v" + key.substr(1));
    EXPECT_EQ(v.elements[1].integer, token);
  }
}

TEST_F(LeaseMode, ClusterModeRefusesIt) {
  auto refused = server_.run_to_exit(data(), {"--durability", "lease", "--etcd", "http://127.0.0.1:9"});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, 64);  // EX_USAGE (common/exit_codes.h)
  EXPECT_NE(refused->stderr_text.find("--durability lease is for embedded mode only"), std::string::npos)
      << refused->stderr_text;
}

}  // namespace
}  // namespace leasehold::testing
