// The etcd client against one real etcd member: KV, txn, lease, keepalive,
// watch and compaction.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

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
using testing::eventually;

class EtcdClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = EtcdCluster::start();
    ASSERT_TRUE(cluster) << cluster.status().to_string();
    cluster_ = std::move(*cluster);
    auto client = Client::create({cluster_->endpoints(), 5000ms});
    ASSERT_TRUE(client) << client.status().to_string();
    client_ = std::move(*client);
  }

  bool key_exists(const std::string& key) {
    auto r = client_->range(key);
    return r && !r->kvs.empty();
  }

  std::unique_ptr<EtcdCluster> cluster_;
  std::unique_ptr<Client> client_;
};

// Collects watch events and the failure, thread-safely.
struct EventLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<WatchEvent> events;
  std::optional<WatchFailure> failure;

  Watcher::EventsHandler on_events() {
    return [this](const std::vector<WatchEvent>& batch) {
      std::lock_guard lock(mu);
      events.insert(events.end(), batch.begin(), batch.end());
      cv.notify_all();
    };
  }
  Watcher::FailureHandler on_failure() {
    return [this](const WatchFailure& f) {
      std::lock_guard lock(mu);
      failure = f;
      cv.notify_all();
    };
  }
  bool wait_for(std::size_t count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return events.size() >= count; });
  }
  bool wait_for_failure(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return failure.has_value(); });
  }
};

TEST_F(EtcdClientTest, PutRangeDelete) {
  auto p1 = client_->put("/t/a", "1");
  ASSERT_TRUE(p1) << p1.status().to_string();
  auto r = client_->range("/t/a");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kvs.size(), 1u);
  EXPECT_EQ(r->kvs[0].value, "1");
  EXPECT_EQ(r->kvs[0].create_revision, p1->revision);
  EXPECT_EQ(r->kvs[0].mod_revision, p1->revision);
  EXPECT_EQ(r->kvs[0].version, 1);
  EXPECT_EQ(r->revision, p1->revision);

  auto p2 = client_->put("/t/a", "2");
  ASSERT_TRUE(p2);
  EXPECT_GT(p2->revision, p1->revision);
  r = client_->range("/t/a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kvs[0].value, "2");
  EXPECT_EQ(r->kvs[0].create_revision, p1->revision);
  EXPECT_EQ(r->kvs[0].mod_revision, p2->revision);
  EXPECT_EQ(r->kvs[0].version, 2);

  ASSERT_TRUE(client_->put("/t/c", "3"));
  ASSERT_TRUE(client_->put("/t/b", std::string("\0bin\xff", 5)));
  ASSERT_TRUE(client_->put("/u/x", "other prefix"));
  r = client_->range("/t/", prefix_end("/t/"));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kvs.size(), 3u);
  EXPECT_EQ(r->kvs[0].key, "/t/a");
  EXPECT_EQ(r->kvs[1].key, "/t/b");
  EXPECT_EQ(r->kvs[1].value, std::string("\0bin\xff", 5));
  EXPECT_EQ(r->kvs[2].key, "/t/c");

  // Reading the past: the first value is still visible at its revision.
  RangeOptions past;
  past.revision = p1->revision;
  r = client_->range("/t/a", {}, past);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kvs.at(0).value, "1");

  RangeOptions limited;
  limited.limit = 2;
  r = client_->range("/t/", prefix_end("/t/"), limited);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kvs.size(), 2u);
  EXPECT_TRUE(r->more);
  EXPECT_EQ(r->count, 3);

  auto d = client_->delete_range("/t/", prefix_end("/t/"));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->deleted, 3);
  r = client_->range("/t/", prefix_end("/t/"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->kvs.empty());
  EXPECT_TRUE(key_exists("/u/x"));
  d = client_->delete_range("/t/a");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->deleted, 0);
}

TEST_F(EtcdClientTest, TxnCompareSemantics) {
  using Op = Compare::Op;
  // create_revision == 0 means "does not exist".
  auto t = client_->txn({Compare::create_revision("/x", Op::kEqual, 0)}, {TxnOp::put("/x", "first")},
                        {TxnOp::get("/x")});
  ASSERT_TRUE(t) << t.status().to_string();
  EXPECT_TRUE(t->succeeded);
  ASSERT_EQ(t->responses.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<PutResult>(t->responses[0]));
  const std::int64_t created = t->revision;

  t = client_->txn({Compare::create_revision("/x", Op::kEqual, 0)}, {TxnOp::put("/x", "second")},
                   {TxnOp::get("/x")});
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->succeeded);
  ASSERT_TRUE(std::holds_alternative<RangeResult>(t->responses.at(0)));
  EXPECT_EQ(std::get<RangeResult>(t->responses[0]).kvs.at(0).value, "first");
  EXPECT_EQ(std::get<RangeResult>(t->responses[0]).kvs.at(0).create_revision, created);

  // Each target: the guard holds for the current state only.
  auto check = [&](const Compare& c) {
    auto r = client_->txn({c}, {});
    EXPECT_TRUE(r) << r.status().to_string();
    return r && r->succeeded;
  };
  EXPECT_TRUE(check(Compare::create_revision("/x", Op::kEqual, created)));
  EXPECT_FALSE(check(Compare::create_revision("/x", Op::kEqual, created + 1)));
  EXPECT_TRUE(check(Compare::mod_revision("/x", Op::kEqual, created)));
  EXPECT_TRUE(check(Compare::value_is("/x", Op::kEqual, "first")));
  EXPECT_FALSE(check(Compare::value_is("/x", Op::kEqual, "second")));
  EXPECT_TRUE(check(Compare::version("/x", Op::kEqual, 1)));
  EXPECT_TRUE(check(Compare::version("/x", Op::kLess, 2)));
  EXPECT_TRUE(check(Compare::lease("/x", Op::kEqual, 0)));

  ASSERT_TRUE(client_->put("/x", "changed"));
  EXPECT_TRUE(check(Compare::create_revision("/x", Op::kEqual, created)));  // unchanged by writes
  EXPECT_FALSE(check(Compare::mod_revision("/x", Op::kEqual, created)));
  EXPECT_TRUE(check(Compare::mod_revision("/x", Op::kGreater, created)));
  EXPECT_TRUE(check(Compare::version("/x", Op::kEqual, 2)));
  EXPECT_TRUE(check(Compare::value_is("/x", Op::kNotEqual, "first")));

  // A delete and re-create gives a new create revision: the old guard fails.
  auto both = client_->txn({Compare::create_revision("/x", Op::kEqual, created)},
                           {TxnOp::del("/x"), TxnOp::put("/y", "moved")});
  ASSERT_TRUE(both);
  EXPECT_TRUE(both->succeeded);
  ASSERT_EQ(both->responses.size(), 2u);
  EXPECT_EQ(std::get<DeleteResult>(both->responses[0]).deleted, 1);
  ASSERT_TRUE(client_->put("/x", "again"));
  EXPECT_FALSE(check(Compare::create_revision("/x", Op::kEqual, created)));
  EXPECT_TRUE(key_exists("/y"));
}

TEST_F(EtcdClientTest, EtcdRejectionsAreInvalidArgument) {
  // etcd refuses two writes to one key in a txn branch.
  auto t = client_->txn({}, {TxnOp::put("/dup", "1"), TxnOp::put("/dup", "2")});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().code(), ErrorCode::kInvalidArgument) << t.status().to_string();
  // A future revision is out of range.
  RangeOptions future;
  future.revision = 1'000'000;
  auto r = client_->range("/k", {}, future);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound) << r.status().to_string();
}

TEST_F(EtcdClientTest, LeaseRevokeAndExpiryRemoveKeys) {
  auto lease = client_->lease_grant(5);
  ASSERT_TRUE(lease) << lease.status().to_string();
  EXPECT_NE(lease->id, 0);
  ASSERT_TRUE(client_->put("/leased/a", "1", lease->id));
  ASSERT_TRUE(client_->put("/leased/b", "2", lease->id));
  auto r = client_->range("/leased/a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kvs.at(0).lease, lease->id);
  ASSERT_TRUE(client_->lease_revoke(lease->id));
  EXPECT_FALSE(key_exists("/leased/a"));
  EXPECT_FALSE(key_exists("/leased/b"));
  Status again = client_->lease_revoke(lease->id);
  EXPECT_EQ(again.code(), ErrorCode::kNotFound) << again.to_string();
  EXPECT_EQ(client_->put("/leased/c", "x", lease->id).status().code(), ErrorCode::kNotFound);

  // Expiry: etcd's minimum TTL here is 2 s (1.5 election timeouts, rounded up).
  auto short_lease = client_->lease_grant(1);
  ASSERT_TRUE(short_lease);
  ASSERT_TRUE(client_->put("/leased/expiring", "1", short_lease->id));
  const auto start = Clock::now();
  EXPECT_TRUE(eventually([&] { return !key_exists("/leased/expiring"); }, 10s));
  EXPECT_GE(Clock::now() - start, std::chrono::seconds(short_lease->ttl_seconds) - 1s);
}

TEST_F(EtcdClientTest, KeepAliveHoldsTheLeasePastItsTtl) {
  const auto granted_at = Clock::now();
  auto lease = client_->lease_grant(2);
  ASSERT_TRUE(lease);
  ASSERT_TRUE(client_->put("/ka/key", "v", lease->id));
  std::atomic<bool> lost_called{false};
  {
    auto ka = LeaseKeepAlive::start(*client_, lease->id, lease->ttl_seconds,
                                    [&](const Status&) { lost_called = true; });
    ASSERT_TRUE(ka) << ka.status().to_string();
    // Past the TTL on keepalives alone: four answered, and more than one TTL
    // since the grant (a lower bound, not scaled). Stops early if lost.
    const auto ttl = std::chrono::seconds(lease->ttl_seconds);
    EXPECT_TRUE(eventually([&] { return (*ka)->lost() || ((*ka)->acks() >= 4 && Clock::now() > granted_at + ttl); },
                           2 * ttl + 10s));
    EXPECT_TRUE(key_exists("/ka/key"));
    EXPECT_FALSE((*ka)->lost());
    EXPECT_GE((*ka)->acks(), 4);
    EXPECT_GT((*ka)->safe_deadline(), Clock::now());
    EXPECT_LE((*ka)->safe_deadline(), Clock::now() + std::chrono::seconds(lease->ttl_seconds));
  }
  EXPECT_FALSE(lost_called.load());
  // Without keepalives the lease ends and takes the key with it.
  EXPECT_TRUE(eventually([&] { return !key_exists("/ka/key"); }, 10s));
}

TEST_F(EtcdClientTest, KeepAliveReportsARevokedLease) {
  auto lease = client_->lease_grant(3);
  ASSERT_TRUE(lease);
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> lost;
  auto ka = LeaseKeepAlive::start(*client_, lease->id, lease->ttl_seconds, [&](const Status& why) {
    std::lock_guard lock(mu);
    lost = why;
    cv.notify_all();
  });
  ASSERT_TRUE(ka) << ka.status().to_string();
  ASSERT_TRUE(client_->lease_revoke(lease->id));
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return lost.has_value(); }));
  EXPECT_EQ(lost->code(), ErrorCode::kSessionExpired) << lost->to_string();
  EXPECT_TRUE((*ka)->lost());
}

TEST_F(EtcdClientTest, KeepAliveOfAMissingLeaseFailsAtStart) {
  auto ka = LeaseKeepAlive::start(*client_, 0x1234567, 5);
  ASSERT_FALSE(ka);
  EXPECT_EQ(ka.status().code(), ErrorCode::kSessionExpired) << ka.status().to_string();
}

TEST_F(EtcdClientTest, WatchDeliversEventsInRevisionOrder) {
  EventLog log;
  auto watcher = Watcher::start(*client_, {"/w/", prefix_end("/w/"), 0}, log.on_events(), log.on_failure());
  ASSERT_TRUE(watcher) << watcher.status().to_string();
  std::vector<std::int64_t> revisions;
  for (int i = 0; i < 20; ++i) {
    auto p = client_->put("/w/" + std::to_string(i % 5), "v" + std::to_string(i));
    ASSERT_TRUE(p);
    revisions.push_back(p->revision);
  }
  auto d = client_->delete_range("/w/0");
  ASSERT_TRUE(d);
  auto t = client_->txn({}, {TxnOp::put("/w/t1", "a"), TxnOp::put("/w/t2", "b")});
  ASSERT_TRUE(t);
  ASSERT_TRUE(client_->put("/other", "not watched"));
  ASSERT_TRUE(log.wait_for(23, 10s));
  std::lock_guard lock(log.mu);
  ASSERT_EQ(log.events.size(), 23u);
  for (int i = 0; i < 20; ++i) {
    const WatchEvent& e = log.events[static_cast<std::size_t>(i)];
    EXPECT_EQ(e.type, WatchEvent::Type::kPut);
    EXPECT_EQ(e.kv.key, "/w/" + std::to_string(i % 5));
    EXPECT_EQ(e.kv.value, "v" + std::to_string(i));
    EXPECT_EQ(e.kv.mod_revision, revisions[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(log.events[20].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(log.events[20].kv.key, "/w/0");
  EXPECT_EQ(log.events[20].kv.mod_revision, d->revision);
  EXPECT_EQ(log.events[21].kv.mod_revision, t->revision);  // one txn, one revision
  EXPECT_EQ(log.events[22].kv.mod_revision, t->revision);
  // The watcher moves next_revision() on only after the handler returned
  // (etcd/watcher.h: every revision below it was delivered), and the handler
  // wakes this thread first: on a busy machine the store can come later.
  EXPECT_TRUE(eventually([&] { return (*watcher)->next_revision() == t->revision + 1; }, 10s))
      << "next_revision " << (*watcher)->next_revision() << ", want " << t->revision + 1;
  EXPECT_FALSE(log.failure.has_value());
}

TEST_F(EtcdClientTest, WatchFromAPastRevisionReplaysHistory) {
  std::vector<std::int64_t> revisions;
  for (int i = 0; i < 5; ++i) {
    auto p = client_->put("/h/k", std::to_string(i));
    ASSERT_TRUE(p);
    revisions.push_back(p->revision);
  }
  EventLog log;
  auto watcher = Watcher::start(*client_, {"/h/k", {}, revisions[1]}, log.on_events(), log.on_failure());
  ASSERT_TRUE(watcher) << watcher.status().to_string();
  ASSERT_TRUE(client_->put("/h/k", "live"));
  ASSERT_TRUE(log.wait_for(5, 10s));
  std::lock_guard lock(log.mu);
  ASSERT_EQ(log.events.size(), 5u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(log.events[i].kv.value, std::to_string(i + 1));
    EXPECT_EQ(log.events[i].kv.mod_revision, revisions[i + 1]);
  }
  EXPECT_EQ(log.events[4].kv.value, "live");
}

TEST_F(EtcdClientTest, WatchAtACompactedRevisionFails) {
  auto first = client_->put("/c/k", "0");
  ASSERT_TRUE(first);
  std::int64_t last = 0;
  for (int i = 1; i < 5; ++i) {
    auto p = client_->put("/c/k", std::to_string(i));
    ASSERT_TRUE(p);
    last = p->revision;
  }
  auto compacted = client_->compact(last);
  ASSERT_TRUE(compacted) << compacted.status().to_string();

  RangeOptions old;
  old.revision = first->revision;
  auto r = client_->range("/c/k", {}, old);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound) << r.status().to_string();

  EventLog log;
  auto watcher = Watcher::start(*client_, {"/c/k", {}, first->revision}, log.on_events(), log.on_failure());
  ASSERT_TRUE(watcher) << watcher.status().to_string();
  ASSERT_TRUE(log.wait_for_failure(10s));
  std::lock_guard lock(log.mu);
  EXPECT_EQ(log.failure->status.code(), ErrorCode::kNotFound) << log.failure->status.to_string();
  EXPECT_EQ(log.failure->compact_revision, last);
  EXPECT_TRUE(log.events.empty());
  EXPECT_TRUE((*watcher)->failed());

  // Watching from the compact revision itself works.
  EventLog fresh;
  auto ok = Watcher::start(*client_, {"/c/k", {}, last}, fresh.on_events(), fresh.on_failure());
  ASSERT_TRUE(ok);
  ASSERT_TRUE(fresh.wait_for(1, 10s));
  std::lock_guard fresh_lock(fresh.mu);
  EXPECT_EQ(fresh.events.at(0).kv.value, "4");
  EXPECT_FALSE(fresh.failure.has_value());
}

}  // namespace
}  // namespace leasehold::etcd
