// Unit tests: compat keys (SET NX PX / DEL / DELIFEQ) and the fenced KV.
#include <gtest/gtest.h>

#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

CompatSet set(std::string key, std::string value, std::uint64_t ttl = 0,
              CompatCondition cond = CompatCondition::kNone, bool get = false) {
  return CompatSet{std::move(key), std::move(value), ttl, cond, get};
}

TEST(CoreCompat, SetNxGetDel) {
  Harness h;
  ApplyResult r = h.run(set("k", "v1", 1'000, CompatCondition::kIfAbsent));
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  EXPECT_EQ(r.reply.token, h.sm.revision());
  EXPECT_EQ(std::get<SessionStarted>(r.effects.at(0)), (SessionStarted{r.reply.session, 1'000}));
  auto v = h.sm.compat_get("k");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->value, "v1");
  EXPECT_EQ(v->session, r.reply.session);
  EXPECT_TRUE(h.sm.session(v->session)->compat);
  EXPECT_EQ(h.sm.session(v->session)->owner, "compat");
  h.expect_error(set("k", "v2", 1'000, CompatCondition::kIfAbsent), ErrorCode::kConflict);
  h.expect_error(set("absent", "v", 0, CompatCondition::kIfPresent), ErrorCode::kConflict);
  ApplyResult d = h.run(CompatDelete{"k", std::string("other")});
  EXPECT_EQ(d.reply.count, 0U);
  d = h.run(CompatDelete{"k", std::string("v1")});
  EXPECT_EQ(d.reply.count, 1U);
  EXPECT_FALSE(h.sm.compat_get("k"));
  EXPECT_EQ(h.sm.session_count(), 0U);
  EXPECT_EQ(h.sm.lock_count(), 0U);
  EXPECT_EQ(h.run(CompatDelete{"k", std::nullopt}).reply.count, 0U);
}

TEST(CoreCompat, OverwriteReplacesHolder) {
  Harness h;
  ApplyResult first = h.run(set("k", "v1", 1'000));
  ApplyResult second = h.run(set("k", "v2", 0, CompatCondition::kIfPresent, true));
  ASSERT_EQ(second.reply.code, ReplyCode::kOk);
  EXPECT_EQ(second.reply.value, std::optional<std::string>("v1"));
  EXPECT_GT(second.reply.token, first.reply.token);
  auto lost = effects_of<LockLost>(second);
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0], (LockLost{"k", first.reply.session, first.reply.token, LossReason::kReplaced}));
  EXPECT_EQ(effects_of<SessionEnded>(second).at(0).session, first.reply.session);
  EXPECT_EQ(h.sm.session_count(), 1U);
  EXPECT_EQ(h.sm.compat_get("k")->value, "v2");
  ApplyResult none = h.run(set("fresh", "x", 0, CompatCondition::kNone, true));
  EXPECT_FALSE(none.reply.value.has_value());
}

TEST(CoreCompat, ExpiryFreesKeyAndNativeLocksConflict) {
  Harness h;
  ApplyResult r = h.run(set("k", "v", 100));
  ApplyResult e = h.run(ExpireSession{r.reply.session});
  EXPECT_EQ(effects_of<LockLost>(e).at(0).reason, LossReason::kExpired);
  EXPECT_FALSE(h.sm.compat_get("k"));
  SessionId a = h.open();
  h.grant(acq("k", a));
  h.expect_error(set("k", "v"), ErrorCode::kConflict);
  EXPECT_EQ(h.run(CompatDelete{"k", std::nullopt}).reply.count, 0U);
  ApplyResult c = h.run(set("c", "v"));
  h.expect_error(acq("c", a), ErrorCode::kConflict);
  h.expect_error(acq("x", c.reply.session), ErrorCode::kInvalidArgument);  // compat session
  // PEXPIRE / PERSIST through SetSessionTtl.
  EXPECT_EQ(h.run(SetSessionTtl{c.reply.session, 500}).reply.code, ReplyCode::kOk);
  EXPECT_EQ(h.run(SetSessionTtl{c.reply.session, 0}).reply.code, ReplyCode::kOk);
  // Revoke of a compat key ends its implicit session.
  ApplyResult rv = h.run(Revoke{"c"});
  EXPECT_EQ(effects_of<LockLost>(rv).at(0).reason, LossReason::kRevoked);
  EXPECT_FALSE(h.sm.compat_get("c"));
}

TEST(CoreCompat, Errors) {
  Limits lim;
  lim.max_value_bytes = 4;
  lim.max_sessions = 1;
  Harness h(lim);
  h.expect_error(set("", "v"), ErrorCode::kInvalidArgument);
  h.expect_error(set("k", "12345"), ErrorCode::kLimitExceeded);
  h.expect_error(set("k", "v", 1), ErrorCode::kInvalidArgument);
  h.expect_error(set("k", "v", lim.max_ttl_ms + 1), ErrorCode::kLimitExceeded);
  h.expect_error(set("k", "v", 0, static_cast<CompatCondition>(9)), ErrorCode::kInvalidArgument);
  h.expect_error(CompatDelete{"k", std::string("12345")}, ErrorCode::kLimitExceeded);
  h.run(set("k", "v"));
  h.expect_error(set("k2", "v"), ErrorCode::kLimitExceeded);  // max_sessions
  EXPECT_EQ(h.run(set("k", "w")).reply.code, ReplyCode::kOk);  // replacing is net zero
}

TEST(CoreFenceKv, OnlyCurrentHolderWrites) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token ta = h.grant(acq("L", a));
  ApplyResult p = h.run(FencePut{"cursor", "42", "L", ta});
  ASSERT_EQ(p.reply.code, ReplyCode::kOk);
  EXPECT_EQ(p.reply.token, ta);
  EXPECT_EQ(h.sm.fence_get("cursor")->value, "42");
  EXPECT_EQ(h.sm.fence_get("cursor")->token, ta);
  h.run(ExpireSession{a});
  h.expect_error(FencePut{"cursor", "43", "L", ta}, ErrorCode::kStaleToken);
  Token tb = h.grant(acq("L", b));
  EXPECT_EQ(h.run(FencePut{"cursor", "44", "L", tb}).reply.code, ReplyCode::kOk);
  EXPECT_EQ(h.sm.fence_get("cursor")->token, tb);
  EXPECT_FALSE(h.sm.fence_get("nope"));
}

TEST(CoreFenceKv, Errors) {
  Limits lim;
  lim.max_fence_keys = 1;
  lim.max_value_bytes = 2;
  Harness h(lim);
  SessionId a = h.open(), b = h.open();
  Token ta = h.grant(acq("L", a, LockMode::kShared));
  Token tb = h.grant(acq("L", b, LockMode::kShared));
  h.expect_error(FencePut{"", "v", "L", ta}, ErrorCode::kInvalidArgument);
  h.expect_error(FencePut{"k", "v", "", ta}, ErrorCode::kInvalidArgument);
  h.expect_error(FencePut{"k", "123", "L", ta}, ErrorCode::kLimitExceeded);
  h.expect_error(FencePut{"k", "v", "M", ta}, ErrorCode::kStaleToken);
  ASSERT_EQ(h.run(FencePut{"k", "v", "L", tb}).reply.code, ReplyCode::kOk);
  h.expect_error(FencePut{"k", "v", "L", ta}, ErrorCode::kStaleToken);  // older token
  h.expect_error(FencePut{"k2", "v", "L", tb}, ErrorCode::kLimitExceeded);
}

}  // namespace
}  // namespace leasehold::core::testing
