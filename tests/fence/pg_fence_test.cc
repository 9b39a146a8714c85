// PostgresFence::fenced_exec / fenced_update_row against a real PostgreSQL.
#include <gtest/gtest.h>

#include <thread>

#include "leasehold/fence_postgres.h"
#include "tests/fence/pg_test_support.h"

namespace leasehold::fence {
namespace {

using testing::psql;
using testing::unique_name;

class PgFence : public testing::PgTest {
 protected:
  void SetUp() override {
    testing::PgTest::SetUp();
    auto f = PostgresFence::connect(conninfo_);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    fence_ = std::move(f).value();
    ASSERT_TRUE(fence_->ensure_schema().is_ok());
    table_ = unique_name("items");
    resource_ = unique_name("res");
    psql("CREATE TABLE " + table_ + " (id int PRIMARY KEY, value text, fence_token bigint)");
  }
  std::string value_of(int id) {
    auto rows = psql("SELECT value FROM " + table_ + " WHERE id = " + std::to_string(id));
    return rows.empty() || !rows[0] ? "<none>" : *rows[0];
  }

  std::unique_ptr<PostgresFence> fence_;
  std::string table_;
  std::string resource_;
};

TEST_F(PgFence, SchemaIsDocumentedAndIdempotentUnderConcurrency) {
  EXPECT_NE(PostgresFence::schema_sql().find("leasehold_fence"), std::string_view::npos);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto f = PostgresFence::connect(conninfo_);
      if (f && (*f)->ensure_schema().is_ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
}

TEST_F(PgFence, StaleWriteChangesNothingAndIsReportedStale) {
  auto r = fence_->fenced_exec(resource_, 33, "INSERT INTO " + table_ + " VALUES (1, $1)", {"from 33"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(*r, 1u);
  r = fence_->fenced_exec(resource_, 34, "UPDATE " + table_ + " SET value = $1 WHERE id = 1", {"from 34"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  r = fence_->fenced_exec(resource_, 34, "UPDATE " + table_ + " SET value = $1 WHERE id = 1",
                          {"34 again"});
  ASSERT_TRUE(r.is_ok()) << "equal token: the same holder writes again";

  r = fence_->fenced_exec(resource_, 33, "UPDATE " + table_ + " SET value = $1 WHERE id = 1",
                          {"late write from paused 33"});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kStaleToken);
  EXPECT_EQ(r.status().message(), "stale token 33 for '" + resource_ + "': highest admitted is 34");
  EXPECT_EQ(value_of(1), "34 again");
  EXPECT_EQ(*fence_->highest(resource_), std::optional<Token>(34));
  EXPECT_EQ(*fence_->highest(unique_name("never")), std::nullopt);
}

TEST_F(PgFence, FailedStatementRollsBackTheTokenToo) {
  ASSERT_TRUE(fence_->fenced_exec(resource_, 5, "INSERT INTO " + table_ + " VALUES (1, 'a')").is_ok());
  auto bad = fence_->fenced_exec(resource_, 9, "INSERT INTO no_such_table_xyz VALUES (1)");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("no_such_table_xyz"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("42P01"), std::string::npos);
  auto dup = fence_->fenced_exec(resource_, 9, "INSERT INTO " + table_ + " VALUES (1, 'dup')");
  EXPECT_EQ(dup.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(*fence_->highest(resource_), std::optional<Token>(5)) << "token 9 was never committed";
  EXPECT_TRUE(fence_->fenced_exec(resource_, 6, "SELECT 1").is_ok()) << "the connection is usable";
}

TEST_F(PgFence, RejectsBadInputBeforeTouchingTheDatabase) {
  EXPECT_EQ(fence_->fenced_exec(resource_, UINT64_MAX, "SELECT 1").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(fence_->fenced_exec("", 1, "SELECT 1").status().code(), ErrorCode::kInvalidArgument);
  SqlParams many(PostgresFence::kMaxParams + 1, std::string("x"));
  EXPECT_EQ(fence_->fenced_exec(resource_, 1, "SELECT 1", many).status().code(),
            ErrorCode::kLimitExceeded);
  EXPECT_EQ(fence_->fenced_update_row("", "id", "1", 1, "value = 'x'").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(*fence_->highest(resource_), std::nullopt);
}

TEST_F(PgFence, RowLevelFencing) {
  psql("INSERT INTO " + table_ + " (id, value) VALUES (1, 'initial'), (2, 'other')");
  auto r = fence_->fenced_update_row(table_, "id", "1", 40, "value = $1", {"from 40"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(*r, 1u);
  EXPECT_TRUE(fence_->fenced_update_row(table_, "id", "1", 40, "value = $1", {"40 again"}).is_ok());
  auto stale = fence_->fenced_update_row(table_, "id", "1", 39, "value = $1", {"stale"});
  EXPECT_EQ(stale.status().code(), ErrorCode::kStaleToken);
  EXPECT_NE(stale.status().message().find("highest admitted is 40"), std::string::npos);
  EXPECT_EQ(value_of(1), "40 again");
  EXPECT_EQ(psql("SELECT fence_token FROM " + table_ + " WHERE id = 1")[0], "40");
  EXPECT_TRUE(fence_->fenced_update_row(table_, "id", "2", 3, "value = $1", {"row 2"}).is_ok())
      << "rows are fenced independently";
  EXPECT_EQ(fence_->fenced_update_row(table_, "id", "99", 50, "value = 'x'").status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(fence_->fenced_update_row(table_, "no_col", "1", 50, "value = 'x'").status().code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(PgFence, UnreachableServerIsUnavailable) {
  auto f = PostgresFence::connect("host=127.0.0.1 port=1 connect_timeout=3 sslmode=disable");
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(f.status().message().find("127.0.0.1"), std::string::npos) << f.status().message();
}

TEST_F(PgFence, LostConnectionIsReportedThenReconnected) {
  const std::string app = unique_name("victim");
  auto victim = PostgresFence::connect(conninfo_ + " application_name=" + app);
  ASSERT_TRUE(victim.is_ok());
  ASSERT_TRUE((*victim)->fenced_exec(resource_, 1, "SELECT 1").is_ok());
  psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + app + "'");
  auto lost = (*victim)->fenced_exec(resource_, 2, "SELECT 1");
  ASSERT_FALSE(lost.is_ok());
  EXPECT_EQ(lost.status().code(), ErrorCode::kUnavailable) << lost.status().to_string();
  auto again = (*victim)->fenced_exec(resource_, 2, "SELECT 1");
  EXPECT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(*fence_->highest(resource_), std::optional<Token>(2));
}

}  // namespace
}  // namespace leasehold::fence
