// The PostgreSQL ledger against the private PostgreSQL of the `postgres`
// fixture: a plain UPDATE lets an older token overwrite a newer one; the
// fenced UPDATE (PostgresFence::fenced_exec) refuses it and changes nothing.
#include <gtest/gtest.h>

#include "demo/ledger.h"
#include "tests/fence/pg_test_support.h"

namespace leasehold::demo {
namespace {

using fence::testing::PgTest;
using fence::testing::psql;
using fence::testing::unique_name;

class PgLedgerTest : public PgTest {
 protected:
  std::unique_ptr<Ledger> open(const std::string& entry, bool fenced) {
    auto ledger = open_ledger({LedgerStore::kPostgres, conninfo_, entry, fenced});
    EXPECT_TRUE(ledger) << ledger.status().to_string();
    return ledger ? std::move(*ledger) : nullptr;
  }
};

TEST_F(PgLedgerTest, UnfencedLastWriterWinsEvenWithAnOlderToken) {
  const std::string entry = "demo/test/" + unique_name("unfenced");
  auto ledger = open(entry, false);
  ASSERT_TRUE(ledger);
  ASSERT_TRUE(ledger->prepare("pending"));
  EXPECT_EQ(*ledger->read(), (LedgerRecord{"nobody", 0, "pending"}));
  ASSERT_TRUE(ledger->write({"B", 9, "b's result"}));
  ASSERT_TRUE(ledger->write({"A", 5, "a's result"}));
  EXPECT_EQ(*ledger->read(), (LedgerRecord{"A", 5, "a's result"}));
  // Checked with plain SQL too, independent of the ledger code.
  auto rows = psql("SELECT writer || ':' || token FROM leasehold_demo_ledger WHERE entry = '" + entry + "'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], std::optional<std::string>("A:5"));
}

TEST_F(PgLedgerTest, FencedRefusesAnOlderTokenAndChangesNothing) {
  const std::string entry = "demo/test/" + unique_name("fenced");
  auto ledger = open(entry, true);
  ASSERT_TRUE(ledger);
  ASSERT_TRUE(ledger->prepare("pending"));
  ASSERT_TRUE(ledger->write({"B", 9, "b's result"}));
  Status stale = ledger->write({"A", 5, "a's result"});
  EXPECT_EQ(stale.code(), ErrorCode::kStaleToken) << stale.to_string();
  EXPECT_EQ(*ledger->read(), (LedgerRecord{"B", 9, "b's result"}));
  EXPECT_EQ(*ledger->highest(), std::optional<std::uint64_t>(9));
  auto rows = psql("SELECT token FROM leasehold_fence WHERE resource = '" + entry + "'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], std::optional<std::string>("9"));
  // prepare() resets the record and the entry's token history.
  ASSERT_TRUE(ledger->prepare("pending"));
  EXPECT_TRUE(ledger->write({"A", 5, "first"}));
}

TEST(PgLedger, UnreachableDatabaseIsUnavailable) {
  auto ledger = open_ledger({LedgerStore::kPostgres,
                             "host=127.0.0.1 port=1 user=postgres dbname=postgres connect_timeout=2",
                             "demo/x", true});
  ASSERT_FALSE(ledger);
  EXPECT_EQ(ledger.status().code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace leasehold::demo
