// Unit tests: SESSION.OPEN's ONCLOSE grace and REQID in the state machine
// (ConnectionClosed, the reqid index, the codec and the snapshot).
#include <gtest/gtest.h>

#include <string>

#include "core/command_codec.h"
#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

OpenSession open_with(std::string reqid, std::string user = "", std::optional<std::uint32_t> grace = std::nullopt) {
  OpenSession o{10'000, "owner", std::move(user)};
  o.reqid = std::move(reqid);
  o.close_grace_ms = grace;
  return o;
}

TEST(CoreOpenOptions, RetryWithSameReqidReturnsTheSameSession) {
  Harness h;
  const ApplyResult first = h.run(open_with("r-1", "alice"));
  ASSERT_FALSE(first.reply.is_error());
  const ApplyResult retry = h.run(open_with("r-1", "alice"));
  ASSERT_FALSE(retry.reply.is_error());
  EXPECT_EQ(retry.reply.session, first.reply.session);
  EXPECT_TRUE(retry.effects.empty());
  EXPECT_EQ(h.sm.session_count(), 1U);
  // Another user with the same reqid, or another reqid: a new session.
  const ApplyResult other_user = h.run(open_with("r-1", "bob"));
  EXPECT_NE(other_user.reply.session, first.reply.session);
  const ApplyResult other_id = h.run(open_with("r-2", "alice"));
  EXPECT_NE(other_id.reply.session, first.reply.session);
  EXPECT_EQ(h.sm.session_count(), 3U);
}

TEST(CoreOpenOptions, ReqidIsFreeAgainOnceItsSessionEnded) {
  Harness h;
  const SessionId s = h.run(open_with("again")).reply.session;
  ASSERT_FALSE(h.run(CloseSession{s}).reply.is_error());
  const SessionId t = h.run(open_with("again")).reply.session;
  EXPECT_NE(t, s);
  EXPECT_TRUE(h.sm.session(t));
}

TEST(CoreOpenOptions, BadReqidOrGraceIsRefusedWithoutChange) {
  Harness h;
  h.expect_error(open_with(std::string(65, 'x')), ErrorCode::kLimitExceeded);
  h.expect_error(open_with("has space"), ErrorCode::kInvalidArgument);
  h.expect_error(open_with(std::string("nul\0", 4)), ErrorCode::kInvalidArgument);
  h.expect_error(open_with("", "", 10'001), ErrorCode::kInvalidArgument);  // over the 10 s TTL
}

TEST(CoreOpenOptions, ConnectionClosedEndsLikeAnExpiryWithReasonClosed) {
  Harness h;
  const ApplyResult opened = h.run(open_with("", "", 0));
  const SessionId s = opened.reply.session;
  ASSERT_EQ(h.sm.session(s)->close_grace_ms, std::optional<std::uint32_t>(0));
  const SessionId w = h.open();
  Acquire a = acq("L", s);
  a.delay_ms = 500;
  const Token t = h.grant(a);
  h.queue(acq("L", w));
  const ApplyResult r = h.run(ConnectionClosed{s});
  ASSERT_FALSE(r.reply.is_error());
  EXPECT_EQ(effects_of<LockLost>(r), (std::vector<LockLost>{{"L", s, t, LossReason::kClosed}}));
  EXPECT_EQ(effects_of<SessionEnded>(r), (std::vector<SessionEnded>{{s, SessionEndReason::kClosed}}));
  EXPECT_EQ(effects_of<WakeAt>(r).size(), 1U);  // the lock-delay applies, as on an expiry
  EXPECT_TRUE(effects_of<Granted>(r).empty());
  EXPECT_FALSE(h.sm.session(s));
  h.expect_error(ConnectionClosed{s}, ErrorCode::kNotFound);
}

TEST(CoreOpenOptions, CodecRoundTripsAndKeepsOldBytes) {
  Command plain;
  plain.body = OpenSession{5'000, "o"};
  Command with = plain;
  std::get<OpenSession>(with.body).close_grace_ms = 0;
  std::get<OpenSession>(with.body).reqid = "abc";
  const std::string plain_bytes = encode_command(plain);
  EXPECT_LT(plain_bytes.size(), encode_command(with).size());
  auto back = decode_command(encode_command(with));
  ASSERT_TRUE(back.is_ok());
  const auto& o = std::get<OpenSession>(back->body);
  EXPECT_EQ(o.close_grace_ms, std::optional<std::uint32_t>(0));
  EXPECT_EQ(o.reqid, "abc");
  EXPECT_EQ(o.user, "");
  auto old = decode_command(plain_bytes);
  ASSERT_TRUE(old.is_ok());
  EXPECT_FALSE(std::get<OpenSession>(old->body).close_grace_ms);
  Command closed;
  closed.body = ConnectionClosed{42};
  auto c = decode_command(encode_command(closed));
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(std::get<ConnectionClosed>(c->body).session, 42U);
}

TEST(CoreOpenOptions, SnapshotKeepsGraceAndReqidIndex) {
  Harness h;
  const SessionId plain = h.open();
  const std::string no_options = h.sm.snapshot();
  const SessionId s = h.run(open_with("keep", "alice", 250)).reply.session;
  auto restored = StateMachine::restore(h.sm.snapshot());
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  EXPECT_EQ(restored->session(s)->close_grace_ms, std::optional<std::uint32_t>(250));
  EXPECT_FALSE(restored->session(plain)->close_grace_ms);
  EXPECT_EQ(restored->snapshot(), h.sm.snapshot());
  Command retry;
  retry.now = h.now;
  retry.body = open_with("keep", "alice", 250);
  EXPECT_EQ(restored->apply(retry).reply.session, s);
  // Without any option the image keeps its older version.
  EXPECT_EQ(static_cast<std::uint8_t>(no_options[4]), 2U);
}

}  // namespace
}  // namespace leasehold::core::testing
