// `leasehold demo redlock` as a real process (5 private redis-servers, a
// private leasehold server, worker processes): both scenarios' verdicts; and
// the verdict text from run reports (pure).
#include <gtest/gtest.h>

#include "demo/redlock_demo.h"
#include "testkit/net.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::demo {
namespace {

using leasehold::testing::Subprocess;
using leasehold::testing::TempDir;

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RedlockDemoCli, BothScenariosCorruptRedlockAndLeaseholdRefusesTheStaleWrite) {
  TempDir dir("demo-redlock");
  leasehold::testing::SpawnOptions so;
  so.stdout_path = dir.file("out");
  so.stderr_path = dir.file("err");
  auto p = Subprocess::spawn({leasehold::testing::leasehold_binary(), "demo", "redlock", "--ttl", "1s"}, so);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  const auto code = p->wait(std::chrono::seconds(240));
  const std::string out = leasehold::testing::read_file(dir.file("out"));
  ASSERT_TRUE(code.has_value()) << "the demo did not finish in time\n" << out;
  EXPECT_EQ(*code, 0) << out << leasehold::testing::read_file(dir.file("err"));
  EXPECT_TRUE(mentions(out, "VERDICT scenario 1 (the holder pauses past the validity): Redlock CORRUPTED (A and B "
                            "both held the lock; A's stale write replaced B's); leasehold SAFE (A's write with token "))
      << out;
  EXPECT_TRUE(mentions(out, "VERDICT scenario 2 (one Redis server's clock jumps forward): Redlock CORRUPTED")) << out;
  EXPECT_FALSE(mentions(out, "[UNEXPECTED]")) << out;
  EXPECT_TRUE(mentions(out, "DOUBLE GRANT")) << out;
  EXPECT_TRUE(mentions(out, "acquired Redlock demo/job-42/clock-redlock on 3/5 servers")) << out;
  EXPECT_TRUE(mentions(out, "write REJECTED stale token")) << out;
  // Scenario 2's leasehold side is a real clock fault (libfaketime is a test
  // dependency): the fast-clock server expired A's session by itself, and
  // the stale write was still refused (the verdict above says SAFE).
  EXPECT_FALSE(mentions(out, "LOCK.REVOKE")) << out;
  EXPECT_TRUE(mentions(out, "the leasehold server's clock runs 2x fast (libfaketime")) << out;
  EXPECT_TRUE(mentions(out, "the server's fast clock expired A's session after")) << out;
  EXPECT_TRUE(mentions(out, "VERDICT scenario 2 (one Redis server's clock jumps forward): Redlock CORRUPTED (A and "
                            "B both held the lock; A's stale write replaced B's); leasehold SAFE (A's write with "
                            "token "))
      << out;
  EXPECT_TRUE(mentions(out, "final record: writer=A \"billing job-42 result computed by worker A under Redlock\""))
      << out;
  EXPECT_TRUE(mentions(out, "final record: writer=B \"billing job-42 result computed by worker B under token")) << out;
}

TEST(RedlockDemoCli, BadTtlIsAUsageError) {
  TempDir dir("demo-redlock-usage");
  leasehold::testing::SpawnOptions so;
  so.stdout_path = dir.file("out");
  so.stderr_path = dir.file("err");
  auto p = Subprocess::spawn({leasehold::testing::leasehold_binary(), "demo", "redlock", "--ttl", "10ms"}, so);
  ASSERT_TRUE(p.is_ok());
  const auto code = p->wait(std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 64);
}

TEST(RedlockVerdict, Texts) {
  RedlockRunReport redlock;
  redlock.outcome = Outcome::kCorrupted;
  RedlockRunReport lh;
  lh.leasehold = true;
  lh.outcome = Outcome::kSafe;
  lh.token_a = 7;
  lh.token_b = 9;
  EXPECT_EQ(redlock_verdict(RedlockScenario::kPause, redlock, lh, true),
            "VERDICT scenario 1 (the holder pauses past the validity): Redlock CORRUPTED (A and B both held the "
            "lock; A's stale write replaced B's); leasehold SAFE (A's write with token 7 refused: B holds token 9)");
  redlock.outcome = Outcome::kBroken;
  redlock.broken = "worker B: no majority";
  const std::string v = redlock_verdict(RedlockScenario::kClockJump, redlock, lh, false);
  EXPECT_TRUE(mentions(v, "scenario 2 (one Redis server's clock jumps forward)")) << v;
  EXPECT_TRUE(mentions(v, "Redlock run BROKEN (worker B: no majority)")) << v;
  EXPECT_TRUE(mentions(v, "[UNEXPECTED]")) << v;
  RedlockDemoReport empty;
  EXPECT_FALSE(empty.all_as_expected());
}

}  // namespace
}  // namespace leasehold::demo
