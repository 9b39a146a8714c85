// Unit tests: a session's user (the authenticated user that opened it) goes
// through apply, the command codec and snapshots, and older images (without
// users) still decode.
#include <gtest/gtest.h>

#include "core/command_codec.h"
#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

Command open_command(std::string owner, std::string user) {
  OpenSession o;
  o.ttl_ms = 5'000;
  o.owner = std::move(owner);
  o.user = std::move(user);
  return Command{7, 0, 0, std::move(o)};
}

TEST(SessionUser, CodecWithoutUserIsTheOldLayout) {
  // The version-1 layout written by hand: version, type 1, now, session, seq,
  // ttl_ms (5000 = 0x88 0x27), owner "w".
  const std::string old_bytes("\x01\x01\x07\x00\x00\x88\x27\x01w", 9);
  EXPECT_EQ(encode_command(open_command("w", "")), old_bytes);
  Result<Command> back = decode_command(old_bytes);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(std::get<OpenSession>(back->body).user, "");
  EXPECT_EQ(std::get<OpenSession>(back->body).owner, "w");
}

TEST(SessionUser, CodecRoundTripsTheUser) {
  const std::string bytes = encode_command(open_command("w", "alice"));
  Result<Command> back = decode_command(bytes);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(std::get<OpenSession>(back->body).user, "alice");
  // A truncated user is refused, not half-read.
  EXPECT_FALSE(decode_command(bytes.substr(0, bytes.size() - 1)).is_ok());
}

TEST(SessionUser, ApplyRecordsAndBoundsTheUser) {
  Harness h;
  ApplyResult r = h.sm.apply(open_command("w", "alice"));
  ASSERT_FALSE(r.reply.is_error());
  ASSERT_TRUE(h.sm.session(r.reply.session).has_value());
  EXPECT_EQ(h.sm.session(r.reply.session)->user, "alice");
  Limits small;
  small.max_owner_bytes = 4;
  Harness tight(small);
  EXPECT_EQ(tight.sm.apply(open_command("w", "alice")).reply.error.code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(tight.sm.session_count(), 0U);
}

TEST(SessionUser, SnapshotVersionFollowsTheUsers) {
  Harness plain;
  plain.open();
  const std::string v1 = plain.sm.snapshot();
  ASSERT_GT(v1.size(), 5U);
  EXPECT_EQ(v1[4], '\x02') << "no users: the version-2 image (quarantine, no users)";

  Harness with;
  with.open();
  const SessionId id = with.sm.apply(open_command("w", "bob")).reply.session;
  const std::string v2 = with.sm.snapshot();
  EXPECT_EQ(v2[4], '\x03');
  Result<StateMachine> back = StateMachine::restore(v2);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  ASSERT_TRUE(back->session(id).has_value());
  EXPECT_EQ(back->session(id)->user, "bob");
  EXPECT_EQ(back->snapshot(), v2) << "canonical: equal states, equal bytes";
  Result<StateMachine> old = StateMachine::restore(v1);
  ASSERT_TRUE(old.is_ok()) << old.status().to_string();
  EXPECT_EQ(old->snapshot(), v1);
}

}  // namespace
}  // namespace leasehold::core::testing
