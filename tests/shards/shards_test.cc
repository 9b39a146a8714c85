// Shards (docs/scale-out.md): real `leasehold server` processes, each a shard
// of the 16384 hash slots. The topology commands, -MOVED / -CROSSSLOT /
// -WRONGSHARD routing, session ids that carry their shard, the start-time
// check of the map, and a map changed while the shards were down.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "../slots/keyslot_names.h"
#include "slots/hash_slot.h"
#include "testkit/eventually.h"
#include "shard_set.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

constexpr unsigned kShardShift = 53;  // core/types.h kShardIdShift

// A name whose slot lies in [first, last], distinct per `tag`.
std::string name_in(std::uint32_t first, std::uint32_t last, const std::string& tag = "n") {
  for (int i = 0;; ++i) {
    std::string name = tag + std::to_string(i);
    const slots::Slot s = slots::hash_slot(name);
    if (s >= first && s <= last) return name;
  }
}

std::string slot_of(const std::string& name) { return std::to_string(slots::hash_slot(name)); }

class Shards : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(set_.start(ShardSet::even_split(3))); }

  // Names owned by shard index 0, 1, 2 (0-5460, 5461-10921, 10922-16383).
  static std::string on(std::size_t index, const std::string& tag = "n") {
    static const std::uint32_t kFirst[] = {0, 5461, 10922};
    static const std::uint32_t kLast[] = {5460, 10921, 16383};
    return name_in(kFirst[index], kLast[index], tag);
  }
  std::string moved(const std::string& name, std::size_t owner) {
    return "MOVED " + slot_of(name) + " " + set_.endpoint(owner);
  }

  ShardSet set_{"shards"};
};

TEST_F(Shards, EveryShardAnswersTheWholeMap) {
  std::set<std::string> ids;
  for (std::size_t i = 0; i < 3; ++i) {
    RespClient c = set_.client(i);
    ASSERT_TRUE(c.connected());
    const Value slots = c.call({"CLUSTER", "SLOTS"});
    ASSERT_EQ(slots.type, Type::kArray) << slots.debug_string();
    ASSERT_EQ(slots.elements.size(), 3U);
    const std::int64_t kFirst[] = {0, 5461, 10922};
    const std::int64_t kLast[] = {5460, 10921, 16383};
    for (std::size_t k = 0; k < 3; ++k) {
      const Value& r = slots.elements[k];
      ASSERT_EQ(r.elements.size(), 3U);
      EXPECT_EQ(r.elements[0], Value::integer_value(kFirst[k]));
      EXPECT_EQ(r.elements[1], Value::integer_value(kLast[k]));
      ASSERT_EQ(r.elements[2].elements.size(), 3U);
      EXPECT_EQ(r.elements[2].elements[0], Value::bulk("127.0.0.1"));
      EXPECT_EQ(r.elements[2].elements[1], Value::integer_value(set_.port(k)));
      EXPECT_EQ(r.elements[2].elements[2].str.size(), 40U);
    }
    const Value myid = c.call({"CLUSTER", "MYID"});
    ASSERT_EQ(myid.type, Type::kBulkString);
    EXPECT_EQ(myid, slots.elements[i].elements[2].elements[2]);
    ids.insert(myid.str);

    const Value nodes = c.call({"CLUSTER", "NODES"});
    ASSERT_EQ(nodes.type, Type::kBulkString) << nodes.debug_string();
    EXPECT_NE(nodes.str.find(myid.str + " " + set_.endpoint(i) + "@0 myself,master - 0 0 "), std::string::npos)
        << nodes.str;
    EXPECT_NE(nodes.str.find(" connected 0-5460\n"), std::string::npos) << nodes.str;
    EXPECT_NE(nodes.str.find(" connected 10922-16383\n"), std::string::npos) << nodes.str;

    const Value info = c.call({"CLUSTER", "INFO"});
    ASSERT_EQ(info.type, Type::kBulkString);
    for (const char* line : {"cluster_state:ok\r\n", "cluster_slots_assigned:16384\r\n", "cluster_slots_ok:16384\r\n",
                             "cluster_known_nodes:3\r\n", "cluster_size:3\r\n"}) {
      EXPECT_NE(info.str.find(line), std::string::npos) << line;
    }
    EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT", "foo"}), Value::integer_value(12182));
    EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT", "{user1000}.following"}),
              c.call({"CLUSTER", "KEYSLOT", "user1000"}));
    EXPECT_EQ(c.call({"CLUSTER", "NOPE"}).type, Type::kError);
    EXPECT_EQ(c.call({"CLUSTER", "KEYSLOT"}).type, Type::kError);
    EXPECT_EQ(c.call({"ASKING"}), Value::simple("OK"));
    EXPECT_EQ(c.call({"READONLY"}), Value::simple("OK"));
    EXPECT_EQ(c.call({"READWRITE"}), Value::simple("OK"));
  }
  EXPECT_EQ(ids.size(), 3U);
}

// The names redis_keyslot_test.cc checks hash_slot() with against a real
// redis-server: a shard's CLUSTER KEYSLOT gives the same slots.
TEST_F(Shards, KeyslotIsRedisClusters) {
  RespClient c = set_.client(2);
  const std::vector<std::string> names = keyslot_names();
  constexpr std::size_t kBatch = 200;  // pipelined: one round trip per batch
  for (std::size_t start = 0; start < names.size(); start += kBatch) {
    const std::size_t end = std::min(names.size(), start + kBatch);
    for (std::size_t i = start; i < end; ++i) {
      ASSERT_TRUE(c.send(std::vector<std::string>{"CLUSTER", "KEYSLOT", names[i]}).is_ok());
    }
    for (std::size_t i = start; i < end; ++i) {
      auto reply = c.read(std::chrono::seconds(10));
      ASSERT_TRUE(reply) << reply.status().to_string();
      EXPECT_EQ(*reply, Value::integer_value(slots::hash_slot(names[i]))) << "name #" << i;
    }
  }
}

TEST_F(Shards, Resp3Shapes) {
  RespClient c = set_.client(1);
  ASSERT_EQ(c.call({"HELLO", "3"}).type, Type::kMap);
  const Value shards = c.call({"CLUSTER", "SHARDS"});
  ASSERT_EQ(shards.type, Type::kArray) << shards.debug_string();
  ASSERT_EQ(shards.elements.size(), 3U);
  const Value& second = shards.elements[1];
  ASSERT_EQ(second.type, Type::kMap);
  ASSERT_EQ(second.elements.size(), 4U);
  EXPECT_EQ(second.elements[0], Value::bulk("slots"));
  ASSERT_EQ(second.elements[1].elements.size(), 2U);
  EXPECT_EQ(second.elements[1].elements[0], Value::integer_value(5461));
  EXPECT_EQ(second.elements[1].elements[1], Value::integer_value(10921));
  EXPECT_EQ(second.elements[2], Value::bulk("nodes"));
  ASSERT_EQ(second.elements[3].elements.size(), 1U);
  const Value& node = second.elements[3].elements[0];
  ASSERT_EQ(node.type, Type::kMap);
  EXPECT_EQ(node.elements[0], Value::bulk("id"));
  EXPECT_EQ(node.elements[2], Value::bulk("port"));
  EXPECT_EQ(node.elements[3], Value::integer_value(set_.port(1)));
  const Value nodes = c.call({"CLUSTER", "NODES"});
  EXPECT_EQ(nodes.type, Type::kVerbatim) << nodes.debug_string();
  EXPECT_EQ(c.call({"CLUSTER", "INFO"}).type, Type::kVerbatim);
}

TEST_F(Shards, NamesOfOtherShardsAreMovedAndChangeNothing) {
  RespClient c0 = set_.client(0);
  RespClient c2 = set_.client(2);
  const std::string k2 = on(2, "key");
  EXPECT_EQ(c0.call({"SET", k2, "v", "NX", "PX", "30000"}), Value::error(moved(k2, 2)));
  EXPECT_EQ(c0.call({"GET", k2}), Value::error(moved(k2, 2)));
  EXPECT_EQ(c2.call({"GET", k2}).type, Type::kNull);  // the refused SET changed nothing
  EXPECT_EQ(c2.call({"SET", k2, "v", "NX", "PX", "30000"}), Value::simple("OK"));
  EXPECT_EQ(c2.call({"GET", k2}), Value::bulk("v"));

  const std::string lock1 = on(1, "lock");
  const Value s0 = c0.call({"SESSION.OPEN", "10000"});  // sessions are not key-routed
  ASSERT_EQ(s0.type, Type::kInteger);
  EXPECT_EQ(c0.call({"LOCK.ACQUIRE", lock1, std::to_string(s0.integer)}), Value::error(moved(lock1, 1)));
  EXPECT_EQ(c0.call({"LOCK.INFO", lock1}), Value::error(moved(lock1, 1)));
  const std::string lock0 = on(0, "lock");
  EXPECT_EQ(c0.call({"LOCK.ACQUIRE", lock0, std::to_string(s0.integer)}).type, Type::kInteger);

  // Several names: one slot, else CROSSSLOT; a fenced key shares its lock's
  // slot through a hash tag.
  const std::string a = on(0, "a");
  const std::string b = on(0, "b");
  ASSERT_NE(slots::hash_slot(a), slots::hash_slot(b));
  EXPECT_EQ(c0.call({"DEL", a, b}), Value::error("CROSSSLOT Keys in request don't hash to the same slot"));
  EXPECT_EQ(c0.call({"FENCE.PUT", on(1, "fenced"), "v", lock0, "1"}),
            Value::error("CROSSSLOT Keys in request don't hash to the same slot"));
  const std::string tag = "{" + lock0 + "}";
  EXPECT_EQ(slots::hash_slot(tag + "data"), slots::hash_slot(lock0));
  const Value tagged = c0.call({"LOCK.ACQUIRE", tag + "lock", std::to_string(s0.integer)});
  ASSERT_EQ(tagged.type, Type::kInteger) << tagged.debug_string();
  EXPECT_EQ(c0.call({"FENCE.PUT", tag + "data", "v", tag + "lock", std::to_string(tagged.integer)}).type,
            Type::kInteger);
  EXPECT_EQ(c0.call({"FENCE.GET", tag + "data"}).type, Type::kArray);
  const std::string far = "{" + on(2, "t") + "}";
  EXPECT_EQ(c0.call({"FENCE.GET", far + "data"}), Value::error(moved(far + "data", 2)));
  EXPECT_EQ(c0.call({"FENCE.PUT", far + "data", "v", far + "lock", "1"}), Value::error(moved(far, 2)));
  // EVAL routes by its key.
  EXPECT_EQ(c0.call({"EVAL", "return 1", "1", k2}), Value::error(moved(k2, 2)));
}

TEST_F(Shards, SessionIdsCarryTheirShardAndAreRefusedElsewhere) {
  RespClient c0 = set_.client(0);
  RespClient c1 = set_.client(1);
  const Value own = c0.call({"SESSION.OPEN", "10000"});
  const Value other = c1.call({"SESSION.OPEN", "10000"});
  ASSERT_EQ(own.type, Type::kInteger);
  ASSERT_EQ(other.type, Type::kInteger);
  EXPECT_EQ(static_cast<std::uint64_t>(own.integer) >> kShardShift, 1U);
  EXPECT_EQ(static_cast<std::uint64_t>(other.integer) >> kShardShift, 2U);

  const std::string lock0 = on(0, "lock");
  const std::string mine = std::to_string(own.integer);
  const Value held = c0.call({"LOCK.ACQUIRE", lock0, mine});
  ASSERT_EQ(held.type, Type::kInteger);
  const std::string token = std::to_string(held.integer);

  const std::string id = std::to_string(other.integer);
  const Value wrong = Value::error("WRONGSHARD session " + id + " belongs to shard 2 (" + set_.endpoint(1) + ")");
  const std::vector<std::vector<std::string>> requests = {
      {"SESSION.KEEPALIVE", id},
      {"SESSION.CLOSE", id},
      {"SESSION.KILL", id},
      {"SESSION.WATCH", id},
      {"LOCK.ACQUIRE", lock0, id},
      {"LOCK.ACQUIRE", lock0, id, "WAIT", "1000"},
      {"LOCK.RELEASE", lock0, id, token},
      {"LOCK.EXTEND", lock0, id, token, "1000"},
      {"LOCK.CANCEL", lock0, id},
      {"LOCK.TRANSFER", lock0, id, token, mine},
      {"LOCK.TRANSFER", lock0, mine, token, id},
  };
  for (const auto& request : requests) {
    EXPECT_EQ(c0.call(request), wrong) << request[0];
  }
  // Nothing acted on shard 1's own holder, and shard 2's session lives on.
  const Value info = c0.call({"LOCK.INFO", lock0});
  ASSERT_EQ(info.type, Type::kArray) << info.debug_string();
  EXPECT_NE(info.debug_string().find(mine), std::string::npos);
  EXPECT_EQ(c1.call({"SESSION.KEEPALIVE", id}).type, Type::kInteger);
  // An id naming a shard that is not in the map is refused too.
  const std::string stranger = std::to_string((std::uint64_t{9} << kShardShift) | 5);
  EXPECT_EQ(c0.call({"SESSION.KEEPALIVE", stranger}),
            Value::error("WRONGSHARD session " + stranger + " belongs to shard 9 (not in this shard's map)"));
}

TEST_F(Shards, AMapChangedWhileDownMovesTheNamesAndKeepsTheShardIds) {
  const std::string name = name_in(8192, 10921, "moving");  // shard 2's now, shard 1's after
  {
    RespClient c1 = set_.client(1);
    EXPECT_EQ(c1.call({"SET", name, "v", "PX", "60000"}), Value::simple("OK"));
  }
  ASSERT_TRUE(set_.restart({"0-10922", "10923-12000", "12001-16383"}));
  RespClient c1 = set_.client(1);
  EXPECT_EQ(c1.call({"GET", name}), Value::error(moved(name, 0)));
  RespClient c0 = set_.client(0);
  const Value slots = c0.call({"CLUSTER", "SLOTS"});
  ASSERT_EQ(slots.elements.size(), 3U);
  EXPECT_EQ(slots.elements[0].elements[1], Value::integer_value(10922));
  const Value s = c0.call({"SESSION.OPEN", "10000"});
  ASSERT_EQ(s.type, Type::kInteger);
  EXPECT_EQ(static_cast<std::uint64_t>(s.integer) >> kShardShift, 1U);

  // A data dir keeps its shard id.
  set_.stop();
  std::vector<std::string> swapped = set_.flags(0, {"0-10922", "10923-12000", "12001-16383"});
  swapped[1] = "4";  // not a peer's id either
  ServerProcess probe;
  const auto refused = probe.run_to_exit(set_.data_dir(0), swapped, std::chrono::seconds(30));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, 64);
  EXPECT_NE(refused->stderr_text.find("is shard 1's"), std::string::npos) << refused->stderr_text;
}

TEST(ShardMapCheck, AStartWithABadMapIsRefused) {
  TempDir dir("shards-refused");
  ServerProcess probe;
  const std::string peer = "2@127.0.0.1:" + std::to_string(free_port());
  struct Case {
    std::vector<std::string> flags;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--shard-id", "1", "--shard-slots", "0-9000", "--shard-peers", peer + "=8000-16383"},
       "slots 8000-9000 are claimed by both"},
      {{"--shard-id", "1", "--shard-slots", "0-100", "--shard-peers", peer + "=200-16383"},
       "slots 101-199 are owned by no shard"},
      {{"--shard-id", "1", "--shard-slots", "0-8191"}, "slots 8192-16383 are owned by no shard"},
      {{"--shard-slots", "0-16383"}, "--shard-id"},
      {{"--shard-id", "1", "--shard-slots", "0-16383", "--shard-peers", "nonsense"}, "ID@HOST:PORT=SLOTS"},
      {{"--shard-id", "1", "--shard-slots", "0-8191", "--shard-peers", "1@127.0.0.1:1=8192-16383"},
       "shard id 1 is given twice"},
      {{"--shard-id", "1", "--shard-slots", "0-16384"}, "--shard-slots"},
  };
  for (const Case& c : cases) {
    const auto exit = probe.run_to_exit(dir.file("data"), c.flags, std::chrono::seconds(30));
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->code, 64) << c.says;
    EXPECT_NE(exit->stderr_text.find(c.says), std::string::npos) << exit->stderr_text;
  }
}

TEST(ShardMapCheck, OneShardOwningEverySlotServes) {
  TempDir dir("shards-one");
  ServerProcess server;
  const std::uint16_t port = free_port();
  ASSERT_TRUE(server.start_on(port, dir.file("data"), {"--shard-id", "5", "--shard-slots", "0-16383"}));
  RespClient c = server.client();
  EXPECT_EQ(c.call({"SET", "foo", "v", "PX", "10000"}), Value::simple("OK"));
  const Value s = c.call({"SESSION.OPEN", "10000"});
  ASSERT_EQ(s.type, Type::kInteger);
  EXPECT_EQ(static_cast<std::uint64_t>(s.integer) >> kShardShift, 5U);
}

TEST(ShardMapCheck, TheMapMayComeFromTheConfigFile) {
  TempDir dir("shards-config");
  const std::uint16_t port = free_port();
  const std::string config = dir.file("leasehold.toml");
  {
    std::ofstream out(config);
    out << "shard-id = 2\n"
        << "shard-slots = \"100-16383\"\n"
        << "shard-peers = [\"1@127.0.0.1:" << free_port() << "=0-99\"]\n";
  }
  ServerProcess server;
  ASSERT_TRUE(server.start_on(port, dir.file("data"), {"--config", config}));
  RespClient c = server.client();
  const Value slots = c.call({"CLUSTER", "SLOTS"});
  ASSERT_EQ(slots.elements.size(), 2U) << slots.debug_string();
  EXPECT_EQ(slots.elements[1].elements[0], Value::integer_value(100));
  EXPECT_EQ(slots.elements[1].elements[2].elements[1], Value::integer_value(port));
  EXPECT_EQ(c.call({"CLUSTER", "MYID"}), Value::bulk(std::string(39, '0') + "2"));
}

TEST(ShardMapCheck, AnUnshardedServerHasNoClusterSupport) {
  TempDir dir("shards-none");
  ServerProcess server;
  ASSERT_TRUE(server.start(dir.file("data")));
  RespClient c = server.client();
  EXPECT_EQ(c.call({"CLUSTER", "SLOTS"}), Value::error("ERR This instance has cluster support disabled"));
  EXPECT_EQ(c.call({"ASKING"}), Value::simple("OK"));
  const Value s = c.call({"SESSION.OPEN", "10000"});
  ASSERT_EQ(s.type, Type::kInteger);
  EXPECT_EQ(static_cast<std::uint64_t>(s.integer) >> kShardShift, 0U);
  // A session id with shard bits is just not found here.
  const std::string foreign = std::to_string((std::uint64_t{2} << kShardShift) | 5);
  EXPECT_EQ(c.call({"SESSION.KEEPALIVE", foreign}).type, Type::kError);
}

}  // namespace
}  // namespace leasehold::testing
