// Every command and its error paths, against a real server process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "testkit/server_process.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.file("data")));
    c_ = server_.client();
    ASSERT_TRUE(c_.connected());
  }
  std::int64_t open_session(std::int64_t ttl = 10000) {
    Value v = c_.call({"SESSION.OPEN", std::to_string(ttl), "OWNER", "test"});
    EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
    return v.integer;
  }
  static std::string s(std::int64_t v) { return std::to_string(v); }

  TempDir dir_{"server-commands"};
  ServerProcess server_;
  RespClient c_;
};

TEST_F(Commands, StandardCommands) {
  EXPECT_EQ(c_.call({"PING"}), Value::simple("PONG"));
  EXPECT_EQ(c_.call({"ping", "hi"}), Value::bulk("hi"));
  EXPECT_EQ(c_.call({"ECHO", "x y"}), Value::bulk("x y"));
  EXPECT_EQ(c_.call({"CLIENT", "GETNAME"}).type, Type::kNull);
  EXPECT_EQ(c_.call({"CLIENT", "SETNAME", "me"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"CLIENT", "GETNAME"}), Value::bulk("me"));
  EXPECT_EQ(c_.call({"CLIENT", "ID"}).type, Type::kInteger);
  EXPECT_EQ(c_.call({"CONFIG", "GET", "save"}).type, Type::kArray);
  Value role = c_.call({"ROLE"});
  ASSERT_EQ(role.elements.size(), 2u);
  EXPECT_EQ(role.elements[0], Value::bulk("primary"));
  Value info = c_.call({"INFO"});
  ASSERT_EQ(info.type, Type::kBulkString);
  for (const char* field : {"role:primary", "listen:127.0.0.1:", "data_dir:", "applied_revision:",
                            "log_last_index:", "sessions:", "locks:", "waiters:", "connected_clients:",
                            "loop_longest_turn_ms:", "loop_turns_over_10ms:", "loop_turns_over_100ms:",
                            "loop_longest_turn_cpu_ms:", "loop_turns_over_10ms_on_cpu:",
                            "loop_turns_over_10ms_blocked:", "loop_turns_over_10ms_preempted:"}) {
    EXPECT_NE(info.str.find(field), std::string::npos) << field;
  }
  EXPECT_EQ(c_.call({"INFO", "state"}).str.find("# Server"), std::string::npos);
  Value count = c_.call({"COMMAND", "COUNT"});
  Value all = c_.call({"COMMAND"});
  ASSERT_EQ(count.type, Type::kInteger);
  EXPECT_EQ(static_cast<std::size_t>(count.integer), all.elements.size());
  Value docs = c_.call({"COMMAND", "DOCS", "lock.acquire"});
  EXPECT_NE(docs.debug_string().find("name session [SHARED | LIMIT n]"), std::string::npos) << docs.debug_string();
  EXPECT_EQ(c_.call({"QUIT"}), Value::simple("OK"));
  EXPECT_TRUE(c_.wait_closed(std::chrono::seconds(2)));
}

// COMMAND DOCS and COMMAND INFO answer each named command once, however
// often the request repeats it: a reply is never larger than the table's
// (600,000 repeated names used to build an 82 MB reply on the loop thread).
TEST_F(Commands, CommandDocsAndInfoAnswerEachNamedCommandOnce) {
  std::vector<std::string> docs = {"COMMAND", "DOCS"};
  std::vector<std::string> info = {"COMMAND", "INFO"};
  for (int i = 0; i < 20000; ++i) {
    docs.push_back(i % 2 == 0 ? "lock.acquire" : "PING");
    info.push_back(i % 2 == 0 ? "lock.acquire" : "PING");
  }
  EXPECT_EQ(c_.call(docs), c_.call({"COMMAND", "DOCS", "lock.acquire", "ping"}));
  const Value in = c_.call(info);
  ASSERT_EQ(in.type, Type::kArray) << in.debug_string();
  EXPECT_EQ(in.elements.size(), 2u);
  EXPECT_EQ(in, c_.call({"COMMAND", "INFO", "LOCK.ACQUIRE", "ping"}));
}

TEST_F(Commands, HelloSwitchesProtocol) {
  Value h = c_.call({"HELLO", "3", "SETNAME", "n"});
  ASSERT_EQ(h.type, Type::kMap) << h.debug_string();
  EXPECT_EQ(h.find("proto")->integer, 3);
  EXPECT_EQ(h.find("server")->str, "leasehold");
  EXPECT_EQ(h.find("mode")->str, "standalone");
  EXPECT_EQ(h.find("role")->str, "primary");
  EXPECT_EQ(c_.call({"LOCK.INFO", "none"}).type, Type::kNull);
  EXPECT_EQ(c_.call({"HELLO", "4"}).str, "NOPROTO unsupported protocol version");
  Value h2 = c_.call({"HELLO", "2"});
  EXPECT_EQ(h2.type, Type::kArray);
}

TEST_F(Commands, Sessions) {
  const auto id = open_session(5000);
  EXPECT_GT(id, 0);
  EXPECT_EQ(c_.call({"SESSION.KEEPALIVE", s(id)}).integer, 5000);
  Value list = c_.call({"HELLO", "3"});
  list = c_.call({"SESSION.LIST"});
  ASSERT_EQ(list.elements.size(), 1u);
  EXPECT_EQ(list.elements[0].find("owner")->str, "test");
  EXPECT_EQ(list.elements[0].find("ttl_ms")->integer, 5000);
  EXPECT_GT(list.elements[0].find("remaining_ms")->integer, 4000);
  EXPECT_EQ(c_.call({"SESSION.CLOSE", s(id)}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"SESSION.KEEPALIVE", s(id)}).str.rfind("EXPIRED", 0), 0u);
  EXPECT_EQ(c_.call({"SESSION.CLOSE", s(id)}).str.rfind("EXPIRED", 0), 0u);
  EXPECT_EQ(c_.call({"SESSION.KILL", "999"}).str.rfind("NOTFOUND", 0), 0u);
  const auto other = open_session();
  EXPECT_EQ(c_.call({"SESSION.KILL", s(other)}), Value::simple("OK"));
  // Errors.
  EXPECT_EQ(c_.call({"SESSION.OPEN", "abc"}).str, "ERR ttl_ms is not an integer or out of range (0 to 2147483647)");
  EXPECT_EQ(c_.call({"SESSION.OPEN", "1"}).str.rfind("ERR", 0), 0u) << "below min TTL";
  // 0 is a number: the reply names the allowed range, not "not an integer".
  const std::string zero = c_.call({"SESSION.OPEN", "0"}).str;
  EXPECT_EQ(zero.rfind("ERR ttl_ms 0 is out of range: a session TTL must be between ", 0), 0u) << zero;
  EXPECT_NE(zero.find(" ms (--min-ttl-ms, --max-ttl-ms)"), std::string::npos) << zero;
  EXPECT_EQ(c_.call({"SESSION.OPEN", "1000", "OWNER"}).str.rfind("ERR syntax error", 0), 0u);
  EXPECT_EQ(c_.call({"SESSION.OPEN", "1000", "OWNER", std::string(300, 'o')}).str.rfind("LIMIT", 0), 0u);
  EXPECT_EQ(c_.call({"SESSION.KEEPALIVE", "-1"}).str,
            "ERR session is not an integer or out of range (1 to 18446744073709551615)");
}

TEST_F(Commands, SessionWatchNeedsResp3) {
  const auto id = open_session();
  EXPECT_EQ(c_.call({"SESSION.WATCH", s(id)}).str.rfind("ERR SESSION.WATCH needs RESP3", 0), 0u);
}

TEST_F(Commands, Locks) {
  const auto a = open_session();
  const auto b = open_session();
  Value t1 = c_.call({"LOCK.ACQUIRE", "L", s(a)});
  ASSERT_EQ(t1.type, Type::kInteger);
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", s(b)}).type, Type::kNull);
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", s(a)}).str.rfind("CONFLICT", 0), 0u);
  Value info = c_.call({"LOCK.INFO", "L"});
  ASSERT_EQ(info.type, Type::kArray);  // RESP2: flat map
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "L", s(b), s(t1.integer)}).str.rfind("NOTHOLDER", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "L", s(a), s(t1.integer + 100)}).str.rfind("STALE", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "L", s(a), s(t1.integer)}), Value::simple("OK"));
  Value t2 = c_.call({"LOCK.ACQUIRE", "L", s(b)});
  ASSERT_EQ(t2.type, Type::kInteger);
  EXPECT_GT(t2.integer, t1.integer);
  // Shared and semaphore.
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "R", s(a), "SHARED"}).type, Type::kInteger);
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "R", s(b), "SHARED"}).type, Type::kInteger);
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "S", s(a), "LIMIT", "2"}).type, Type::kInteger);
  // Idempotent retry with SEQ returns the first answer.
  Value first = c_.call({"LOCK.ACQUIRE", "I", s(a), "SEQ", "7"});
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "I", s(a), "SEQ", "7"}), first);
  // List, revoke, cancel.
  Value list = c_.call({"LOCK.LIST"});
  EXPECT_EQ(list.elements.size(), 4u);
  EXPECT_EQ(c_.call({"LOCK.LIST", "R", "COUNT", "10"}).elements.size(), 1u);
  EXPECT_EQ(c_.call({"LOCK.REVOKE", "L"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"LOCK.REVOKE", "nope"}).str.rfind("NOTFOUND", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.CANCEL", "L", s(a)}).str.rfind("NOTFOUND", 0), 0u);
  // Bad input.
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", s(a), "BOGUS"}).str, "ERR syntax error: unknown option 'BOGUS'");
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", s(a), "WAIT"}).str, "ERR syntax error: WAIT needs a value");
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", s(a), "WAIT", "-1"}).str,
            "ERR WAIT is not an integer or out of range (0 to 9223372036854)");
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", s(a), "SHARED", "LIMIT", "3"}).str.rfind("ERR syntax error", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", "0"}).str,
            "ERR session is not an integer or out of range (1 to 18446744073709551615)");
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "L", "12345"}).str.rfind("EXPIRED", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", std::string(600, 'n'), s(a)}).str.rfind("LIMIT", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "L", s(a), "x"}).str,
            "ERR token is not an integer or out of range (1 to 18446744073709551615)");
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "L", s(a), "1", "SEQ"}).str.rfind("ERR syntax error", 0), 0u);
  EXPECT_EQ(c_.call({"LOCK.LIST", "a", "b", "c"}).str.rfind("ERR syntax error", 0), 0u);
}

TEST_F(Commands, FencedKeyValue) {
  const auto a = open_session();
  Value t = c_.call({"LOCK.ACQUIRE", "leader", s(a)});
  ASSERT_EQ(t.type, Type::kInteger);
  EXPECT_EQ(c_.call({"FENCE.PUT", "addr", "host:1", "leader", s(t.integer)}).integer, t.integer);
  Value got = c_.call({"FENCE.GET", "addr"});
  ASSERT_EQ(got.elements.size(), 2u);
  EXPECT_EQ(got.elements[0], Value::bulk("host:1"));
  EXPECT_EQ(got.elements[1].integer, t.integer);
  EXPECT_EQ(c_.call({"FENCE.PUT", "addr", "evil", "leader", s(t.integer - 1)}).str.rfind("STALE", 0), 0u);
  EXPECT_EQ(c_.call({"FENCE.GET", "addr"}).elements[0], Value::bulk("host:1"));
  EXPECT_EQ(c_.call({"FENCE.GET", "none"}).type, Type::kNull);
}

TEST_F(Commands, CompatSubset) {
  EXPECT_EQ(c_.call({"SET", "k", "v1", "NX", "PX", "10000"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"SET", "k", "v2", "NX", "PX", "10000"}).type, Type::kNull);
  EXPECT_EQ(c_.call({"GET", "k"}), Value::bulk("v1"));
  const auto pttl = c_.call({"PTTL", "k"}).integer;
  EXPECT_GT(pttl, 9000);
  EXPECT_LE(pttl, 10000);
  EXPECT_EQ(c_.call({"PEXPIRE", "k", "50000"}).integer, 1);
  EXPECT_GT(c_.call({"PTTL", "k"}).integer, 40000);
  EXPECT_EQ(c_.call({"DELIFEQ", "k", "other"}).integer, 0);
  EXPECT_EQ(c_.call({"DELIFEQ", "k", "v1"}).integer, 1);
  EXPECT_EQ(c_.call({"GET", "k"}).type, Type::kNull);
  EXPECT_EQ(c_.call({"PTTL", "k"}).integer, -2);
  EXPECT_EQ(c_.call({"PEXPIRE", "k", "100"}).integer, 0);
  EXPECT_EQ(c_.call({"SET", "k", "v", "XX", "PX", "60000"}).type, Type::kNull);
  // A lock always has an expiry: SET without PX / EX is refused and changes
  // nothing (no key, so no session whose remaining time reads -1).
  const std::string needs_expiry =
      "ERR SET on leasehold needs PX (milliseconds) or EX (seconds): a lock without expiry would never be freed";
  EXPECT_EQ(c_.call({"SET", "k", "v"}).str, needs_expiry);
  EXPECT_EQ(c_.call({"SET", "k", "v", "NX"}).str, needs_expiry);
  EXPECT_EQ(c_.call({"SET", "k", "v", "TOKEN"}).str, needs_expiry);
  EXPECT_EQ(c_.call({"PTTL", "k"}).integer, -2);
  Value tok = c_.call({"SET", "k", "v", "TOKEN", "PX", "60000"});
  ASSERT_EQ(tok.type, Type::kInteger);
  EXPECT_GT(c_.call({"PTTL", "k"}).integer, 0);
  EXPECT_EQ(c_.call({"SET", "k", "w", "XX"}).str, needs_expiry) << "an XX update needs its expiry too";
  EXPECT_EQ(c_.call({"GET", "k"}), Value::bulk("v"));
  Value tok2 = c_.call({"SET", "k", "w", "XX", "TOKEN", "PX", "60000"});
  EXPECT_GT(tok2.integer, tok.integer);
  EXPECT_EQ(c_.call({"SET", "k", "z", "GET", "EX", "60"}), Value::bulk("w"));
  const Value sessions = c_.call({"SESSION.LIST"});
  EXPECT_EQ(sessions.debug_string().find("-1"), std::string::npos)
      << "no session shows remaining -1: " << sessions.debug_string();
  EXPECT_EQ(c_.call({"SET", "j", "1", "EX", "100"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"DEL", "k", "j", "missing"}).integer, 2);
  // Expiry: the key goes away on the server's clock.
  EXPECT_EQ(c_.call({"SET", "short", "v", "NX", "PX", "100"}), Value::simple("OK"));
  EXPECT_TRUE(eventually([&] { return c_.call({"GET", "short"}).type == Type::kNull; }, std::chrono::seconds(5)));
  EXPECT_EQ(c_.call({"SET", "short", "v2", "NX", "PX", "100"}), Value::simple("OK"));
  // A key held through LOCK.ACQUIRE cannot be SET.
  const auto a = open_session();
  ASSERT_EQ(c_.call({"LOCK.ACQUIRE", "native", s(a)}).type, Type::kInteger);
  EXPECT_EQ(c_.call({"SET", "native", "v", "PX", "1000"}).str.rfind("CONFLICT", 0), 0u);
  EXPECT_EQ(c_.call({"SET", "native", "v", "NX", "PX", "1000"}).str.rfind("CONFLICT", 0), 0u);
  // Bad input.
  EXPECT_EQ(c_.call({"SET", "k", "v", "PX", "0"}).str, "ERR invalid expire time in 'set' command");
  EXPECT_EQ(c_.call({"SET", "k", "v", "PX", "x"}).str,
            "ERR expire time is not an integer or out of range (-9223372036854775808 to 2147483647)");
  EXPECT_EQ(c_.call({"SET", "k", "v", "NX", "XX"}).str, "ERR syntax error");
  EXPECT_EQ(c_.call({"SET", "k", "v", "KEEPTTL"}).str, "ERR syntax error");
  EXPECT_EQ(c_.call({"SET", "k", std::string(70000, 'v'), "PX", "1000"}).str.rfind("LIMIT", 0), 0u);
  EXPECT_EQ(c_.call({"PEXPIRE", "k", "zz"}).str,
            "ERR expire time is not an integer or out of range (-9223372036854775808 to 2147483647)");
}

TEST_F(Commands, UnknownCommandAndArity) {
  EXPECT_EQ(c_.call({"NOPE", "a"}).str, "ERR unknown command 'NOPE', with args beginning with: 'a'");
  EXPECT_EQ(c_.call({"GET"}).str, "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(c_.call({"LOCK.ACQUIRE", "x"}).str, "ERR wrong number of arguments for 'lock.acquire' command");
  EXPECT_EQ(c_.call({"PING"}), Value::simple("PONG")) << "the connection stays usable";
}

TEST_F(Commands, RedisCliWorks) {
  const std::string base = "redis-cli -p " + std::to_string(server_.port()) + " ";
  auto run = [&](const std::string& args) {
    std::string out;
    FILE* f = ::popen((base + args + " 2>&1").c_str(), "r");
    if (f == nullptr) return out;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
    ::pclose(f);
    return out;
  };
  EXPECT_EQ(run("PING"), "PONG\n");
  EXPECT_EQ(run("SET rk v NX PX 5000"), "OK\n");
  EXPECT_EQ(run("GET rk"), "v\n");
  const std::string id = run("SESSION.OPEN 5000");
  ASSERT_FALSE(id.empty());
  EXPECT_GT(std::atoll(id.c_str()), 0) << id;
  EXPECT_NE(run("-3 HELLO 3").find("proto"), std::string::npos);
  const std::string info = run("-3 LOCK.INFO rk");
  EXPECT_NE(info.find("exclusive"), std::string::npos) << info;
  EXPECT_NE(run("-3 SESSION.LIST").find("remaining_ms"), std::string::npos);
  EXPECT_NE(run("BOGUS").find("ERR unknown command"), std::string::npos);
}

TEST_F(Commands, SigtermExitsCleanly) {
  ASSERT_EQ(c_.call({"SET", "k", "v", "PX", "60000"}), Value::simple("OK"));
  auto code = server_.stop();
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
}

}  // namespace
}  // namespace leasehold::testing
