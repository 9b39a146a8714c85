// server/http/http_api.h: the JSON bodies of the /api endpoints and /readyz
// (docs/operations.md lists every field).
//
// Names and owners are binary-safe: a lock name is given as "name" (UTF-8;
// bytes that are not valid UTF-8 become U+FFFD) and always also as
// "name_b64" (standard base64 of the exact bytes), with "name_binary": true
// when the two differ. Times: *_ms durations on the log clock (monotonic);
// "time" fields in history are wall-clock unix ms, display only.
//
// Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/text_encoding.h"
#include "server/http/http_server.h"

namespace leasehold::server {

class ServerServices;

HttpResponse api_status(ServerServices& server);
HttpResponse api_locks(ServerServices& server, std::string_view prefix, std::size_t limit);
HttpResponse api_lock(ServerServices& server, const std::string& name);
HttpResponse api_sessions(ServerServices& server, std::size_t limit);
// lock: filter when `filter`; before_id 0 = newest.
HttpResponse api_history(ServerServices& server, bool filter, const std::string& lock, std::size_t count,
                         std::uint64_t before_id);
HttpResponse readyz(ServerServices& server);

// Why /readyz and the /api state views answer 503 before the start's Reopen
// is applied (Node::opened(); the client port reads nothing until then).
inline constexpr std::string_view kStartingReason = "starting: writing the record of the unclean stop (Reopen)";

using text::base64_encode;  // common/text_encoding.h
using text::is_valid_utf8;

}  // namespace leasehold::server
