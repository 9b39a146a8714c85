// In-process checks of the command table and helpers (no sockets).
#include <gtest/gtest.h>

#include "server/base/args.h"
#include "server/commands/command_table.h"
#include "server/base/config.h"

namespace leasehold::server {
namespace {

TEST(CommandTable, EveryCommandIsDescribed) {
  const auto& table = CommandTable::instance();
  EXPECT_GE(table.all().size(), 29u);
  for (const auto& spec : table.all()) {
    EXPECT_NE(spec.handler, nullptr) << spec.name;
    EXPECT_FALSE(spec.summary.empty()) << spec.name;
    EXPECT_NE(spec.arity, 0) << spec.name;
  }
  for (const char* name : {"SESSION.OPEN", "SESSION.KEEPALIVE", "SESSION.CLOSE", "SESSION.LIST", "SESSION.KILL",
                           "SESSION.WATCH", "LOCK.ACQUIRE", "LOCK.RELEASE", "LOCK.INFO", "LOCK.LIST",
                           "LOCK.REVOKE", "LOCK.CANCEL", "LOCK.EXTEND", "LOCK.TRANSFER", "FENCE.PUT", "FENCE.GET", "SET", "GET", "DEL", "DELIFEQ",
                           "PTTL", "PEXPIRE", "HELLO", "PING", "ECHO", "QUIT", "INFO", "COMMAND", "CLIENT",
                           "CONFIG", "ROLE"}) {
    EXPECT_NE(table.find(name), nullptr) << name;
  }
  EXPECT_EQ(table.find("lock.acquire"), table.find("LOCK.ACQUIRE"));
  EXPECT_EQ(table.find("nope"), nullptr);
}

TEST(CommandTable, ArityAndMessages) {
  const auto& table = CommandTable::instance();
  const CommandSpec* get = table.find("GET");
  EXPECT_TRUE(CommandTable::arity_ok(*get, 2));
  EXPECT_FALSE(CommandTable::arity_ok(*get, 3));
  const CommandSpec* del = table.find("DEL");
  EXPECT_TRUE(CommandTable::arity_ok(*del, 5));
  EXPECT_FALSE(CommandTable::arity_ok(*del, 1));
  EXPECT_EQ(CommandTable::arity_error(*get), "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(CommandTable::unknown_error({"FOO", "a\r\nb"}),
            "ERR unknown command 'FOO', with args beginning with: 'a??b'");
  const CommandSpec* acquire = table.find("LOCK.ACQUIRE");
  EXPECT_TRUE(CommandTable::is_blocking_request(*acquire, {"LOCK.ACQUIRE", "l", "1", "wait", "0"}));
  EXPECT_FALSE(CommandTable::is_blocking_request(*acquire, {"LOCK.ACQUIRE", "WAIT", "1"}));
}

TEST(CommandTable, CommandCountMatchesTable) {
  std::string out;
  resp::Writer w(out, resp::Protocol::kResp2);
  write_command_reply(CommandTable::instance(), {"COMMAND", "COUNT"}, w);
  EXPECT_EQ(out, ":" + std::to_string(CommandTable::instance().all().size()) + "\r\n");
}

TEST(Args, ParsingAndErrors) {
  EXPECT_EQ(*parse_uint("42", "x", 1, 100), 42u);
  EXPECT_EQ(parse_uint("0", "ttl_ms", 1, 100).status().message(), "ttl_ms is not an integer or out of range (1 to 100)");
  EXPECT_FALSE(parse_uint("-1", "x", 0, 100));
  EXPECT_FALSE(parse_uint("1x", "x", 0, 100));
  EXPECT_FALSE(parse_int("", "x", 0, 100));
  EXPECT_EQ(error_text(Status(ErrorCode::kStaleToken, "token 3 is stale")), "STALE token 3 is stale");
  EXPECT_EQ(error_text(Status(ErrorCode::kSessionExpired, "gone")), "EXPIRED gone");
  EXPECT_TRUE(iequals("lock.Acquire", "LOCK.ACQUIRE"));
}

TEST(Config, ParseListen) {
  std::string host;
  std::uint16_t port = 0;
  ASSERT_TRUE(parse_listen("127.0.0.1:7379", host, port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 7379);
  ASSERT_TRUE(parse_listen("[::1]:80", host, port));
  EXPECT_EQ(host, "::1");
  EXPECT_FALSE(parse_listen("nohost", host, port));
  EXPECT_FALSE(parse_listen("h:99999", host, port));
}

TEST(MaxHold, ParsesMatchesTheLongestPrefixAndRefusesBadValues) {
  EXPECT_EQ(*parse_max_hold("jobs/=10m"), (MaxHold{"jobs/", 600'000}));
  EXPECT_EQ(*parse_max_hold("=90s"), (MaxHold{"", 90'000}));
  EXPECT_EQ(*parse_max_hold("a=b=250ms"), (MaxHold{"a=b", 250}));  // the last '=' splits
  EXPECT_EQ(*parse_max_hold("x=2147483647ms"), (MaxHold{"x", 2'147'483'647}));
  for (const char* bad : {"jobs/", "jobs/=", "jobs/=10", "jobs/=0s", "jobs/=1d", "jobs/=-1s", "jobs/=2147483648ms",
                          "jobs/=597h", "jobs/=99999999999999999999h"}) {
    auto r = parse_max_hold(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("--max-hold"), std::string::npos) << r.status().message();
  }
  const std::vector<MaxHold> rules = {{"jobs/", 1000}, {"jobs/nightly/", 5000}, {"", 300}};
  EXPECT_EQ(max_hold_for(rules, "jobs/nightly/x")->ms, 5000u);
  EXPECT_EQ(max_hold_for(rules, "jobs/x")->ms, 1000u);
  EXPECT_EQ(max_hold_for(rules, "other")->ms, 300u);
  EXPECT_EQ(max_hold_for({{"jobs/", 1000}}, "other"), nullptr);
  EXPECT_TRUE(validate_max_holds(rules).is_ok());
  EXPECT_FALSE(validate_max_holds({{"a", 1}, {"a", 2}}).is_ok());
  EXPECT_FALSE(validate_max_holds({{"a", 0}}).is_ok());
  EXPECT_EQ(over_max_hold("LEASE", 5000, rules[0]).message(),
            "LEASE 5000 ms is over the max hold 1000 ms of prefix 'jobs/' (--max-hold)");
}

}  // namespace
}  // namespace leasehold::server
