// FAULT PROXY: a real `leasehold server` behind torture::FaultProxy. Traffic
// flows; a partition blocks it and a session expires behind it while the
// server stays up (seen on a direct connection); heal restores it; one-way
// loss in each direction; added delay and a byte-rate cap are observed
// (lower bounds only); reset closes connections.
#include <gtest/gtest.h>

#include "testkit/server_process.h"
#include "testkit/eventually.h"
#include "torture/faults/fault_proxy.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;
using torture::BlockMode;
using torture::Direction;
using torture::FaultProxy;

class FaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.path() + "/data"));
    auto p = FaultProxy::start(server_.port());
    ASSERT_TRUE(p) << p.status().to_string();
    proxy_ = std::move(p).value();
  }
  RespClient via_proxy() {
    auto c = RespClient::connect(proxy_->port());
    EXPECT_TRUE(c) << c.status().to_string();
    return c ? std::move(c).value() : RespClient();
  }
  std::string open_session(RespClient& c, int ttl_ms) {
    const Value v = c.call({"SESSION.OPEN", std::to_string(ttl_ms)});
    EXPECT_EQ(v.type, Type::kInteger) << v.str;
    return std::to_string(v.integer);
  }
  // The lock's holder session id as the server sees it, on a direct connection.
  bool lock_held(RespClient& direct, const std::string& lock) {
    const Value v = direct.call({"LOCK.INFO", lock});
    return v.type != Type::kNull && v.type != Type::kError;
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<FaultProxy> proxy_;
};

TEST_F(FaultProxyTest, TrafficFlowsBothWays) {
  RespClient c = via_proxy();
  EXPECT_EQ(c.call({"PING"}), Value::simple("PONG"));
  const std::string s = open_session(c, 10'000);
  const Value token = c.call({"LOCK.ACQUIRE", "a", s});
  EXPECT_EQ(token.type, Type::kInteger);
  EXPECT_EQ(c.call({"LOCK.RELEASE", "a", s, std::to_string(token.integer)}), Value::simple("OK"));
  const auto st = proxy_->stats();
  EXPECT_EQ(st.connections_accepted, 1u);
  EXPECT_GT(st.bytes_forwarded[0], 0u);
  EXPECT_GT(st.bytes_forwarded[1], 0u);
}

TEST_F(FaultProxyTest, PartitionHoldsTrafficSessionExpiresBehindItAndHealRestores) {
  RespClient c = via_proxy();
  RespClient direct = server_.client();
  const std::string s = open_session(c, 1000);
  ASSERT_EQ(c.call({"LOCK.ACQUIRE", "p", s}).type, Type::kInteger);
  proxy_->partition(BlockMode::kHold);
  // The keepalive goes nowhere: no reply while the partition lasts.
  ASSERT_TRUE(c.send({"SESSION.KEEPALIVE", s}));
  EXPECT_FALSE(c.read(1500ms));
  // The server is up and expires the session (its lock is free again).
  EXPECT_EQ(direct.call({"PING"}), Value::simple("PONG"));
  EXPECT_TRUE(eventually([&] { return !lock_held(direct, "p"); }, 10s));
  // A new connection during the partition gets nothing either.
  RespClient late = via_proxy();
  ASSERT_TRUE(late.send({"PING"}));
  EXPECT_FALSE(late.read(300ms));
  proxy_->heal();
  // Held bytes flow: the keepalive is answered (too late: expired), the late PING too.
  const auto reply = c.read(scaled(10s));
  ASSERT_TRUE(reply) << reply.status().to_string();
  EXPECT_EQ(reply->type, Type::kError);
  EXPECT_NE(reply->str.find("EXPIRED"), std::string::npos) << reply->str;
  const auto pong = late.read(scaled(10s));
  ASSERT_TRUE(pong);
  EXPECT_EQ(*pong, Value::simple("PONG"));
}

TEST_F(FaultProxyTest, DropPartitionWithResetClosesConnectionsAndRefusesNewOnes) {
  RespClient c = via_proxy();
  EXPECT_EQ(c.call({"PING"}), Value::simple("PONG"));
  proxy_->partition(BlockMode::kDrop, /*reset_existing=*/true);
  EXPECT_TRUE(c.wait_closed(scaled(10s)));
  RespClient late = via_proxy();  // accepted by the kernel, then reset
  EXPECT_TRUE(late.wait_closed(scaled(10s)));
  proxy_->heal();
  RespClient after = via_proxy();
  EXPECT_EQ(after.call({"PING"}), Value::simple("PONG"));
}

TEST_F(FaultProxyTest, ClientToServerLossNeverReachesTheServer) {
  RespClient c = via_proxy();
  RespClient direct = server_.client();
  const std::string s = open_session(c, 30'000);
  proxy_->block(Direction::kClientToServer, BlockMode::kDrop);
  ASSERT_TRUE(c.send({"LOCK.ACQUIRE", "one-way", s}));
  EXPECT_FALSE(c.read(1000ms));
  EXPECT_TRUE(eventually([&] { return proxy_->stats().bytes_dropped[0] > 0; }, 10s));
  EXPECT_FALSE(lock_held(direct, "one-way"));
  proxy_->heal();  // the stream lost bytes: it is reset
  EXPECT_TRUE(c.wait_closed(scaled(10s)));
  EXPECT_FALSE(lock_held(direct, "one-way"));
}

TEST_F(FaultProxyTest, ServerToClientLossExecutesButNeverAnswers) {
  RespClient c = via_proxy();
  RespClient direct = server_.client();
  const std::string s = open_session(c, 30'000);
  proxy_->block(Direction::kServerToClient, BlockMode::kDrop);
  ASSERT_TRUE(c.send({"LOCK.ACQUIRE", "lost-reply", s}));
  EXPECT_TRUE(eventually([&] { return lock_held(direct, "lost-reply"); }, 10s));
  // Heal only once the reply was read and dropped: on a busy machine the
  // proxy's thread may not have read it yet, and a heal first forwards it.
  EXPECT_TRUE(eventually([&] { return proxy_->stats().bytes_dropped[1] > 0; }, 10s));
  EXPECT_FALSE(c.read(500ms));
  proxy_->heal();
  EXPECT_TRUE(c.wait_closed(scaled(10s)));
}

TEST_F(FaultProxyTest, DelayIsAddedPerDirection) {
  RespClient c = via_proxy();
  EXPECT_EQ(c.call({"PING"}), Value::simple("PONG"));
  proxy_->set_delay(Direction::kClientToServer, 200ms);
  proxy_->set_delay(Direction::kServerToClient, 300ms);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.call({"PING"}, scaled(10s)), Value::simple("PONG"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms);
  proxy_->heal();
  EXPECT_EQ(c.call({"PING"}), Value::simple("PONG"));
}

TEST_F(FaultProxyTest, SlowLinkCapsTheByteRate) {
  RespClient c = via_proxy();
  const std::string s = open_session(c, 60'000);
  const Value token = c.call({"LOCK.ACQUIRE", "big", s});
  ASSERT_EQ(token.type, Type::kInteger);
  proxy_->set_rate(Direction::kClientToServer, 10'000);  // bytes per second
  const std::string value(20'000, 'x');
  const auto start = std::chrono::steady_clock::now();
  const Value put = c.call({"FENCE.PUT", "k", value, "big", std::to_string(token.integer)}, scaled(30s));
  EXPECT_EQ(put.type, Type::kInteger) << put.str;
  // At most 1,000 bytes of burst, then 10,000 bytes/s: at least 1.9 s.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1800ms);
}

TEST_F(FaultProxyTest, ResetConnectionsClosesEveryCurrentConnection) {
  RespClient a = via_proxy();
  RespClient b = via_proxy();
  EXPECT_EQ(a.call({"PING"}), Value::simple("PONG"));
  EXPECT_EQ(b.call({"PING"}), Value::simple("PONG"));
  proxy_->reset_connections();
  EXPECT_TRUE(a.wait_closed(scaled(10s)));
  EXPECT_TRUE(b.wait_closed(scaled(10s)));
  EXPECT_TRUE(eventually([&] { return proxy_->stats().connections_open == 0; }, 10s));
  RespClient again = via_proxy();
  EXPECT_EQ(again.call({"PING"}), Value::simple("PONG"));
}

TEST_F(FaultProxyTest, UpstreamDownClosesTheClientConnection) {
  ASSERT_EQ(server_.stop(), 0);
  RespClient c = via_proxy();
  EXPECT_TRUE(c.wait_closed(scaled(10s)));
}

}  // namespace
}  // namespace leasehold::testing
