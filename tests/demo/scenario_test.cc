// The GC-pause scenario through the library, end to end with real processes:
// a private `leasehold server`, worker A frozen by SIGSTOP past its TTL,
// worker B, and a file ledger (plain writes, then FencedFileWriter).
#include <gtest/gtest.h>

#include <sstream>

#include "demo/pause_demo.h"
#include "testkit/temp_dir.h"

namespace leasehold::demo {
namespace {

using std::chrono::milliseconds;

// Without PostgreSQL (a bin dir that does not exist) the demo falls back to
// files: plain writes, then FencedFileWriter.
TEST(PauseDemoLibrary, WithoutPostgresFileLedgerUnfencedIsCorruptedFencedIsSafe) {
  PauseDemoOptions o;
  o.leasehold_binary = testing::leasehold_binary();
  o.resource = ResourceChoice::kAuto;
  o.pg_bin_dir = "/nonexistent/postgresql/bin";
  o.ttl = milliseconds(1500);
  o.pause = milliseconds(3000);
  std::ostringstream out;
  auto report = run_pause_demo(o, out);
  ASSERT_TRUE(report) << report.status().to_string() << "\n" << out.str();
  SCOPED_TRACE(out.str());
  EXPECT_EQ(report->store, LedgerStore::kFile);
  EXPECT_NE(report->store_note.find("PostgreSQL is not available"), std::string::npos)
      << report->store_note;
  ASSERT_EQ(report->runs.size(), 2u);

  const RunReport& unfenced = report->runs[0];
  EXPECT_FALSE(unfenced.fenced);
  EXPECT_GT(unfenced.token_a, 0u);
  EXPECT_GT(unfenced.token_b, unfenced.token_a);
  EXPECT_EQ(unfenced.write_b, EventKind::kWrote);
  EXPECT_EQ(unfenced.write_a, EventKind::kWrote);
  ASSERT_TRUE(unfenced.final_record);
  EXPECT_EQ(unfenced.final_record->writer, "A");
  EXPECT_EQ(unfenced.final_record->token, unfenced.token_a);
  EXPECT_EQ(unfenced.outcome, Outcome::kCorrupted);
  EXPECT_TRUE(unfenced.as_expected);
  EXPECT_EQ(unfenced.verdict, "VERDICT unfenced: CORRUPTED (stale writer A overwrote B)");
  EXPECT_GE(unfenced.frozen_for, o.pause);

  const RunReport& fenced = report->runs[1];
  EXPECT_TRUE(fenced.fenced);
  EXPECT_GT(fenced.token_b, fenced.token_a);
  EXPECT_EQ(fenced.write_b, EventKind::kWrote);
  EXPECT_EQ(fenced.write_a, EventKind::kRejected);
  ASSERT_TRUE(fenced.final_record);
  EXPECT_EQ(fenced.final_record->writer, "B");
  EXPECT_EQ(fenced.final_record->token, fenced.token_b);
  EXPECT_EQ(fenced.outcome, Outcome::kSafe);
  EXPECT_TRUE(fenced.as_expected);
  EXPECT_EQ(fenced.verdict, "VERDICT fenced: SAFE (stale write rejected)");
  EXPECT_GE(fenced.frozen_for, o.pause);

  EXPECT_TRUE(report->all_as_expected());
  const std::string text = out.str();
  EXPECT_NE(text.find("FROZEN by SIGSTOP"), std::string::npos);
  EXPECT_NE(text.find("write REJECTED stale token " + std::to_string(fenced.token_a) + " < " +
                      std::to_string(fenced.token_b)),
            std::string::npos);
  // B was granted the lock only after the server expired A's session.
  EXPECT_NE(text.find("is gone: no keepalive"), std::string::npos);
}

TEST(PauseDemoLibrary, RejectsAPauseNotLongerThanTheTtl) {
  PauseDemoOptions o;
  o.leasehold_binary = testing::leasehold_binary();
  o.ttl = milliseconds(2000);
  o.pause = milliseconds(2000);
  std::ostringstream out;
  auto report = run_pause_demo(o, out);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace leasehold::demo
