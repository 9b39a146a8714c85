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
                           "LOCK.REVOKE", "LOCK.CANCEL", "FENCE.PUT", "FENCE.GET", "SET", "GET", "DEL", "DELIFEQ",
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

}  // namespace
}  // namespace leasehold::server
