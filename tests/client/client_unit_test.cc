// Pure parts of the client: endpoints, durations, error mapping, reply
// decoding (RESP3 maps and RESP2 flat arrays), INFO parsing, backoff bounds.
#include <gtest/gtest.h>

#include "client/cli_support.h"
#include "client/client_core.h"
#include "client/connection.h"
#include "client/decode.h"
#include "leasehold/client.h"

namespace leasehold::client {
namespace {

using resp::Value;

TEST(Endpoint, ParsesHostPortAndIpv6) {
  auto ep = parse_endpoint("127.0.0.1:7379");
  ASSERT_TRUE(ep.is_ok());
  EXPECT_EQ(ep->host, "127.0.0.1");
  EXPECT_EQ(ep->port, 7379);
  auto v6 = parse_endpoint("[::1]:80");
  ASSERT_TRUE(v6.is_ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->to_string(), "[::1]:80");
  EXPECT_FALSE(ep->tls);
}

TEST(Endpoint, TlsScheme) {
  auto ep = parse_endpoint("tls://127.0.0.1:7380");
  ASSERT_TRUE(ep.is_ok());
  EXPECT_TRUE(ep->tls);
  EXPECT_EQ(ep->host, "127.0.0.1");
  EXPECT_EQ(ep->to_string(), "tls://127.0.0.1:7380");
  auto v6 = parse_endpoint("tls://[::1]:80");
  ASSERT_TRUE(v6.is_ok());
  EXPECT_EQ(v6->to_string(), "tls://[::1]:80");
  EXPECT_NE(parse_endpoint("tls://").status().message().find("bad endpoint 'tls://'"), std::string::npos);
}

TEST(Endpoint, RejectsBadInputWithAReason) {
  for (const char* bad : {"", "host", "host:", ":80", "host:0", "host:65536", "host:8x",
                          "::1:80", "[::1]80"}) {
    auto ep = parse_endpoint(bad);
    ASSERT_FALSE(ep.is_ok()) << bad;
    EXPECT_EQ(ep.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(ep.status().message().find("bad endpoint"), std::string::npos);
  }
}

TEST(Endpoint, ParsesLists) {
  auto eps = parse_endpoints("a:1, b:2,c:3");
  ASSERT_TRUE(eps.is_ok());
  ASSERT_EQ(eps->size(), 3u);
  EXPECT_EQ((*eps)[1].to_string(), "b:2");
  EXPECT_FALSE(parse_endpoints("").is_ok());
  EXPECT_FALSE(parse_endpoints(" , ").is_ok());
  EXPECT_FALSE(parse_endpoints("a:1,b").is_ok());
}

TEST(Duration, AcceptsUnitsAndWholeMillisecondFractionsRejectsTheRest) {
  EXPECT_EQ(*cli::parse_duration("500ms"), Millis(500));
  EXPECT_EQ(*cli::parse_duration("10s"), Millis(10'000));
  EXPECT_EQ(*cli::parse_duration("2m"), Millis(120'000));
  EXPECT_EQ(*cli::parse_duration("1h"), Millis(3'600'000));
  EXPECT_EQ(*cli::parse_duration("0s"), Millis(0));
  EXPECT_EQ(*cli::parse_duration("0"), Millis(0));  // --wait 0: try once
  EXPECT_EQ(*cli::parse_duration("1.5s"), Millis(1500));
  EXPECT_EQ(*cli::parse_duration("0.25s"), Millis(250));
  EXPECT_EQ(*cli::parse_duration("1.5m"), Millis(90'000));
  EXPECT_EQ(*cli::parse_duration("2.0ms"), Millis(2));
  for (const char* bad : {"", "10", "s", "-1s", "10 s", "10sec", "99999999999s", "0.5ms", "1.s", ".5s",
                          "1.0001s", "1e3ms", "00"}) {
    auto d = cli::parse_duration(bad);
    ASSERT_FALSE(d.is_ok()) << bad;
    EXPECT_EQ(d.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(d.status().message().find("examples: 500ms, 1.5s"), std::string::npos) << d.status().message();
  }
  EXPECT_NE(cli::parse_duration("-5s").status().message().find("negative"), std::string::npos);
  // The longest duration still fits a steady_clock deadline in nanoseconds.
  EXPECT_EQ(*cli::parse_duration("2562047h"), Millis(9'223'369'200'000));
  EXPECT_FALSE(cli::parse_duration("2562048h").is_ok());
  EXPECT_NE(cli::parse_duration("9999999999h").status().message().find("over the longest duration"),
            std::string::npos);
  EXPECT_NE(cli::parse_duration("0.5ms").status().message().find("whole number of milliseconds"),
            std::string::npos);
}

TEST(ErrorReply, MapsEveryProtocolPrefix) {
  struct Case {
    const char* text;
    ErrorCode code;
    const char* message;
  };
  const Case cases[] = {
      {"ERR wrong number of arguments", ErrorCode::kInvalidArgument, "wrong number of arguments"},
      {"LIMIT too many", ErrorCode::kLimitExceeded, "too many"},
      {"NOTFOUND no such lock", ErrorCode::kNotFound, "no such lock"},
      {"NOTHOLDER not the holder", ErrorCode::kNotHolder, "not the holder"},
      {"STALE token 3 < 5", ErrorCode::kStaleToken, "token 3 < 5"},
      {"EXPIRED session 7", ErrorCode::kSessionExpired, "session 7"},
      {"CONFLICT mode", ErrorCode::kConflict, "mode"},
      {"UNAVAILABLE etcd unavailable", ErrorCode::kUnavailable, "etcd unavailable"},
      {"REDIRECT 127.0.0.1:7000", ErrorCode::kRedirect, "127.0.0.1:7000"},
      {"TIMEOUT deadline", ErrorCode::kTimedOut, "deadline"},
      {"INTERNAL bug", ErrorCode::kInternal, "bug"},
      {"EXPIRED", ErrorCode::kSessionExpired, "EXPIRED"},
  };
  for (const auto& c : cases) {
    Status st = detail::status_from_error_reply(c.text);
    EXPECT_EQ(st.code(), c.code) << c.text;
    EXPECT_EQ(st.message(), c.message) << c.text;
  }
  EXPECT_EQ(detail::status_from_error_reply("WRONGTYPE x").code(), ErrorCode::kInternal);
}

Value kv(std::vector<Value> flat, bool resp3) {
  return resp3 ? Value::map(std::move(flat)) : Value::array(std::move(flat));
}

Value lock_reply(bool resp3) {
  Value holder = kv({Value::bulk("session"), Value::integer_value(4), Value::bulk("owner"),
                     Value::bulk("w1"), Value::bulk("token"), Value::integer_value(17),
                     Value::bulk("held_ms"), Value::integer_value(1500)},
                    resp3);
  Value waiter = kv({Value::bulk("session"), Value::integer_value(9), Value::bulk("owner"),
                     Value::bulk("w2"), Value::bulk("mode"), Value::bulk("shared"),
                     Value::bulk("waited_ms"), Value::integer_value(20)},
                    resp3);
  return kv({Value::bulk("name"), Value::bulk("jobs/a"), Value::bulk("mode"),
             Value::bulk("exclusive"), Value::bulk("limit"), Value::integer_value(1),
             Value::bulk("holders"), Value::array({holder}), Value::bulk("waiters"),
             Value::array({waiter}), Value::bulk("last_token"), Value::integer_value(17),
             Value::bulk("delay_ms"), Value::integer_value(0)},
            resp3);
}

TEST(Decode, LockMapInBothProtocols) {
  for (bool resp3 : {true, false}) {
    auto lock = detail::decode_lock(lock_reply(resp3));
    ASSERT_TRUE(lock.is_ok()) << lock.status().to_string();
    EXPECT_EQ(lock->name, "jobs/a");
    EXPECT_EQ(lock->mode, LockMode::kExclusive);
    ASSERT_EQ(lock->holders.size(), 1u);
    EXPECT_EQ(lock->holders[0].session, 4u);
    EXPECT_EQ(lock->holders[0].token, 17u);
    EXPECT_EQ(lock->holders[0].held, Millis(1500));
    ASSERT_EQ(lock->waiters.size(), 1u);
    EXPECT_EQ(lock->waiters[0].mode, LockMode::kShared);
    EXPECT_EQ(lock->last_token, 17u);
  }
}

TEST(Decode, MalformedRepliesAreInternalErrors) {
  EXPECT_EQ(detail::decode_lock(Value::integer_value(3)).status().code(), ErrorCode::kInternal);
  Value no_mode = Value::map({Value::bulk("name"), Value::bulk("x")});
  EXPECT_EQ(detail::decode_lock(no_mode).status().code(), ErrorCode::kInternal);
  Value bad_mode = lock_reply(true);
  bad_mode.elements[3] = Value::bulk("weird");
  EXPECT_EQ(detail::decode_lock(bad_mode).status().code(), ErrorCode::kInternal);
  EXPECT_FALSE(detail::decode_fenced(Value::array({Value::bulk("v")})).is_ok());
}

TEST(Decode, FencedValueAndNil) {
  auto none = detail::decode_fenced(Value::null());
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
  auto some = detail::decode_fenced(Value::array({Value::bulk("addr"), Value::integer_value(5)}));
  ASSERT_TRUE(some.is_ok());
  EXPECT_EQ((*some)->value, "addr");
  EXPECT_EQ((*some)->token, 5u);
}

TEST(Info, ParsesSectionsAndFields) {
  ServerInfo info = parse_info("# Server\r\nrole:primary\r\nlisten:127.0.0.1:1\r\n\r\n# State\r\nlocks:3\r\n");
  EXPECT_EQ(info.get("role"), "primary");
  EXPECT_EQ(info.get("listen"), "127.0.0.1:1");
  EXPECT_EQ(info.get("locks"), "3");
  EXPECT_FALSE(info.get("nope").has_value());
  EXPECT_EQ(info.fields.front(), std::make_pair(std::string("#"), std::string("Server")));
}

TEST(Backoff, GrowsWithJitterAndStaysUnderTheCap) {
  detail::Backoff b(Millis(10), Millis(200));
  Millis prev_cap(10);
  for (int i = 0; i < 20; ++i) {
    Millis p = b.next();
    EXPECT_GE(p, std::min(prev_cap, Millis(200)) / 2);
    EXPECT_LE(p, Millis(200));
    prev_cap = std::min(prev_cap * 2, Millis(200));
  }
  b.reset();
  EXPECT_LE(b.next(), Millis(10));
}

TEST(ClientOptions, CreateValidates) {
  EXPECT_EQ(Client::create({}).status().code(), ErrorCode::kInvalidArgument);
  ClientOptions o;
  o.endpoints = {{"127.0.0.1", 1}};
  o.call_timeout = Millis(0);
  EXPECT_EQ(Client::create(o).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace leasehold::client
