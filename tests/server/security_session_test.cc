// Session ownership against a real server: a session belongs to the user who
// opened it; every session command from another user is refused and changes
// nothing; admins can kill it; LOCK.INFO hides others' session ids; the owner
// survives a restart (it is in the log and snapshots); a REQID is the
// user's own.
#include <gtest/gtest.h>

#include "tests/server/security_fixture.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

const char* kNotYours = "NOPERM this session belongs to another user";

// The "session" field of the first holder in a LOCK.INFO reply.
std::int64_t first_holder_session(const Value& info) {
  for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
    if (info.elements[i].str != "holders" || info.elements[i + 1].elements.empty()) continue;
    const Value& h = info.elements[i + 1].elements[0];
    for (std::size_t k = 0; k + 1 < h.elements.size(); k += 2) {
      if (h.elements[k].str == "session") return h.elements[k + 1].integer;
    }
  }
  return -1;
}

TEST_F(SecureServer, AnotherUsersSessionIsRefusedForEverySessionCommand) {
  RespClient alice = login("alice", "alicepw");
  RespClient bob = login("bob", "bobpw");
  ASSERT_EQ(alice.call({"HELLO", "3"}).type, Type::kMap);
  ASSERT_EQ(bob.call({"HELLO", "3"}).type, Type::kMap);
  const std::int64_t s = open_session(alice);
  const std::string sid = std::to_string(s);
  const std::string tok = std::to_string(alice.call({"LOCK.ACQUIRE", "locks/a", sid}).integer);

  EXPECT_EQ(bob.call({"SESSION.KEEPALIVE", sid}).str, kNotYours);
  EXPECT_EQ(bob.call({"SESSION.CLOSE", sid}).str, kNotYours);
  EXPECT_EQ(bob.call({"SESSION.WATCH", sid}).str, kNotYours);
  EXPECT_EQ(bob.call({"LOCK.ACQUIRE", "locks/b", sid}).str, kNotYours);
  EXPECT_EQ(bob.call({"LOCK.ACQUIRE", "locks/b", sid, "WAIT", "100"}).str, kNotYours);
  EXPECT_EQ(bob.call({"LOCK.RELEASE", "locks/a", sid, tok}).str, kNotYours);
  EXPECT_EQ(bob.call({"SESSION.KILL", sid}).str.rfind("NOPERM User bob", 0), 0u);
  // A session id that cannot exist yet (a guess at the next one) is refused too.
  EXPECT_EQ(bob.call({"LOCK.ACQUIRE", "locks/b", std::to_string(s + 1'000'000)}).str.rfind("EXPIRED", 0), 0u);

  // Nothing changed: alice still holds locks/a with her session, no locks/b.
  RespClient admin = login("admin", "adminpw");
  ASSERT_EQ(admin.call({"HELLO", "3"}).type, Type::kMap);
  EXPECT_EQ(first_holder_session(admin.call({"LOCK.INFO", "locks/a"})), s);
  EXPECT_EQ(admin.call({"LOCK.INFO", "locks/b"}).type, Type::kNull);
  // LOCK.INFO shows alice's session id to alice and admins only.
  EXPECT_EQ(first_holder_session(alice.call({"LOCK.INFO", "locks/a"})), s);
  EXPECT_EQ(first_holder_session(bob.call({"LOCK.INFO", "locks/a"})), 0);

  // The owner may use it; the watch gets pushes.
  EXPECT_EQ(alice.call({"SESSION.WATCH", sid}), Value::simple("OK"));
  EXPECT_EQ(alice.call({"SESSION.KEEPALIVE", sid}).type, Type::kInteger);
  // An admin can kill it (but not use it).
  EXPECT_EQ(admin.call({"SESSION.KEEPALIVE", sid}).str, kNotYours);
  EXPECT_EQ(admin.call({"SESSION.KILL", sid}), Value::simple("OK"));
  bool ended = false;
  for (int i = 0; i < 4 && !ended; ++i) {
    auto v = alice.read(std::chrono::seconds(10));
    ASSERT_TRUE(v.is_ok());
    ended = v->debug_string().find("session-ended") != std::string::npos;
  }
  EXPECT_TRUE(ended);
}

TEST_F(SecureServer, OwnershipSurvivesRestart) {
  std::string sid;
  {
    RespClient alice = login("alice", "alicepw");
    sid = std::to_string(open_session(alice));
  }
  ASSERT_EQ(server_.stop(), std::optional<int>(0));
  ASSERT_TRUE(server_.start(dir_.file("data"), {"--users-file", users_file()}));
  RespClient bob = login("bob", "bobpw");
  EXPECT_EQ(bob.call({"SESSION.KEEPALIVE", sid}).str, kNotYours);
  RespClient alice = login("alice", "alicepw");
  EXPECT_EQ(alice.call({"SESSION.KEEPALIVE", sid}).type, Type::kInteger);
}

// REQID is per user: bob's open with alice's reqid is a session of his own,
// and alice's retry (on a new connection, as after a lost reply) still gets
// hers.
TEST_F(SecureServer, TheSameReqidFromAnotherUserOpensAnotherSession) {
  RespClient alice = login("alice", "alicepw");
  RespClient bob = login("bob", "bobpw");
  const Value a = alice.call({"SESSION.OPEN", "30000", "ONCLOSE", "5000", "REQID", "shared-r"});
  ASSERT_EQ(a.type, Type::kInteger) << a.debug_string();
  const Value b = bob.call({"SESSION.OPEN", "30000", "ONCLOSE", "5000", "REQID", "shared-r"});
  ASSERT_EQ(b.type, Type::kInteger) << b.debug_string();
  EXPECT_NE(a.integer, b.integer);
  alice.close();
  RespClient again = login("alice", "alicepw");
  EXPECT_EQ(again.call({"SESSION.OPEN", "30000", "ONCLOSE", "5000", "REQID", "shared-r"}), a);
  EXPECT_EQ(bob.call({"SESSION.KEEPALIVE", std::to_string(a.integer)}).str, kNotYours);
}

TEST_F(SecureServer, RedisCliSessionOfAnotherUser) {
  const std::string sid = redis_cli("--user alice --pass alicepw SESSION.OPEN 30000");
  ASSERT_GT(std::atoll(sid.c_str()), 0) << sid;
  const std::string id = std::to_string(std::atoll(sid.c_str()));
  EXPECT_NE(redis_cli("--user bob --pass bobpw SESSION.CLOSE " + id).find(kNotYours), std::string::npos);
  EXPECT_EQ(redis_cli("--user alice --pass alicepw SESSION.CLOSE " + id), "OK\n");
}

}  // namespace
}  // namespace leasehold::testing
