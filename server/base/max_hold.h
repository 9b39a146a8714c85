// server/base/max_hold.h: the operator's maximum hold per lock-name prefix
// (`leasehold server --max-hold PREFIX=DURATION`, repeatable).
//
// One value per prefix is both the ceiling and the default: a LOCK.ACQUIRE
// under the prefix without LEASE gets it as its lease; one with a longer
// LEASE (or a LOCK.EXTEND beyond it) is refused. The longest matching
// prefix wins; the empty prefix ("=10m") matches every lock.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::server {

struct MaxHold {
  std::string prefix;
  std::uint64_t ms = 0;  // 1 .. core::kMaxSessionTtlMs
  friend bool operator==(const MaxHold&, const MaxHold&) = default;
};

// Parses "PREFIX=DURATION" (DURATION as common/duration_text.h reads it,
// e.g. "jobs/=10m", "=90s"). kInvalidArgument naming the problem, e.g. a
// missing '=', a bad unit, 0, or a duration over the largest lease
// (core::kMaxSessionTtlMs, about 24.8 days).
Result<MaxHold> parse_max_hold(std::string_view text);

// kInvalidArgument for a rule out of range or a prefix given twice.
Status validate_max_holds(const std::vector<MaxHold>& rules);

// The rule with the longest prefix of `lock`, or nullptr.
const MaxHold* max_hold_for(const std::vector<MaxHold>& rules, std::string_view lock);

// The error for a lease of `ms` over `rule`: "LEASE 900000 ms is over the
// max hold 600000 ms of prefix 'jobs/' (--max-hold)".
Status over_max_hold(std::string_view what, std::uint64_t ms, const MaxHold& rule);

}  // namespace leasehold::server
