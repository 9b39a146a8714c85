// fence/pg_values.h (internal): tokens and ids as PostgreSQL text values,
// and the input limits shared by the PostgreSQL helpers.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/fence.h"
#include "leasehold/status.h"

namespace leasehold::fence::detail {

// A token as a bigint parameter. Errors: kInvalidArgument above INT64_MAX.
inline Result<std::string> token_param(Token token) {
  if (token > static_cast<Token>(INT64_MAX)) {
    return Status(ErrorCode::kInvalidArgument,
                  "token " + std::to_string(token) + " does not fit PostgreSQL bigint");
  }
  return std::to_string(token);
}

// Parses a bigint column value; nullopt if NULL or not a number.
inline std::optional<std::int64_t> parse_bigint(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

inline Status check_statement(std::string_view sql, std::size_t params, std::size_t max_sql,
                              std::size_t max_params) {
  if (sql.size() > max_sql) {
    return Status(ErrorCode::kLimitExceeded, "SQL text of " + std::to_string(sql.size()) +
                                                 " bytes exceeds " + std::to_string(max_sql));
  }
  if (params > max_params) {
    return Status(ErrorCode::kLimitExceeded, std::to_string(params) + " SQL parameters exceed " +
                                                 std::to_string(max_params));
  }
  return Status::ok();
}

}  // namespace leasehold::fence::detail
