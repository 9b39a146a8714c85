// hash_slot() against a real `redis-server --cluster-enabled yes`: the slot
// `CLUSTER KEYSLOT` gives for thousands of names (random bytes, hash tags
// in every position, empty and unclosed tags) must be ours, bit for bit.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "slots/hash_slot.h"
#include "testkit/private_server.h"
#include "testkit/resp_client.h"

namespace leasehold::testing {
namespace {

// A name of 0 to 24 bytes from an alphabet heavy in braces, so hash tags,
// empty tags and unbalanced braces all come up often; every 7th name is
// any bytes at all.
std::string random_name(std::mt19937_64& rng, int i) {
  std::uniform_int_distribution<int> length(0, 24);
  std::string name;
  const int n = length(rng);
  if (i % 7 == 0) {
    std::uniform_int_distribution<int> byte(0, 255);
    for (int k = 0; k < n; ++k) name.push_back(static_cast<char>(byte(rng)));
    return name;
  }
  static constexpr std::string_view kAlphabet = "ab{}{}:0-9xyz";
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  for (int k = 0; k < n; ++k) name.push_back(kAlphabet[pick(rng)]);
  return name;
}

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

  std::mt19937_64 rng(20261207);
  std::vector<std::string> names = {"", "{}", "}{", "{", "}", "{{}}", "a{b}c{d}", "{user1000}.following"};
  for (int i = 0; i < 3000; ++i) names.push_back(random_name(rng, i));
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
