// tools/cli_json.h: the `--json` output of the client subcommands, built
// with nlohmann-json.
//
// Strings: lock names, owners and INFO values are arbitrary bytes. A string
// that is valid UTF-8 is written as it is. One that is not is written with
// each invalid byte replaced by U+FFFD, and beside it "<key>_b64" (standard
// base64 of the exact bytes) and "<key>_binary": true — the convention of the
// HTTP API (server/http/http_api.h). So `name` is always a printable string and
// `name_b64`, when present, gives back the exact name.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "leasehold/client.h"

namespace leasehold::cli {

// Sets j[key] (and j[key + "_b64"], j[key + "_binary"] for non-UTF-8 bytes).
void put_text(nlohmann::json& j, const std::string& key, std::string_view bytes);

nlohmann::json lock_json(const client::LockInfo& lock);
nlohmann::json session_json(const client::SessionInfo& session);
nlohmann::json history_json(const client::HistoryEntry& entry);

// An INFO value as JSON: a number when the text is one ("42", "-3", "1.00",
// "9.8": an integer when it has no fraction and fits 64 bits, else a
// double), else the text by put_text's rule under j[key].
void put_info_value(nlohmann::json& j, const std::string& key, std::string_view value);

// One line of JSON (never throws on bad UTF-8: see put_text).
std::string dump(const nlohmann::json& j);

}  // namespace leasehold::cli
