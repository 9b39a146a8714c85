// The small containers that keep a session's records small (ten million
// sessions under 1.5 GB): common/node_pool.h, core/session_labels.h,
// server/services/speaker_ids.h, and IncrementalMap's nodes coming from its pool
// (values that own memory are destroyed exactly once: the ASan build's leak
// check sees the rest).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/incremental_map.h"
#include "common/node_pool.h"
#include "core/session_labels.h"
#include "server/services/speaker_ids.h"

namespace leasehold {
namespace {

using Pool = NodePool<40, 8>;

TEST(NodePool, BlocksAreDistinctAlignedAndReusedAfterDeallocate) {
  Pool pool;
  std::vector<void*> blocks;
  std::set<std::uintptr_t> seen;
  const std::size_t n = 3 * Pool::kBlocksPerSlab + 5;  // spans four slabs
  for (std::size_t i = 0; i < n; ++i) {
    void* b = pool.allocate();
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(b) % 8, 0U);
    ASSERT_TRUE(seen.insert(reinterpret_cast<std::uintptr_t>(b)).second) << "block handed out twice";
    std::memset(b, 0xab, 40);  // the whole block is usable (ASan checks the bounds of the slab)
    blocks.push_back(b);
  }
  EXPECT_EQ(pool.slab_bytes(), 4 * Pool::kSlabBytes - 4 * (Pool::kSlabBytes % Pool::block_bytes()));
  // Freed blocks come back (last freed first) before any new slab is taken.
  const std::size_t before = pool.slab_bytes();
  pool.deallocate(blocks[7]);
  pool.deallocate(blocks[3]);
  EXPECT_EQ(pool.allocate(), blocks[3]);
  EXPECT_EQ(pool.allocate(), blocks[7]);
  EXPECT_EQ(pool.slab_bytes(), before);
}

TEST(NodePool, AMovedPoolKeepsItsBlocksWhereTheyAre) {
  Pool a;
  void* b = a.allocate();
  std::memcpy(b, "kept", 5);
  Pool moved(std::move(a));
  EXPECT_STREQ(static_cast<const char*>(b), "kept");
  moved.deallocate(b);
  EXPECT_EQ(moved.allocate(), b);
  EXPECT_EQ(a.slab_bytes(), 0U);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
}

#if defined(__SANITIZE_ADDRESS__)
// The pool poisons what it does not hand out: ASan still sees a use of an
// erased element, as it would with malloc's blocks.
TEST(NodePoolDeathTest, ASanReportsAUseOfAFreedBlock) {
  EXPECT_DEATH(
      {
        Pool pool;
        auto* block = static_cast<char*>(pool.allocate());
        pool.deallocate(block);
        *static_cast<volatile char*>(block + 16) = 1;
      },
      "use-after-poison");
}
#endif

TEST(IncrementalMap, DestroysEveryValueItOwnsOnceWithPooledNodes) {
  auto counter = std::make_shared<int>(0);
  {
    IncrementalMap<std::uint64_t, std::shared_ptr<int>> map;
    for (std::uint64_t k = 0; k < 20'000; ++k) map.try_emplace(k, counter);
    EXPECT_EQ(counter.use_count(), 20'001);
    for (std::uint64_t k = 0; k < 20'000; k += 2) map.erase(k);
    EXPECT_EQ(counter.use_count(), 10'001);
    for (std::uint64_t k = 0; k < 10'000; k += 2) map.try_emplace(k, counter);  // reuses freed nodes
    EXPECT_EQ(counter.use_count(), 15'001);
    IncrementalMap<std::uint64_t, std::shared_ptr<int>> moved(std::move(map));
    EXPECT_EQ(moved.size(), 15'000U);
    EXPECT_EQ(counter.use_count(), 15'001);
  }
  EXPECT_EQ(counter.use_count(), 1);
}

TEST(SessionLabels, HoldsOwnerAndUserInOnePointer) {
  using core::detail::SessionLabels;
  static_assert(sizeof(SessionLabels) == sizeof(void*));
  const SessionLabels none;
  EXPECT_EQ(none.owner(), "");
  EXPECT_EQ(none.user(), "");
  const SessionLabels empty("", "");
  EXPECT_EQ(empty.owner(), "");
  EXPECT_EQ(empty.user(), "");
  const SessionLabels owner_only("worker-7", "");
  EXPECT_EQ(owner_only.owner(), "worker-7");
  EXPECT_EQ(owner_only.user(), "");
  const SessionLabels user_only("", "alice");
  EXPECT_EQ(user_only.owner(), "");
  EXPECT_EQ(user_only.user(), "alice");
  const std::string binary("a\0b", 3);
  SessionLabels both(binary, std::string(300, 'u'));
  EXPECT_EQ(both.owner(), binary);
  EXPECT_EQ(both.user(), std::string(300, 'u'));
  SessionLabels moved(std::move(both));
  EXPECT_EQ(moved.owner(), binary);
  EXPECT_EQ(moved.user().size(), 300U);
}

TEST(SpeakerIds, KeepsTheFirstInlineAndDropsClosedOnesWhenOneIsAdded) {
  static_assert(sizeof(server::SpeakerIds) == sizeof(std::uint64_t));
  std::set<std::uint64_t> closed;
  const auto is_closed = [&closed](std::uint64_t id) { return closed.contains(id); };
  server::SpeakerIds ids(5);
  EXPECT_TRUE(ids.contains(5));
  EXPECT_FALSE(ids.contains(0));
  EXPECT_FALSE(ids.contains(6));
  ids.add(5, is_closed);  // already there
  ids.add(6, is_closed);
  ids.add(7, is_closed);
  EXPECT_TRUE(ids.contains(5) && ids.contains(6) && ids.contains(7));
  closed = {5, 6};
  ids.add(8, is_closed);  // drops 5 and 6, takes the inline place
  EXPECT_FALSE(ids.contains(5));
  EXPECT_FALSE(ids.contains(6));
  EXPECT_TRUE(ids.contains(7) && ids.contains(8));
}

}  // namespace
}  // namespace leasehold
