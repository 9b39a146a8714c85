// fence/token_text.cc: parsing tokens, validating keys, stale messages.
#include <string>

#include "leasehold/fence.h"

namespace leasehold::fence {

Result<Token> parse_token(std::string_view text) {
  if (text.empty()) return Status(ErrorCode::kInvalidArgument, "fencing token is empty");
  if (text.size() > 20) {
    return Status(ErrorCode::kInvalidArgument, "fencing token has more than 20 digits");
  }
  Token value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Status(ErrorCode::kInvalidArgument,
                    "fencing token must be decimal digits only, got '" + std::string(text) + "'");
    }
    const auto digit = static_cast<Token>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) {
      return Status(ErrorCode::kInvalidArgument, "fencing token is larger than 2^64-1");
    }
    value = value * 10 + digit;
  }
  return value;
}

Status validate_key(std::string_view key) {
  if (key.empty()) return Status(ErrorCode::kInvalidArgument, "fence key is empty");
  if (key.size() > kMaxKeyBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "fence key is " + std::to_string(key.size()) + " bytes; the limit is " +
                      std::to_string(kMaxKeyBytes));
  }
  return Status::ok();
}

Status Admission::to_status(std::string_view key, Token token) const {
  if (admitted) return Status::ok();
  return Status(ErrorCode::kStaleToken, "stale token " + std::to_string(token) + " for '" +
                                            std::string(key) + "': highest admitted is " +
                                            std::to_string(highest));
}

}  // namespace leasehold::fence
