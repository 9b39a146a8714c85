// server/commands/shard_routing.h: the one place a sharded server decides
// whether a request is this shard's (docs/scale-out.md, DESIGN.md section 7).
// Driven by the command table's rows: CommandSpec::keys (the lock names and
// keys) and the session arguments (CommandSpec::is_session_arg).
//
//  - The names of a request must share one hash slot, else
//    "CROSSSLOT Keys in request don't hash to the same slot" (Redis's text).
//  - A slot another shard owns (the static map, ServerConfig::shards):
//    "MOVED <slot> <host:port>", as Redis Cluster answers.
//  - A slot the map gives this shard but its applied state does not own yet
//    (the start's SetOwnedSlots is not applied): "TRYAGAIN ...". A shard
//    serves a name only when its map and its own log both say so.
//  - A session id another shard opened (its shard bits, core/types.h):
//    "WRONGSHARD session <id> belongs to shard <n> (<host:port>)". Ids
//    without shard bits (an unsharded past) are this shard's.
// Nothing is checked on an unsharded server (every slot is its own).
//
// Thread-safety: loop thread only (reads the node's applied state).
#pragma once

#include <string>
#include <vector>

#include "server/commands/command_table.h"

namespace leasehold::server {

// Empty when `args` may run here; else the error text to answer (the request
// then changes nothing).
std::string route_request(ServerServices& server, const CommandSpec& spec, const std::vector<std::string>& args);

}  // namespace leasehold::server
