// UNSAFE TEST FAULT switches (common/unsafe_test_faults.h): refused without
// LEASEHOLD_UNSAFE_TEST_FAULTS=1, logged loudly when on, and each one breaks
// its safety property as seen from outside, by real clients of a real
// server (so the torture checker has something to catch).
#include <gtest/gtest.h>

#include <filesystem>

#include "testkit/eventually.h"
#include "tests/torture_faults/fault_fixtures.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

std::size_t count_of(const Value& info, const std::string& key) {
  const auto v = field(info, key);
  return v ? v->elements.size() : 0;
}

class UnsafeSwitchTest : public ::testing::Test {
 protected:
  bool start_with(const std::string& name) {
    ScopedEnv env({{std::string("LEASEHOLD_UNSAFE_TEST_FAULTS"), "1"}});
    return server_.start(data(), {"--unsafe-test-fault", name});
  }
  std::string data() const { return dir_.path() + "/data"; }
  RespClient connect() {
    auto c = RespClient::connect(server_.port());
    return c ? std::move(c).value() : RespClient();
  }

  TempDir dir_;
  ServerProcess server_;
};

TEST_F(UnsafeSwitchTest, RefusedWithoutTheEnvironmentVariable) {
  ScopedEnv env({{std::string("LEASEHOLD_UNSAFE_TEST_FAULTS"), nullptr}});
  const auto exit = server_.run_to_exit(data(), {"--unsafe-test-fault", "expire-early"});
  ASSERT_TRUE(exit) << "the server started with an unsafe switch and no LEASEHOLD_UNSAFE_TEST_FAULTS";
  EXPECT_EQ(exit->code, 64);  // EX_USAGE (common/exit_codes.h)
  EXPECT_NE(exit->stderr_text.find("LEASEHOLD_UNSAFE_TEST_FAULTS=1"), std::string::npos) << exit->stderr_text;
}

TEST_F(UnsafeSwitchTest, UnknownNameRefused) {
  ScopedEnv env({{std::string("LEASEHOLD_UNSAFE_TEST_FAULTS"), "1"}});
  const auto exit = server_.run_to_exit(data(), {"--unsafe-test-fault", "no-such-fault"});
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 64);
  EXPECT_NE(exit->stderr_text.find("unknown unsafe test fault 'no-such-fault'"), std::string::npos)
      << exit->stderr_text;
}

TEST_F(UnsafeSwitchTest, AnEnabledSwitchIsLoggedLoudly) {
  ASSERT_TRUE(start_with("skip-fence-check"));
  EXPECT_NE(read_file(data() + ".stderr").find("UNSAFE TEST FAULT 'skip-fence-check' is ON"), std::string::npos);
}

TEST_F(UnsafeSwitchTest, SkipFenceCheckAcceptsALowerToken) {
  ASSERT_TRUE(start_with("skip-fence-check"));
  RespClient a = connect();
  const std::string sa = open_session(a);
  const Value t1 = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(t1.type, Type::kInteger);
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(t1.integer)}), Value::simple("OK"));
  const Value t2 = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(t2.type, Type::kInteger);
  ASSERT_EQ(a.call({"FENCE.PUT", "k", "new", "L", std::to_string(t2.integer)}).type, Type::kInteger);
  // The broken property: a stale, lower token overwrites the newer value.
  const Value stale = a.call({"FENCE.PUT", "k", "old", "L", std::to_string(t1.integer)});
  EXPECT_EQ(stale.type, Type::kInteger) << "switch had no effect: " << stale.str;
  EXPECT_EQ(a.call({"FENCE.GET", "k"}).elements.at(0).str, "old");
}

TEST_F(UnsafeSwitchTest, ExpireEarlyEndsASessionBeforeItsTtl) {
  ASSERT_TRUE(start_with("expire-early"));
  RespClient a = connect();
  RespClient observer = connect();
  const auto kTtl = scaled(10s);  // expires at half of it: the other half is slack
  const auto sent = std::chrono::steady_clock::now();  // the client's safe deadline counts from here
  const std::string sa = open_session(a, static_cast<int>(kTtl.count()));
  ASSERT_EQ(a.call({"LOCK.ACQUIRE", "L", sa}).type, Type::kInteger);
  std::chrono::steady_clock::duration freed_after{};
  ASSERT_TRUE(eventually([&] {
    if (observer.call({"LOCK.INFO", "L"}).type != Type::kNull) return false;
    freed_after = std::chrono::steady_clock::now() - sent;
    return true;
  }, 60s));
  // The broken property: the lock was free while its holder was still
  // inside its safe deadline (sent + TTL, without a single keepalive).
  EXPECT_LT(freed_after, kTtl);
}

TEST_F(UnsafeSwitchTest, GrantTwoWaitersGivesAnExclusiveLockToTwoClients) {
  ASSERT_TRUE(start_with("grant-two-waiters"));
  RespClient a = connect(), b = connect(), c = connect(), observer = connect();
  const std::string sa = open_session(a), sb = open_session(b), sc = open_session(c);
  const Value ta = a.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(ta.type, Type::kInteger);
  ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "60000"}));
  ASSERT_TRUE(c.send({"LOCK.ACQUIRE", "L", sc, "WAIT", "60000"}));
  ASSERT_TRUE(eventually([&] { return count_of(observer.call({"LOCK.INFO", "L"}), "waiters") == 2; }, 30s));
  ASSERT_EQ(a.call({"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)}), Value::simple("OK"));
  const auto gb = b.read(scaled(10s));
  const auto gc = c.read(scaled(10s));
  ASSERT_TRUE(gb && gc);
  // The broken property: two clients both hold the exclusive lock.
  EXPECT_EQ(gb->type, Type::kInteger);
  EXPECT_EQ(gc->type, Type::kInteger);
  EXPECT_EQ(count_of(observer.call({"LOCK.INFO", "L"}), "holders"), 2u);
}

TEST_F(UnsafeSwitchTest, ReuseTokenAfterRestartHandsOutLowerTokensAfterDiskLoss) {
  ASSERT_TRUE(start_with("reuse-token-after-restart"));
  std::int64_t highest = 0;
  {
    RespClient a = connect();
    const std::string sa = open_session(a);
    for (int i = 0; i < 5; ++i) {
      const Value t = a.call({"LOCK.ACQUIRE", "L" + std::to_string(i), sa});
      ASSERT_EQ(t.type, Type::kInteger);
      highest = std::max(highest, t.integer);
    }
  }
  server_.process().kill9();
  // The disk loses the log (the revision record survives): without the
  // switch the server refuses to start (tests/log, tests/server).
  for (const auto& e : std::filesystem::directory_iterator(data())) {
    if (e.path().filename().string().rfind("revision-record", 0) != 0) std::filesystem::remove_all(e.path());
  }
  ASSERT_TRUE(start_with("reuse-token-after-restart"));
  RespClient a = connect();
  const std::string sa = open_session(a);
  const Value t = a.call({"LOCK.ACQUIRE", "L0", sa});
  ASSERT_EQ(t.type, Type::kInteger) << t.str;
  // The broken property: a token at or below one already handed out.
  EXPECT_LE(t.integer, highest);
}

TEST_F(UnsafeSwitchTest, SkipQuarantineGrantsAtOnceAfterALeaseModeCrash) {
  ScopedEnv env({{std::string("LEASEHOLD_UNSAFE_TEST_FAULTS"), "1"}});
  ASSERT_TRUE(server_.start(data(), {"--durability", "lease", "--unsafe-test-fault", "skip-quarantine"}));
  {
    RespClient a = connect();
    const std::string sa = open_session(a, 60'000);
    ASSERT_EQ(a.call({"LOCK.ACQUIRE", "L", sa}).type, Type::kInteger);
  }
  server_.process().kill9();
  ASSERT_TRUE(server_.restart());
  RespClient b = connect();
  const std::string sb = open_session(b);
  // The broken property: the lock is granted while its holder from before
  // the crash may still be within its 60 s TTL (without the switch: nil
  // for 60.6 s, tests/server).
  EXPECT_EQ(b.call({"LOCK.ACQUIRE", "L", sb}).type, Type::kInteger);
}

}  // namespace
}  // namespace leasehold::testing
