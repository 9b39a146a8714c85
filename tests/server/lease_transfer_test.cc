// A lock's maximum hold (LOCK.ACQUIRE ... LEASE ms, LOCK.EXTEND, the
// server's --max-hold PREFIX=DURATION) and handing a held lock to another
// session (LOCK.TRANSFER), on a real server: pushes, audit records, errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "testkit/eventually.h"
#include "testkit/server_process.h"
#include "tests/server/security_fixture.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

// A field of a LOCK.HISTORY record (a map in RESP3, a flat array in RESP2).
std::string record_text(const Value& record, const std::string& name) {
  for (std::size_t i = 0; i + 1 < record.elements.size(); i += 2) {
    if (record.elements[i].str == name) return record.elements[i + 1].str;
  }
  return "<missing " + name + ">";
}

class LeaseTransfer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.file("data"), {"--max-hold", "capped/=2s", "--max-hold", "capped/long/=1h"}));
  }
  // RESP3, so replies are maps (Value::find) and pushes arrive.
  RespClient client() {
    RespClient c = server_.client();
    EXPECT_TRUE(c.connected());
    EXPECT_EQ(c.call({"HELLO", "3"}).type, Type::kMap);
    return c;
  }
  // A RESP3 connection that opened a session and watches it.
  std::string open_watched(RespClient& c, std::int64_t ttl = 30000) {
    EXPECT_EQ(c.call({"HELLO", "3"}).type, Type::kMap);
    Value v = c.call({"SESSION.OPEN", std::to_string(ttl)});
    EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
    const std::string id = std::to_string(v.integer);
    EXPECT_EQ(c.call({"SESSION.WATCH", id}), Value::simple("OK"));
    return id;
  }
  std::vector<std::string> history_kinds(RespClient& c, const std::string& lock) {
    Value h = c.call({"LOCK.HISTORY", lock, "COUNT", "100"});
    std::vector<std::string> kinds;
    for (const Value& r : h.elements) kinds.push_back(record_text(r, "event"));
    return kinds;
  }

  TempDir dir_{"server-lease-transfer"};
  ServerProcess server_;
};

TEST_F(LeaseTransfer, LeaseEndsTheHoldWithAPushAndAnAuditRecord) {
  RespClient a = client(), b = client(), admin = client();
  const std::string sa = open_watched(a);
  const std::string sb = open_watched(b);
  Value t = a.call({"LOCK.ACQUIRE", "L", sa, "LEASE", "300"});
  ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
  Value info = admin.call({"LOCK.INFO", "L"});
  const Value* holders = info.find("holders");
  ASSERT_TRUE(holders != nullptr && holders->elements.size() == 1) << info.debug_string();
  const Value* lease = holders->elements[0].find("lease_ms");
  ASSERT_TRUE(lease != nullptr);
  EXPECT_GT(lease->integer, 0);
  EXPECT_LE(lease->integer, 300);
  ASSERT_TRUE(b.send({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}));
  // The session lives on (TTL 30 s, and this connection's keepalive is not
  // needed within the test); only the lease ends the grant.
  auto lost = a.read(scaled(10s));
  ASSERT_TRUE(lost) << lost.status().to_string();
  ASSERT_EQ(lost->type, Type::kPush) << lost->debug_string();
  ASSERT_EQ(lost->elements.size(), 6u);
  EXPECT_EQ(lost->elements[1].str, "lost");
  EXPECT_EQ(lost->elements[3].str, "L");
  EXPECT_EQ(lost->elements[4].integer, t.integer);
  EXPECT_EQ(lost->elements[5].str, "lease-ended");
  auto tb = b.read(scaled(10s));
  ASSERT_TRUE(tb) << tb.status().to_string();
  ASSERT_EQ(tb->type, Type::kInteger) << tb->debug_string();
  EXPECT_GT(tb->integer, t.integer);
  // The session is still live, and the stale token is refused.
  EXPECT_EQ(a.call({"SESSION.KEEPALIVE", sa}).type, Type::kInteger);
  Value stale = a.call({"LOCK.RELEASE", "L", sa, std::to_string(t.integer)});
  EXPECT_EQ(stale.type, Type::kError);
  EXPECT_TRUE(eventually(
      [&] {
        const auto kinds = history_kinds(admin, "L");
        return std::find(kinds.begin(), kinds.end(), "lease-ended") != kinds.end();
      },
      10s))
      << "no lease-ended audit record";
}

TEST_F(LeaseTransfer, ExtendMovesTheEndAndRefusesStaleOrUnleased) {
  RespClient a = client(), admin = client();
  const std::string sa = open_watched(a);
  Value t = a.call({"LOCK.ACQUIRE", "E", sa, "LEASE", "60000"});
  ASSERT_EQ(t.type, Type::kInteger);
  const std::string tok = std::to_string(t.integer);
  EXPECT_EQ(a.call({"LOCK.EXTEND", "E", sa, tok, "120000"}), Value::simple("OK"));
  Value info = admin.call({"LOCK.INFO", "E"});
  EXPECT_GT(info.find("holders")->elements[0].find("lease_ms")->integer, 60000);
  Value stale = a.call({"LOCK.EXTEND", "E", sa, std::to_string(t.integer + 1), "1000"});
  ASSERT_EQ(stale.type, Type::kError);
  EXPECT_NE(stale.str.find("STALE"), std::string::npos) << stale.str;
  Value plain = a.call({"LOCK.ACQUIRE", "P", sa});
  ASSERT_EQ(plain.type, Type::kInteger);
  Value unleased = a.call({"LOCK.EXTEND", "P", sa, std::to_string(plain.integer), "1000"});
  ASSERT_EQ(unleased.type, Type::kError);
  EXPECT_NE(unleased.str.find("no lease"), std::string::npos) << unleased.str;
  // A short extension ends the hold soon: the lost push comes.
  EXPECT_EQ(a.call({"LOCK.EXTEND", "E", sa, tok, "100"}), Value::simple("OK"));
  auto lost = a.read(scaled(10s));
  ASSERT_TRUE(lost) << lost.status().to_string();
  ASSERT_EQ(lost->type, Type::kPush) << lost->debug_string();
  EXPECT_EQ(lost->elements[5].str, "lease-ended");
}

TEST_F(LeaseTransfer, MaxHoldIsTheDefaultAndTheCeiling) {
  RespClient a = client(), admin = client();
  // Not watched: the leases below end during the test, and their pushes
  // must not come between a request and its reply.
  const Value opened = a.call({"SESSION.OPEN", "30000"});
  ASSERT_EQ(opened.type, Type::kInteger);
  const std::string sa = std::to_string(opened.integer);
  Value over = a.call({"LOCK.ACQUIRE", "capped/x", sa, "LEASE", "5000"});
  ASSERT_EQ(over.type, Type::kError);
  EXPECT_NE(over.str.find("over the max hold 2000 ms of prefix 'capped/'"), std::string::npos) << over.str;
  EXPECT_FALSE(admin.call({"LOCK.INFO", "capped/x"}).find("holders")) << "a refused acquire changed something";
  // The longest prefix wins.
  Value longer = a.call({"LOCK.ACQUIRE", "capped/long/y", sa, "LEASE", "5000"});
  EXPECT_EQ(longer.type, Type::kInteger) << longer.debug_string();
  // Without LEASE the ceiling is the lease.
  Value t = a.call({"LOCK.ACQUIRE", "capped/z", sa});
  ASSERT_EQ(t.type, Type::kInteger);
  const std::int64_t left = admin.call({"LOCK.INFO", "capped/z"}).find("holders")->elements[0].find("lease_ms")->integer;
  EXPECT_GT(left, 0);
  EXPECT_LE(left, 2000);
  Value ext = a.call({"LOCK.EXTEND", "capped/z", sa, std::to_string(t.integer), "3000"});
  ASSERT_EQ(ext.type, Type::kError);
  EXPECT_NE(ext.str.find("max hold 2000 ms"), std::string::npos) << ext.str;
  // Elsewhere nothing changes: no lease.
  Value free_lock = a.call({"LOCK.ACQUIRE", "free", sa});
  ASSERT_EQ(free_lock.type, Type::kInteger);
  EXPECT_EQ(admin.call({"LOCK.INFO", "free"}).find("holders")->elements[0].find("lease_ms")->integer, -1);
}

TEST_F(LeaseTransfer, TransferRaisesTheTokenPushesBothAndKeepsTheQueue) {
  RespClient a = client(), b = client(), w = client(), admin = client();
  const std::string sa = open_watched(a);
  const std::string sb = open_watched(b);
  const std::string sw = open_watched(w);
  Value t = a.call({"LOCK.ACQUIRE", "T", sa});
  ASSERT_EQ(t.type, Type::kInteger);
  ASSERT_TRUE(w.send({"LOCK.ACQUIRE", "T", sw, "WAIT", "0"}));
  ASSERT_TRUE(eventually([&] { return admin.call({"LOCK.INFO", "T"}).find("waiters")->elements.size() == 1; }, 10s));
  // Refusals first: nothing changes.
  Value stale = a.call({"LOCK.TRANSFER", "T", sa, std::to_string(t.integer + 1), sb});
  ASSERT_EQ(stale.type, Type::kError);
  EXPECT_NE(stale.str.find("STALE"), std::string::npos) << stale.str;
  Value dead = a.call({"LOCK.TRANSFER", "T", sa, std::to_string(t.integer), "999999"});
  ASSERT_EQ(dead.type, Type::kError);
  EXPECT_NE(dead.str.find("not live"), std::string::npos) << dead.str;
  Value queued = a.call({"LOCK.TRANSFER", "T", sa, std::to_string(t.integer), sw});
  ASSERT_EQ(queued.type, Type::kError);
  EXPECT_NE(queued.str.find("already waits"), std::string::npos) << queued.str;

  Value moved = a.call({"LOCK.TRANSFER", "T", sa, std::to_string(t.integer), sb});
  ASSERT_EQ(moved.type, Type::kInteger) << moved.debug_string();
  EXPECT_GT(moved.integer, t.integer);
  auto lost = a.read(scaled(10s));
  ASSERT_TRUE(lost);
  ASSERT_EQ(lost->type, Type::kPush) << lost->debug_string();
  EXPECT_EQ(lost->elements[1].str, "lost");
  EXPECT_EQ(lost->elements[5].str, "transferred");
  auto got = b.read(scaled(10s));
  ASSERT_TRUE(got);
  ASSERT_EQ(got->type, Type::kPush) << got->debug_string();
  ASSERT_EQ(got->elements.size(), 6u);
  EXPECT_EQ(got->elements[1].str, "acquired");
  EXPECT_EQ(std::to_string(got->elements[2].integer), sb);
  EXPECT_EQ(got->elements[3].str, "T");
  EXPECT_EQ(got->elements[4].integer, moved.integer);
  EXPECT_EQ(got->elements[5].integer, 0);  // no lease

  Value info = admin.call({"LOCK.INFO", "T"});
  EXPECT_EQ(std::to_string(info.find("holders")->elements[0].find("session")->integer), sb);
  ASSERT_EQ(info.find("waiters")->elements.size(), 1u);
  EXPECT_EQ(std::to_string(info.find("waiters")->elements[0].find("session")->integer), sw);
  // The old token is stale; the new holder's release hands the lock to the waiter.
  EXPECT_EQ(a.call({"LOCK.RELEASE", "T", sa, std::to_string(t.integer)}).type, Type::kError);
  EXPECT_EQ(b.call({"LOCK.RELEASE", "T", sb, std::to_string(moved.integer)}), Value::simple("OK"));
  auto tw = w.read(scaled(10s));
  ASSERT_TRUE(tw);
  ASSERT_EQ(tw->type, Type::kInteger) << tw->debug_string();
  EXPECT_GT(tw->integer, moved.integer);
  const auto kinds = history_kinds(admin, "T");
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "transfer"), kinds.end());
}

class LeaseTransferAcl : public SecureServer {};

TEST_F(LeaseTransferAcl, TransferNeedsBothSessionsUserOrAnAdmin) {
  RespClient alice = login("alice", "alicepw");
  RespClient bob = login("bob", "bobpw");
  RespClient admin = login("admin", "adminpw");
  const std::int64_t sa = open_session(alice);
  const std::int64_t sa2 = open_session(alice);
  const std::int64_t sb = open_session(bob);
  Value t = alice.call({"LOCK.ACQUIRE", "locks/x", std::to_string(sa)});
  ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
  // To another user's session: refused, nothing changes.
  Value refused = alice.call({"LOCK.TRANSFER", "locks/x", std::to_string(sa), std::to_string(t.integer),
                              std::to_string(sb)});
  ASSERT_EQ(refused.type, Type::kError);
  EXPECT_NE(refused.str.find("NOPERM"), std::string::npos) << refused.str;
  // Bob cannot move alice's lock either.
  Value bob_try = bob.call({"LOCK.TRANSFER", "locks/x", std::to_string(sa), std::to_string(t.integer),
                            std::to_string(sb)});
  ASSERT_EQ(bob_try.type, Type::kError);
  EXPECT_NE(bob_try.str.find("NOPERM"), std::string::npos) << bob_try.str;
  // Between alice's own sessions: allowed.
  Value own = alice.call({"LOCK.TRANSFER", "locks/x", std::to_string(sa), std::to_string(t.integer),
                          std::to_string(sa2)});
  ASSERT_EQ(own.type, Type::kInteger) << own.debug_string();
  // An admin may move it to bob.
  Value by_admin = admin.call({"LOCK.TRANSFER", "locks/x", std::to_string(sa2), std::to_string(own.integer),
                               std::to_string(sb)});
  EXPECT_EQ(by_admin.type, Type::kInteger) << by_admin.debug_string();
}

TEST(LeaseFlags, BadMaxHoldIsRefusedAtStart) {
  TempDir dir("server-max-hold-flags");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"jobs/", "no '='"},
      {"jobs/=10", "add a unit"},
      {"jobs/=0s", "above 0"},
      {"jobs/=25d", "unknown unit"},
      {"jobs/=600h", "over the largest lease, 2147483647 ms"},
  };
  int i = 0;
  for (const auto& [flag, message] : cases) {
    const auto r = ServerProcess().run_to_exit(dir.file("d" + std::to_string(i++)), {"--max-hold", flag}, 20s);
    ASSERT_TRUE(r.has_value()) << flag << " started";
    EXPECT_EQ(r->code, 64) << flag << ": " << r->stderr_text;  // EX_USAGE
    EXPECT_NE(r->stderr_text.find(message), std::string::npos) << r->stderr_text;
  }
  const auto twice =
      ServerProcess().run_to_exit(dir.file("twice"), {"--max-hold", "a/=1s", "--max-hold", "a/=2s"}, 20s);
  ASSERT_TRUE(twice.has_value());
  EXPECT_EQ(twice->code, 64);
  EXPECT_NE(twice->stderr_text.find("prefix 'a/' is given twice"), std::string::npos) << twice->stderr_text;
}

}  // namespace
}  // namespace leasehold::testing
