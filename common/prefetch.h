// common/prefetch.h: asks the CPU to start loading a cache line that a
// lookup will read soon, so that several lookups' cache misses overlap
// instead of coming one after the other.
//
// Why not __builtin_prefetch alone: GCC 12 (Debian 12's compiler) drops it
// when it is inlined from a member function that computes the address from
// its members (IncrementalMap::prefetch_slot compiled to nothing; checked
// with objdump). On x86-64 an asm volatile prefetcht0 cannot be dropped;
// elsewhere the builtin is the best there is.
//
// Contract: a hint only. Any address is fine (a prefetch never faults and
// changes no memory); no effect on correctness. Thread-safe.
#pragma once

namespace leasehold {

inline void prefetch_for_read(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace leasehold
