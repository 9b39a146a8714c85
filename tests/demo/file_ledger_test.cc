// The file ledger, unfenced (plain writes: last writer wins, whatever its
// token) and fenced (FencedFileWriter: a lower token changes nothing).
#include <gtest/gtest.h>

#include "demo/ledger.h"
#include "testkit/temp_dir.h"

namespace leasehold::demo {
namespace {

std::unique_ptr<Ledger> open_file(const std::string& dir, bool fenced) {
  auto ledger = open_ledger({LedgerStore::kFile, dir, "demo/job-42/t", fenced});
  EXPECT_TRUE(ledger) << ledger.status().to_string();
  return ledger ? std::move(*ledger) : nullptr;
}

TEST(FileLedger, UnfencedLastWriterWinsEvenWithAnOlderToken) {
  testing::TempDir dir("demo-ledger");
  auto ledger = open_file(dir.path(), false);
  ASSERT_TRUE(ledger);
  ASSERT_TRUE(ledger->prepare("pending"));
  EXPECT_EQ(*ledger->read(), (LedgerRecord{"nobody", 0, "pending"}));
  ASSERT_TRUE(ledger->write({"B", 9, "b's result"}));
  ASSERT_TRUE(ledger->write({"A", 5, "a's result"}));
  EXPECT_EQ(*ledger->read(), (LedgerRecord{"A", 5, "a's result"}));
  auto h = ledger->highest();
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->has_value());
}

TEST(FileLedger, FencedRefusesAnOlderToken) {
  testing::TempDir dir("demo-ledger");
  auto ledger = open_file(dir.path(), true);
  ASSERT_TRUE(ledger);
  ASSERT_TRUE(ledger->prepare("pending"));
  ASSERT_TRUE(ledger->write({"B", 9, "b's result"}));
  Status stale = ledger->write({"A", 5, "a's result"});
  EXPECT_EQ(stale.code(), ErrorCode::kStaleToken) << stale.to_string();
  EXPECT_EQ(*ledger->read(), (LedgerRecord{"B", 9, "b's result"}));
  EXPECT_EQ(*ledger->highest(), std::optional<std::uint64_t>(9));
  EXPECT_TRUE(ledger->write({"B", 9, "again"}));  // the current holder writes again
  // prepare() starts a fresh record with no token history.
  ASSERT_TRUE(ledger->prepare("pending"));
  EXPECT_TRUE(ledger->write({"A", 5, "first"}));
}

TEST(Ledger, RejectsBadTargets) {
  testing::TempDir dir("demo-ledger");
  for (const char* entry : {"", "a b", "../x", "a\nb", "x;drop"}) {
    auto ledger = open_ledger({LedgerStore::kFile, dir.path(), entry, false});
    EXPECT_FALSE(ledger) << entry;
    if (!ledger) {
      EXPECT_EQ(ledger.status().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_FALSE(open_ledger({LedgerStore::kFile, "", "x", false}));
  EXPECT_FALSE(open_ledger({LedgerStore::kFile, dir.path(), std::string(129, 'x'), false}));
  EXPECT_TRUE(parse_ledger_store("postgres"));
  EXPECT_FALSE(parse_ledger_store("redis"));
}

TEST(FileLedger, BodyIsLimited) {
  testing::TempDir dir("demo-ledger");
  auto ledger = open_file(dir.path(), false);
  ASSERT_TRUE(ledger);
  ASSERT_TRUE(ledger->prepare("pending"));
  EXPECT_EQ(ledger->write({"A", 1, std::string(Ledger::kMaxBodyBytes + 1, 'x')}).code(),
            ErrorCode::kLimitExceeded);
}

}  // namespace
}  // namespace leasehold::demo
