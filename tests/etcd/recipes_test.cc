// The election and lock recipes against one real etcd member.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "etcd/client.h"
#include "etcd/election.h"
#include "etcd/keepalive.h"
#include "etcd/mutex.h"
#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"

namespace leasehold::etcd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::EtcdCluster;
using testing::eventually;

constexpr char kPrefix[] = "/lh/test/election";

class EtcdRecipesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = EtcdCluster::start();
    ASSERT_TRUE(cluster) << cluster.status().to_string();
    cluster_ = std::move(*cluster);
    auto client = Client::create({cluster_->endpoints(), 5000ms});
    ASSERT_TRUE(client) << client.status().to_string();
    client_ = std::move(*client);
  }

  // A lease with a running keepalive, like a real candidate has.
  std::int64_t live_lease() {
    auto lease = client_->lease_grant(5);
    EXPECT_TRUE(lease) << lease.status().to_string();
    if (!lease) return 0;
    auto ka = LeaseKeepAlive::start(*client_, lease->id, lease->ttl_seconds);
    EXPECT_TRUE(ka) << ka.status().to_string();
    if (ka) keepalives_.push_back(std::move(*ka));
    return lease->id;
  }

  std::size_t candidates() {
    auto r = client_->range(std::string(kPrefix) + "/", prefix_end(std::string(kPrefix) + "/"));
    EXPECT_TRUE(r);
    return r ? r->kvs.size() : 0;
  }

  // A deadline `d` from now, for a bound the call must not be refused
  // before (not scaled).
  static Clock::time_point in(std::chrono::milliseconds d) { return Clock::now() + d; }
  // A deadline scaled(d) from now, for an upper bound on how long the call may take.
  static Clock::time_point within(std::chrono::milliseconds d) { return Clock::now() + testing::scaled(d); }

  std::unique_ptr<EtcdCluster> cluster_;
  std::unique_ptr<Client> client_;
  std::vector<std::unique_ptr<LeaseKeepAlive>> keepalives_;
};

TEST_F(EtcdRecipesTest, OneLeadsTheOtherTakesOverWhenTheLeaseIsRevoked) {
  const std::int64_t lease_a = live_lease();
  const std::int64_t lease_b = live_lease();
  Election a(*client_, kPrefix);
  Election b(*client_, kPrefix);

  auto a_key = a.campaign(lease_a, "node-a", within(5s));
  ASSERT_TRUE(a_key) << a_key.status().to_string();
  EXPECT_EQ(a_key->key, queue_key_name(kPrefix, lease_a));

  auto b_future = std::async(std::launch::async, [&] { return b.campaign(lease_b, "node-b", within(20s)); });
  // B must keep waiting while A leads.
  EXPECT_EQ(b_future.wait_for(500ms), std::future_status::timeout);

  auto leader = a.leader();
  ASSERT_TRUE(leader);
  ASSERT_TRUE(leader->has_value());
  EXPECT_EQ((*leader)->value, "node-a");
  EXPECT_EQ((*leader)->create_revision, a_key->create_revision);
  EXPECT_EQ((*leader)->lease, lease_a);

  // The leader's fenced append succeeds while it holds its key.
  auto append = client_->txn({still_owned(*a_key)}, {TxnOp::put("/lh/test/log/1", "batch-1")});
  ASSERT_TRUE(append);
  EXPECT_TRUE(append->succeeded);

  // A loses its lease (as when its process dies): B takes over.
  keepalives_.front().reset();
  ASSERT_TRUE(client_->lease_revoke(lease_a));
  ASSERT_EQ(b_future.wait_for(10s), std::future_status::ready);
  auto b_key = b_future.get();
  ASSERT_TRUE(b_key) << b_key.status().to_string();
  EXPECT_GT(b_key->create_revision, a_key->create_revision);
  leader = b.leader();
  ASSERT_TRUE(leader && leader->has_value());
  EXPECT_EQ((*leader)->value, "node-b");

  // A's fenced append now fails: the log is fenced against the old leader.
  append = client_->txn({still_owned(*a_key)}, {TxnOp::put("/lh/test/log/2", "stale")});
  ASSERT_TRUE(append);
  EXPECT_FALSE(append->succeeded);
  auto stale = client_->range("/lh/test/log/2");
  ASSERT_TRUE(stale);
  EXPECT_TRUE(stale->kvs.empty());
  append = client_->txn({still_owned(*b_key)}, {TxnOp::put("/lh/test/log/2", "batch-2")});
  ASSERT_TRUE(append);
  EXPECT_TRUE(append->succeeded);
}

TEST_F(EtcdRecipesTest, ResignHandsOverInCreateOrderWithoutHerd) {
  const std::int64_t leases[3] = {live_lease(), live_lease(), live_lease()};
  Election e0(*client_, kPrefix), e1(*client_, kPrefix), e2(*client_, kPrefix);
  ASSERT_TRUE(e0.campaign(leases[0], "0", within(5s)));
  auto f1 = std::async(std::launch::async, [&] { return e1.campaign(leases[1], "1", within(20s)); });
  // Wait until candidate 1 is queued before candidate 2 joins (create order).
  eventually([&] { return candidates() >= 2; }, 5s);
  ASSERT_EQ(candidates(), 2u);
  auto f2 = std::async(std::launch::async, [&] { return e2.campaign(leases[2], "2", within(20s)); });
  eventually([&] { return candidates() >= 3; }, 5s);
  ASSERT_EQ(candidates(), 3u);

  ASSERT_TRUE(e0.resign());
  ASSERT_EQ(f1.wait_for(10s), std::future_status::ready);
  ASSERT_TRUE(f1.get());
  // Candidate 2 watches candidate 1 only: it keeps waiting.
  EXPECT_EQ(f2.wait_for(500ms), std::future_status::timeout);
  auto leader = e2.leader();
  ASSERT_TRUE(leader && leader->has_value());
  EXPECT_EQ((*leader)->value, "1");

  ASSERT_TRUE(e1.resign());
  ASSERT_EQ(f2.wait_for(10s), std::future_status::ready);
  ASSERT_TRUE(f2.get());
  EXPECT_TRUE(e1.resign());  // resigning twice is fine
}

TEST_F(EtcdRecipesTest, CampaignIsIdempotentForTheSameLease) {
  const std::int64_t lease = live_lease();
  Election e(*client_, kPrefix);
  auto first = e.campaign(lease, "v1", within(5s));
  ASSERT_TRUE(first);
  auto again = e.campaign(lease, "v2", within(5s));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->create_revision, first->create_revision);
  auto leader = e.leader();
  ASSERT_TRUE(leader && leader->has_value());
  EXPECT_EQ((*leader)->value, "v2");
}

TEST_F(EtcdRecipesTest, CampaignDeadlineAndStopRemoveTheCandidate) {
  const std::int64_t lease_a = live_lease();
  const std::int64_t lease_b = live_lease();
  Election a(*client_, kPrefix);
  Election b(*client_, kPrefix);
  ASSERT_TRUE(a.campaign(lease_a, "a", within(5s)));

  const auto start = Clock::now();
  auto timed_out = b.campaign(lease_b, "b", in(300ms));
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.status().code(), ErrorCode::kTimedOut);
  EXPECT_LT(Clock::now() - start, testing::scaled(3s));
  EXPECT_EQ(candidates(), 1u);

  std::stop_source stop;
  auto f = std::async(std::launch::async, [&] { return b.campaign(lease_b, "b", within(30s), stop.get_token()); });
  EXPECT_EQ(f.wait_for(300ms), std::future_status::timeout);
  stop.request_stop();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  auto stopped = f.get();
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.status().code(), ErrorCode::kTimedOut);
  EXPECT_EQ(candidates(), 1u);
}

TEST_F(EtcdRecipesTest, AWaiterWhoseLeaseEndedNeverLeads) {
  const std::int64_t lease_a = live_lease();
  auto lease_b = client_->lease_grant(5);  // no keepalive: revoked below
  ASSERT_TRUE(lease_b);
  Election a(*client_, kPrefix);
  Election b(*client_, kPrefix);
  ASSERT_TRUE(a.campaign(lease_a, "a", within(5s)));
  auto f = std::async(std::launch::async, [&] { return b.campaign(lease_b->id, "b", within(20s)); });
  eventually([&] { return candidates() >= 2; }, 5s);
  ASSERT_TRUE(client_->lease_revoke(lease_b->id));
  ASSERT_TRUE(a.resign());
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  auto result = f.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.status().code(), ErrorCode::kSessionExpired) << result.status().to_string();
  auto leader = a.leader();
  ASSERT_TRUE(leader);
  EXPECT_FALSE(leader->has_value());
}

TEST_F(EtcdRecipesTest, MutexExcludesAndTokensIncrease) {
  constexpr int kThreads = 3;
  constexpr int kRounds = 4;
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::mutex tokens_mu;
  std::vector<std::int64_t> tokens;
  std::vector<std::int64_t> leases;
  for (int i = 0; i < kThreads; ++i) leases.push_back(live_lease());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Mutex m(*client_, "/lh/test/lock");
      for (int r = 0; r < kRounds; ++r) {
        if (!m.lock(leases[static_cast<std::size_t>(t)], within(20s))) {
          ++failures;
          return;
        }
        if (inside.fetch_add(1) != 0) ++overlaps;
        {
          std::lock_guard lock(tokens_mu);
          tokens.push_back(m.held()->create_revision);
        }
        std::this_thread::sleep_for(5ms);  // deliberate: stays inside a moment, so an overlap would show
        inside.fetch_sub(1);
        if (!m.unlock()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  ASSERT_EQ(tokens.size(), static_cast<std::size_t>(kThreads * kRounds));
  for (std::size_t i = 1; i < tokens.size(); ++i) EXPECT_GT(tokens[i], tokens[i - 1]) << i;
}

TEST_F(EtcdRecipesTest, MutexLockTimesOutWhileHeld) {
  const std::int64_t lease_a = live_lease();
  const std::int64_t lease_b = live_lease();
  Mutex a(*client_, "/lh/test/lock");
  Mutex b(*client_, "/lh/test/lock");
  ASSERT_TRUE(a.lock(lease_a, within(5s)));
  Status s = b.lock(lease_b, in(300ms));
  EXPECT_EQ(s.code(), ErrorCode::kTimedOut) << s.to_string();
  EXPECT_FALSE(b.held().has_value());
  ASSERT_TRUE(a.unlock());
  EXPECT_TRUE(b.lock(lease_b, within(5s)));
}

}  // namespace
}  // namespace leasehold::etcd
