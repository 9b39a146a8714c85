// Authorisation against a real server: every ACL category and key pattern,
// allowed and denied (a denied command changes nothing), ACL WHOAMI / LIST /
// LOAD, and a reload (SIGHUP, ACL LOAD) that removes a user.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "tests/server/security_fixture.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

std::string noperm_cmd(const std::string& user, const std::string& cmd) {
  return "NOPERM User " + user + " has no permissions to run the '" + cmd + "' command";
}
const char* kNoKey = "NOPERM No permissions to access a key";

TEST_F(SecureServer, LockCategoryAndPatterns) {
  RespClient alice = login("alice", "alicepw");
  const std::int64_t s = open_session(alice);
  const std::string sid = std::to_string(s);
  Value t = alice.call({"LOCK.ACQUIRE", "locks/a", sid});
  ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
  EXPECT_EQ(alice.call({"LOCK.ACQUIRE", "other/a", sid}).str, kNoKey);
  EXPECT_EQ(alice.call({"LOCK.INFO", "other/a"}).str, kNoKey);
  EXPECT_EQ(alice.call({"LOCK.INFO", "locks/a"}).type, Type::kArray) << "RESP2: the map as an array";
  EXPECT_EQ(alice.call({"LOCK.RELEASE", "other/a", sid, "1"}).str, kNoKey);
  EXPECT_EQ(alice.call({"SESSION.KEEPALIVE", sid}).type, Type::kInteger);
  // Admin commands.
  EXPECT_EQ(alice.call({"LOCK.LIST"}).str, noperm_cmd("alice", "lock.list"));
  EXPECT_EQ(alice.call({"SESSION.LIST"}).str, noperm_cmd("alice", "session.list"));
  EXPECT_EQ(alice.call({"SESSION.KILL", sid}).str, noperm_cmd("alice", "session.kill"));
  EXPECT_EQ(alice.call({"LOCK.REVOKE", "locks/a"}).str, noperm_cmd("alice", "lock.revoke"));
  EXPECT_EQ(alice.call({"LOCK.CANCEL", "locks/a", sid}).str, noperm_cmd("alice", "lock.cancel"));
  EXPECT_EQ(alice.call({"CONFIG", "GET", "x"}).str, noperm_cmd("alice", "config"));
  EXPECT_EQ(alice.call({"ACL", "LIST"}).str.rfind("NOPERM", 0), 0u);
  // The denied commands changed nothing: alice still holds locks/a, no other/a.
  RespClient admin = login("admin", "adminpw");
  EXPECT_EQ(admin.call({"LOCK.INFO", "other/a"}).type, Type::kNull);
  Value info = admin.call({"LOCK.INFO", "locks/a"});
  EXPECT_NE(info.debug_string().find(std::to_string(t.integer)), std::string::npos) << info.debug_string();
  EXPECT_EQ(alice.call({"LOCK.RELEASE", "locks/a", sid, std::to_string(t.integer)}), Value::simple("OK"));
  EXPECT_EQ(alice.call({"SESSION.CLOSE", sid}), Value::simple("OK"));
}

TEST_F(SecureServer, FenceCategoryAndPatterns) {
  RespClient alice = login("alice", "alicepw");
  RespClient bob = login("bob", "bobpw");
  RespClient fencer = login("fencer", "fencepw");
  const std::string sid = std::to_string(open_session(alice));
  const std::string tok = std::to_string(alice.call({"LOCK.ACQUIRE", "locks/a", sid}).integer);
  // Both the key and the lock must match: FENCE.PUT key value lock token.
  EXPECT_EQ(alice.call({"FENCE.PUT", "keys/k", "v1", "locks/a", tok}).type, Type::kInteger);
  EXPECT_EQ(alice.call({"FENCE.PUT", "other/k", "v2", "locks/a", tok}).str, kNoKey);
  EXPECT_EQ(fencer.call({"FENCE.PUT", "f/k", "v3", "locks/a", tok}).type, Type::kInteger);
  EXPECT_EQ(fencer.call({"FENCE.PUT", "keys/k", "v4", "locks/a", tok}).str, kNoKey);
  EXPECT_EQ(bob.call({"FENCE.PUT", "locks/k", "v5", "locks/a", tok}).str, noperm_cmd("bob", "fence.put"));
  EXPECT_EQ(bob.call({"FENCE.GET", "locks/k"}).str, noperm_cmd("bob", "fence.get"));
  Value got = alice.call({"FENCE.GET", "keys/k"});
  ASSERT_EQ(got.elements.size(), 2u);
  EXPECT_EQ(got.elements[0], Value::bulk("v1")) << "the denied puts changed nothing";
  // Compat keys are fence: SET / GET / DEL / DELIFEQ / PTTL / PEXPIRE.
  EXPECT_EQ(alice.call({"SET", "keys/c", "x", "NX", "PX", "30000"}), Value::simple("OK"));
  EXPECT_EQ(alice.call({"SET", "other", "x"}).str, kNoKey);
  EXPECT_EQ(bob.call({"SET", "locks/c", "x"}).str, noperm_cmd("bob", "set"));
  EXPECT_EQ(bob.call({"GET", "locks/c"}).str, noperm_cmd("bob", "get"));
  EXPECT_EQ(alice.call({"DEL", "keys/c", "other"}).str, kNoKey) << "every key of DEL is checked";
  EXPECT_EQ(alice.call({"GET", "keys/c"}), Value::bulk("x")) << "so nothing was deleted";
  EXPECT_EQ(alice.call({"PTTL", "other"}).str, kNoKey);
  EXPECT_EQ(alice.call({"PEXPIRE", "other", "10"}).str, kNoKey);
  EXPECT_EQ(alice.call({"DELIFEQ", "other", "x"}).str, kNoKey);
  EXPECT_EQ(alice.call({"DELIFEQ", "keys/c", "x"}).integer, 1);
}

TEST_F(SecureServer, ReadCategory) {
  RespClient reader = login("reader", "readpw");
  EXPECT_EQ(reader.call({"LOCK.INFO", "anything"}).type, Type::kNull);
  EXPECT_EQ(reader.call({"SESSION.OPEN", "5000"}).str, noperm_cmd("reader", "session.open"));
  EXPECT_EQ(reader.call({"SET", "k", "v"}).str, noperm_cmd("reader", "set"));
  Value info = reader.call({"INFO"});
  EXPECT_NE(info.str.find("leasehold_version:"), std::string::npos);
  EXPECT_EQ(info.str.find("data_dir"), std::string::npos) << "details are for admins";
  RespClient fencer = login("fencer", "fencepw");
  EXPECT_EQ(fencer.call({"LOCK.INFO", "locks/x"}).str, noperm_cmd("fencer", "lock.info"));
  EXPECT_EQ(fencer.call({"INFO"}).str, noperm_cmd("fencer", "info"));
  // Connection commands are open to every user.
  for (RespClient* c : {&reader, &fencer}) {
    EXPECT_EQ(c->call({"PING"}), Value::simple("PONG"));
    EXPECT_EQ(c->call({"CLIENT", "ID"}).type, Type::kInteger);
    EXPECT_EQ(c->call({"COMMAND", "COUNT"}).type, Type::kInteger);
  }
}

TEST_F(SecureServer, AdminCanDoEverything) {
  RespClient admin = login("admin", "adminpw");
  RespClient alice = login("alice", "alicepw");
  const std::string sid = std::to_string(open_session(alice));
  ASSERT_EQ(alice.call({"LOCK.ACQUIRE", "locks/a", sid}).type, Type::kInteger);
  EXPECT_EQ(admin.call({"LOCK.LIST"}).elements.size(), 1u);
  EXPECT_NE(admin.call({"INFO"}).str.find("data_dir:"), std::string::npos);
  EXPECT_EQ(admin.call({"LOCK.REVOKE", "locks/a"}), Value::simple("OK"));
  EXPECT_EQ(admin.call({"SESSION.LIST"}).elements.size(), 1u);
  EXPECT_EQ(admin.call({"SESSION.KILL", sid}), Value::simple("OK"));
  Value list = admin.call({"ACL", "LIST"});
  ASSERT_EQ(list.elements.size(), 7u) << list.debug_string();
  const std::string all = list.debug_string();
  EXPECT_NE(all.find("user alice on #" + sha256_hex("alicepw") + " ~locks/* ~keys/* +@read +@lock +@fence"),
            std::string::npos) << all;
  EXPECT_EQ(all.find("alicepw"), std::string::npos);
  // COMMAND INFO shows the category and key positions from the table.
  const std::string cmd = admin.call({"COMMAND", "INFO", "fence.put"}).debug_string();
  EXPECT_NE(cmd.find("@fence"), std::string::npos) << cmd;
}

// Polls until `c`'s PING gets `want` (a reload is asynchronous to the test).
bool wait_ping(RespClient& c, const std::string& want) {
  return eventually([&] { return c.call({"PING"}).str == want; }, std::chrono::seconds(20),
                    std::chrono::milliseconds(20));
}

TEST_F(SecureServer, SighupReloadRemovingAUserCutsItsConnections) {
  RespClient alice = login("alice", "alicepw");
  RespClient bob = login("bob", "bobpw");
  const std::string sid = std::to_string(open_session(alice));
  std::string users = standard_users();
  users.erase(users.find("user alice"), users.find("user bob") - users.find("user alice"));
  write_text(users_file(), users);
  server_.process().signal(SIGHUP);
  ASSERT_TRUE(wait_ping(alice, "NOAUTH Authentication required."));
  EXPECT_EQ(alice.call({"SESSION.KEEPALIVE", sid}).str, "NOAUTH Authentication required.");
  EXPECT_EQ(alice.call({"AUTH", "alice", "alicepw"}).str.rfind("WRONGPASS", 0), 0u);
  EXPECT_EQ(bob.call({"PING"}), Value::simple("PONG")) << "other users keep their rights";
  RespClient again = server_.client();
  EXPECT_EQ(again.call({"AUTH", "alice", "alicepw"}).str.rfind("WRONGPASS", 0), 0u);
}

TEST_F(SecureServer, AclLoad) {
  RespClient admin = login("admin", "adminpw");
  RespClient bob = login("bob", "bobpw");
  EXPECT_EQ(bob.call({"ACL", "LOAD"}).str.rfind("NOPERM", 0), 0u);
  // A bad file is refused and the current users stay.
  write_text(users_file(), standard_users() + "user broken on >plain\n");
  Value bad = admin.call({"ACL", "LOAD"});
  EXPECT_NE(bad.str.find("plaintext passwords are not accepted"), std::string::npos) << bad.str;
  EXPECT_EQ(bob.call({"PING"}), Value::simple("PONG"));
  // Taking +@lock from bob takes effect at his next command.
  std::string users = standard_users();
  const std::string from = "user bob on #" + sha256_hex("bobpw") + " ~locks/* +@lock +@read";
  users.replace(users.find(from), from.size(), "user bob on #" + sha256_hex("bobpw") + " ~locks/* +@read");
  write_text(users_file(), users);
  EXPECT_EQ(admin.call({"ACL", "LOAD"}), Value::simple("OK"));
  EXPECT_EQ(bob.call({"SESSION.OPEN", "5000"}).str, noperm_cmd("bob", "session.open"));
  EXPECT_EQ(bob.call({"LOCK.INFO", "locks/a"}).type, Type::kNull);
}

}  // namespace
}  // namespace leasehold::testing
