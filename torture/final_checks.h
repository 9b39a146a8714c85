// torture/final_checks.h: what the harness does after the faults healed and
// the workers stopped: the liveness acquires (check (e)) and the final reads
// of every fenced and compat key, all recorded in the harness's history.
//
// Each lock of the workload (x<k>, rw0, sem0 LIMIT 2) must be granted to a
// fresh session within `bound` (the workers' abandoned sessions expire
// within their TTL); each compat key must be settable with SET NX within
// `bound`. The grants are released and the session closed.
// Thread-safety: blocks the caller.
#pragma once

#include <chrono>
#include <string>

#include "torture/history.h"

namespace leasehold::torture {

void run_final_checks(const std::string& endpoints, int keys, std::chrono::milliseconds bound,
                      HistoryWriter& history);

}  // namespace leasehold::torture
