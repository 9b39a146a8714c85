// tests/slots/keyslot_names.h: the names whose hash slot is checked against
// Redis (redis_keyslot_test.cc: hash_slot() equals a real redis-server's
// CLUSTER KEYSLOT) and against a leasehold shard's CLUSTER KEYSLOT
// (tests/shards/shards_test.cc): a few fixed edge cases, then thousands of
// seeded random names (random bytes, hash tags in every position, empty and
// unclosed tags).
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold::testing {

// A name of 0 to 24 bytes from an alphabet heavy in braces, so hash tags,
// empty tags and unbalanced braces all come up often; every 7th name is
// any bytes at all.
inline std::string random_keyslot_name(std::mt19937_64& rng, int i) {
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

inline std::vector<std::string> keyslot_names(int random_count = 3000) {
  std::mt19937_64 rng(20261207);
  std::vector<std::string> names = {"", "{}", "}{", "{", "}", "{{}}", "a{b}c{d}", "{user1000}.following"};
  for (int i = 0; i < random_count; ++i) names.push_back(random_keyslot_name(rng, i));
  return names;
}

}  // namespace leasehold::testing
