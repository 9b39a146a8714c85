// server/base/args.h: argument parsing helpers shared by the command handlers,
// and the mapping of Status to RESP error replies.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold::server {

// ASCII case-insensitive equality.
bool iequals(std::string_view a, std::string_view b);
std::string to_upper(std::string_view s);

// Parses a decimal integer in [min, max]. On failure: kInvalidArgument
// "<name> is not an integer or out of range (<min> to <max>)".
Result<std::int64_t> parse_int(std::string_view text, std::string_view name, std::int64_t min,
                               std::int64_t max);
Result<std::uint64_t> parse_uint(std::string_view text, std::string_view name, std::uint64_t min,
                                 std::uint64_t max);

// The wire error for a Status: "CODE message" (docs/protocol.md, Errors).
// kRedirect becomes "REDIRECT host:port" (the message is the address).
std::string error_text(const Status& status);
std::string_view error_prefix(ErrorCode code);

}  // namespace leasehold::server
