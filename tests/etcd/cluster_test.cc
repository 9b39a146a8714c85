// The etcd client against a real 3-member etcd cluster with faults: a
// member killed, a majority killed, a member frozen with SIGSTOP.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "common/unique_fd.h"
#include "etcd/client.h"
#include "etcd/keepalive.h"
#include "etcd/watcher.h"
#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"

namespace leasehold::etcd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::EtcdCluster;

class EtcdClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::EtcdClusterOptions options;
    options.members = 3;
    auto cluster = EtcdCluster::start(options);
    ASSERT_TRUE(cluster) << cluster.status().to_string();
    cluster_ = std::move(*cluster);
  }

  std::unique_ptr<Client> client(std::chrono::milliseconds timeout) {
    auto c = Client::create({cluster_->endpoints(), timeout});
    EXPECT_TRUE(c) << c.status().to_string();
    return c ? std::move(*c) : nullptr;
  }

  // A client whose endpoints are the members in `order` (calls and streams start on the first).
  std::unique_ptr<Client> client_on(const std::vector<int>& order, std::chrono::milliseconds timeout) {
    std::string endpoints;
    for (int i : order) endpoints += (endpoints.empty() ? "" : ",") + cluster_->endpoint(i);
    auto c = Client::create({endpoints, timeout});
    EXPECT_TRUE(c) << c.status().to_string();
    return c ? std::move(*c) : nullptr;
  }

  std::unique_ptr<EtcdCluster> cluster_;
};

// Polls the keepalives until every safe deadline reached `until` or one is
// lost (bounded by scaled(timeout)).
void observe(const std::vector<const LeaseKeepAlive*>& kas, Clock::time_point until, std::chrono::seconds timeout) {
  testing::eventually(
      [&] {
        bool done = true;
        for (const LeaseKeepAlive* ka : kas) {
          if (ka->lost()) return true;
          done = done && ka->safe_deadline() >= until;
        }
        return done;
      },
      timeout, 5ms);
}

// From construction until least(): the least lease time left (safe deadline
// - now) over the keepalives, sampled every 2 ms on a thread of its own.
class MarginRecorder {
 public:
  explicit MarginRecorder(std::vector<const LeaseKeepAlive*> kas)
      : kas_(std::move(kas)), thread_([this] { run(); }) {}
  ~MarginRecorder() { (void)least(); }
  Clock::duration least() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return least_;
  }

 private:
  void run() {
    while (!done_) {
      for (const LeaseKeepAlive* ka : kas_) least_ = std::min(least_, ka->safe_deadline() - Clock::now());
      std::this_thread::sleep_for(2ms);  // deliberate: the sampling period of a recorder that runs until least()
    }
  }
  std::vector<const LeaseKeepAlive*> kas_;
  std::atomic<bool> done_{false};
  Clock::duration least_ = Clock::duration::max();
  std::thread thread_;
};

long long to_ms(Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

TEST_F(EtcdClusterTest, KeepsWorkingWhenItsMemberIsKilled) {
  auto c = client(5000ms);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->put("/s/before", "1"));  // the client now uses member 0

  std::mutex mu;
  std::condition_variable cv;
  std::vector<WatchEvent> events;
  auto watcher = Watcher::start(*c, {"/s/", prefix_end("/s/"), 0}, [&](const std::vector<WatchEvent>& batch) {
    std::lock_guard lock(mu);
    events.insert(events.end(), batch.begin(), batch.end());
    cv.notify_all();
  });
  ASSERT_TRUE(watcher) << watcher.status().to_string();
  auto lease = c->lease_grant(3);
  ASSERT_TRUE(lease);
  std::atomic<bool> lost{false};
  auto ka = LeaseKeepAlive::start(*c, lease->id, lease->ttl_seconds, [&](const Status&) { lost = true; });
  ASSERT_TRUE(ka) << ka.status().to_string();
  ASSERT_TRUE(c->put("/s/leased", "x", lease->id));

  const bool killed_the_leader = cluster_->leader(10s) == 0;
  cluster_->kill(0);
  const Clock::time_point killed_at = Clock::now();
  // The other two elect a leader if member 0 led (measured: see below).
  ASSERT_GE(cluster_->leader(30s, 0), 0) << "no etcd leader after the kill";
  const auto election = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at);
  { Status healthy = cluster_->wait_healthy(20s); ASSERT_TRUE(healthy) << healthy.to_string(); }
  // A read fails over at once. A write sent on the connection to the dead
  // member before gRPC noticed the death may answer "(outcome unknown)" (the
  // rule in etcd/connections.h), so the read goes first: it moves the client
  // to a live member, and every write below must then succeed.
  {
    auto moved = c->range("/s/", prefix_end("/s/"));
    ASSERT_TRUE(moved) << moved.status().to_string();
    EXPECT_EQ(moved->kvs.size(), 2u);
  }

  std::vector<std::int64_t> revisions;
  for (int i = 0; i < 10; ++i) {
    auto p = c->put("/s/after/" + std::to_string(i), std::to_string(i));
    ASSERT_TRUE(p) << i << ": " << p.status().to_string();
    revisions.push_back(p->revision);
  }
  auto r = c->range("/s/", prefix_end("/s/"));
  ASSERT_TRUE(r) << r.status().to_string();
  EXPECT_EQ(r->kvs.size(), 12u);

  // The watch moved to another member and lost nothing.
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 15s, [&] { return events.size() >= 11; })) << events.size();
    ASSERT_EQ(events.size(), 11u);
    EXPECT_EQ(events[0].kv.key, "/s/leased");
    for (std::size_t i = 0; i < 10; ++i) {
      EXPECT_EQ(events[i + 1].kv.key, "/s/after/" + std::to_string(i));
      EXPECT_EQ(events[i + 1].kv.mod_revision, revisions[i]);
    }
  }
  // The keepalive moved too: the lease outlives its TTL. If member 0 led
  // and the election outlasted the 2.1 s a 3 s lease survives
  // (etcd/keepalive.h, TIMING; a starved machine can take longer), the loss
  // must be reported instead (AFrozenLeaderCostsNoLease says more).
  std::cout << "killed " << (killed_the_leader ? "the leader" : "a follower") << "; a leader after "
            << election.count() << " ms\n";
  if (killed_the_leader && election > 2100ms && lost.load()) {
    EXPECT_TRUE((*ka)->lost());
    return;
  }
  const std::int64_t acks = (*ka)->acks();
  const Clock::time_point renewed_past = Clock::now() + std::chrono::seconds(lease->ttl_seconds) + 1s;
  observe({ka->get()}, renewed_past, 30s);
  EXPECT_FALSE(lost.load());
  EXPECT_GE((*ka)->safe_deadline(), renewed_past);
  EXPECT_GT((*ka)->acks(), acks);
  auto leased = c->range("/s/leased");
  ASSERT_TRUE(leased);
  EXPECT_EQ(leased->kvs.size(), 1u);
}

TEST_F(EtcdClusterTest, MajorityLossIsUnavailableWithinTheDeadlineThenRecovers) {
  const auto timeout = 1500ms;
  auto c = client(timeout);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->put("/m/before", "kept"));
  auto lease = c->lease_grant(3);
  ASSERT_TRUE(lease);
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> lost;
  auto ka = LeaseKeepAlive::start(*c, lease->id, lease->ttl_seconds, [&](const Status& why) {
    std::lock_guard lock(mu);
    lost = why;
    cv.notify_all();
  });
  ASSERT_TRUE(ka);

  cluster_->kill(1);
  cluster_->kill(2);
  for (int i = 0; i < 2; ++i) {
    const auto start = Clock::now();
    auto p = c->put("/m/during", "x");
    const auto put_elapsed = Clock::now() - start;
    ASSERT_FALSE(p);
    EXPECT_EQ(p.status().code(), ErrorCode::kUnavailable) << p.status().to_string();
    EXPECT_NE(p.status().message().find("etcd unavailable"), std::string::npos);
    // The surviving member may have taken the write: it must not be reported as failed for sure.
    EXPECT_NE(p.status().message().find("(outcome unknown)"), std::string::npos) << p.status().to_string();
    EXPECT_LT(put_elapsed, timeout + testing::scaled(1000ms));

    const auto range_start = Clock::now();
    auto r = c->range("/m/before");
    EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable) << r.status().to_string();
    EXPECT_LT(Clock::now() - range_start, timeout + testing::scaled(1000ms));
  }
  // Keepalives cannot be answered without a quorum: the loss is announced
  // once the safe deadline (last answered send + TTL) passes.
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, testing::scaled(std::chrono::seconds(lease->ttl_seconds) + 5s), [&] { return lost.has_value(); }));
    EXPECT_EQ(lost->code(), ErrorCode::kUnavailable) << lost->to_string();
    EXPECT_GE(Clock::now(), (*ka)->safe_deadline());
  }

  ASSERT_TRUE(cluster_->restart(1));
  ASSERT_TRUE(cluster_->restart(2));
  { Status healthy = cluster_->wait_healthy(30s); ASSERT_TRUE(healthy) << healthy.to_string(); }
  Result<PutResult> p = Status(ErrorCode::kUnavailable, "not tried");
  testing::eventually([&] { return static_cast<bool>(p = c->put("/m/after", "y")); }, 15s, 100ms);
  ASSERT_TRUE(p) << p.status().to_string();
  auto r = c->range("/m/before");
  ASSERT_TRUE(r) << r.status().to_string();
  ASSERT_EQ(r->kvs.size(), 1u);
  EXPECT_EQ(r->kvs[0].value, "kept");
  // "/m/during" may exist now: a write that timed out (outcome unknown)
  // was appended by the surviving member and can commit once a quorum is back.
}

// The keepalive's lease must survive one frozen member of 3, follower or
// leader, with the 3 s TTL (see the TIMING argument in etcd/keepalive.h).
TEST_F(EtcdClusterTest, AFrozenFollowerCostsAtMostOneTimeout) {
  const int leader = cluster_->leader(10s);
  ASSERT_GE(leader, 0) << "no etcd leader found";
  const int frozen = (leader + 1) % 3;
  // The frozen follower comes first: the client and its keepalive stream use it.
  // A generous call timeout: writes need an fsync on two members of a busy machine.
  auto c = client_on({frozen, leader, 3 - leader - frozen}, 3000ms);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->put("/f/k", "v"));
  auto lease = c->lease_grant(3);
  ASSERT_TRUE(lease);
  std::atomic<bool> lost{false};
  auto ka = LeaseKeepAlive::start(*c, lease->id, lease->ttl_seconds, [&](const Status&) { lost = true; });
  ASSERT_TRUE(ka) << ka.status().to_string();
  ASSERT_TRUE(c->put("/f/leased", "x", lease->id));
  ASSERT_TRUE(testing::eventually([&] { return (*ka)->acks() >= 2; }, 10s));

  MarginRecorder margin({ka->get()});
  cluster_->pause(frozen);
  const Clock::time_point frozen_at = Clock::now();
  int failures = 0;
  for (int i = 0; i < 2; ++i) {
    auto r = c->range("/f/k");
    if (!r) {
      ++failures;
      EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable) << r.status().to_string();
    }
  }
  // The one timeout the frozen member may cost can fall on a read or on a
  // write (whichever call first goes to it); after that none fails.
  for (int i = 0; i < 5; ++i) {
    auto p = c->put("/f/k", std::to_string(i));
    if (!p) {
      ++failures;
      EXPECT_EQ(p.status().code(), ErrorCode::kUnavailable) << p.status().to_string();
    }
  }
  EXPECT_LE(failures, 1);
  // The keepalive left the frozen member: renewed for two TTLs after the freeze.
  observe({ka->get()}, frozen_at + 2 * std::chrono::seconds(lease->ttl_seconds), 30s);
  const auto least = margin.least();
  EXPECT_FALSE(lost.load());
  EXPECT_FALSE((*ka)->lost());
  EXPECT_GE((*ka)->safe_deadline(), frozen_at + 2 * std::chrono::seconds(lease->ttl_seconds));
  std::cout << "frozen follower: least lease time left " << to_ms(least) << " ms of " << lease->ttl_seconds
            << " s\n";
  // One short attempt (TTL/4) on the frozen member, then the next one
  // answers: about 2 s stay left (the keepalive before this fix left 0.87 s).
  EXPECT_GT(least, 1s) << "the frozen follower cost more than one short attempt";
  auto leased = c->range("/f/leased");
  ASSERT_TRUE(leased) << leased.status().to_string();
  EXPECT_EQ(leased->kvs.size(), 1u);
  cluster_->resume(frozen);
  { Status healthy = cluster_->wait_healthy(20s); ASSERT_TRUE(healthy) << healthy.to_string(); }
}

TEST_F(EtcdClusterTest, AFrozenLeaderCostsNoLease) {
  const int leader = cluster_->leader(10s);
  ASSERT_GE(leader, 0) << "no etcd leader found";
  const int follower = (leader + 1) % 3;
  const int other = 3 - leader - follower;
  // One keepalive streams to the leader itself, one to a follower (which
  // forwards keepalives to the leader, and then waits for the frozen one).
  auto on_leader = client_on({leader, follower, other}, 3000ms);
  auto on_follower = client_on({follower, other, leader}, 3000ms);
  ASSERT_TRUE(on_leader && on_follower);
  std::vector<std::unique_ptr<LeaseKeepAlive>> kas;
  std::vector<std::int64_t> leases;
  std::atomic<int> lost{0};
  for (Client* c : {on_leader.get(), on_follower.get()}) {
    auto lease = c->lease_grant(3);
    ASSERT_TRUE(lease) << lease.status().to_string();
    ASSERT_EQ(lease->ttl_seconds, 3);
    auto ka = LeaseKeepAlive::start(*c, lease->id, lease->ttl_seconds, [&](const Status&) { ++lost; });
    ASSERT_TRUE(ka) << ka.status().to_string();
    ASSERT_TRUE(c->put("/l/" + std::to_string(lease->id), "x", lease->id));
    leases.push_back(lease->id);
    kas.push_back(std::move(*ka));
  }
  ASSERT_TRUE(testing::eventually([&] { return kas[0]->acks() >= 2 && kas[1]->acks() >= 2; }, 10s));

  MarginRecorder margin({kas[0].get(), kas[1].get()});
  cluster_->pause(leader);
  const Clock::time_point frozen_at = Clock::now();
  // When one of the two others calls itself leader (their Status, polled
  // every 50 ms: seen at most a poll late).
  ASSERT_GE(cluster_->leader(30s, leader), 0) << "no new etcd leader";
  const auto election = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - frozen_at);
  observe({kas[0].get(), kas[1].get()}, frozen_at + 6s, 30s);
  const auto least = margin.least();
  std::cout << "frozen leader: a new leader after " << election.count() << " ms; least lease time left "
            << to_ms(least) << " ms of 3 s\n";
  // etcd/keepalive.h, TIMING: a lease of 3 s survives a frozen leader when
  // the others elect a new one within 2.1 s of the freeze. No client can
  // keep it through a longer election (an unanswered lease cannot be known
  // to exist), which a starved machine can take: then the keepalive must
  // say the lease is lost rather than claim time etcd never confirmed.
  if (election <= 2100ms) {
    EXPECT_EQ(lost.load(), 0) << "a new leader was elected " << election.count() << " ms after the freeze";
    for (std::size_t i = 0; i < kas.size(); ++i) {
      EXPECT_FALSE(kas[i]->lost()) << i;
      EXPECT_GE(kas[i]->safe_deadline(), frozen_at + 6s) << i;
    }
  } else {
    for (std::size_t i = 0; i < kas.size(); ++i) {
      if (kas[i]->lost()) continue;  // reported through the callback, counted in `lost`
      EXPECT_GE(kas[i]->safe_deadline(), frozen_at + 6s) << i;
    }
    EXPECT_EQ(lost.load(), static_cast<int>(std::count_if(kas.begin(), kas.end(), [](const auto& k) { return k->lost(); })));
  }
  ASSERT_TRUE(cluster_->healthy(follower, 20s));
  for (std::size_t i = 0; i < leases.size(); ++i) {
    if (kas[i]->lost()) continue;  // given up: etcd may have ended the lease since
    auto leased = on_follower->range("/l/" + std::to_string(leases[i]));
    ASSERT_TRUE(leased) << leased.status().to_string();
    EXPECT_EQ(leased->kvs.size(), 1u) << leases[i];
  }
  cluster_->resume(leader);
  { Status healthy = cluster_->wait_healthy(20s); ASSERT_TRUE(healthy) << healthy.to_string(); }
}

TEST(EtcdClusterFixture, LeavesNoProcessBehind) {
  std::vector<pid_t> pids;
  std::string data;
  {
    testing::EtcdClusterOptions options;
    options.members = 3;
    auto cluster = EtcdCluster::start(options);
    ASSERT_TRUE(cluster) << cluster.status().to_string();
    (*cluster)->pause(1);  // a stopped member must be killed too
    ASSERT_TRUE((*cluster)->restart(2));
    for (int i = 0; i < 3; ++i) pids.push_back((*cluster)->pid(i));
    data = (*cluster)->data_root();
  }
  for (pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "etcd pid " << pid << " still exists";
    EXPECT_EQ(errno, ESRCH);
  }
  EXPECT_NE(::access(data.c_str(), F_OK), 0) << data << " was not removed";
}

// A port picked free can be taken before etcd binds it (a test beside this
// one, a proxy): the fixture starts again on new ports instead of failing.
// Here the peer route itself takes the first peer port it is given.
TEST(EtcdClusterFixture, StartsAgainOnNewPortsWhenAPortWasTaken) {
  UniqueFd taken;
  std::vector<std::uint16_t> given;
  testing::EtcdClusterOptions options;
  options.members = 1;
  options.peer_route = [&](int, std::uint16_t peer_port) {
    given.push_back(peer_port);
    if (given.size() == 1) {
      taken = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(peer_port);
      EXPECT_EQ(::bind(taken.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
      EXPECT_EQ(::listen(taken.get(), 1), 0) << std::strerror(errno);
    }
    return peer_port;
  };
  auto cluster = EtcdCluster::start(options);
  ASSERT_TRUE(cluster) << cluster.status().to_string();
  ASSERT_EQ(given.size(), 2U) << "one attempt on the taken port, one on a new one";
  EXPECT_NE(given[0], given[1]);
  EXPECT_TRUE((*cluster)->healthy(0, 10s));
}

}  // namespace
}  // namespace leasehold::etcd
