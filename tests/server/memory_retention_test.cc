// server/memory_retention.h: after retain_freed_memory(), a 4 MiB block
// comes from the heap (not its own mmap) and, once freed, stays in the
// process for the next allocation (the heap is not trimmed), as glibc's
// mallinfo2() reports. Under ASan malloc is ASan's: the call must say it
// was refused, and nothing else is checked.
#include "server/memory_retention.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace leasehold::server {
namespace {

#ifdef LEASEHOLD_SANITIZED  // the ASan build (CMakeLists.txt, LEASEHOLD_SANITIZE)
constexpr bool kSanitizedMalloc = true;
#else
constexpr bool kSanitizedMalloc = false;
#endif

TEST(MemoryRetention, AFreedLargeBlockStaysInTheHeapForTheNextOne) {
  if (kSanitizedMalloc) {
    EXPECT_FALSE(retain_freed_memory());
    GTEST_SKIP() << "ASan's malloc has no M_MMAP_THRESHOLD";
  }
  ASSERT_TRUE(retain_freed_memory());
  constexpr std::size_t kBlock = 4u << 20;  // above glibc's default 128 KiB mmap threshold
  const struct mallinfo2 before = mallinfo2();
  void* block = std::malloc(kBlock);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);  // faulted in
  const struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblkhd, before.hblkhd) << "the block was mmapped on its own";
  EXPECT_GE(held.uordblks, before.uordblks + kBlock);
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBlock) << "the freed block went back to the kernel";
  EXPECT_GE(after.arena, before.arena + kBlock) << "the heap was trimmed";
  void* again = std::malloc(kBlock);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(mallinfo2().arena, after.arena) << "the next block needed new memory";
  std::free(again);
}

}  // namespace
}  // namespace leasehold::server
