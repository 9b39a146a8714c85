// hash_slot() against a real `redis-server --cluster-enabled yes`: the slot
// `CLUSTER KEYSLOT` gives for thousands of names (random bytes, hash tags
// in every position, empty and unclosed tags; keyslot_names.h) must be
// ours, bit for bit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "keyslot_names.h"
#include "slots/hash_slot.h"
#include "testkit/private_server.h"
#include "testkit/resp_client.h"

namespace leasehold::testing {
namespace {

TEST(RedisKeySlotTest, EverySlotMatchesRedisClusterKeyslot) {
  TempDir dir("redis-keyslot");
  PrivateServer redis(dir, "redis", [&dir](std::uint16_t port) {
    return std::vector<std::string>{"/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", std::to_string(port),
                                    "--cluster-enabled", "yes", "--cluster-config-file", dir.file("nodes.conf"),
                                    "--dir", dir.path(), "--save", "", "--appendonly", "no", "--daemonize", "no"};
  }, std::chrono::seconds(15));
  ASSERT_TRUE(redis.ready());
  auto client = RespClient::connect(redis.port());
  ASSERT_TRUE(client) << client.status().to_string();

  const std::vector<std::string> names = keyslot_names();
  // Pipelined in batches: one round trip per batch, not per name.
  constexpr std::size_t kBatch = 200;
  for (std::size_t start = 0; start < names.size(); start += kBatch) {
    const std::size_t end = std::min(names.size(), start + kBatch);
    for (std::size_t i = start; i < end; ++i) {
      ASSERT_TRUE(client->send(std::vector<std::string>{"CLUSTER", "KEYSLOT", names[i]}).is_ok());
    }
    for (std::size_t i = start; i < end; ++i) {
      auto reply = client->read(std::chrono::seconds(10));
      ASSERT_TRUE(reply) << reply.status().to_string();
      ASSERT_EQ(reply->type, resp::Type::kInteger) << "name #" << i;
      EXPECT_EQ(reply->integer, slots::hash_slot(names[i])) << "name #" << i << " '" << names[i] << "'";
    }
  }
}

}  // namespace
}  // namespace leasehold::testing
