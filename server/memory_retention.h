// server/memory_retention.h: makes glibc's malloc keep the memory the
// server frees for its next allocations, instead of handing it back to the
// kernel and faulting it in again on the event loop.
//
// Why: by default glibc serves a block of 128 KiB or more (up to a
// threshold that moves) with its own mmap() and unmaps it on free(), and
// trims the heap's top once 128 KiB of it is free. Each new block is then
// fresh memory, and the first write to each of its pages is a page fault
// that the kernel must zero; on this project's test VM such a fault costs
// 1-95 us. A snapshot of 10M sessions is streamed in 1 MiB pieces that the
// loop fills and the log thread frees: with the defaults the loop spent up
// to 8-25 ms of one turn in those faults (`clear_page_erms` under
// `do_anonymous_page` in a perf profile of the 10M open).
//
// What: blocks under 32 MiB come from the heap (M_MMAP_THRESHOLD) and the
// heap keeps up to 256 MiB of free memory at its top (M_TRIM_THRESHOLD),
// so a freed piece is reused, already faulted in. The cost is memory the
// process keeps after a peak: at most about the largest burst of
// short-lived buffers (a few MiB of snapshot pieces in flight), not
// counted against the sessions' RSS goal (the capacity table is measured
// with it on).
//
// Errors: false when the malloc in use refuses (a sanitizer's, or another
// allocator's); the server logs it and runs with the defaults.
// Thread-safety: call once at start, before other threads allocate.
#pragma once

#include <cstddef>

namespace leasehold::server {

inline constexpr std::size_t kHeapBlockLimit = 32u << 20;  // M_MMAP_THRESHOLD
inline constexpr std::size_t kHeapTopKept = 256u << 20;    // M_TRIM_THRESHOLD

bool retain_freed_memory();

}  // namespace leasehold::server
