// A standby whose log watch falls behind an etcd compaction catches up by
// itself (docs/cluster.md "Falling behind a compaction"): real etcd, real
// `leasehold server --etcd` processes. The standby is frozen (SIGSTOP) while
// the primary writes enough (large compat values) for several snapshots and
// compactions to pass its watch revision; after SIGCONT it must reload the
// etcd snapshot, replay the log after it, watch again, keep running, agree
// with the primary and still take over on failover.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "testkit/cluster_fixture.h"

namespace leasehold::testing {
namespace {

// Everything node `data_dir` wrote to stderr, over all its spawns.
std::string stderr_text(const std::string& data_dir) {
  const std::filesystem::path dir = std::filesystem::path(data_dir).parent_path();
  const std::string stem = std::filesystem::path(data_dir).filename().string() + ".stderr.";
  std::string out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(stem, 0) != 0) continue;
    std::ifstream in(entry.path());
    out.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

std::int64_t field_int(const resp::Value& map, std::string_view field) {
  for (std::size_t k = 0; k + 1 < map.elements.size(); k += 2) {
    if (map.elements[k].str == field) return map.elements[k + 1].integer;
  }
  return -1;
}

// LOCK.LIST without the time-dependent fields: name, last_token, holders.
std::string canonical_locks(const resp::Value& list) {
  std::string out;
  for (const resp::Value& lock : list.elements) {
    for (std::size_t k = 0; k + 1 < lock.elements.size(); k += 2) {
      const std::string& key = lock.elements[k].str;
      const resp::Value& value = lock.elements[k + 1];
      if (key == "name") out += "name=" + value.str;
      if (key == "last_token") out += " last_token=" + std::to_string(value.integer);
      if (key == "holders") {
        for (const resp::Value& h : value.elements) {
          out += " holder(" + std::to_string(field_int(h, "session")) + "," + std::to_string(field_int(h, "token")) +
                 ")";
        }
      }
    }
    out += "\n";
  }
  return out;
}

TEST(ClusterCatchUpTest, FrozenStandbyBehindCompactionsRecoversByItselfAndCanTakeOver) {
  const auto test_start = SteadyClock::now();
  auto c = LeaseholdCluster::start(1, 2, {"--snapshot-every-commands", "20"});
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  const int s = 1 - p;
  auto conn = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(conn);
  auto session = conn->call({"SESSION.OPEN", "60000"});
  ASSERT_EQ(session.type, resp::Type::kInteger) << session.debug_string();
  const std::string sid = std::to_string(session.integer);
  std::int64_t max_token = 0;
  auto acquire = [&](const std::string& name) {
    auto tok = conn->call({"LOCK.ACQUIRE", name, sid});
    EXPECT_EQ(tok.type, resp::Type::kInteger) << tok.debug_string();
    max_token = std::max(max_token, tok.integer);
    return tok.integer;
  };
  for (int i = 0; i < 5; ++i) acquire("before" + std::to_string(i));
  ASSERT_TRUE(c->wait_converged(10s));
  ASSERT_EQ(c->info_field(s, "catch_up_recoveries"), "0");
  const std::string snapshots_before = c->info_field(p, "snapshots_saved");

  // Freeze the standby. Large values fill its watch stream's buffers in etcd
  // (so etcd stops sending and the watch falls behind), and every 20
  // commands the primary snapshots, deletes the log prefix and compacts.
  c->node(s).process.signal(SIGSTOP);
  const std::string big(48 * 1024, 'x');
  std::int64_t during7_token = -1;
  const auto write_start = SteadyClock::now();
  for (int i = 0; i < 400; ++i) {
    const std::string key = "big" + std::to_string(i % 7);
    auto set = conn->call({"SET", key, big, "PX", "600000"});
    ASSERT_EQ(set.str, "OK") << set.debug_string();
    if (i % 50 == 0) {
      const std::int64_t token = acquire("during" + std::to_string(i / 50));
      if (i / 50 == 7) during7_token = token;
    }
  }
  const auto write_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - write_start).count();
  const int snapshots = std::stoi(c->info_field(p, "snapshots_saved")) - std::stoi(snapshots_before);
  std::printf("[ catch-up ] standby frozen: primary wrote 400 x 48 KiB values in %lld ms, %d snapshots\n",
              static_cast<long long>(write_ms), snapshots);
  ASSERT_GE(snapshots, 3) << "at least two compactions must pass the frozen standby's watch";

  const auto resumed = SteadyClock::now();
  c->node(s).process.signal(SIGCONT);
  ASSERT_TRUE(c->wait_converged(20s)) << "the standby did not catch up; see " << c->stderr_of(s);
  const auto caught_up_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - resumed).count();
  std::printf("[ catch-up ] standby resumed: converged after %lld ms\n", static_cast<long long>(caught_up_ms));
  ASSERT_TRUE(c->node(s).running()) << "the standby exited instead of catching up";
  EXPECT_EQ(c->role(s), "standby");
  const std::string recoveries = c->info_field(s, "catch_up_recoveries");
  EXPECT_GE(std::stoi(recoveries.empty() ? "0" : recoveries), 1) << "the watch never fell behind";
  const std::string log = stderr_text(c->node(s).data_dir);
  EXPECT_NE(log.find("log catch-up recovered from the etcd snapshot"), std::string::npos) << log;
  EXPECT_NE(log.find("compaction"), std::string::npos) << log;
  EXPECT_EQ(log.find("cluster member failed"), std::string::npos) << log;
  for (std::size_t at = 0; (at = log.find("log catch-up", at)) != std::string::npos; ++at) {
    std::printf("[ catch-up ] standby log: %s\n", log.substr(at, log.find('\n', at) - at).c_str());
  }

  // Same state: the standby's stale reads (READONLY) equal the primary's.
  auto standby = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(standby);
  ASSERT_EQ(standby->call({"READONLY"}).str, "OK");
  const std::string on_primary = canonical_locks(conn->call({"LOCK.LIST"}));
  EXPECT_NE(on_primary.find("during7"), std::string::npos) << on_primary;
  EXPECT_EQ(canonical_locks(standby->call({"LOCK.LIST"})), on_primary);
  EXPECT_EQ(standby->call({"GET", "big3"}).str, big);

  // It keeps following after the catch-up: a new write reaches it.
  acquire("after");
  ASSERT_TRUE(c->wait_converged(10s));
  EXPECT_EQ(canonical_locks(standby->call({"LOCK.LIST"})), canonical_locks(conn->call({"LOCK.LIST"})));

  // Failover still works: the recovered standby takes over and its tokens
  // continue above every token granted before.
  c->node(p).process.kill9();
  const auto killed = SteadyClock::now();
  ASSERT_EQ(c->wait_primary(15s, p), s);
  std::printf("[ catch-up ] primary killed: recovered standby promoted after %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - killed).count()));
  auto fresh = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(fresh);
  auto s2 = fresh->call({"SESSION.OPEN", "30000"});
  ASSERT_EQ(s2.type, resp::Type::kInteger) << s2.debug_string();
  auto tok = fresh->call({"LOCK.ACQUIRE", "after-failover", std::to_string(s2.integer)});
  ASSERT_EQ(tok.type, resp::Type::kInteger) << tok.debug_string();
  EXPECT_GT(tok.integer, max_token);
  // A lock granted while the standby was frozen is still held there.
  auto info = fresh->call({"LOCK.INFO", "during7"});
  EXPECT_EQ(field_int(info, "last_token"), during7_token) << info.debug_string();
  // The recovered node (catch-up thread, replaced watches) stops cleanly:
  // exit 0, and under ASan no error and no leak.
  c->node(s).process.signal(SIGTERM);
  const auto code = c->node(s).process.wait(20s);
  ASSERT_TRUE(code.has_value()) << "the recovered node did not stop";
  EXPECT_EQ(*code, 0) << "see " << c->stderr_of(s);
  EXPECT_EQ(stderr_text(c->node(s).data_dir).find("Sanitizer"), std::string::npos);
  std::printf("[ catch-up ] whole test %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - test_start).count()));
}

}  // namespace
}  // namespace leasehold::testing
