// server/commands/config_get.h: CONFIG GET for Redis tools and clients.
//
// Answers the parameters redis-benchmark and common clients ask for (save,
// appendonly, appendfsync, maxmemory, maxmemory-policy, databases,
// maxclients, port, bind, dir, timeout, cluster-enabled, ...) with values
// that describe leasehold truthfully: every acknowledged write is in the
// durable log (appendonly yes, appendfsync always), no RDB saves, no
// eviction, one keyspace. Patterns are Redis globs (`*`, `?`, case-
// insensitive); several patterns may be given; unknown names match nothing.
// The reply is a map (a flat array in RESP2) of name -> value.
// Thread-safety: loop thread only.
#pragma once

#include <string_view>

#include "server/commands/command_table.h"

namespace leasehold::server {

// CONFIG GET pattern [pattern ...]; any other subcommand gets -ERR.
void config_command(CommandContext& ctx);

// Redis-style glob: `*` any run, `?` one byte; case-insensitive.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace leasehold::server
