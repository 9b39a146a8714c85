// The hash slot of a name (slots/hash_slot.h), slot sets and their text
// form (slots/slot_set.h), the partition check (slots/partition.h) and
// the shards' map (slots/shard_map.h).
// The expected slots are Redis's own (the cluster specification's examples,
// checked against `redis-cli CLUSTER KEYSLOT`); redis_keyslot_test.cc
// compares many more names against a running redis-server.
#include <gtest/gtest.h>

#include "slots/hash_slot.h"
#include "slots/partition.h"
#include "slots/shard_map.h"
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

TEST(ShardMapTest, ParsesPeers) {
  auto p = parse_shard_peer("2@127.0.0.1:7380=8192-16383");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->id, 2U);
  EXPECT_EQ(p->host, "127.0.0.1");
  EXPECT_EQ(p->port, 7380);
  EXPECT_EQ(p->slots.to_string(), "8192-16383");
  EXPECT_EQ(p->endpoint(), "127.0.0.1:7380");
  auto v6 = parse_shard_peer("3@[::1]:7381=0,5-6");
  ASSERT_TRUE(v6.is_ok()) << v6.status().to_string();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->endpoint(), "[::1]:7381");
  for (const char* bad : {"", "2", "127.0.0.1:7380=0-1", "0@h:1=0", "1024@h:1=0", "x@h:1=0", "2@h=0", "2@:1=0",
                          "2@h:0=0", "2@h:65536=0", "2@h:1=", "2@h:1=16384", "2@h:1=5-4", "2@a b:1=0"}) {
    EXPECT_FALSE(parse_shard_peer(bad).is_ok()) << bad;
  }
}

TEST(ShardMapTest, BuildsTheOwnerOfEverySlot) {
  ShardAddress self{2, "127.0.0.1", 7380, *SlotSet::parse("5461-10922")};
  std::vector<ShardAddress> peers = {{3, "127.0.0.1", 7381, *SlotSet::parse("10923-16383")},
                                     {1, "127.0.0.1", 7379, *SlotSet::parse("0-5460")}};
  auto map = ShardMap::build(self, peers);
  ASSERT_TRUE(map.is_ok()) << map.status().to_string();
  EXPECT_TRUE(map->enabled());
  EXPECT_EQ(map->self().id, 2U);
  ASSERT_EQ(map->shards().size(), 3U);
  EXPECT_EQ(map->shards()[0].id, 1U);  // by id
  EXPECT_EQ(map->owner(0).port, 7379);
  EXPECT_EQ(map->owner(5461).port, 7380);
  EXPECT_EQ(map->owner(16383).port, 7381);
  EXPECT_EQ(map->by_id(3)->port, 7381);
  EXPECT_EQ(map->by_id(4), nullptr);
  EXPECT_FALSE(ShardMap().enabled());
}

TEST(ShardMapTest, RefusesBadMaps) {
  const auto with = [](std::uint32_t self_id, const char* own, std::vector<ShardAddress> peers) {
    return ShardMap::build(ShardAddress{self_id, "h", 1, *SlotSet::parse(own)}, std::move(peers)).status().message();
  };
  EXPECT_NE(with(1, "0-100", {{2, "h", 2, *SlotSet::parse("50-16383")}}).find("slots 50-100 are claimed by both"),
            std::string::npos);
  EXPECT_NE(with(1, "0-100", {}).find("slots 101-16383 are owned by no shard"), std::string::npos);
  EXPECT_NE(with(1, "0-100", {{1, "h", 2, *SlotSet::parse("101-16383")}}).find("shard id 1 is given twice"),
            std::string::npos);
  EXPECT_NE(with(1, "0-100", {{2, "h", 1, *SlotSet::parse("101-16383")}}).find("address h:1 is given to two"),
            std::string::npos);
  EXPECT_NE(with(0, "0-16383", {}).find("shard id"), std::string::npos);
  EXPECT_NE(with(kMaxShardId + 1, "0-16383", {}).find("shard id"), std::string::npos);
}

}  // namespace
}  // namespace leasehold::slots
