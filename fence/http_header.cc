// fence/http_header.cc: the Fencing-Token header check and its HTTP codes.
#include <string>

#include "leasehold/fence_http.h"

namespace leasehold::fence {

Status admit_header(FenceGate& gate, std::string_view key,
                    std::optional<std::string_view> header_value) {
  if (!header_value) {
    return Status(ErrorCode::kInvalidArgument,
                  "missing " + std::string(kFencingTokenHeader) + " header on a fenced write");
  }
  Result<Token> token = parse_token(*header_value);
  if (!token) return token.status();
  Result<Admission> admission = gate.admit(key, *token);
  if (!admission) return admission.status();
  return admission->to_status(key, *token);
}

int http_status_for(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk: return 200;
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kStaleToken: return 409;
    case ErrorCode::kLimitExceeded: return 413;
    case ErrorCode::kTimedOut:
    case ErrorCode::kUnavailable: return 503;
    default: return 500;
  }
}

}  // namespace leasehold::fence
