#include "server/memory_retention.h"

#include <malloc.h>

namespace leasehold::server {

bool retain_freed_memory() {
  // mallopt returns 1 on success, 0 on failure; M_MMAP_THRESHOLD is capped
  // at HEAP_MAX / 2 (32 MiB on 64-bit), so kHeapBlockLimit is the largest.
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapBlockLimit)) == 1 &&
         mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTopKept)) == 1;
}

}  // namespace leasehold::server
