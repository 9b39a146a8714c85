// Limits that could not serve are refused at start (the real binary: exit
// code and message), and listings are paged so that every reply is bounded
// (SESSION.LIST / LOCK.LIST with AFTER and COUNT, and the CLI pages through).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

// A start with `flags` that must be refused: its exit code and stderr
// (code nullopt if it started instead).
struct StartResult {
  std::optional<int> code;
  std::string err;
};

StartResult start_with(const TempDir& dir, const std::string& tag, const std::vector<std::string>& flags) {
  const auto refused = ServerProcess().run_to_exit(dir.file(tag + "-data"), flags, 20s);
  return refused ? StartResult{refused->code, refused->stderr_text} : StartResult{};
}

TEST(ServerLimits, ImpossibleLimitsAreRefusedAtStart) {
  TempDir dir("server-limits");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--min-ttl-ms", "5000", "--max-ttl-ms", "100"}, "--min-ttl-ms 5000 is above --max-ttl-ms 100"},
      {{"--max-name-bytes", "0"}, "--max-name-bytes 0"},
      {{"--max-sessions", "0"}, "--max-sessions 0"},
      {{"--max-locks", "0"}, "--max-locks 0"},
      {{"--max-holders-per-lock", "0"}, "--max-holders-per-lock 0"},
      {{"--max-ttl-ms", "0", "--min-ttl-ms", "0"}, "--max-ttl-ms 0"},
      {{"--max-ttl-ms", "2147483648"}, "--max-ttl-ms 2147483648 is above the largest session TTL, 2147483647 ms"},
      // Above the wire ceiling (server/base/wire_ceilings.h): no request could reach them.
      {{"--max-wait-ms", "9223372036855"},
       "--max-wait-ms 9223372036855 is out of range: it must be 0 to 9223372036854 ms"},
      {{"--max-delay-ms", "18446744073709551615"},
       "--max-delay-ms 18446744073709551615 is out of range: it must be 0 to 9223372036854 ms"},
      {{"--max-clients", "0"}, "--max-clients 0"},
      {{"--max-pipeline", "0"}, "--max-pipeline 0"},
      {{"--max-pending-proposals", "0"}, "--max-pending-proposals 0"},
      {{"--max-batch-commands", "0"}, "--max-batch-commands 0"},
      {{"--max-batch-bytes", "1000"}, "--max-batch-bytes 1000 cannot hold the largest command"},
      {{"--proto-max-array-len", "2"}, "--proto-max-array-len 2"},
      {{"--proto-max-bulk-len", "3"}, "--proto-max-bulk-len 3"},
      {{"--max-output-bytes", "10"}, "--max-output-bytes 10"},
  };
  int i = 0;
  for (const auto& [flags, message] : cases) {
    const StartResult r = start_with(dir, "case" + std::to_string(i++), flags);
    EXPECT_EQ(r.code, 64) << flags[0] << ": " << r.err;  // EX_USAGE (common/exit_codes.h)
    EXPECT_NE(r.err.find("impossible limits: " + message), std::string::npos) << r.err;
  }
  // The same from a config file.
  const std::string config = dir.file("bad.toml");
  { std::ofstream(config) << "min-ttl-ms = 5000\nmax-ttl-ms = 100\n"; }
  const StartResult r = start_with(dir, "file", {"--config", config});
  EXPECT_EQ(r.code, 64) << r.err;
  EXPECT_NE(r.err.find("--min-ttl-ms 5000 is above --max-ttl-ms 100"), std::string::npos) << r.err;
}

// Duration flags that become deadlines are refused above the wire ceiling by
// the flag parser itself (the message names the flag and the range).
TEST(ServerLimits, DurationFlagsAboveTheWireCeilingAreRefused) {
  TempDir dir("server-limits-durations");
  int i = 0;
  for (const char* flag : {"--idle-timeout-ms", "--etcd-timeout-ms", "--append-timeout-ms"}) {
    const StartResult r = start_with(dir, "dur" + std::to_string(i++), {flag, "9223372036855"});
    ASSERT_TRUE(r.code.has_value()) << flag << " was accepted";
    EXPECT_NE(*r.code, 0) << flag;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("9223372036854"), std::string::npos) << "the range is named: " << r.err;
  }
  // The ceiling itself is a valid setting.
  ServerProcess server;
  ASSERT_TRUE(server.start(dir.file("at-ceiling"), {"--max-wait-ms", "9223372036854", "--max-delay-ms",
                                                    "9223372036854", "--idle-timeout-ms", "9223372036854"}));
  RespClient c = server.client();
  EXPECT_EQ(c.call({"PING"}), Value::simple("PONG"));
}

TEST(ServerLimits, TightButPossibleLimitsStillServe) {
  TempDir dir("server-limits-ok");
  ServerProcess server;
  ASSERT_TRUE(server.start(dir.file("data"), {"--min-ttl-ms", "100", "--max-ttl-ms", "100", "--max-name-bytes",
                                              "1", "--max-sessions", "1"}));
  RespClient c = server.client();
  Value s = c.call({"SESSION.OPEN", "100"});
  ASSERT_EQ(s.type, Type::kInteger) << s.debug_string();
  EXPECT_EQ(c.call({"LOCK.ACQUIRE", "x", std::to_string(s.integer)}).type, Type::kInteger);
}

class Paging : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.file("data")));
    c_ = server_.client();
    ASSERT_TRUE(c_.connected());
  }
  // Runs `commands` pipelined; the replies in order.
  std::vector<Value> pipeline(const std::vector<std::vector<std::string>>& commands) {
    for (const auto& cmd : commands) EXPECT_TRUE(c_.send(cmd));
    std::vector<Value> out;
    for (std::size_t i = 0; i < commands.size(); ++i) {
      auto v = c_.read(30s);
      if (!v) {
        ADD_FAILURE() << v.status().to_string();
        break;
      }
      out.push_back(std::move(*v));
    }
    return out;
  }
  std::vector<std::int64_t> open_sessions(std::size_t n) {
    std::vector<std::int64_t> ids;
    for (const Value& v : pipeline(std::vector<std::vector<std::string>>(n, {"SESSION.OPEN", "60000"}))) {
      EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
      ids.push_back(v.integer);
    }
    return ids;
  }
  static std::vector<std::int64_t> ids_of(const Value& list) {
    std::vector<std::int64_t> out;
    for (const Value& s : list.elements) out.push_back(s.find("id")->integer);
    return out;
  }
  static std::vector<std::string> names_of(const Value& list) {
    std::vector<std::string> out;
    for (const Value& l : list.elements) out.push_back(l.find("name")->str);
    return out;
  }

  TempDir dir_{"server-paging"};
  ServerProcess server_;
  RespClient c_;
};

TEST_F(Paging, SessionListPagesInIdOrder) {
  ASSERT_EQ(c_.call({"HELLO", "3"}).type, Type::kMap);
  const auto ids = open_sessions(1005);
  ASSERT_EQ(ids.size(), 1005u);
  EXPECT_EQ(c_.call({"SESSION.LIST"}).elements.size(), 1000u) << "default COUNT";
  std::vector<std::int64_t> seen;
  std::string after = "0";
  for (int pages = 0; pages < 100; ++pages) {
    Value page = c_.call({"SESSION.LIST", "AFTER", after, "COUNT", "300"});
    ASSERT_EQ(page.type, Type::kArray) << page.debug_string();
    ASSERT_LE(page.elements.size(), 300u);
    if (page.elements.empty()) break;
    for (auto id : ids_of(page)) seen.push_back(id);
    after = std::to_string(seen.back());
  }
  EXPECT_EQ(seen, ids) << "every session once, in id order";
  EXPECT_TRUE(c_.call({"SESSION.LIST", "COUNT", "0"}).is_error());
  EXPECT_TRUE(c_.call({"SESSION.LIST", "COUNT", "10001"}).is_error());
  EXPECT_TRUE(c_.call({"SESSION.LIST", "AFTER", "x"}).is_error());
  EXPECT_TRUE(c_.call({"SESSION.LIST", "AFTER"}).is_error());
  EXPECT_TRUE(c_.call({"SESSION.LIST", "BOGUS", "1"}).is_error());

  // The CLI pages through all of them.
  SpawnOptions opts;
  opts.env = {{"LEASEHOLD_ENDPOINTS", loopback(server_.port())}};
  opts.stdout_path = dir_.file("list.out");
  opts.stderr_path = dir_.file("list.err");
  auto cli = Subprocess::spawn({leasehold_binary(), "session", "list", "--json"}, opts);
  ASSERT_TRUE(cli);
  EXPECT_EQ(cli->wait(30s), 0) << read_file(dir_.file("list.err"));
  const std::string out = read_file(dir_.file("list.out"));
  std::size_t count = 0;
  for (auto at = out.find("\"id\":"); at != std::string::npos; at = out.find("\"id\":", at + 1)) ++count;
  EXPECT_EQ(count, ids.size());
}

TEST_F(Paging, LockListPagesAndBoundsTheEntriesPerReply) {
  ASSERT_EQ(c_.call({"HELLO", "3"}).type, Type::kMap);
  const auto ids = open_sessions(30);
  std::vector<std::vector<std::string>> acquires;
  for (int i = 0; i < 25; ++i) {
    acquires.push_back({"LOCK.ACQUIRE", fmt::format("p/{:02}", i), std::to_string(ids[i])});
  }
  acquires.push_back({"LOCK.ACQUIRE", "q/x", std::to_string(ids[25])});
  for (const Value& v : pipeline(acquires)) ASSERT_EQ(v.type, Type::kInteger) << v.debug_string();
  std::vector<std::string> seen;
  std::string after;
  for (int pages = 0; pages < 10; ++pages) {
    std::vector<std::string> cmd = {"LOCK.LIST", "p/", "COUNT", "10"};
    if (!after.empty()) cmd.insert(cmd.end(), {"AFTER", after});
    Value page = c_.call(cmd);
    ASSERT_EQ(page.type, Type::kArray) << page.debug_string();
    if (page.elements.empty()) break;
    for (auto& n : names_of(page)) seen.push_back(n);
    after = seen.back();
  }
  ASSERT_EQ(seen.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(seen[i], fmt::format("p/{:02}", i));
  EXPECT_EQ(names_of(c_.call({"LOCK.LIST", "AFTER", "p/24", "COUNT", "5"})), std::vector<std::string>{"q/x"});
  EXPECT_TRUE(c_.call({"LOCK.LIST", "p/", "COUNT", "100001"}).is_error());

  // Two semaphores with 6,000 holders each: one reply lists at most 10,000
  // holders + waiters after the first lock, so it stops after the second.
  const auto many = open_sessions(12'000);
  ASSERT_EQ(many.size(), 12'000u);
  std::vector<std::vector<std::string>> holds;
  for (std::size_t i = 0; i < many.size(); ++i) {
    holds.push_back({"LOCK.ACQUIRE", i < 6000 ? "big/a" : "big/b", std::to_string(many[i]), "LIMIT", "10000"});
  }
  holds.push_back({"LOCK.ACQUIRE", "big/c", std::to_string(ids[29])});
  for (const Value& v : pipeline(holds)) ASSERT_EQ(v.type, Type::kInteger) << v.debug_string();
  Value page = c_.call({"LOCK.LIST", "big/", "COUNT", "10"}, 30s);
  EXPECT_EQ(names_of(page), (std::vector<std::string>{"big/a", "big/b"}));
  page = c_.call({"LOCK.LIST", "big/", "AFTER", "big/b", "COUNT", "10"}, 30s);
  EXPECT_EQ(names_of(page), std::vector<std::string>{"big/c"});
}

}  // namespace
}  // namespace leasehold::testing
