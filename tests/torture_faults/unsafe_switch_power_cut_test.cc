// UNSAFE TEST FAULT switches that need the disk-fault shim and a power cut
// to show (common/unsafe_test_faults.h, docs/faults.md): ack-before-fsync
// loses acknowledged grants; with reuse-token-after-restart the tokens also
// go back. A real server under LD_PRELOAD (not run under ASan: the shim
// would be preloaded ahead of the ASan runtime).
#include <gtest/gtest.h>

#include "tests/torture_faults/fault_fixtures.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

class UnsafeSwitchPowerCutTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(UnsafeSwitchPowerCutTest, AckBeforeFsyncLosesAcknowledgedGrantsAtAPowerCut) {
  ShimmedServer shimmed(dir_);
  ASSERT_TRUE(shimmed.start({"--unsafe-test-fault", "ack-before-fsync"}, /*unsafe_allowed=*/true));
  std::vector<std::string> acked;
  {
    RespClient a = shimmed.server().client();
    const std::string sa = open_session(a);
    for (int i = 0; i < 5; ++i) {
      const std::string lock = "L" + std::to_string(i);
      ASSERT_EQ(a.call({"LOCK.ACQUIRE", lock, sa}).type, Type::kInteger);
      acked.push_back(lock);
    }
  }
  shimmed.server().process().kill9();
  std::string out;
  ASSERT_EQ(shimmed.power_cut(&out), 0) << out;
  ASSERT_TRUE(shimmed.start());  // a normal server now
  RespClient c = shimmed.server().client();
  int lost = 0;
  for (const std::string& lock : acked) lost += c.call({"LOCK.INFO", lock}).type == Type::kNull ? 1 : 0;
  // The broken property: acknowledged grants are gone.
  EXPECT_GT(lost, 0) << out;
}

TEST_F(UnsafeSwitchPowerCutTest, ReuseTokenAfterRestartWithAckBeforeFsyncAndAPowerCut) {
  // The combination the torture harness uses: the power cut loses the
  // unsynced tail, and the guard no longer jumps above it.
  ShimmedServer shimmed(dir_);
  const std::vector<std::string> flags = {"--unsafe-test-fault", "ack-before-fsync", "--unsafe-test-fault",
                                          "reuse-token-after-restart"};
  ASSERT_TRUE(shimmed.start(flags, /*unsafe_allowed=*/true));
  std::int64_t highest = 0;
  {
    RespClient a = shimmed.server().client();
    const std::string sa = open_session(a);
    for (int i = 0; i < 5; ++i) {
      const Value t = a.call({"LOCK.ACQUIRE", "L" + std::to_string(i), sa});
      ASSERT_EQ(t.type, Type::kInteger);
      highest = std::max(highest, t.integer);
    }
  }
  shimmed.server().process().kill9();
  std::string out;
  ASSERT_EQ(shimmed.power_cut(&out), 0) << out;
  ASSERT_TRUE(shimmed.start(flags, /*unsafe_allowed=*/true));
  RespClient a = shimmed.server().client();
  const std::string sa = open_session(a);
  const Value t = a.call({"LOCK.ACQUIRE", "L0", sa});
  ASSERT_EQ(t.type, Type::kInteger) << t.str;
  EXPECT_LE(t.integer, highest) << out;
}

}  // namespace
}  // namespace leasehold::testing
