// A Session with a close grace (SessionOptions::close_grace: SESSION.OPEN ...
// ONCLOSE, bound to its keepalive connection) through a fault proxy
// (torture/faults/fault_proxy.h) in front of a real `leasehold server`:
// - a blackhole shorter than the TTL closes nothing: the lock stays held and
//   the session lives on after the heal;
// - a blackhole longer than the call timeout and the grace: the keepalive
//   that times out closes nothing; the client binds the session to a new
//   connection after the heal and only then closes the old one;
// - a BIND refused with an error reply bound nothing, so it does not lower
//   the safe deadline;
// - a reset of the bound connection (which the server may count as the
//   client's close) lowers the safe deadline to the last answered send +
//   grace - drift: with grace 0 the session is lost at once; with a grace
//   of seconds the client re-binds on a new connection, the server's end
//   is cancelled and the deadline rises again;
// - an open whose reply is lost is retried with the same REQID on a new
//   connection: one session, the one the client got.
#include <gtest/gtest.h>

#include <atomic>
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
using torture::FaultProxyStats;

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
  std::int64_t holder(const std::string& lock) { return holder_field(lock, "session"); }
  // A field of the first holder of `lock` (direct); 0 if free.
  std::int64_t holder_field(const std::string& lock, const std::string& field) {
    const resp::Value info = direct_.call({"LOCK.INFO", lock});
    const resp::Value* holders = info.find("holders");
    if (holders == nullptr || holders->elements.empty()) return 0;
    const resp::Value* value = holders->elements[0].find(field);
    return value ? value->integer : 0;
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

// Silence is not a close, also past the call timeout: the keepalive stuck
// in a blackhole times out after 5 s, but its connection stays open (the
// server would count its close); the client dials again, and once the
// network heals binds the session to the new connection and only then
// closes the old one. The session, its lock and its token survive, `lost`
// never fires, and nobody else gets the lock.
TEST_F(OnCloseSession, ABlackholeLongerThanTheCallTimeoutKeepsTheSession) {
  std::atomic<bool> lost_called{false};
  SessionOptions so;
  so.ttl = 30s;
  so.close_grace = 2s;
  so.keepalive_interval = 1s;  // a keepalive is in flight soon after the blackhole starts
  so.on_lost = [&](const Status&) { lost_called = true; };
  auto opened = Session::open(client_, so);
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  auto& s = *opened;
  auto g = LockGuard::try_acquire(*s, "bh-long");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const std::uint64_t token = g->token();
  RespClient waiter = server_.client();
  const resp::Value w = waiter.call({"SESSION.OPEN", "60000"});
  ASSERT_EQ(w.type, resp::Type::kInteger);
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "bh-long", std::to_string(w.integer), "WAIT", "0"}));
  const FaultProxyStats before = proxy_->stats();
  proxy_->partition(BlockMode::kHold);
  // deliberate: a 10 s blackhole both ways, past the 5 s call timeout and
  // the 2 s grace, under the 30 s TTL.
  EXPECT_EQ(waiter.read(10s).status().code(), ErrorCode::kTimedOut) << "the lock was granted during the blackhole";
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  proxy_->heal();
  const auto healed = Clock::now();
  // A keepalive sent after the heal was acknowledged: a new connection's
  // BIND (the old connection's late reply is never read).
  ASSERT_TRUE(eventually([&] { return s->lost() || s->safe_deadline() > healed + 25s; }, 15s))
      << "no keepalive acknowledged after the heal";
  // The old connection was closed once the new one was bound: as many
  // connections open as before, and more made.
  EXPECT_TRUE(eventually([&] {
    const FaultProxyStats now = proxy_->stats();
    return now.connections_open == before.connections_open && now.connections_accepted > before.connections_accepted;
  }, 10s)) << "open " << proxy_->stats().connections_open << ", before " << before.connections_open;
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  EXPECT_FALSE(lost_called.load());
  EXPECT_TRUE(g->valid()) << g->status().to_string();
  EXPECT_EQ(holder("bh-long"), static_cast<std::int64_t>(s->id()));
  EXPECT_EQ(holder_field("bh-long", "token"), static_cast<std::int64_t>(token));
  const resp::Value other = direct_.call({"SESSION.OPEN", "60000"});
  ASSERT_EQ(other.type, resp::Type::kInteger);
  EXPECT_EQ(direct_.call({"LOCK.ACQUIRE", "bh-long", std::to_string(other.integer)}).type, resp::Type::kNull)
      << "a second session got the lock";
  // deliberate: past the grace after the old connection closed, the server
  // has not ended the session (it was bound to the new connection then).
  std::this_thread::sleep_for(so.close_grace.value() + 1s);
  EXPECT_EQ(holder("bh-long"), static_cast<std::int64_t>(s->id()));
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  EXPECT_FALSE(lost_called.load());
  EXPECT_EQ(waiter.read(10ms).status().code(), ErrorCode::kTimedOut) << "the waiter got the lock";
}

// A BIND answered with an error reply bound nothing, so the connection that
// carried it can close without the server ending the session: the safe
// deadline stays where the last acknowledged keepalive put it. Here the
// keepalive connection times out in a blackhole, and the new connections
// reach a second server (through the proxy's router) that has a session
// with the same id opened without ONCLOSE: SESSION.WATCH is answered, the
// BIND is refused with -ERR. Once new connections reach the first server
// again, the session is bound there and kept.
TEST_F(OnCloseSession, ABindRefusedWithAnErrorDoesNotLowerTheSafeDeadline) {
  ServerProcess other;
  ASSERT_TRUE(other.start(dir_.file("other")));
  std::atomic<std::uint16_t> route{0};  // 0: the fixture's server
  std::atomic<int> routed_to_other{0};
  auto p = FaultProxy::start(server_.port(), 0, [&](std::uint16_t) -> std::uint16_t {
    const std::uint16_t to = route.load();
    if (to != 0) ++routed_to_other;
    return to;
  });
  ASSERT_TRUE(p) << p.status().to_string();
  std::unique_ptr<FaultProxy> router = std::move(p).value();
  ClientOptions o;
  o.endpoints = {*parse_endpoint("127.0.0.1:" + std::to_string(router->port()))};
  o.call_timeout = 1s;
  o.connect_timeout = 500ms;
  auto c = Client::create(o);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  SessionOptions so;
  so.ttl = 30s;
  so.close_grace = 2s;
  so.keepalive_interval = 300ms;
  auto opened = Session::open(*c, so);
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  auto& s = *opened;
  // Session ids are the log's revision: open sessions on the other server
  // until one has this session's id.
  RespClient on_other = other.client();
  std::int64_t twin = 0;
  while (twin < static_cast<std::int64_t>(s->id())) {
    const resp::Value r = on_other.call({"SESSION.OPEN", "60000"});
    ASSERT_EQ(r.type, resp::Type::kInteger) << r.debug_string();
    twin = r.integer;
  }
  ASSERT_EQ(twin, static_cast<std::int64_t>(s->id()));
  route = other.port();
  const FaultProxyStats before = router->stats();
  router->partition(BlockMode::kHold);
  // The keepalive in the blackhole timed out (1 s) and a new connection was tried.
  ASSERT_TRUE(eventually([&] { return router->stats().connections_accepted > before.connections_accepted; }, 10s))
      << "no new connection after the keepalive timed out";
  router->heal();
  // Each connection routed to the other server is refused its BIND and
  // dropped before the next is made: three mean at least two refusals.
  ASSERT_TRUE(eventually([&] { return routed_to_other.load() >= 3 || s->lost(); }, 15s))
      << "routed " << routed_to_other.load();
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  // Not lowered to a refused BIND's send time + the 2 s grace.
  EXPECT_GT(s->safe_deadline(), Clock::now() + 10s);
  route = 0;
  const auto back = Clock::now();
  ASSERT_TRUE(eventually([&] { return s->lost() || s->safe_deadline() > back + 25s; }, 10s))
      << "not bound again on the first server";
  EXPECT_FALSE(s->lost()) << s->status().to_string();
  // deliberate: past the grace after the parked connection closed, the
  // first server keeps the session (bound to the new connection).
  std::this_thread::sleep_for(so.close_grace.value() + 1s);
  EXPECT_EQ(sessions(), std::vector<std::int64_t>{static_cast<std::int64_t>(s->id())});
  EXPECT_FALSE(s->lost()) << s->status().to_string();
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
