// A Session with a close grace (SessionOptions::close_grace: SESSION.OPEN ...
// ONCLOSE, bound to its keepalive connection) through a fault proxy
// (torture/faults/fault_proxy.h) in front of a real `leasehold server`:
// - a blackhole shorter than the TTL closes nothing: the lock stays held and
//   the session lives on after the heal;
// - a reset of the bound connection (which the server may count as the
//   client's close) lowers the safe deadline to the last answered send +
//   grace - drift: with grace 0 the session is lost at once; with a grace
//   of seconds the client re-binds on a new connection, the server's end
//   is cancelled and the deadline rises again;
// - an open whose reply is lost is retried with the same REQID on a new
//   connection: one session, the one the client got.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "leasehold/client.h"
#include "leasehold/lock_guard.h"
#include "leasehold/session.h"
#include "testkit/eventually.h"
#include "testkit/server_process.h"
#include "torture/faults/fault_proxy.h"

namespace leasehold::client {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::RespClient;
using testing::scaled;
using testing::ServerProcess;
using testing::TempDir;
using torture::BlockMode;
using torture::Direction;
using torture::FaultProxy;

class OnCloseSession : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.file("data")));
    auto p = FaultProxy::start(server_.port());
    ASSERT_TRUE(p) << p.status().to_string();
    proxy_ = std::move(p).value();
    ClientOptions o;
    o.endpoints = {*parse_endpoint("127.0.0.1:" + std::to_string(proxy_->port()))};
    o.call_timeout = 5s;
    o.connect_timeout = 1500ms;
    auto c = Client::create(o);
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    client_ = *c;
    direct_ = server_.client();
    ASSERT_TRUE(direct_.connected());
    ASSERT_EQ(direct_.call({"HELLO", "3"}).type, resp::Type::kMap);
  }
  std::unique_ptr<Session> open(Millis ttl, Millis grace) {
    SessionOptions so;
    so.ttl = ttl;
    so.close_grace = grace;
    auto s = Session::open(client_, so);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    return s ? std::move(*s) : nullptr;
  }
  // The session ids the server lists (on a direct connection).
  std::vector<std::int64_t> sessions() {
    std::vector<std::int64_t> out;
    for (const resp::Value& entry : direct_.call({"SESSION.LIST"}).elements) {
      if (const resp::Value* id = entry.find("id")) out.push_back(id->integer);
    }
    return out;
  }
  // The session holding `lock` as the server sees it (direct); 0 if free.
  std::int64_t holder(const std::string& lock) {
    const resp::Value info = direct_.call({"LOCK.INFO", lock});
    const resp::Value* holders = info.find("holders");
    if (holders == nullptr || holders->elements.empty()) return 0;
    const resp::Value* session = holders->elements[0].find("session");
    return session ? session->integer : 0;
  }

  TempDir dir_{"client-onclose"};
  ServerProcess server_;
  std::unique_ptr<FaultProxy> proxy_;
  std::shared_ptr<Client> client_;
  RespClient direct_;
};

// Silence is not a close: a keepalive stuck in the blackhole is answered
// after the heal (the call timeout, 5 s, outlasts it) and no connection
// closed, so neither side ends the session.
TEST_F(OnCloseSession, ABlackholeShorterThanTheTtlKeepsTheLock) {
  auto s = open(8s, 1s);
  ASSERT_TRUE(s);
  auto g = LockGuard::try_acquire(*s, "bh");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  RespClient waiter = server_.client();
  const resp::Value w = waiter.call({"SESSION.OPEN", "30000"});
  ASSERT_EQ(w.type, resp::Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "bh", std::to_string(w.integer), "WAIT", "0"}));
  proxy_->partition(BlockMode::kHold);
  // deliberate: a 3 s blackhole both ways, under the 8 s TTL and past the 1 s grace.
  EXPECT_EQ(waiter.read(3s).status().code(), ErrorCode::kTimedOut) << "the lock was granted during the blackhole";
  proxy_->heal();
  // A keepalive answered after the heal: the session lives on.
  const auto at_heal = s->safe_deadline();
  EXPECT_TRUE(eventually([&] { return s->lost() || s->safe_deadline() > at_heal; }, 10s));
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  EXPECT_TRUE(g->valid()) << g->status().to_string();
  EXPECT_EQ(holder("bh"), static_cast<std::int64_t>(s->id()));
  EXPECT_EQ(waiter.read(10ms).status().code(), ErrorCode::kTimedOut) << "the waiter got the lock";
}

// Grace 0: a reset bound connection may have ended the session on the
// server at once (it did here: the proxy's RST reached it too), so the
// client reports it lost at once, with a safe deadline no later than the
// reset.
TEST_F(OnCloseSession, AResetBoundConnectionWithGraceZeroLosesTheSessionAtOnce) {
  auto s = open(10s, 0ms);
  ASSERT_TRUE(s);
  auto g = LockGuard::try_acquire(*s, "g0");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const auto reset_at = Clock::now();
  proxy_->reset_connections();
  ASSERT_TRUE(eventually([&] { return s->lost(); }, 5s)) << "still not lost; deadline in "
      << std::chrono::duration_cast<Millis>(s->safe_deadline() - Clock::now()).count() << " ms";
  EXPECT_LE(s->safe_deadline(), reset_at);
  EXPECT_TRUE(g->lost());
  EXPECT_TRUE(eventually([&] { return holder("g0") == 0; }, 5s)) << "the server kept the lock";
}

// A grace of seconds: the reset lowers the safe deadline to at most the
// reset + grace; the client re-binds on a new connection (once the proxy
// lets it through) within the grace, which cancels the server's end and
// raises the deadline again.
TEST_F(OnCloseSession, AResetBoundConnectionWithAGraceIsReboundAndKept) {
  const Millis grace = 4s;
  auto s = open(12s, grace);
  ASSERT_TRUE(s);
  auto g = LockGuard::try_acquire(*s, "gr");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const auto reset_at = Clock::now();
  // Resets every connection, and holds new ones until the heal.
  proxy_->partition(BlockMode::kHold, true);
  ASSERT_TRUE(eventually([&] { return s->lost() || s->safe_deadline() <= reset_at + grace; }, 5s))
      << "the deadline was not lowered";
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  proxy_->heal();
  ASSERT_TRUE(eventually([&] { return s->lost() || s->safe_deadline() > reset_at + grace; }, 10s))
      << "no re-bind raised the deadline";
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  EXPECT_TRUE(g->valid()) << g->status().to_string();
  // deliberate: past the server's grace (counted from the reset at the
  // latest), the re-bind kept the session and its lock.
  std::this_thread::sleep_until(reset_at + grace + 500ms);
  EXPECT_EQ(holder("gr"), static_cast<std::int64_t>(s->id()));
  EXPECT_FALSE(s->lost()) << s->status().to_string();
}

// Session::open with a close grace: the reply of SESSION.OPEN ... REQID is
// delayed, and its connection reset before it arrives; the library opens
// again with the same REQID on a new connection and gets the session the
// first open made (and binds it there, so the first connection's close
// ends nothing).
TEST_F(OnCloseSession, AnOpenWhoseReplyWasLostIsRetriedIntoTheSameSession) {
  // Every reply 400 ms late (the HELLO's too, within the 1.5 s connect
  // timeout): the open is applied long before its reply would arrive.
  proxy_->set_delay(Direction::kServerToClient, 400ms);
  auto opening = std::async(std::launch::async, [this] {
    SessionOptions so;
    so.ttl = 10s;
    so.close_grace = 2s;
    return Session::open(client_, so);
  });
  ASSERT_TRUE(eventually([&] { return sessions().size() == 1; }, 5s)) << "the first open never arrived";
  const std::int64_t first = sessions().at(0);
  proxy_->reset_connections();  // the reply is lost with its connection
  proxy_->heal();
  ASSERT_EQ(opening.wait_for(scaled(10s)), std::future_status::ready);
  auto s = opening.get();
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(static_cast<std::int64_t>((*s)->id()), first);
  EXPECT_EQ(sessions(), std::vector<std::int64_t>{first});
  // deliberate: past the 2 s grace of the reset first connection, the
  // session lives (the retry bound it to the new one).
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(sessions(), std::vector<std::int64_t>{first});
  EXPECT_FALSE((*s)->lost()) << (*s)->status().to_string();
}

// The same on the wire: SESSION.OPEN ... REQID r, the reply withheld and the
// client gone; the same r on a new connection answers the same session.
TEST_F(OnCloseSession, ARawOpenRetriedWithTheSameReqidOpensOneSession) {
  proxy_->block(Direction::kServerToClient, BlockMode::kHold);
  auto first = RespClient::connect(proxy_->port());
  ASSERT_TRUE(first) << first.status().to_string();
  ASSERT_TRUE(first->send({"SESSION.OPEN", "30000", "ONCLOSE", "5000", "REQID", "lost-reply-1"}));
  ASSERT_TRUE(eventually([&] { return sessions().size() == 1; }, 5s)) << "the open never arrived";
  EXPECT_EQ(first->read(100ms).status().code(), ErrorCode::kTimedOut) << "the reply was not withheld";
  first->close();
  proxy_->reset_connections();
  ASSERT_TRUE(eventually([&] { return proxy_->stats().connections_open == 0; }, 5s)) << "the reset never happened";
  proxy_->heal();
  auto retry = RespClient::connect(proxy_->port());
  ASSERT_TRUE(retry) << retry.status().to_string();
  const resp::Value again = retry->call({"SESSION.OPEN", "30000", "ONCLOSE", "5000", "REQID", "lost-reply-1"});
  ASSERT_EQ(again.type, resp::Type::kInteger) << again.debug_string();
  EXPECT_EQ(sessions(), std::vector<std::int64_t>{again.integer});
}

}  // namespace
}  // namespace leasehold::client
