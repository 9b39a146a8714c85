// client/decode.h: reply values -> the typed structs of leasehold/client.h
// (internal). Accepts RESP3 maps and RESP2 flat arrays alike.
//
// Errors: kInternal naming the field when a reply does not have the shape
// docs/protocol.md promises.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "leasehold/client.h"
#include "resp/value.h"

namespace leasehold::client::detail {

Result<LockMode> decode_mode(std::string_view text);
Result<LockInfo> decode_lock(const resp::Value& value);
Result<SessionInfo> decode_session(const resp::Value& value);
Result<HistoryEntry> decode_history(const resp::Value& value);
// `[value, token]` or nil.
Result<std::optional<FencedValue>> decode_fenced(const resp::Value& value);
Result<std::int64_t> decode_integer(const resp::Value& value, std::string_view what);
Status decode_ok(const resp::Value& value, std::string_view what);
// The text of a bulk / simple / verbatim string.
Result<std::string> decode_text(const resp::Value& value, std::string_view what);

}  // namespace leasehold::client::detail
