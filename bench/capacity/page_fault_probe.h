// bench/capacity/page_fault_probe.h: what fresh memory costs on this
// machine, the floor under any stall that grows a table (the capacity
// goal "no event-loop stall over 10 ms"): a process that first writes a
// page it got
// from the kernel takes a page fault, and on some VMs (the project's test
// VM: ~10 us per 4 KiB page) a table growing by 10 MiB stalls its thread for
// tens of milliseconds whatever the code does.
//
// Errors: none (an mmap failure returns a negative cost).
// Thread-safety: a pure measurement; call from any thread.
#pragma once

#include <cstddef>

namespace leasehold::bench {

struct PageFaultCost {
  double us_per_page = -1;  // median over the rounds; -1 when mmap failed
  double ms_per_10_mib = -1;
};

// Maps `mib` MiB of fresh anonymous memory, writes one byte per 4 KiB page,
// unmaps it; `rounds` times (median).
PageFaultCost probe_page_faults(std::size_t mib = 64, int rounds = 5);

}  // namespace leasehold::bench
