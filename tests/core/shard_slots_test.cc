// Unit tests: SetOwnedSlots (core/command.h): the shard's id and owned hash
// slots in the applied state, session ids that carry the shard, and both in
// the command codec and the snapshot image.
#include <gtest/gtest.h>

#include "core/byte_io.h"
#include "core/command_codec.h"
#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

slots::SlotSet range(slots::Slot first, slots::Slot last) {
  slots::SlotSet s;
  s.add(slots::SlotRange{first, last});
  return s;
}

TEST(ShardSlots, UnshardedOwnsEverySlotAndIdsAreRevisions) {
  Harness h;
  EXPECT_EQ(h.sm.shard(), 0U);
  EXPECT_TRUE(h.sm.owns_slot(0));
  EXPECT_TRUE(h.sm.owns_slot(16383));
  const SessionId s = h.open();
  EXPECT_EQ(s, h.sm.revision());
  EXPECT_EQ(shard_of_session(s), 0U);
}

TEST(ShardSlots, RecordsSlotsAndPutsTheShardInNewSessionIds) {
  Harness h;
  const SessionId before = h.open();
  ASSERT_FALSE(h.run(SetOwnedSlots{range(0, 5460).ranges(), 3}).reply.is_error());
  EXPECT_EQ(h.sm.shard(), 3U);
  EXPECT_TRUE(h.sm.owns_slot(5460));
  EXPECT_FALSE(h.sm.owns_slot(5461));
  EXPECT_EQ(h.sm.owned_slots(), range(0, 5460));

  const SessionId after = h.open();
  EXPECT_EQ(shard_of_session(after), 3U);
  EXPECT_EQ(after & kSessionSerialMask, h.sm.revision());
  EXPECT_GT(after, before);
  EXPECT_TRUE(h.sm.session(before).has_value());  // an id from before stays valid
  const Token t = h.grant(acq("L", after));
  EXPECT_EQ(t, h.sm.revision());  // tokens stay revisions

  ApplyResult set = h.run(CompatSet{"k", "v", 5'000, CompatCondition::kNone, false});
  ASSERT_FALSE(set.reply.is_error());
  EXPECT_EQ(shard_of_session(set.reply.session), 3U);
  EXPECT_EQ(set.reply.token, h.sm.revision());
}

TEST(ShardSlots, SameShardMayChangeItsSlotsButNotItsId) {
  Harness h;
  ASSERT_FALSE(h.run(SetOwnedSlots{range(0, 100).ranges(), 2}).reply.is_error());
  ASSERT_FALSE(h.run(SetOwnedSlots{range(50, 16383).ranges(), 2}).reply.is_error());
  EXPECT_FALSE(h.sm.owns_slot(49));
  EXPECT_TRUE(h.sm.owns_slot(50));
  h.expect_error(SetOwnedSlots{range(0, 16383).ranges(), 4}, ErrorCode::kConflict);
  h.expect_error(SetOwnedSlots{range(0, 16383).ranges(), 0}, ErrorCode::kInvalidArgument);
  h.expect_error(SetOwnedSlots{range(0, 16383).ranges(), kMaxShardId + 1}, ErrorCode::kInvalidArgument);
  // Ranges that are not a set's ranges: backwards, past the end, overlapping, adjacent.
  using R = slots::SlotRange;
  for (const std::vector<R>& bad : {std::vector<R>{R{5, 4}}, std::vector<R>{R{0, 16384}},
                                    std::vector<R>{R{0, 10}, R{5, 20}}, std::vector<R>{R{0, 10}, R{11, 20}},
                                    std::vector<R>{R{20, 30}, R{0, 10}}}) {
    h.expect_error(SetOwnedSlots{bad, 2}, ErrorCode::kInvalidArgument);
  }
}

TEST(ShardSlots, SnapshotKeepsTheShardAndItsSessions) {
  Harness h;
  const SessionId old_id = h.open();
  const std::string unsharded = h.sm.snapshot();
  ASSERT_FALSE(h.run(SetOwnedSlots{(range(100, 200) | range(16000, 16383)).ranges(), 7}).reply.is_error());
  const SessionId s = h.open();
  h.grant(acq("L", s));
  const std::string image = h.sm.snapshot();
  EXPECT_GT(image.size(), unsharded.size());

  Result<StateMachine> back = StateMachine::restore(image);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->shard(), 7U);
  EXPECT_EQ(back->owned_slots(), range(100, 200) | range(16000, 16383));
  EXPECT_TRUE(back->session(s).has_value());
  EXPECT_TRUE(back->session(old_id).has_value());
  EXPECT_EQ(back->snapshot(), image);

  // An unsharded image restores unsharded (no section was written).
  Result<StateMachine> plain = StateMachine::restore(unsharded);
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(plain->shard(), 0U);
  EXPECT_EQ(plain->snapshot(), unsharded);
}

TEST(ShardSlots, CodecRefusesRangesNotInCanonicalOrder) {
  const auto encoded_with = [](std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges) {
    detail::ByteWriter w;
    w.u8(kCommandCodecVersion);
    w.u8(static_cast<std::uint8_t>(CommandBody(SetOwnedSlots{}).index() + 1));
    w.varint(0);
    w.varint(0);
    w.varint(0);
    w.varint(2);  // shard
    w.varint(ranges.size());
    for (auto [first, last] : ranges) {
      w.varint(first);
      w.varint(last);
    }
    return w.take();
  };
  EXPECT_TRUE(decode_command(encoded_with({{0, 10}, {12, 16383}})).is_ok());
  EXPECT_FALSE(decode_command(encoded_with({{0, 10}, {11, 20}})).is_ok());  // adjacent: one range
  EXPECT_FALSE(decode_command(encoded_with({{0, 10}, {5, 20}})).is_ok());   // overlapping
  EXPECT_FALSE(decode_command(encoded_with({{10, 5}})).is_ok());            // backwards
  EXPECT_FALSE(decode_command(encoded_with({{0, 16384}})).is_ok());         // past the last slot
}

}  // namespace
}  // namespace leasehold::core::testing
