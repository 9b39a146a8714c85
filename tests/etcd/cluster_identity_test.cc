// The etcd client's cluster identity check (etcd/client.h, "Cluster
// identity"): a client whose endpoint list reaches two etcd clusters, A
// first, then B. This is what a leasehold node sees when one of its
// endpoints is served by a stranger: a misconfigured list, or a dead
// member's port taken by another etcd (two tests once wrote into each
// other's clusters that way). The client must never use B's answers: no
// write acknowledged by B, no read or watch event of B's data.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "etcd/client.h"
#include "etcd/watcher.h"
#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"

namespace leasehold::etcd {
namespace {

using namespace std::chrono_literals;
using testing::EtcdCluster;
using testing::eventually;

class EtcdClusterIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto a = EtcdCluster::start();
    ASSERT_TRUE(a) << a.status().to_string();
    a_ = std::move(*a);
    auto b = EtcdCluster::start();
    ASSERT_TRUE(b) << b.status().to_string();
    b_ = std::move(*b);
    auto both = Client::create({a_->endpoint(0) + "," + b_->endpoint(0), 2000ms});
    ASSERT_TRUE(both) << both.status().to_string();
    both_ = std::move(*both);
    auto only_b = Client::create({b_->endpoint(0), 5000ms});
    ASSERT_TRUE(only_b) << only_b.status().to_string();
    only_b_ = std::move(*only_b);
    // The first answer comes from A and fixes the client's cluster.
    ASSERT_TRUE(both_->put("/fixed-by", "a"));
    ASSERT_NE(both_->cluster_id(), 0u);
  }

  std::unique_ptr<EtcdCluster> a_, b_;
  std::unique_ptr<Client> both_;    // endpoints: A's member, then B's
  std::unique_ptr<Client> only_b_;  // B alone, to see what reached it
};

TEST_F(EtcdClusterIdentityTest, WithOnlyTheOtherClusterReachableNothingIsAcknowledgedOrRead) {
  ASSERT_TRUE(only_b_->put("/only-in-b", "stranger's data"));
  a_->kill(0);
  // Until an error names the other cluster, every call must fail: B answers
  // (a put applies there), but its answers are not A's. (The first calls
  // may end at A alone: a write sent to a member that just died has an
  // unknown outcome and is not sent elsewhere.)
  const std::string foreign = "belongs to another etcd cluster";
  Status last;
  int calls = 0;
  EXPECT_TRUE(eventually(
      [&] {
        ++calls;
        auto put = both_->put("/k", "written while A is down");
        EXPECT_FALSE(put) << "a put was acknowledged with only the other cluster up";
        last = put.status();
        return !put && last.message().find(foreign) != std::string::npos;
      },
      30s))
      << "after " << calls << " puts, the last error: " << last.to_string();
  EXPECT_EQ(last.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(last.message().find("outcome unknown"), std::string::npos) << last.to_string();
  auto read = both_->range("/only-in-b");
  ASSERT_FALSE(read) << "a read answered with only the other cluster up";
  EXPECT_NE(read.status().message().find(foreign), std::string::npos) << read.status().to_string();
  EXPECT_EQ(last.code(), ErrorCode::kUnavailable);
  EXPECT_GT(both_->foreign_answers(), 0u);
  // B did apply a put it was sent (which is why its answer must not count).
  auto in_b = only_b_->range("/k");
  ASSERT_TRUE(in_b) << in_b.status().to_string();
  EXPECT_EQ(in_b->kvs.size(), 1u);

  // A back: calls work again, on A's data.
  ASSERT_TRUE(a_->restart(0));
  EXPECT_TRUE(eventually([&] { return both_->put("/k", "after A is back").is_ok(); }, 30s));
  read = both_->range("/only-in-b");
  ASSERT_TRUE(read) << read.status().to_string();
  EXPECT_TRUE(read->kvs.empty()) << "read B's key through A";
}

// Collects watch events, thread-safely.
struct Events {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> keys;

  Watcher::EventsHandler handler() {
    return [this](const std::vector<WatchEvent>& batch) {
      std::lock_guard lock(mu);
      for (const WatchEvent& e : batch) keys.push_back(e.kv.key);
      cv.notify_all();
    };
  }
  bool wait_for(const std::string& key, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return std::find(keys.begin(), keys.end(), key) != keys.end(); });
  }
};

TEST_F(EtcdClusterIdentityTest, AWatchNeverDeliversTheOtherClustersEvents) {
  // B has a longer history than A, so a watch that resumed on B at A's next
  // revision would replay B's events.
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(only_b_->put("/w/in-b", std::to_string(i)));
  Events events;
  auto watcher = Watcher::start(*both_, {"/w/", prefix_end("/w/"), 0}, events.handler(), [](const WatchFailure&) {});
  ASSERT_TRUE(watcher) << watcher.status().to_string();
  ASSERT_TRUE(both_->put("/w/in-a-1", "x"));
  ASSERT_TRUE(events.wait_for("/w/in-a-1", 10s));

  a_->kill(0);
  // The watch reconnects to B, whose answer it refuses (and then tries
  // again, A and B in turn).
  ASSERT_TRUE(eventually([&] { return both_->foreign_answers() > 0; }, 30s));
  ASSERT_TRUE(only_b_->put("/w/in-b", "while A is down"));
  ASSERT_TRUE(a_->restart(0));
  auto only_a = Client::create({a_->endpoint(0), 5000ms});
  ASSERT_TRUE(only_a);
  EXPECT_TRUE(eventually([&] { return (*only_a)->put("/w/in-a-2", "y").is_ok(); }, 30s));
  EXPECT_TRUE(events.wait_for("/w/in-a-2", 30s)) << "the watch did not resume on A";
  std::lock_guard lock(events.mu);
  EXPECT_EQ(std::count(events.keys.begin(), events.keys.end(), "/w/in-b"), 0) << "an event of B was delivered";
  EXPECT_EQ(events.keys, (std::vector<std::string>{"/w/in-a-1", "/w/in-a-2"}));
}

}  // namespace
}  // namespace leasehold::etcd
