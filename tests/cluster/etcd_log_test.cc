// The etcd log backend against a real etcd member: fenced appends (a deposed
// primary's append is rejected and writes nothing), replay, snapshots in
// etcd with log-prefix deletion and compaction.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "etcd/client.h"
#include "etcd/election.h"
#include "etcd/keepalive.h"
#include "log/etcd_log.h"
#include "log/log_format.h"
#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"
#include "testkit/temp_dir.h"

namespace leasehold::log {
namespace {

using namespace std::chrono_literals;
using testing::EtcdCluster;

constexpr char kPrefix[] = "/leasehold/logtest";

class EtcdLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = EtcdCluster::start();
    ASSERT_TRUE(cluster) << cluster.status().to_string();
    cluster_ = std::move(*cluster);
    auto client = etcd::Client::create({cluster_->endpoints(), 3000ms});
    ASSERT_TRUE(client) << client.status().to_string();
    client_ = std::shared_ptr<etcd::Client>(std::move(*client));
  }

  std::unique_ptr<EtcdLog> open_log(const std::string& dir) {
    EtcdLogOptions o;
    o.client = client_;
    o.prefix = kPrefix;
    o.local_dir = dir;
    o.append_timeout = 2000ms;
    o.snapshot_chunk_bytes = 1000;  // several chunks per snapshot
    auto log = EtcdLog::open(o);
    EXPECT_TRUE(log) << log.status().to_string();
    return log ? std::move(*log) : nullptr;
  }

  // Campaigns with a fresh lease; returns the leader key.
  etcd::QueueKey elect(std::int64_t& lease_out) {
    auto lease = client_->lease_grant(10);
    EXPECT_TRUE(lease);
    lease_out = lease->id;
    etcd::Election election(*client_, std::string(kPrefix) + "/election");
    auto key = election.campaign(lease->id, "127.0.0.1:1", std::chrono::steady_clock::now() + testing::scaled(10s));
    EXPECT_TRUE(key) << key.status().to_string();
    return *key;
  }

  static Result<LogIndex> append_sync(Log& log, std::string bytes) {
    std::promise<Result<LogIndex>> p;
    auto f = p.get_future();
    log.append(std::move(bytes), [&p](Result<LogIndex> r) { p.set_value(std::move(r)); });
    return f.get();
  }
  static Status snapshot_sync(Log& log, LogIndex index, std::string bytes) {
    std::promise<Status> p;
    auto f = p.get_future();
    log.save_snapshot(index, std::move(bytes), [&p](Status s) { p.set_value(std::move(s)); });
    return f.get();
  }
  static std::vector<std::pair<LogIndex, std::string>> read_all(Log& log, LogIndex from) {
    std::vector<std::pair<LogIndex, std::string>> out;
    Status st = log.read(from, [&](LogIndex i, std::string_view b) {
      out.emplace_back(i, std::string(b));
      return Status::ok();
    });
    EXPECT_TRUE(st) << st.to_string();
    return out;
  }

  std::unique_ptr<EtcdCluster> cluster_;
  std::shared_ptr<etcd::Client> client_;
  testing::TempDir dir_;
};

TEST_F(EtcdLogTest, AppendWithoutTermIsRejected) {
  auto log = open_log(dir_.path() + "/a");
  auto r = append_sync(*log, "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kConflict);
}

TEST_F(EtcdLogTest, DeposedPrimaryAppendIsRejectedAndWritesNothing) {
  auto a = open_log(dir_.path() + "/a");
  std::int64_t lease_a = 0;
  a->set_term(elect(lease_a));
  auto first = append_sync(*a, "batch-1");
  ASSERT_TRUE(first) << first.status().to_string();
  EXPECT_EQ(*first, 1u);

  // A's lease ends (as when it is paused past its TTL); B is elected.
  ASSERT_TRUE(client_->lease_revoke(lease_a));
  auto b = open_log(dir_.path() + "/b");
  ASSERT_EQ(read_all(*b, 1).size(), 1u);
  std::int64_t lease_b = 0;
  b->set_term(elect(lease_b));

  auto rejected = append_sync(*a, "from-the-deposed-primary");
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.status().code(), ErrorCode::kConflict) << rejected.status().to_string();

  auto second = append_sync(*b, "batch-2");
  ASSERT_TRUE(second) << second.status().to_string();
  EXPECT_EQ(*second, 2u);

  // Every reader sees exactly the fenced entries, in order.
  auto c = open_log(dir_.path() + "/c");
  auto all = read_all(*c, 1);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], (std::pair<LogIndex, std::string>{1, "batch-1"}));
  EXPECT_EQ(all[1], (std::pair<LogIndex, std::string>{2, "batch-2"}));
  EXPECT_EQ(c->position().last, 2u);
}

TEST_F(EtcdLogTest, SnapshotInEtcdDeletesPrefixAndANewNodeJoinsFromIt) {
  auto a = open_log(dir_.path() + "/a");
  std::int64_t lease_a = 0;
  a->set_term(elect(lease_a));
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(append_sync(*a, "b" + std::to_string(i)));
  const std::string state(4500, 's');  // 5 chunks of 1000 bytes
  ASSERT_TRUE(snapshot_sync(*a, 3, state));
  for (int i = 6; i <= 7; ++i) ASSERT_TRUE(append_sync(*a, "b" + std::to_string(i)));
  ASSERT_TRUE(snapshot_sync(*a, 6, state + "x"));  // compacts at the first snapshot's revision

  // Entries <= 6 are gone from etcd.
  auto range = client_->range(EtcdLog::log_prefix(kPrefix), etcd::prefix_end(EtcdLog::log_prefix(kPrefix)));
  ASSERT_TRUE(range);
  ASSERT_EQ(range->kvs.size(), 1u);
  EXPECT_EQ(EtcdLog::parse_log_key(kPrefix, range->kvs[0].key), std::optional<LogIndex>(7));

  // A wiped node loads the etcd snapshot, then the rest of the log.
  auto fresh = open_log(dir_.path() + "/fresh");
  auto snap = fresh->load_snapshot();
  ASSERT_TRUE(snap) << snap.status().to_string();
  ASSERT_TRUE(snap->has_value());
  EXPECT_EQ((*snap)->index, 6u);
  EXPECT_EQ((*snap)->bytes, state + "x");
  auto rest = read_all(*fresh, 7);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].second, "b7");
  // Reading below the deleted prefix is a clear kNotFound.
  Status below = fresh->read(2, [](LogIndex, std::string_view) { return Status::ok(); });
  EXPECT_EQ(below.code(), ErrorCode::kNotFound) << below.to_string();

  auto highest = EtcdLog::highest_index(*client_, kPrefix);
  ASSERT_TRUE(highest);
  EXPECT_EQ(highest->first, 7u);
}

// A restarted node resumes from the NEWER of its own local snapshot and the
// etcd snapshot: a standby's snapshots are local only (it holds no term), so
// after a restart its own file wins when it is ahead of the primary's, and
// the etcd one wins when the primary snapshotted later.
TEST_F(EtcdLogTest, RestartedNodeResumesFromTheNewerOfItsLocalAndTheEtcdSnapshot) {
  auto primary = open_log(dir_.path() + "/p");
  std::int64_t lease = 0;
  primary->set_term(elect(lease));
  for (int i = 1; i <= 6; ++i) ASSERT_TRUE(append_sync(*primary, "b" + std::to_string(i)));
  ASSERT_TRUE(snapshot_sync(*primary, 2, "etcd-at-2"));  // local + etcd

  const std::string standby_dir = dir_.path() + "/s";
  {
    auto standby = open_log(standby_dir);  // no term: a standby
    standby->observe(6);                   // it followed the log up to 6
    Status saved = snapshot_sync(*standby, 5, "local-at-5");
    ASSERT_TRUE(saved) << saved.to_string();
    auto meta = client_->range(std::string(kPrefix) + "/snap/meta");
    ASSERT_TRUE(meta);
    ASSERT_EQ(meta->kvs.size(), 1u);
    EXPECT_EQ(get_u64_le(std::string_view(meta->kvs[0].value).substr(4)), 2u)
        << "a standby's snapshot must not reach etcd";
  }
  auto restarted = open_log(standby_dir);
  auto snap = restarted->load_snapshot();
  ASSERT_TRUE(snap) << snap.status().to_string();
  ASSERT_TRUE(snap->has_value());
  EXPECT_EQ((*snap)->index, 5u);
  EXPECT_EQ((*snap)->bytes, "local-at-5");
  auto rest = read_all(*restarted, 6);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].second, "b6");

  // The primary snapshots past the standby's file: now etcd's is newer.
  ASSERT_TRUE(snapshot_sync(*primary, 6, "etcd-at-6"));
  auto again = open_log(standby_dir);
  snap = again->load_snapshot();
  ASSERT_TRUE(snap) << snap.status().to_string();
  ASSERT_TRUE(snap->has_value());
  EXPECT_EQ((*snap)->index, 6u);
  EXPECT_EQ((*snap)->bytes, "etcd-at-6");
}

// The catch-up read of a standby that fell behind: the etcd snapshot and
// the entries after it at ONE revision, so entries appended after that read
// are exactly the ones a watch from revision + 1 delivers.
TEST_F(EtcdLogTest, CatchUpReadsTheSnapshotAndTheEntriesAfterItAtOneRevision) {
  auto a = open_log(dir_.path() + "/a");
  // Nothing stored yet: no snapshot (the empty state), no entries.
  auto empty = a->read_catch_up(100);
  ASSERT_TRUE(empty) << empty.status().to_string();
  EXPECT_EQ(empty->snapshot_index, 0u);
  EXPECT_TRUE(empty->entries.empty());
  EXPECT_GT(empty->revision, 0);

  std::int64_t lease_a = 0;
  a->set_term(elect(lease_a));
  for (int i = 1; i <= 4; ++i) ASSERT_TRUE(append_sync(*a, "b" + std::to_string(i)));
  // Before any snapshot: every entry from 1.
  auto no_snapshot = a->read_catch_up(100);
  ASSERT_TRUE(no_snapshot) << no_snapshot.status().to_string();
  EXPECT_EQ(no_snapshot->snapshot_index, 0u);
  ASSERT_EQ(no_snapshot->entries.size(), 4u);
  EXPECT_EQ(no_snapshot->entries[0], (std::pair<LogIndex, std::string>{1, "b1"}));

  const std::string state(2500, 's');  // 3 chunks
  ASSERT_TRUE(snapshot_sync(*a, 2, state));
  ASSERT_TRUE(append_sync(*a, "b5"));
  ASSERT_TRUE(snapshot_sync(*a, 4, state + "y"));  // deletes <= 4, compacts at the first meta
  ASSERT_TRUE(append_sync(*a, "b6"));

  auto standby = open_log(dir_.path() + "/standby");
  auto got = standby->read_catch_up(100);
  ASSERT_TRUE(got) << got.status().to_string();
  EXPECT_EQ(got->snapshot_index, 4u);
  EXPECT_EQ(got->snapshot_bytes, state + "y");
  ASSERT_EQ(got->entries.size(), 2u);
  EXPECT_EQ(got->entries[0], (std::pair<LogIndex, std::string>{5, "b5"}));
  EXPECT_EQ(got->entries[1], (std::pair<LogIndex, std::string>{6, "b6"}));
  EXPECT_EQ(standby->position().last, 6u);
  EXPECT_EQ(standby->position().snapshot, 4u);

  // An entry appended after the read has a revision after it.
  ASSERT_TRUE(append_sync(*a, "b7"));
  auto seven = client_->range(EtcdLog::log_key(kPrefix, 7));
  ASSERT_TRUE(seven);
  ASSERT_EQ(seven->kvs.size(), 1u);
  EXPECT_GT(seven->kvs[0].mod_revision, got->revision);

  // Too many entries after the snapshot: a clear limit error.
  auto capped = standby->read_catch_up(2);
  ASSERT_FALSE(capped);
  EXPECT_EQ(capped.status().code(), ErrorCode::kLimitExceeded) << capped.status().to_string();
}

}  // namespace
}  // namespace leasehold::log
