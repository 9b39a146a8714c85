#include "bench/capacity/page_fault_probe.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace leasehold::bench {

PageFaultCost probe_page_faults(std::size_t mib, int rounds) {
  constexpr std::size_t kPage = 4096;
  const std::size_t bytes = mib << 20;
  std::vector<double> per_page;
  for (int r = 0; r < rounds; ++r) {
    void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return {};
    auto* p = static_cast<volatile char*>(mem);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t off = 0; off < bytes; off += kPage) p[off] = 1;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    ::munmap(mem, bytes);
    per_page.push_back(us / static_cast<double>(bytes / kPage));
  }
  std::sort(per_page.begin(), per_page.end());
  PageFaultCost cost;
  cost.us_per_page = per_page[per_page.size() / 2];
  cost.ms_per_10_mib = cost.us_per_page * static_cast<double>((10U << 20) / kPage) / 1000;
  return cost;
}

}  // namespace leasehold::bench
