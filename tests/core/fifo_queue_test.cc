// core/fifo_queue.h: FIFO order, front erase, middle erase, compaction.
#include "core/fifo_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace leasehold::core::detail {
namespace {

std::vector<int> items(const FifoQueue<int>& q) { return std::vector<int>(q.begin(), q.end()); }

TEST(FifoQueue, PopsFromTheFrontInOrderAndEmptiesCleanly) {
  FifoQueue<int> q;
  EXPECT_TRUE(q.empty());
  for (int i = 0; i < 10; ++i) q.push_back(i);
  ASSERT_EQ(q.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(q.front(), i);
    ASSERT_EQ(q[0], i);
    auto next = q.erase(q.begin());
    EXPECT_EQ(next, q.begin());
    EXPECT_EQ(q.size(), static_cast<std::size_t>(9 - i));
    EXPECT_EQ(items(q).size(), q.size());
  }
  EXPECT_TRUE(q.empty());
  q.push_back(42);  // usable again after it drained
  EXPECT_EQ(items(q), std::vector<int>{42});
}

TEST(FifoQueue, ErasesAPrefixAMiddleElementAndKeepsOrderAcrossCompaction) {
  FifoQueue<int> q;
  for (int i = 0; i < 100; ++i) q.push_back(i);
  q.erase(q.begin(), q.begin() + 30);  // a batch of grants
  EXPECT_EQ(q.front(), 30);
  EXPECT_EQ(q[5], 35);
  auto it = q.erase(q.begin() + 10);  // a cancelled wait: 40
  EXPECT_EQ(*it, 41);
  for (int i = 100; i < 110; ++i) q.push_back(i);
  std::vector<int> want;
  for (int i = 30; i < 110; ++i) {
    if (i != 40) want.push_back(i);
  }
  EXPECT_EQ(items(q), want);
  // Past half of the storage the dead prefix is dropped; order is kept.
  q.erase(q.begin(), q.begin() + 50);
  want.erase(want.begin(), want.begin() + 50);
  EXPECT_EQ(items(q), want);
  EXPECT_EQ(q.size(), want.size());
}

TEST(FifoQueue, ConstAccessMatches) {
  FifoQueue<int> q;
  for (int i = 0; i < 4; ++i) q.push_back(i * 10);
  q.erase(q.begin());
  const FifoQueue<int>& c = q;
  EXPECT_EQ(c.front(), 10);
  EXPECT_EQ(c[2], 30);
  EXPECT_EQ(std::vector<int>(c.begin(), c.end()), (std::vector<int>{10, 20, 30}));
}

}  // namespace
}  // namespace leasehold::core::detail
