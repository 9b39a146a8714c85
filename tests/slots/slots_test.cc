// The hash slot of a name (slots/hash_slot.h), slot sets and their text
// form (slots/slot_set.h), and the partition check (slots/partition.h).
// The expected slots are Redis's own (the cluster specification's examples,
// checked against `redis-cli CLUSTER KEYSLOT`); redis_keyslot_test.cc
// compares many more names against a running redis-server.
#include <gtest/gtest.h>

#include "slots/hash_slot.h"
#include "slots/partition.h"
#include "slots/slot_set.h"

namespace leasehold::slots {
namespace {

TEST(HashSlotTest, Crc16XmodemCheckValue) {
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);
  EXPECT_EQ(crc16_xmodem(""), 0);
}

TEST(HashSlotTest, SlotsOfPlainNamesAreRedisCluster) {
  EXPECT_EQ(hash_slot("123456789"), 12739);
  EXPECT_EQ(hash_slot("foo"), 12182);
  EXPECT_EQ(hash_slot("bar"), 5061);
  EXPECT_EQ(hash_slot("somekey"), 11058);
  EXPECT_EQ(hash_slot(""), 0);
}

TEST(HashSlotTest, HashTagsFollowRedisRules) {
  // The tag is between the first '{' and the first '}' after it.
  EXPECT_EQ(hash_slot("foo{hash_tag}"), 2515);
  EXPECT_EQ(hash_slot("foo{hash_tag}"), hash_slot("hash_tag"));
  EXPECT_EQ(hash_slot("foo{bar}{zap}"), hash_slot("bar"));
  EXPECT_EQ(hash_slot("foo{{bar}}zap"), hash_slot("{bar"));
  // An empty tag, or no closing brace, hashes the whole name.
  EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(hash_slot("foo{}{bar}"), 8363);
  EXPECT_EQ(hash_slot("{}"), 15257);
  EXPECT_EQ(hash_slot("}{"), 12793);
  EXPECT_EQ(hashed_part("open{only"), "open{only");
  // A lock and its fenced key share a slot through the tag.
  EXPECT_EQ(hash_slot("lock{orders:42}"), hash_slot("fence{orders:42}"));
}

TEST(HashSlotTest, BinaryNamesHashEveryByte) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(hash_slot(with_nul), hash_slot("a"));
  EXPECT_LT(hash_slot(std::string(1000, '\xff')), kSlotCount);
}

TEST(SlotSetTest, ParsesSlotsAndRangesAndPrintsThemBack) {
  auto set = SlotSet::parse("0-8191,9000,10000-10010");
  ASSERT_TRUE(set) << set.status().to_string();
  EXPECT_EQ(set->count(), 8192u + 1u + 11u);
  EXPECT_TRUE(set->contains(0));
  EXPECT_TRUE(set->contains(8191));
  EXPECT_FALSE(set->contains(8192));
  EXPECT_TRUE(set->contains(9000));
  EXPECT_EQ(set->to_string(), "0-8191,9000,10000-10010");
  EXPECT_EQ(set->ranges().front(), (SlotRange{0, 8191}));
  auto again = SlotSet::parse(set->to_string());
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *set);
}

TEST(SlotSetTest, AdjacentPiecesMergeIntoOneRange) {
  auto set = SlotSet::parse("5,0-4,6-9");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->to_string(), "0-9");
  EXPECT_EQ(SlotSet::all().to_string(), "0-16383");
  EXPECT_EQ(SlotSet().to_string(), "");
}

TEST(SlotSetTest, BadTextIsRefusedNamingThePart) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "no slots given"},
      {"abc", "'abc' is not a slot"},
      {"16384", "slot 16384 is out of range (0 to 16383)"},
      {"99999999999", "'99999999999' is not a slot"},
      {"-1", "'-1' is not a slot"},
      {"10-5", "slot range 10-5 runs backwards"},
      {"0-10,5", "slots 5 are listed twice"},
      {"1,", "an empty entry"},
      {"1 - 2", "is not a slot"},
  };
  for (const auto& c : cases) {
    auto set = SlotSet::parse(c.text);
    ASSERT_FALSE(set) << c.text;
    EXPECT_EQ(set.status().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_NE(set.status().message().find(c.says), std::string::npos)
        << c.text << ": " << set.status().message();
  }
}

TEST(SlotSetTest, DescribeCutsAScatteredSet) {
  SlotSet set;
  for (Slot s = 0; s < 20; s += 2) set.add(s);
  EXPECT_EQ(set.describe(3), "0,2,4 and 7 more ranges");
}

TEST(PartitionTest, ThreeShardsThatSplitEverySlotPass) {
  std::vector<ShardSlots> shards = {{"a", *SlotSet::parse("0-5460")},
                                    {"b", *SlotSet::parse("5461-10922")},
                                    {"c", *SlotSet::parse("10923-16383")}};
  EXPECT_TRUE(check_partition(shards).is_ok());
}

TEST(PartitionTest, OverlapNamesTheSlotsAndBothShards) {
  std::vector<ShardSlots> shards = {{"127.0.0.1:7379", *SlotSet::parse("0-8200")},
                                    {"127.0.0.1:7380", *SlotSet::parse("8192-16383")}};
  const Status s = check_partition(shards);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "slots 8192-8200 are claimed by both 127.0.0.1:7379 and 127.0.0.1:7380");
}

TEST(PartitionTest, MissingSlotsAreNamed) {
  std::vector<ShardSlots> shards = {{"a", *SlotSet::parse("0-8191")}, {"b", *SlotSet::parse("8192-16000")}};
  const Status s = check_partition(shards);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("slots 16001-16383 are owned by no shard"), std::string::npos) << s.message();
  EXPECT_FALSE(check_partition({}).is_ok());
}

}  // namespace
}  // namespace leasehold::slots
