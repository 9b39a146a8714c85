// leasehold::client::Redlock against 5 real redis-server processes (and 3
// leasehold servers): majority rules, validity computation, release on all,
// 2 of 5 servers down.
#include <gtest/gtest.h>

#include <memory>

#include "leasehold/redlock.h"
#include "testkit/private_server.h"
#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using client::Millis;
using std::chrono::microseconds;

std::unique_ptr<PrivateServer> private_redis(const TempDir& dir, int i) {
  const std::string name = "redis" + std::to_string(i);
  return std::make_unique<PrivateServer>(dir, name, [&dir](std::uint16_t port) {
    return std::vector<std::string>{"/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", std::to_string(port),
                                    "--dir", dir.path(), "--save", "", "--appendonly", "no", "--daemonize", "no"};
  }, std::chrono::seconds(15));
}

class RedlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 5; ++i) {
      servers_.push_back(private_redis(dir_, i));
      ASSERT_TRUE(servers_.back()->ready());
    }
  }
  client::RedlockOptions options() const {
    client::RedlockOptions o;
    for (const auto& s : servers_) o.servers.push_back({"127.0.0.1", s->port()});
    o.server_timeout = Millis(2000);  // generous: the machine is busy
    o.retry_delay_max = Millis(20);
    return o;
  }
  std::unique_ptr<client::Redlock> make(client::RedlockOptions o) {
    auto r = client::Redlock::create(std::move(o));
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return std::move(r).value();
  }
  // GET key on server i (nullopt: nil); the server must be up.
  std::optional<std::string> get(std::size_t i, const std::string& key) {
    auto c = RespClient::connect(servers_[i]->port());
    if (!c) return "unreachable";
    resp::Value v = c->call({"GET", key});
    if (v.type == resp::Type::kNull) return std::nullopt;
    return v.str;
  }
  void set(std::size_t i, const std::string& key, const std::string& value) {
    auto c = RespClient::connect(servers_[i]->port());
    ASSERT_TRUE(c.is_ok());
    ASSERT_EQ(c->call({"SET", key, value, "PX", "60000"}).str, "OK");
  }

  TempDir dir_{"redlock"};
  std::vector<std::unique_ptr<PrivateServer>> servers_;
};

TEST(RedlockMath, DriftAndValidity) {
  EXPECT_EQ(client::redlock_drift(Millis(10000)), microseconds(102000));
  EXPECT_EQ(client::redlock_validity(Millis(10000), microseconds(500000)), microseconds(9398000));
  EXPECT_LT(client::redlock_validity(Millis(1000), microseconds(995000)).count(), 0);
}

TEST(RedlockMath, BadOptions) {
  EXPECT_FALSE(client::Redlock::create({}).is_ok());
  client::RedlockOptions o;
  o.servers.push_back({"127.0.0.1", 1});
  o.retry_count = 0;
  EXPECT_EQ(client::Redlock::create(o).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(RedlockTest, MajorityHoldsOthersRefusedReleaseOnAll) {
  auto rl = make(options());
  EXPECT_EQ(rl->quorum(), 3u);
  auto lease = rl->lock("res", Millis(10000));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->granted_by, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_GT(lease->validity.count(), 0);
  EXPECT_LE(lease->validity, microseconds(10000000 - 102000));
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(get(i, "res"), lease->value);
  auto other = make(options());
  EXPECT_FALSE(other->lock("res", Millis(10000)).has_value());
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(get(i, "res"), lease->value) << "the loser changed nothing";
  EXPECT_EQ(rl->unlock(*lease), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(get(i, "res"), std::nullopt) << "released on all";
}

TEST_F(RedlockTest, MajorityRuleCountsServers) {
  set(0, "m", "someone-else");
  set(1, "m", "someone-else");
  auto rl = make(options());
  auto lease = rl->try_once("m", Millis(10000));
  ASSERT_TRUE(lease.has_value()) << "3 of 5 is a majority";
  EXPECT_EQ(lease->granted_by, (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(rl->unlock(*lease), 3u);
  EXPECT_EQ(get(0, "m"), "someone-else") << "only our value is deleted";
  set(2, "m", "someone-else");
  EXPECT_FALSE(rl->try_once("m", Millis(10000)).has_value()) << "2 of 5 is not";
  EXPECT_EQ(get(3, "m"), std::nullopt) << "the partial grant was released";
  EXPECT_EQ(get(4, "m"), std::nullopt);
}

TEST_F(RedlockTest, ValiditySubtractsElapsedAndDrift) {
  auto o = options();
  auto ticks = std::make_shared<std::vector<client::Clock::time_point>>();
  const auto t0 = client::Clock::now();
  *ticks = {t0, t0 + Millis(500)};
  auto next = std::make_shared<std::size_t>(0);
  o.clock = [ticks, next] { return (*ticks)[std::min((*next)++, ticks->size() - 1)]; };
  auto rl = make(o);
  auto lease = rl->try_once("v", Millis(10000));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->acquired_at, t0);
  EXPECT_EQ(lease->validity, microseconds(9398000));
  EXPECT_EQ(lease->valid_until(), t0 + microseconds(9398000));
  rl->unlock(*lease);
  *ticks = {t0, t0 + Millis(9950)};  // 9950 ms + 102 ms drift > 10 s: not held
  *next = 0;
  EXPECT_FALSE(rl->try_once("v", Millis(10000)).has_value());
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(get(i, "v"), std::nullopt) << "released after a too-slow attempt";
}

TEST_F(RedlockTest, TwoOfFiveDownStillLocksThreeDownDoesNot) {
  auto o = options();
  servers_[1].reset();  // killed
  servers_[3].reset();
  auto rl = make(o);
  auto lease = rl->lock("d", Millis(10000));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->granted_by, (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(rl->unlock(*lease), 3u);
  servers_[4].reset();
  EXPECT_FALSE(rl->lock("d", Millis(10000)).has_value());
  EXPECT_EQ(get(0, "d"), std::nullopt) << "no key left behind on the live servers";
  EXPECT_EQ(get(2, "d"), std::nullopt);
}

TEST(RedlockOverLeasehold, CompatKeysRunTheReleaseScript) {
  TempDir dir("redlock-leasehold");
  ServerProcess servers[3];
  client::RedlockOptions o;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(servers[i].start(dir.file("data" + std::to_string(i))));
    o.servers.push_back({"127.0.0.1", servers[i].port()});
  }
  o.server_timeout = Millis(2000);
  auto rl = client::Redlock::create(o);
  ASSERT_TRUE(rl.is_ok());
  auto lease = (*rl)->lock("lh", Millis(10000));
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->granted_by.size(), 3u);
  EXPECT_EQ((*rl)->unlock(*lease), 3u);
}

}  // namespace
}  // namespace leasehold::testing
