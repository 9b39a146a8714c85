// tests/log/log_test_util.h: blocking helpers over the asynchronous Log API.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "log/log.h"

namespace leasehold::log::testing {

// Appends and waits for the callback.
Result<LogIndex> append_sync(Log& log, std::string batch);
// Saves a snapshot and waits for the callback.
Status save_snapshot_sync(Log& log, LogIndex index, std::string bytes);
// Every entry >= from, as (index, payload).
Result<std::vector<std::pair<LogIndex, std::string>>> read_all(Log& log, LogIndex from);
// A deterministic payload for entry `index` (varying size, contains the index).
std::string payload_for(LogIndex index);

}  // namespace leasehold::log::testing
