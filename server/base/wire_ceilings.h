// server/base/wire_ceilings.h: the largest durations a request may carry,
// fixed by the wire parse (docs/protocol.md, "Numeric arguments"). The
// argument parsers (server/commands/command_args.h) refuse a larger number;
// validate_config (config.h) refuses a configured limit above one, since
// such a limit could never be reached and would only mislead.
//
// Thread-safety: constants.
#pragma once

#include <cstdint>

namespace leasehold::server {

// The longest WAIT or DELAY any request may give, in ms: as steady_clock
// nanoseconds it still fits an int64 (about 292 years). --max-wait-ms and
// --max-delay-ms are at most this. (A TTL's ceiling is
// core::kMaxSessionTtlMs, which bounds --max-ttl-ms.)
inline constexpr std::uint64_t kMaxWireDurationMs = INT64_MAX / 1'000'000;

}  // namespace leasehold::server
