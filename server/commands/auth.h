// server/commands/auth.h: checking a user name and password for AUTH and HELLO ... AUTH.
//
// Thread-safety: loop thread only.
#pragma once

#include <string_view>

#include "server/commands/command_table.h"

namespace leasehold::server {

// True (and the connection now acts as `user`) when the credentials are
// right and the user is enabled. Otherwise logs the failure (never the
// password), answers ctx.reply with WRONGPASS after a delay that doubles with
// each failure in a row on this connection (ServerConfig::auth_fail_delay),
// and returns false; the connection's user does not change.
bool authenticate(CommandContext& ctx, std::string_view user, std::string_view password);

}  // namespace leasehold::server
