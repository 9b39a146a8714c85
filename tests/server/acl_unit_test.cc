// Unit tests: the users-file parser, passwords, key patterns, and the access
// decision (server/security/acl.h) over a real state machine; every command in the
// table declares its ACL category.
#include <gtest/gtest.h>

#include "core/state_machine.h"
#include "server/security/acl.h"
#include "server/security/http_credentials.h"
#include "server/commands/command_table.h"

namespace leasehold::server {
namespace {

const std::string kHashOfSecret = hash_hex(hash_password("secret"));

TEST(AclUnit, EveryCommandHasACategory) {
  for (const CommandSpec& spec : CommandTable::instance().all()) {
    EXPECT_NE(spec.category, kAclUnset) << spec.name << " needs a category in its CommandSpec";
    if (spec.own_session_arg > 0) {
      EXPECT_EQ(spec.category, kAclLock) << spec.name;
    }
  }
  ASSERT_NE(CommandTable::instance().find("FENCE.PUT"), nullptr);
  EXPECT_EQ(CommandTable::instance().find("FENCE.PUT")->keys.step, 2);
}

TEST(AclUnit, Sha256MatchesTheKnownVector) {
  EXPECT_EQ(hash_hex(hash_password("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AclUnit, ParsesRules) {
  auto users = parse_users("# c\n\nuser a on #" + kHashOfSecret + " ~locks/* ~k? +@lock +@read -@read\r\n"
                           "user b off nopass allkeys allcommands -@admin\n"
                           "user c on resetpass nocommands resetkeys\n",
                           "f");
  ASSERT_TRUE(users.is_ok()) << users.status().to_string();
  const AclUser* a = users->find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->enabled);
  EXPECT_TRUE(a->password_ok("secret"));
  EXPECT_FALSE(a->password_ok("Secret"));
  EXPECT_FALSE(a->password_ok(""));
  EXPECT_TRUE(a->allows(kAclLock));
  EXPECT_FALSE(a->allows(kAclRead));
  EXPECT_TRUE(a->allows(kAclConnection));
  EXPECT_FALSE(a->allows(kAclUnset)) << "an uncategorised command is for admins";
  EXPECT_TRUE(a->key_allowed("locks/x/y"));
  EXPECT_TRUE(a->key_allowed("k1"));
  EXPECT_FALSE(a->key_allowed("k12"));
  EXPECT_FALSE(a->key_allowed("lock"));
  const AclUser* b = users->find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->password_ok("anything"));
  EXPECT_FALSE(b->admin());
  EXPECT_TRUE(b->allows(kAclFence));
  EXPECT_TRUE(b->key_allowed("whatever"));
  const AclUser* c = users->find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->password_ok("secret"));
  EXPECT_FALSE(c->key_allowed("x"));
  EXPECT_EQ(a->describe(), "user a on #" + kHashOfSecret + " ~locks/* ~k? +@lock");
  EXPECT_EQ(b->describe(), "user b off nopass ~* +@read +@lock +@fence +@monitor");
  // The description parses back to the same user.
  auto again = parse_users(a->describe() + "\n" + b->describe() + "\n", "g");
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again->find("a")->describe(), a->describe());
  EXPECT_EQ(again->find("b")->describe(), b->describe());
  EXPECT_TRUE(users->auth_required()) << "no default user";
}

// Who an HTTP request is (server/security/http_credentials.h): Basic
// ("alice:secret" is YWxpY2U6c2VjcmV0), a bearer token (token#), or nobody.
TEST(AclUnit, HttpCredentials) {
  const std::string token_hash = hash_hex(hash_password("tok-1"));
  auto users = parse_users("user default off\n"
                           "user alice on #" + kHashOfSecret + " +@monitor\n"
                           "user scraper on token#" + token_hash + " +@monitor\n"
                           "user gone off token#" + hash_hex(hash_password("tok-2")) + " +@all\n",
                           "f");
  ASSERT_TRUE(users) << users.status().to_string();
  using O = HttpIdentity::Outcome;
  auto who = [&](std::optional<std::string> header) { return identify_http(*users, header); };
  EXPECT_EQ(who(std::nullopt).outcome, O::kNone);
  EXPECT_EQ(who("Basic YWxpY2U6c2VjcmV0").user, users->find("alice"));
  EXPECT_EQ(who("basic YWxpY2U6c2VjcmV0").user, users->find("alice"));
  EXPECT_EQ(who("Basic YWxpY2U6d3Jvbmc=").outcome, O::kBad);  // alice:wrong
  EXPECT_EQ(who("Basic YWxpY2U=").outcome, O::kBad);          // no colon
  EXPECT_EQ(who("Basic %%%").outcome, O::kBad);
  EXPECT_EQ(who("Bearer tok-1").user, users->find("scraper"));
  EXPECT_EQ(who("Bearer tok-2").outcome, O::kBad) << "a user that is off";
  EXPECT_EQ(who("Bearer secret").outcome, O::kBad) << "a password is not a token";
  EXPECT_EQ(who("Bearer ").outcome, O::kBad);
  EXPECT_EQ(who("Negotiate abc").outcome, O::kBad);
  EXPECT_EQ(who("Bearer " + std::string(5000, 'x')).outcome, O::kBad);
  EXPECT_EQ(users->find("scraper")->describe(), "user scraper on token#" + token_hash + " resetkeys +@monitor");
  EXPECT_FALSE(users->find("alice")->allows(kAclRead));
  EXPECT_TRUE(users->find("gone")->allows(kAclMonitor)) << "+@all includes +@monitor";
  EXPECT_FALSE(parse_users("user x on token#abc\n", "f"));

  // Authentication off: no header is the open default user.
  auto open = load_acl(AclFiles{});
  ASSERT_TRUE(open);
  EXPECT_EQ(identify_http(*open, std::nullopt).user, open->find("default"));
  EXPECT_TRUE(open->find("default")->allows(kAclMonitor));
}

TEST(AclUnit, RefusesBadLines) {
  for (const char* bad : {"user x on >plain", "user x on #00", "user x on +@nope", "user x bogus", "usr x",
                          "user", "user x\nuser x", "user x on ~", "user white space"}) {
    auto users = parse_users(bad, "f");
    EXPECT_FALSE(users.is_ok()) << bad;
    EXPECT_EQ(users.status().message().rfind("f:", 0), 0u) << users.status().message();
  }
  EXPECT_FALSE(parse_users(std::string(kMaxUsersFileBytes + 1, '#'), "f").is_ok());
}

TEST(AclUnit, LoadWithoutFilesIsOpen) {
  auto users = load_acl({});
  ASSERT_TRUE(users.is_ok());
  EXPECT_FALSE(users->auth_required());
  EXPECT_FALSE(load_acl({"/nonexistent/users", ""}).is_ok());
}

TEST(AclUnit, AccessDecision) {
  core::StateMachine sm;
  core::Command open;
  core::OpenSession o;
  o.ttl_ms = 10'000;
  o.user = "alice";
  open.body = o;
  const core::SessionId mine = sm.apply(open).reply.session;
  auto users = parse_users("user alice on nopass ~locks/* +@lock\nuser root on nopass ~* +@all\n", "f");
  ASSERT_TRUE(users.is_ok());
  const AclUser* alice = users->find("alice");
  const AclUser* root = users->find("root");
  const CommandTable& t = CommandTable::instance();
  const CommandSpec& acquire = *t.find("LOCK.ACQUIRE");
  const std::string id = std::to_string(mine);
  EXPECT_EQ(check_access(nullptr, true, acquire, {"LOCK.ACQUIRE", "locks/a", id}, sm), kNoAuthError);
  EXPECT_EQ(check_access(nullptr, true, *t.find("AUTH"), {"AUTH", "x"}, sm), "");
  EXPECT_EQ(check_access(alice, true, acquire, {"LOCK.ACQUIRE", "locks/a", id}, sm), "");
  EXPECT_EQ(check_access(alice, true, acquire, {"LOCK.ACQUIRE", "other", id}, sm),
            "NOPERM No permissions to access a key");
  EXPECT_EQ(check_access(root, true, acquire, {"LOCK.ACQUIRE", "locks/a", id}, sm),
            "NOPERM this session belongs to another user");
  EXPECT_EQ(check_access(root, true, acquire, {"LOCK.ACQUIRE", "locks/a", std::to_string(mine + 5)}, sm)
                .rfind("EXPIRED", 0),
            0u);
  EXPECT_EQ(check_access(root, false, acquire, {"LOCK.ACQUIRE", "locks/a", id}, sm), "")
      << "authentication off: no ownership";
  EXPECT_EQ(check_access(alice, true, *t.find("LOCK.REVOKE"), {"LOCK.REVOKE", "locks/a"}, sm),
            "NOPERM User alice has no permissions to run the 'lock.revoke' command");
  EXPECT_EQ(check_access(alice, true, *t.find("DEL"), {"DEL", "locks/a", "x"}, sm),
            "NOPERM User alice has no permissions to run the 'del' command");
  EXPECT_EQ(check_access(root, true, *t.find("DEL"), {"DEL", "a", "b", "c"}, sm), "");
  EXPECT_EQ(check_access(alice, true, acquire, {"LOCK.ACQUIRE", "locks/a", "notanumber"}, sm), "")
      << "the handler answers a bad id";
}

}  // namespace
}  // namespace leasehold::server
