// SESSION.OPEN ... ONCLOSE grace_ms and REQID r on a real server: a closed
// connection frees an ONCLOSE session's locks well before its TTL (and only
// the TTL frees a session without ONCLOSE); a keepalive or re-bind during
// the grace keeps it, and the close of a connection it was re-bound away
// from ends nothing; a close of the server's own (a protocol error, the
// idle timeout) does not end it, QUIT does; a REQID retry on another
// connection gets the same session; bad input gets a clear error.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "testkit/eventually.h"
#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

class OnCloseReqid : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start(dir_.file("data"), flags())); }
  virtual std::vector<std::string> flags() const { return {}; }

 public:
  RespClient client() {
    RespClient c = server_.client();
    EXPECT_TRUE(c.connected());
    return c;
  }
  std::string open(RespClient& c, std::vector<std::string> extra = {}, std::int64_t ttl = 30000) {
    std::vector<std::string> args{"SESSION.OPEN", std::to_string(ttl)};
    args.insert(args.end(), extra.begin(), extra.end());
    Value v = c.call(args);
    EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
    return std::to_string(v.integer);
  }
  bool live(RespClient& c, const std::string& session) {
    return c.call({"SESSION.KEEPALIVE", session}).type == Type::kInteger;
  }
  // remaining_ms of `session` in SESSION.LIST through `c` (a RESP3
  // connection); -1 if it is not listed.
  std::int64_t remaining_ms(RespClient& c, const std::string& session) {
    const Value list = c.call({"SESSION.LIST"});
    for (const Value& entry : list.elements) {
      const Value* id = entry.find("id");
      const Value* remaining = entry.find("remaining_ms");
      if (id && remaining && std::to_string(id->integer) == session) return remaining->integer;
    }
    return -1;
  }

 protected:
  TempDir dir_{"server-onclose"};
  ServerProcess server_;
};

// The server closes the holder's bound connection itself: the client is
// alive, so its session is only unbound and lives until its TTL, like a
// silent one. The holder (ONCLOSE 0, TTL 5 s) holds L, a waiter queues
// for it, a RESP3 watcher watches the holder's session; `close_it` makes
// the server close the holder's connection.
void expect_server_close_keeps_the_session(OnCloseReqid& t, const std::function<void(RespClient&)>& close_it) {
  RespClient holder = t.client(), waiter = t.client(), watcher = t.client();
  ASSERT_EQ(watcher.call({"HELLO", "3"}).type, Type::kMap);
  const std::string s = t.open(holder, {"ONCLOSE", "0"}, 5000);
  const std::string w = t.open(waiter);
  ASSERT_EQ(holder.call({"LOCK.ACQUIRE", "L", s}).type, Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "L", w, "WAIT", "0"}));
  ASSERT_EQ(watcher.call({"SESSION.WATCH", s}), Value::simple("OK"));
  close_it(holder);
  ASSERT_TRUE(holder.wait_closed(scaled(5s))) << "the server did not close the holder's connection";
  // What the server counts as left of the session's TTL, read after the
  // close: the lock is not granted before that has passed.
  const auto asked_at = std::chrono::steady_clock::now();
  const std::int64_t remaining = t.remaining_ms(watcher, s);
  ASSERT_GT(remaining, 0) << "the session ended with the server's close";
  auto token = waiter.read(scaled(15s));
  const auto granted_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(token) << token.status().to_string();
  EXPECT_EQ(token->type, Type::kInteger) << token->debug_string();
  EXPECT_GE(granted_at - asked_at, std::chrono::milliseconds(remaining)) << "granted before the holder's TTL ran out";
  auto push = watcher.read(scaled(5s));  // the holder's loss: an expiry, not a close
  ASSERT_TRUE(push) << push.status().to_string();
  EXPECT_NE(push->debug_string().find("expired"), std::string::npos) << push->debug_string();
}

TEST_F(OnCloseReqid, ClosedConnectionFreesTheLockWellBeforeTheTtl) {
  RespClient holder = client(), waiter = client(), watcher = client();
  const std::string s = open(holder, {"ONCLOSE", "0"});  // TTL 30 s
  const std::string w = open(waiter);
  ASSERT_EQ(holder.call({"LOCK.ACQUIRE", "L", s}).type, Type::kInteger);
  ASSERT_EQ(watcher.call({"HELLO", "3"}).type, Type::kMap);
  ASSERT_EQ(watcher.call({"SESSION.WATCH", s}), Value::simple("OK"));
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "L", w, "WAIT", "0"}));
  holder.close();  // what a crashed holder's kernel does: FIN
  // The waiter gets the lock long before the 30 s TTL.
  auto token = waiter.read(10s);
  ASSERT_TRUE(token) << token.status().to_string();
  EXPECT_EQ(token->type, Type::kInteger) << token->debug_string();
  // The watcher hears the loss with reason "closed".
  auto push = watcher.read(5s);
  ASSERT_TRUE(push) << push.status().to_string();
  EXPECT_NE(push->debug_string().find("closed"), std::string::npos) << push->debug_string();
  EXPECT_FALSE(live(watcher, s));
}

TEST_F(OnCloseReqid, WithoutOnCloseOnlyTheTtlFreesTheLock) {
  RespClient holder = client(), waiter = client();
  const std::string s = open(holder, {}, 3000);
  const std::string w = open(waiter);
  ASSERT_EQ(holder.call({"LOCK.ACQUIRE", "L", s}).type, Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "L", w, "WAIT", "0"}));
  holder.close();
  // deliberate: for a second the lock stays with the closed holder's session.
  EXPECT_EQ(waiter.read(1000ms).status().code(), ErrorCode::kTimedOut);
  auto token = waiter.read(10s);  // then its 3 s TTL ends it
  ASSERT_TRUE(token) << token.status().to_string();
  EXPECT_EQ(token->type, Type::kInteger);
}

TEST_F(OnCloseReqid, KeepaliveDuringTheGraceKeepsTheSessionAndBindMovesIt) {
  RespClient first = client(), other = client(), waiter = client(), admin = client();
  const std::string s = open(first, {"ONCLOSE", "1500"});
  const std::string w = open(waiter);
  ASSERT_EQ(first.call({"LOCK.ACQUIRE", "L", s}).type, Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "L", w, "WAIT", "0"}));
  first.close();
  // A re-bind on another connection within the 1.5 s grace cancels the end.
  ASSERT_EQ(other.call({"SESSION.KEEPALIVE", s, "BIND"}).type, Type::kInteger);
  // deliberate: past the grace, the lock is still held.
  EXPECT_EQ(waiter.read(2500ms).status().code(), ErrorCode::kTimedOut);
  EXPECT_TRUE(live(admin, s));  // (not on `waiter`: its blocked acquire holds up what follows)
  // The binding moved: closing the new connection ends the session.
  other.close();
  auto token = waiter.read(10s);
  ASSERT_TRUE(token) << token.status().to_string();
  EXPECT_EQ(token->type, Type::kInteger);
}

// What a client does after a keepalive timed out: it binds the session to
// a new connection while the old one is still open, then closes the old
// one. That close is of a connection no longer bound: it ends nothing.
TEST_F(OnCloseReqid, ClosingAConnectionNoLongerBoundEndsNothing) {
  RespClient first = client(), other = client(), waiter = client(), admin = client();
  const std::string s = open(first, {"ONCLOSE", "1000"});
  const std::string w = open(waiter);
  ASSERT_EQ(first.call({"LOCK.ACQUIRE", "L", s}).type, Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "L", w, "WAIT", "0"}));
  ASSERT_EQ(other.call({"SESSION.KEEPALIVE", s, "BIND"}).type, Type::kInteger);
  first.close();
  // deliberate: past the 1 s grace after the old connection closed, the lock is still held.
  EXPECT_EQ(waiter.read(2000ms).status().code(), ErrorCode::kTimedOut);
  EXPECT_TRUE(live(admin, s));
  // The session is bound to `other`: its close ends it.
  other.close();
  auto token = waiter.read(10s);
  ASSERT_TRUE(token) << token.status().to_string();
  EXPECT_EQ(token->type, Type::kInteger);
}

TEST_F(OnCloseReqid, PlainKeepaliveCancelsAPendingEnd) {
  RespClient first = client(), other = client();
  const std::string s = open(first, {"ONCLOSE", "1500"});
  first.close();
  // Cancels the end, once the server saw the close (a keepalive before that
  // has nothing to cancel): keep it alive until past the grace.
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(live(other, s));
    std::this_thread::sleep_for(200ms);  // deliberate: keepalives at a steady pace through the grace
  }
  EXPECT_TRUE(live(other, s));
}

TEST_F(OnCloseReqid, BindNeedsOnCloseAndBadOptionsAreRefused) {
  RespClient c = client();
  const std::string plain = open(c);
  Value v = c.call({"SESSION.KEEPALIVE", plain, "BIND"});
  EXPECT_EQ(v.type, Type::kError);
  EXPECT_NE(v.str.find("ONCLOSE"), std::string::npos) << v.debug_string();
  EXPECT_EQ(c.call({"SESSION.KEEPALIVE", plain, "BOUND"}).type, Type::kError);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"SESSION.OPEN", "1000", "ONCLOSE", "2000"},                   // grace over the TTL
           {"SESSION.OPEN", "1000", "ONCLOSE", "-1"},
           {"SESSION.OPEN", "1000", "ONCLOSE"},
           {"SESSION.OPEN", "1000", "ONCLOSE", "1", "ONCLOSE", "2"},      // twice
           {"SESSION.OPEN", "1000", "REQID", std::string(65, 'r')},        // too long
           {"SESSION.OPEN", "1000", "REQID", "with space"},
           {"SESSION.OPEN", "1000", "REQID", ""},
           {"SESSION.OPEN", "1000", "NOPE", "1"}}) {
    Value e = c.call(bad);
    EXPECT_EQ(e.type, Type::kError) << bad[2] << " " << e.debug_string();
    EXPECT_FALSE(e.str.empty());
  }
  Value list = c.call({"SESSION.LIST"});
  EXPECT_EQ(list.elements.size(), 1U) << "a refused open opens nothing";
}

TEST_F(OnCloseReqid, RetryWithTheSameReqidGetsTheSameSession) {
  RespClient first = client(), retry = client();
  const std::string s = open(first, {"OWNER", "job", "REQID", "open-7f3a"});
  first.close();  // the reply may have been lost with it
  EXPECT_EQ(open(retry, {"REQID", "open-7f3a", "OWNER", "job"}), s);
  EXPECT_NE(open(retry, {"REQID", "open-other"}), s);
  EXPECT_EQ(retry.call({"SESSION.LIST"}).elements.size(), 2U);
  ASSERT_EQ(retry.call({"SESSION.CLOSE", s}), Value::simple("OK"));
  EXPECT_NE(open(retry, {"REQID", "open-7f3a"}), s) << "a reqid is free again once its session ended";
}

// A server that closes a connection whose partial request is older than
// 1 s (--idle-timeout-ms).
class OnCloseServerClose : public OnCloseReqid {
 protected:
  std::vector<std::string> flags() const override { return {"--idle-timeout-ms", "1000"}; }
};

TEST_F(OnCloseServerClose, AProtocolErrorCloseLeavesTheSessionToItsTtl) {
  expect_server_close_keeps_the_session(*this, [](RespClient& holder) {
    ASSERT_TRUE(holder.send_raw("*1\r\n$x\r\n"));  // not RESP: an error reply, then the server closes
  });
}

TEST_F(OnCloseServerClose, AnIdleTimeoutCloseLeavesTheSessionToItsTtl) {
  expect_server_close_keeps_the_session(*this, [](RespClient& holder) {
    ASSERT_TRUE(holder.send_raw("*2\r\n$4\r\nECHO\r\n"));  // a request that never completes
  });
}

TEST_F(OnCloseReqid, QuitIsTheClientsCloseAndEndsTheSession) {
  RespClient holder = client(), waiter = client();
  const std::string s = open(holder, {"ONCLOSE", "0"});  // TTL 30 s
  const std::string w = open(waiter);
  ASSERT_EQ(holder.call({"LOCK.ACQUIRE", "L", s}).type, Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "L", w, "WAIT", "0"}));
  EXPECT_EQ(holder.call({"QUIT"}), Value::simple("OK"));
  auto token = waiter.read(scaled(10s));  // long before the 30 s TTL
  ASSERT_TRUE(token) << token.status().to_string();
  EXPECT_EQ(token->type, Type::kInteger) << token->debug_string();
}

}  // namespace
}  // namespace leasehold::testing
