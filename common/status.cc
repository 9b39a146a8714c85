#include "leasehold/status.h"

namespace leasehold {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kLimitExceeded: return "limit_exceeded";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kNotHolder: return "not_holder";
    case ErrorCode::kStaleToken: return "stale_token";
    case ErrorCode::kSessionExpired: return "session_expired";
    case ErrorCode::kConflict: return "conflict";
    case ErrorCode::kWouldBlock: return "would_block";
    case ErrorCode::kTimedOut: return "timed_out";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kUnreachable: return "unreachable";
    case ErrorCode::kRedirect: return "redirect";
    case ErrorCode::kCorruption: return "corruption";
    case ErrorCode::kIoError: return "io_error";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string out(error_code_name(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace leasehold
