// Blocking acquires across connections: FIFO hand-off, pipelining behind a
// blocked request, expiry hand-off, disconnect cancels, pushes.
#include <gtest/gtest.h>

#include <thread>

#include "resp/writer.h"
#include "testkit/server_process.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

class Blocking : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start(dir_.file("data"))); }
  RespClient client() {
    RespClient c = server_.client();
    EXPECT_TRUE(c.connected());
    return c;
  }
  std::string open_session(RespClient& c, std::int64_t ttl = 10000) {
    Value v = c.call({"SESSION.OPEN", std::to_string(ttl)});
    EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
    return std::to_string(v.integer);
  }
  // Polls LOCK.INFO until it has `n` waiters (bounded).
  bool wait_for_waiters(RespClient& c, const std::string& lock, std::size_t n) {
    return eventually(
        [&] {
          Value info = c.call({"HELLO", "3"});
          info = c.call({"LOCK.INFO", lock});
          const Value* w = info.find("waiters");
          const std::size_t have = w == nullptr ? 0 : w->elements.size();
          return have == n;
        },
        10s);
  }

  TempDir dir_{"server-blocking"};
  ServerProcess server_;
};

TEST_F(Blocking, FifoHandOffAcrossConnections) {
  RespClient a = client(), b = client(), c = client(), admin = client();
  const auto sa = open_session(a), sb = open_session(b), sc = open_session(c);
  Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(ta.type, Type::kInteger);
  ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
  ASSERT_TRUE(wait_for_waiters(admin, "L", 1));
  ASSERT_TRUE(c.send({"LOCK.ACQUIRE", "L", sc, "WAIT", "0"}));
  ASSERT_TRUE(wait_for_waiters(admin, "L", 2));
  EXPECT_EQ(b.read(200ms).status().code(), ErrorCode::kTimedOut);
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)}), Value::simple("OK"));
  auto tb = b.read();
  ASSERT_TRUE(tb) << tb.status().to_string();
  ASSERT_EQ(tb->type, Type::kInteger);
  EXPECT_GT(tb->integer, ta.integer);
  EXPECT_EQ(c.read(200ms).status().code(), ErrorCode::kTimedOut) << "only the first waiter wakes";
  ASSERT_EQ(b.call({"LOCK.RELEASE", "L", sb, std::to_string(tb->integer)}), Value::simple("OK"));
  auto tc = c.read();
  ASSERT_TRUE(tc);
  EXPECT_GT(tc->integer, tb->integer);
}

TEST_F(Blocking, PipelinedCommandsWaitBehindABlockedOne) {
  RespClient a = client(), b = client(), admin = client();
  const auto sa = open_session(a), sb = open_session(b);
  Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  std::string pipeline;
  resp::append_command(pipeline, {"LOCK.ACQUIRE", "L", sb, "WAIT", "0"});
  resp::append_command(pipeline, {"PING"});
  resp::append_command(pipeline, {"LOCK.INFO", "L"});
  ASSERT_TRUE(b.send_raw(pipeline));
  EXPECT_EQ(b.read(300ms).status().code(), ErrorCode::kTimedOut) << "PING must not overtake the wait";
  // A keepalive for the blocked session works on another connection.
  EXPECT_EQ(admin.call({"SESSION.KEEPALIVE", sb}).integer, 10000);
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)}), Value::simple("OK"));
  auto token = b.read();
  ASSERT_TRUE(token);
  EXPECT_EQ(token->type, Type::kInteger);
  EXPECT_EQ(b.read()->str, "PONG");
  Value info = *b.read();
  EXPECT_NE(info.debug_string().find(std::to_string(token->integer)), std::string::npos)
      << "the read after the grant sees it";
}

// A lock client that loops (release, then ask again) sends both at once:
// the release hands the lock to the first waiter, the new acquire queues
// behind it (FIFO), and both share one group commit.
TEST_F(Blocking, PipelinedReleaseThenWaitingAcquireHandsOffAndQueuesInOneBatch) {
  RespClient a = client(), b = client(), admin = client();
  const auto sa = open_session(a), sb = open_session(b);
  Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(ta.type, Type::kInteger);
  ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
  ASSERT_TRUE(wait_for_waiters(admin, "L", 1));
  const auto batches = [&admin] {
    const std::string info = admin.call({"INFO", "log"}).str;
    const auto at = info.find("batches_committed:");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + 18));
  };
  const long long before = batches();
  std::string pipeline;
  resp::append_command(pipeline, {"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)});
  resp::append_command(pipeline, {"LOCK.ACQUIRE", "L", sa, "WAIT", "0"});
  ASSERT_TRUE(a.send_raw(pipeline));
  EXPECT_EQ(a.read()->str, "OK");
  auto tb = b.read();
  ASSERT_TRUE(tb) << tb.status().to_string();
  ASSERT_EQ(tb->type, Type::kInteger);
  EXPECT_GT(tb->integer, ta.integer);
  ASSERT_TRUE(wait_for_waiters(admin, "L", 1)) << "a's new acquire queues behind b";
  EXPECT_EQ(batches(), before + 1) << "the release and the acquire share one commit";
  EXPECT_EQ(a.read(200ms).status().code(), ErrorCode::kTimedOut);
  ASSERT_EQ(b.call({"LOCK.RELEASE", "L", sb, std::to_string(tb->integer)}), Value::simple("OK"));
  auto ta2 = a.read();
  ASSERT_TRUE(ta2);
  EXPECT_GT(ta2->integer, tb->integer);
}

TEST_F(Blocking, ExpiredHolderHandsOffWithHigherToken) {
  RespClient a = client(), b = client();
  // The 300 ms TTL runs from when the server opened the session, which is
  // after this moment; under load the acquire below may take a good part
  // of it, so the lower bound is measured from here.
  const auto start = std::chrono::steady_clock::now();
  const auto sa = open_session(a, 300);
  const auto sb = open_session(b);
  Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(ta.type, Type::kInteger);
  Value tb = b.call({"LOCK.ACQUIRE", "L", sb, "WAIT", "5000"}, 5s);
  ASSERT_EQ(tb.type, Type::kInteger) << tb.debug_string();
  EXPECT_GT(tb.integer, ta.integer);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms) << "granted before the holder's TTL ran out";
  EXPECT_EQ(a.call({"SESSION.KEEPALIVE", sa}).str.rfind("EXPIRED", 0), 0u);
}

TEST_F(Blocking, DisconnectWhileWaitingCancelsTheWait) {
  RespClient a = client(), admin = client();
  const auto sa = open_session(a);
  std::string sb;
  Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  {
    RespClient b = client();
    sb = open_session(b);
    ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
    ASSERT_TRUE(wait_for_waiters(admin, "L", 1));
  }  // b disconnects
  ASSERT_TRUE(wait_for_waiters(admin, "L", 0));
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)}), Value::simple("OK"));
  EXPECT_EQ(admin.call({"LOCK.INFO", "L"}).type, Type::kNull) << "nobody was granted";
  EXPECT_EQ(admin.call({"SESSION.KEEPALIVE", sb}).integer, 10000) << "the session itself lives on";
}

// With a long --enqueue-defer-us the waiting acquire is not yet queued when
// its client leaves; the release that frees the lock then queues and grants
// it in one commit. Nobody takes that grant: it is released again, instead of
// leaving the lock held by a session whose client never learns of it.
TEST(BlockingDeferred, DisconnectBeforeTheWaitIsQueuedLeavesNoGhostHolder) {
  TempDir dir{"server-blocking-deferred"};
  ServerProcess server;
  ASSERT_TRUE(server.start(dir.file("data"), {"--enqueue-defer-us", "1000000"}));
  RespClient a = server.client(), admin = server.client();
  const Value sa = a.call({"SESSION.OPEN", "60000"});
  ASSERT_EQ(sa.type, Type::kInteger);
  const Value ta = a.call({"LOCK.ACQUIRE", "L", std::to_string(sa.integer)});
  ASSERT_EQ(ta.type, Type::kInteger);
  std::string sb;
  {
    RespClient b = server.client();
    const Value v = b.call({"SESSION.OPEN", "60000"});
    ASSERT_EQ(v.type, Type::kInteger);
    sb = std::to_string(v.integer);
    ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
  }  // b disconnects
  ASSERT_TRUE(eventually(
      [&] {
        const Value info = admin.call({"INFO"});
        return info.type == Type::kBulkString && info.str.find("connected_clients:2\r\n") != std::string::npos;
      },
      10s))
      << "the server should see b leave";
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", std::to_string(sa.integer), std::to_string(ta.integer)}),
            Value::simple("OK"));
  EXPECT_TRUE(eventually([&] { return admin.call({"LOCK.INFO", "L"}).type == Type::kNull; }, 10s))
      << "the grant to the departed waiter must be released: " << admin.call({"LOCK.INFO", "L"}).debug_string();
  EXPECT_EQ(admin.call({"SESSION.KEEPALIVE", sb}).integer, 60000) << "the session itself lives on";
}

TEST_F(Blocking, WaitTimeoutCancelAndSessionEnd) {
  RespClient a = client(), b = client(), admin = client();
  const auto sa = open_session(a), sb = open_session(b);
  ASSERT_EQ(a.call({"LOCK.ACQUIRE", "L", sa}).type, Type::kInteger);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(b.call({"LOCK.ACQUIRE", "L", sb, "WAIT", "200"}).type, Type::kNull);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 180ms);
  // Operator cancel -> nil.
  ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
  ASSERT_TRUE(wait_for_waiters(admin, "L", 1));
  EXPECT_EQ(admin.call({"LOCK.CANCEL", "L", sb}), Value::simple("OK"));
  EXPECT_EQ(b.read()->type, Type::kNull);
  // The waiting session is killed -> -EXPIRED.
  ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
  ASSERT_TRUE(wait_for_waiters(admin, "L", 1));
  EXPECT_EQ(admin.call({"SESSION.KILL", sb}), Value::simple("OK"));
  auto r = b.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->str.rfind("EXPIRED", 0), 0u) << r->debug_string();
}

TEST_F(Blocking, RetryWithSameSeqReattaches) {
  RespClient a = client(), b1 = client(), b2 = client(), admin = client();
  const auto sa = open_session(a), sb = open_session(b1);
  Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_TRUE(b1.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0", "SEQ", "5"}));
  ASSERT_TRUE(wait_for_waiters(admin, "L", 1));
  ASSERT_TRUE(b2.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0", "SEQ", "5"}));
  EXPECT_EQ(b2.read(200ms).status().code(), ErrorCode::kTimedOut);
  EXPECT_TRUE(wait_for_waiters(admin, "L", 1)) << "the retry did not enqueue twice";
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)}), Value::simple("OK"));
  auto t1 = b1.read();
  auto t2 = b2.read();
  ASSERT_TRUE(t1 && t2);
  EXPECT_EQ(t1->type, Type::kInteger);
  EXPECT_EQ(*t1, *t2);
  // After the grant, the same retry returns the grant.
  EXPECT_EQ(b2.call({"LOCK.ACQUIRE", "L", sb, "WAIT", "0", "SEQ", "5"}), *t1);
}

TEST_F(Blocking, PushesForWatchedSessions) {
  RespClient a = client(), watcher = client();
  const auto sa = open_session(a);
  ASSERT_EQ(watcher.call({"HELLO", "3"}).type, Type::kMap);
  ASSERT_EQ(watcher.call({"SESSION.WATCH", sa}), Value::simple("OK"));
  Value t = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(a.call({"LOCK.REVOKE", "L"}), Value::simple("OK"));
  auto lost = watcher.read();
  ASSERT_TRUE(lost);
  ASSERT_EQ(lost->type, Type::kPush) << lost->debug_string();
  ASSERT_EQ(lost->elements.size(), 6u);
  EXPECT_EQ(lost->elements[0].str, "leasehold");
  EXPECT_EQ(lost->elements[1].str, "lost");
  EXPECT_EQ(std::to_string(lost->elements[2].integer), sa);
  EXPECT_EQ(lost->elements[3].str, "L");
  EXPECT_EQ(lost->elements[4].integer, t.integer);
  EXPECT_EQ(lost->elements[5].str, "revoked");
  ASSERT_EQ(a.call({"SESSION.KILL", sa}), Value::simple("OK"));
  auto ended = watcher.read();
  ASSERT_TRUE(ended);
  ASSERT_EQ(ended->type, Type::kPush);
  ASSERT_EQ(ended->elements.size(), 4u);
  EXPECT_EQ(ended->elements[1].str, "session-ended");
  EXPECT_EQ(ended->elements[3].str, "killed");
}

// A LOCK.RELEASE from a connection that neither watches nor acted for the
// session is a release by another: the watchers get `lost` with reason
// released-by-other. The holder's own releases (from the connection that
// acquired, or from a watching one) push nothing.
TEST_F(Blocking, ReleaseByAnotherConnectionPushesLost) {
  RespClient a = client(), watcher = client(), other = client();
  const auto sa = open_session(a);
  ASSERT_EQ(watcher.call({"HELLO", "3"}).type, Type::kMap);
  ASSERT_EQ(watcher.call({"SESSION.WATCH", sa}), Value::simple("OK"));
  Value t = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(t.type, Type::kInteger);
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)}), Value::simple("OK"));
  EXPECT_EQ(watcher.call({"PING"}), Value::simple("PONG")) << "own release pushed something";
  t = a.call({"LOCK.ACQUIRE", "L", sa});
  EXPECT_EQ(watcher.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)}), Value::simple("OK"));

  t = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(t.type, Type::kInteger);
  ASSERT_EQ(other.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)}), Value::simple("OK"));
  auto lost = watcher.read();
  ASSERT_TRUE(lost);
  ASSERT_EQ(lost->type, Type::kPush) << lost->debug_string();
  ASSERT_EQ(lost->elements.size(), 6u);
  EXPECT_EQ(lost->elements[1].str, "lost");
  EXPECT_EQ(std::to_string(lost->elements[2].integer), sa);
  EXPECT_EQ(lost->elements[3].str, "L");
  EXPECT_EQ(lost->elements[4].integer, t.integer);
  EXPECT_EQ(lost->elements[5].str, "released-by-other");
  // A refused release by another pushes nothing.
  EXPECT_EQ(other.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)}).type, Type::kError);
  EXPECT_EQ(watcher.call({"PING"}), Value::simple("PONG"));
}

// Speaking for a session survives the speaker's disconnect only as far as
// the session: a new connection that keeps the session alive speaks for it
// (its release pushes nothing), the closed one is forgotten, and a third
// connection's release is still by another.
TEST_F(Blocking, ANewConnectionSpeaksForTheSessionAfterTheFirstCloses) {
  RespClient watcher = client(), other = client();
  std::string sa;
  Value t;
  {
    RespClient a = client();
    sa = open_session(a);
    t = a.call({"LOCK.ACQUIRE", "L", sa});
    ASSERT_EQ(t.type, Type::kInteger);
  }  // a disconnects; the session and its lock stay
  ASSERT_EQ(watcher.call({"HELLO", "3"}).type, Type::kMap);
  ASSERT_EQ(watcher.call({"SESSION.WATCH", sa}), Value::simple("OK"));
  RespClient b = client();
  ASSERT_EQ(b.call({"SESSION.KEEPALIVE", sa}).type, Type::kInteger);
  ASSERT_EQ(b.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)}), Value::simple("OK"));
  EXPECT_EQ(watcher.call({"PING"}), Value::simple("PONG")) << "the new speaker's release pushed something";
  t = b.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(t.type, Type::kInteger);
  ASSERT_EQ(other.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)}), Value::simple("OK"));
  auto lost = watcher.read();
  ASSERT_TRUE(lost);
  ASSERT_EQ(lost->type, Type::kPush) << lost->debug_string();
  EXPECT_EQ(lost->elements[5].str, "released-by-other");
}

}  // namespace
}  // namespace leasehold::testing
