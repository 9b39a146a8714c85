// The audit history against a real server process: every kind of event
// recorded with session, owner, token and reason; queried by LOCK.HISTORY,
// /api/history and `leasehold history`; kept across a kill -9 restart;
// bounded by --history-max-entries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "testkit/server_process.h"
#include "testkit/http_client.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

// A field of a LOCK.HISTORY record (a map in RESP3, a flat array in RESP2).
const Value* field(const Value& record, const std::string& name) {
  for (std::size_t i = 0; i + 1 < record.elements.size(); i += 2) {
    if (record.elements[i].str == name) return &record.elements[i + 1];
  }
  return nullptr;
}
std::string text(const Value& record, const std::string& name) {
  const Value* v = field(record, name);
  return v ? v->str : "<missing " + name + ">";
}
std::int64_t num(const Value& record, const std::string& name) {
  const Value* v = field(record, name);
  return v ? v->integer : -999;
}

class History : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    http_port_ = free_port();
    extra.insert(extra.end(), {"--http-listen", loopback(http_port_)});
    extra_ = extra;
    ASSERT_TRUE(server_.start(dir_.file("data"), extra_));
    c_ = server_.client();
    ASSERT_TRUE(c_.connected());
  }
  std::int64_t open(const std::string& owner) { return c_.call({"SESSION.OPEN", "60000", "OWNER", owner}).integer; }

  TempDir dir_{"history-process"};
  ServerProcess server_;
  RespClient c_;
  std::uint16_t http_port_ = 0;
  std::vector<std::string> extra_;
};

TEST_F(History, EveryEventKindIsRecordedAndSurvivesKill9) {
  start();
  EXPECT_EQ(c_.call({"CLIENT", "SETNAME", "operator-console"}), Value::simple("OK"));
  const auto a = open("alice");
  const auto t1 = c_.call({"LOCK.ACQUIRE", "res", std::to_string(a)}).integer;
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "res", std::to_string(a), std::to_string(t1)}), Value::simple("OK"));
  const auto t2 = c_.call({"LOCK.ACQUIRE", "res", std::to_string(a)}).integer;
  EXPECT_EQ(c_.call({"LOCK.REVOKE", "res"}), Value::simple("OK"));
  const auto b = open("bob");
  const auto t3 = c_.call({"LOCK.ACQUIRE", "res", std::to_string(b), "DELAY", "60000"}).integer;
  ASSERT_GT(t3, t2);
  EXPECT_EQ(c_.call({"SESSION.KILL", std::to_string(b)}), Value::simple("OK"));

  auto check = [&] {
    Value h = c_.call({"LOCK.HISTORY", "res", "COUNT", "100"});
    ASSERT_EQ(h.type, Type::kArray) << h.debug_string();
    ASSERT_EQ(h.elements.size(), 7u) << h.debug_string();
    // Newest first: lock-delay, kill, grant(bob), revoke, grant, release, grant.
    const std::vector<std::string> kinds = {"lock-delay", "kill", "grant", "revoke", "grant", "release", "grant"};
    for (std::size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(text(h.elements[i], "event"), kinds[i]) << i;
    EXPECT_EQ(num(h.elements[6], "token"), t1);
    EXPECT_EQ(text(h.elements[6], "owner"), "alice");
    EXPECT_EQ(num(h.elements[6], "session"), a);
    EXPECT_GE(num(h.elements[5], "hold_ms"), 0);
    EXPECT_EQ(num(h.elements[3], "token"), t2);
    EXPECT_NE(text(h.elements[3], "reason").find("by peer 127.0.0.1:"), std::string::npos);
    EXPECT_NE(text(h.elements[3], "reason").find("name=operator-console"), std::string::npos);
    EXPECT_EQ(num(h.elements[1], "token"), t3);
    EXPECT_NE(text(h.elements[1], "reason").find("session killed by peer"), std::string::npos);
    EXPECT_EQ(num(h.elements[0], "delay_ms"), 60000);
    EXPECT_GT(num(h.elements[0], "time_ms"), 1'600'000'000'000);
    Value two = c_.call({"LOCK.HISTORY", "res", "COUNT", "2"});
    EXPECT_EQ(two.elements.size(), 2u);
    Value before = c_.call({"LOCK.HISTORY", "res", "BEFORE", std::to_string(num(h.elements[5], "id"))});
    ASSERT_EQ(before.elements.size(), 1u);
    EXPECT_EQ(text(before.elements[0], "event"), "grant");
  };
  check();
  EXPECT_EQ(c_.call({"LOCK.HISTORY", "none"}).elements.size(), 0u);
  EXPECT_EQ(c_.call({"LOCK.HISTORY", "res", "COUNT", "0"}).type, Type::kError);
  EXPECT_EQ(c_.call({"LOCK.HISTORY", "res", "BOGUS", "1"}).type, Type::kError);
  EXPECT_EQ(c_.call({"LOCK.HISTORY", "res", "COUNT"}).type, Type::kError);

  // kill -9: nothing recorded is lost (each record is written before the reply).
  server_.process().kill9();
  ASSERT_TRUE(server_.start(dir_.file("data"), extra_));
  c_ = server_.client();
  check();

  auto api = http_get(http_port_, "/api/history?lock=res&count=3");
  ASSERT_TRUE(api);
  ASSERT_EQ(api->status, 200) << api->body;
  auto j = nlohmann::json::parse(api->body);
  ASSERT_EQ(j["records"].size(), 3u);
  EXPECT_EQ(j["records"][0]["event"], "lock-delay");
  EXPECT_EQ(j["records"][2]["lock"], "res");
  EXPECT_TRUE(j["records"][2]["time_ms"].is_number_integer()) << api->body;

  // The CLI.
  SpawnOptions o;
  o.stdout_path = dir_.file("cli.out");
  o.stderr_path = dir_.file("cli.err");
  auto p = Subprocess::spawn({leasehold_binary(), "history", "res", "--endpoints", loopback(server_.port()),
                              "--count", "10"},
                             o);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->wait(std::chrono::seconds(30)), 0);
  std::stringstream out;
  out << std::ifstream(dir_.file("cli.out")).rdbuf();
  EXPECT_NE(out.str().find("EVENT"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("lock-delay"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("alice"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(std::to_string(t3)), std::string::npos) << out.str();
}

TEST_F(History, RetentionIsBounded) {
  start({"--history-max-entries", "5"});
  const auto a = open("a");
  for (int i = 0; i < 20; ++i) {
    const auto t = c_.call({"LOCK.ACQUIRE", "r", std::to_string(a)}).integer;
    ASSERT_EQ(c_.call({"LOCK.RELEASE", "r", std::to_string(a), std::to_string(t)}), Value::simple("OK"));
  }
  Value h = c_.call({"LOCK.HISTORY", "r", "COUNT", "100"});
  ASSERT_EQ(h.elements.size(), 5u);
  EXPECT_EQ(text(h.elements[0], "event"), "release");
  server_.process().kill9();
  ASSERT_TRUE(server_.start(dir_.file("data"), extra_));
  c_ = server_.client();
  EXPECT_EQ(c_.call({"LOCK.HISTORY", "r", "COUNT", "100"}).elements.size(), 5u);
}

}  // namespace
}  // namespace leasehold::testing
