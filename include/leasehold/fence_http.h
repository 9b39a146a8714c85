// leasehold/fence_http.h: the check an HTTP service runs on a fenced write.
// The client sends "Fencing-Token: <decimal>" (kFencingTokenHeader); the
// service passes the header's value (or nullopt if absent) here, then maps
// the Status to a response code with http_status_for().
//
// Thread-safety: as the gate passed in (every FenceGate is thread-safe).
#pragma once

#include <optional>
#include <string_view>

#include "leasehold/fence.h"
#include "leasehold/status.h"

namespace leasehold::fence {

// Admits the token in `header_value` for `key` through `gate`.
// Returns OK if admitted. Errors: kInvalidArgument (header missing or not a
// token), kStaleToken (a newer holder was admitted; nothing recorded), and
// the gate's own errors.
Status admit_header(FenceGate& gate, std::string_view key,
                    std::optional<std::string_view> header_value);

// The HTTP status for a fenced write's outcome: 200 OK, 400 for
// kInvalidArgument, 409 Conflict for kStaleToken, 413 for kLimitExceeded,
// 503 for kTimedOut/kUnavailable, 500 for anything else.
int http_status_for(const Status& status);

}  // namespace leasehold::fence
