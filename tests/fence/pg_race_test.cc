// Racing writers, each on its own connection, with interleaved tokens: the
// database must end up written by the highest token, and no write with a
// lower token may be applied after one with a higher token. The order in
// which writes were applied is recorded inside the database (a sequence
// taken under the fence's row lock), not guessed from client clocks.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "leasehold/fence_postgres.h"
#include "tests/fence/pg_test_support.h"

namespace leasehold::fence {
namespace {

using testing::psql;
using testing::unique_name;

using PgRace = testing::PgTest;

constexpr int kWriters = 6;
constexpr int kWritesEach = 40;

struct Tally {
  std::atomic<int> applied{0};
  std::atomic<int> stale{0};
  std::atomic<Token> max_presented{0};
  void presented(Token t) {
    Token cur = max_presented.load();
    while (t > cur && !max_presented.compare_exchange_weak(cur, t)) {
    }
  }
};

// Runs `write(fence, token)` from kWriters threads with seeded token streams.
template <typename Write>
void race(const std::string& conninfo, Tally& tally, Write write) {
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto f = PostgresFence::connect(conninfo);
      if (!f) {
        ADD_FAILURE() << f.status().to_string();
        return;
      }
      std::mt19937_64 rng(900 + w);
      Token base = 1;
      for (int i = 0; i < kWritesEach; ++i) {
        base += rng() % 4;
        const Token token = base + rng() % 8;
        tally.presented(token);
        Status s = write(**f, token, rng);
        if (s.is_ok()) {
          ++tally.applied;
        } else if (s.code() == ErrorCode::kStaleToken) {
          ++tally.stale;
        } else {
          ADD_FAILURE() << s.to_string();
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

void expect_non_decreasing(const std::vector<std::optional<std::string>>& tokens, const std::string& what) {
  long long prev = -1;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const long long t = std::stoll(tokens[i].value_or("-1"));
    ASSERT_GE(t, prev) << what << ": token " << t << " applied after " << prev << " (write #" << i << ")";
    prev = t;
  }
}

TEST_F(PgRace, RacingResourceFencedWritersNeverApplyAStaleWrite) {
  auto setup = PostgresFence::connect(conninfo_);
  ASSERT_TRUE(setup.is_ok());
  ASSERT_TRUE((*setup)->ensure_schema().is_ok());
  const std::string applied = unique_name("applied");
  const std::string current = unique_name("current");
  const std::string resource = unique_name("race");
  psql("CREATE TABLE " + applied + " (seq bigserial PRIMARY KEY, token bigint NOT NULL);"
       "CREATE TABLE " + current + " (id int PRIMARY KEY, token bigint);"
       "INSERT INTO " + current + " VALUES (1, NULL)");
  // One statement: move the current row and log the write.
  const std::string sql = "WITH moved AS (UPDATE " + current + " SET token = $1::bigint WHERE id = 1) "
                          "INSERT INTO " + applied + " (token) VALUES ($1::bigint)";
  Tally tally;
  race(conninfo_, tally, [&](PostgresFence& f, Token token, std::mt19937_64&) {
    Result<std::uint64_t> r = f.fenced_exec(resource, token, sql, {std::to_string(token)});
    return r.status();
  });
  EXPECT_GT(tally.stale.load(), 0) << "the race should produce stale writers";
  auto log = psql("SELECT token FROM " + applied + " ORDER BY seq");
  EXPECT_EQ(static_cast<int>(log.size()), tally.applied.load()) << "a write was applied but reported stale, or lost";
  expect_non_decreasing(log, "resource " + resource);
  const std::string max = std::to_string(tally.max_presented.load());
  EXPECT_EQ(psql("SELECT token FROM " + current + " WHERE id = 1")[0], max);
  EXPECT_EQ(*(*setup)->highest(resource), std::optional<Token>(tally.max_presented.load()));
}

TEST_F(PgRace, RacingRowFencedWritersNeverApplyAStaleWrite) {
  const std::string rows = unique_name("rows");
  const std::string history = unique_name("row_history");
  psql("CREATE TABLE " + rows + " (id int PRIMARY KEY, value text, fence_token bigint);"
       "INSERT INTO " + rows + " (id) VALUES (1), (2), (3);"
       "CREATE TABLE " + history + " (seq bigserial PRIMARY KEY, id int, token bigint);"
       "CREATE FUNCTION " + history + "_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
       "INSERT INTO " + history + " (id, token) VALUES (NEW.id, NEW.fence_token); RETURN NEW; END $$;"
       "CREATE TRIGGER " + history + "_trg AFTER UPDATE ON " + rows +
       " FOR EACH ROW EXECUTE FUNCTION " + history + "_log()");
  Tally tally;
  race(conninfo_, tally, [&](PostgresFence& f, Token token, std::mt19937_64& rng) {
    const std::string id = std::to_string(1 + rng() % 3);
    return f.fenced_update_row(rows, "id", id, token, "value = $1", {"by " + std::to_string(token)}).status();
  });
  EXPECT_GT(tally.stale.load(), 0);
  int logged = 0;
  for (int id = 1; id <= 3; ++id) {
    const std::string where = " WHERE id = " + std::to_string(id);
    auto log = psql("SELECT token FROM " + history + where + " ORDER BY seq");
    logged += static_cast<int>(log.size());
    expect_non_decreasing(log, "row " + std::to_string(id));
    auto final_token = psql("SELECT fence_token FROM " + rows + where)[0];
    auto max_logged = psql("SELECT max(token) FROM " + history + where)[0];
    EXPECT_EQ(final_token, max_logged) << "row " << id << " must end with its highest token";
    EXPECT_EQ(psql("SELECT value FROM " + rows + where)[0], "by " + final_token.value_or("?"));
  }
  EXPECT_EQ(logged, tally.applied.load());
}

}  // namespace
}  // namespace leasehold::fence
