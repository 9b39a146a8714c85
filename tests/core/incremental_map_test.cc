// common/incremental_map.h against std::unordered_map: random inserts,
// erases (by key and by iterator) and lookups across many growths; after
// every operation the sizes agree, and periodically the whole contents and
// the addresses of the values (which must never move) are compared. Then
// the growth itself (one bucket per insert) and moves.
#include "common/incremental_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <unordered_map>

namespace leasehold {
namespace {

TEST(IncrementalMap, MatchesAnUnorderedMapAndNeverMovesAValue) {
  IncrementalMap<std::uint64_t, std::uint64_t> map;
  std::unordered_map<std::uint64_t, std::uint64_t> model;
  std::unordered_map<std::uint64_t, const std::uint64_t*> address;
  std::mt19937_64 rng(7);
  std::uint64_t next_key = 1;
  for (int step = 0; step < 400'000; ++step) {
    const std::uint64_t op = rng() % 10;
    if (op < 6) {  // insert a new key (mostly ascending, like session ids)
      const std::uint64_t key = rng() % 8 == 0 ? rng() % (next_key + 1) : next_key++;
      auto [it, inserted] = map.try_emplace(key, key * 3);
      const bool model_inserted = model.try_emplace(key, key * 3).second;
      ASSERT_EQ(inserted, model_inserted) << key;
      ASSERT_EQ(it->first, key);
      if (inserted) address[key] = &it->second;
      ASSERT_EQ(address[key], &it->second) << "the value of " << key << " moved";
    } else if (op < 8 && !model.empty()) {  // erase by key
      const std::uint64_t key = rng() % next_key;
      ASSERT_EQ(map.erase(key), model.erase(key)) << key;
      address.erase(key);
    } else if (op < 9) {  // erase by iterator, through find
      const std::uint64_t key = rng() % next_key;
      auto it = map.find(key);
      ASSERT_EQ(it != map.end(), model.contains(key)) << key;
      if (it != map.end()) {
        ASSERT_EQ(it->second, key * 3);
        map.erase(it);
        model.erase(key);
        address.erase(key);
      }
    } else {  // lookups, with operator[] on an existing key
      const std::uint64_t key = rng() % next_key;
      ASSERT_EQ(map.contains(key), model.contains(key)) << key;
      ASSERT_EQ(map.count(key), model.count(key)) << key;
      if (model.contains(key)) {
        ASSERT_EQ(&map[key], address[key]);
        ASSERT_EQ(map[key], key * 3);
      }
    }
    ASSERT_EQ(map.size(), model.size());
    if (step % 20'000 == 0 || step == 399'999) {
      std::map<std::uint64_t, std::uint64_t> seen;
      for (const auto& [k, v] : map) {
        ASSERT_TRUE(seen.emplace(k, v).second) << "key " << k << " iterated twice";
        ASSERT_EQ(address[k], &v);
      }
      const auto& const_map = map;
      std::size_t const_count = 0;
      for (auto it = const_map.begin(); it != const_map.end(); ++it) ++const_count;
      ASSERT_EQ(const_count, seen.size());
      const std::map<std::uint64_t, std::uint64_t> want(model.begin(), model.end());
      ASSERT_EQ(seen, want);
    }
  }
  EXPECT_GT(model.size(), 50'000U);  // grew through many tables
}

TEST(IncrementalMap, AGrowthAddsOneBucketPerInsertAndNoLargeAllocation) {
  // Linear hashing: the buckets grow one per kMaxLoad inserts once the
  // elements outnumber kMaxLoad per bucket, so no insert relinks more than one bucket's chain or
  // allocates more than one segment of kSegmentBuckets pointers.
  using Map = IncrementalMap<std::uint64_t, int>;
  Map map;
  std::size_t buckets = map.bucket_count();
  std::size_t segments_added = 0;
  for (std::uint64_t k = 0; k < 200'000; ++k) {
    map[k * 7] = static_cast<int>(k);  // a stride, not only consecutive ids
    const std::size_t now = map.bucket_count();
    ASSERT_LE(now - buckets, 1U) << "one insert added " << now - buckets << " buckets";
    ASSERT_GE(now * Map::kMaxLoad, map.size()) << "load factor above kMaxLoad";
    if (now / Map::kSegmentBuckets != buckets / Map::kSegmentBuckets) ++segments_added;
    buckets = now;
    if (k % 997 == 0) {
      for (std::uint64_t probe = 0; probe <= k; probe += 101) ASSERT_EQ(map.find(probe * 7)->second, probe);
    }
  }
  EXPECT_GE(segments_added, 200'000 / Map::kMaxLoad / Map::kSegmentBuckets - 1);
  map.reserve(400'000);  // splits up front
  EXPECT_GE(map.bucket_count() * Map::kMaxLoad, 400'000U);
  std::size_t n = 0;
  for (const auto& kv : map) n += kv.first == 7 * static_cast<std::uint64_t>(kv.second) ? 1 : 0;
  EXPECT_EQ(n, 200'000U);
}

TEST(IncrementalMap, AMovedFromMapIsEmptyAndUsable) {
  IncrementalMap<std::uint64_t, std::uint64_t> a;
  for (std::uint64_t k = 0; k < 1000; ++k) a[k] = k;
  const std::uint64_t* value = &a[500];
  IncrementalMap<std::uint64_t, std::uint64_t> b(std::move(a));
  EXPECT_EQ(&b[500], value) << "a move keeps the nodes";
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the contract under test
  a[1] = 2;
  EXPECT_EQ(a.find(1)->second, 2U);
  b = std::move(a);
  EXPECT_EQ(b.size(), 1U);
  EXPECT_FALSE(b.contains(500));
}

// The prefetch hints read the map and change nothing: on an empty map, for
// absent keys and for keys in buckets split meanwhile, the contents and the
// address of every value stay as they were.
TEST(IncrementalMap, PrefetchHintsChangeNothing) {
  IncrementalMap<std::uint64_t, std::uint64_t> map;
  map.prefetch_slot(7);
  map.prefetch_chain(7);
  EXPECT_TRUE(map.empty());
  std::map<std::uint64_t, const std::uint64_t*> where;
  for (std::uint64_t k = 0; k < 5000; ++k) {
    where[k] = &map[k];
    map[k] = k * 3;
    map.prefetch_slot(k + 1);   // absent yet
    map.prefetch_chain(k / 2);  // present, maybe in a bucket just split
    map.prefetch_chain(k + 1'000'000);
  }
  ASSERT_EQ(map.size(), 5000U);
  for (const auto& [k, address] : where) {
    const auto found = map.find(k);
    ASSERT_NE(found, map.end());
    EXPECT_EQ(&found->second, address);
    EXPECT_EQ(found->second, k * 3);
  }
}

}  // namespace
}  // namespace leasehold
