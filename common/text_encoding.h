// common/text_encoding.h: UTF-8 validation and base64, for showing binary
// lock names and owners in JSON (the HTTP API and `leasehold ... --json`).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace leasehold::text {

// Standard base64 (RFC 4648, with '=' padding) of the exact bytes.
std::string base64_encode(std::string_view bytes);

// True when `bytes` is well-formed UTF-8: no overlong forms, no surrogates,
// nothing above U+10FFFF.
bool is_valid_utf8(std::string_view bytes);

}  // namespace leasehold::text
