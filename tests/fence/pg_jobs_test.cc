// The job-claim pattern: SKIP LOCKED claims by racing workers, fenced
// completion, requeue of a dead worker's jobs.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

#include "leasehold/fence_postgres.h"
#include "tests/fence/pg_test_support.h"

namespace leasehold::fence {
namespace {

using testing::psql;
using testing::unique_name;

class PgJobs : public testing::PgTest {
 protected:
  void SetUp() override {
    testing::PgTest::SetUp();
    auto f = PostgresFence::connect(conninfo_);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    fence_ = std::move(f).value();
    jobs_ = unique_name("jobs");
    ASSERT_TRUE(fence_->ensure_jobs_table(jobs_).is_ok());
    ASSERT_TRUE(fence_->ensure_jobs_table(jobs_).is_ok()) << "idempotent";
  }
  std::unique_ptr<PostgresFence> fence_;
  std::string jobs_;
};

TEST_F(PgJobs, RacingWorkersClaimEachJobExactlyOnce) {
  constexpr int kJobs = 120;
  constexpr int kWorkers = 5;
  for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(fence_->add_job(jobs_, "job " + std::to_string(i)).is_ok());
  std::mutex mu;
  std::multiset<std::int64_t> claimed;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      auto f = PostgresFence::connect(conninfo_);
      if (!f) {
        ADD_FAILURE() << f.status().to_string();
        return;
      }
      const std::string owner = "worker-" + std::to_string(w);
      const Token token = 100 + w;
      for (int n = 0; n <= kJobs; ++n) {  // bounded: never more claims than jobs
        auto job = (*f)->claim_job(jobs_, owner, token);
        if (!job) {
          ADD_FAILURE() << job.status().to_string();
          return;
        }
        if (!job->has_value()) return;  // queue drained
        Status done = (*f)->complete_job(jobs_, (*job)->id, owner, token);
        if (!done) ADD_FAILURE() << done.to_string();
        std::lock_guard lock(mu);
        claimed.insert((*job)->id);
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(claimed.size(), static_cast<std::size_t>(kJobs));
  EXPECT_EQ(std::set<std::int64_t>(claimed.begin(), claimed.end()).size(), claimed.size())
      << "a job was claimed twice";
  EXPECT_EQ(psql("SELECT count(*) FROM " + jobs_ + " WHERE done")[0], std::to_string(kJobs));
  EXPECT_EQ(psql("SELECT count(DISTINCT owner) > 1 FROM " + jobs_)[0], "t") << "work was shared";
}

TEST_F(PgJobs, ClaimReturnsPayloadAndNothingWhenEmpty) {
  auto none = fence_->claim_job(jobs_, "w", 1);
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
  auto id = fence_->add_job(jobs_, "send invoice 7");
  ASSERT_TRUE(id.is_ok());
  auto job = fence_->claim_job(jobs_, "w", 1);
  ASSERT_TRUE(job.is_ok() && job->has_value());
  EXPECT_EQ((*job)->id, *id);
  EXPECT_EQ((*job)->payload, "send invoice 7");
  EXPECT_EQ(psql("SELECT owner || ':' || fence_token FROM " + jobs_)[0], "w:1") << "token recorded";
}

TEST_F(PgJobs, PausedWorkersLateCompletionIsRefusedAfterRequeue) {
  const std::string results = unique_name("results");
  psql("CREATE TABLE " + results + " (job bigint, by text)");
  const std::string record = "INSERT INTO " + results + " VALUES ($1, $2)";
  ASSERT_TRUE(fence_->add_job(jobs_, "charge card").is_ok());
  auto a = fence_->claim_job(jobs_, "worker-a", 33);
  ASSERT_TRUE(a.is_ok() && a->has_value());
  const std::int64_t id = (*a)->id;
  // worker-a pauses; its session expires; a supervisor requeues its jobs.
  EXPECT_EQ(*fence_->requeue_jobs_of(jobs_, "worker-a"), 1u);
  auto b = fence_->claim_job(jobs_, "worker-b", 34);
  ASSERT_TRUE(b.is_ok() && b->has_value());
  EXPECT_EQ((*b)->id, id);
  // worker-a wakes up and tries to finish: refused, and its result not written.
  Status late = fence_->complete_job(jobs_, id, "worker-a", 33, record, {std::to_string(id), "a"});
  EXPECT_EQ(late.code(), ErrorCode::kStaleToken);
  EXPECT_NE(late.message().find("worker-b"), std::string::npos) << late.message();
  EXPECT_EQ(fence_->release_job(jobs_, id, "worker-a", 33).code(), ErrorCode::kStaleToken);
  // worker-b finishes; its result is written in the same transaction.
  ASSERT_TRUE(fence_->complete_job(jobs_, id, "worker-b", 34, record, {std::to_string(id), "b"}).is_ok());
  EXPECT_TRUE(fence_->complete_job(jobs_, id, "worker-b", 34).is_ok()) << "a retried completion";
  EXPECT_EQ(fence_->release_job(jobs_, id, "worker-b", 34).code(), ErrorCode::kStaleToken);
  EXPECT_EQ(psql("SELECT string_agg(by, ',') FROM " + results)[0], "b");
  EXPECT_EQ(fence_->complete_job(jobs_, 999999, "worker-b", 34).code(), ErrorCode::kNotFound);
}

TEST_F(PgJobs, ReleasedJobGoesBackToTheQueue) {
  ASSERT_TRUE(fence_->add_job(jobs_, "x").is_ok());
  auto a = fence_->claim_job(jobs_, "w1", 5);
  ASSERT_TRUE(a.is_ok() && a->has_value());
  EXPECT_FALSE(fence_->claim_job(jobs_, "w2", 6)->has_value());
  ASSERT_TRUE(fence_->release_job(jobs_, (*a)->id, "w1", 5).is_ok());
  auto b = fence_->claim_job(jobs_, "w2", 6);
  ASSERT_TRUE(b.is_ok() && b->has_value());
  EXPECT_EQ((*b)->id, (*a)->id);
}

TEST_F(PgJobs, FailedResultStatementLeavesTheJobClaimed) {
  ASSERT_TRUE(fence_->add_job(jobs_, "x").is_ok());
  auto a = fence_->claim_job(jobs_, "w1", 5);
  ASSERT_TRUE(a.is_ok() && a->has_value());
  Status s = fence_->complete_job(jobs_, (*a)->id, "w1", 5, "INSERT INTO missing_table_q VALUES (1)");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(psql("SELECT done FROM " + jobs_)[0], "f");
  EXPECT_TRUE(fence_->complete_job(jobs_, (*a)->id, "w1", 5).is_ok());
}

}  // namespace
}  // namespace leasehold::fence
