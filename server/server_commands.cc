// Server: the command side of ConnectionHost: what a parsed request is
// (the command table) and running it (access check, read gate, handler).
// See server.h, server/net/connection_host.h and server/commands/.
#include "server/commands/command_table.h"
#include "server/commands/read_gate.h"
#include "server/commands/shard_routing.h"
#include "server/server.h"

namespace leasehold::server {

RequestKind Server::classify(const std::vector<std::string>& args) {
  RequestKind kind;
  const CommandSpec* spec = CommandTable::instance().find(args[0]);
  if (spec == nullptr) {
    kind.error = CommandTable::unknown_error(args);
    return kind;
  }
  if (!CommandTable::arity_ok(*spec, args.size())) {
    kind.error = CommandTable::arity_error(*spec);
    return kind;
  }
  kind.spec = spec;
  kind.blocking = CommandTable::is_blocking_request(*spec, args);
  kind.write = (spec->flags & kWrite) != 0;
  kind.no_auth = (spec->flags & kNoAuth) != 0;
  return kind;
}

void Server::execute(const std::shared_ptr<Connection>& conn, const CommandSpec& spec,
                     const std::vector<std::string>& args, Responder reply) {
  if (std::string denied = check_access(*conn, spec, args); !denied.empty()) {
    return reply.error_text(denied);  // changes nothing
  }
  if (std::string elsewhere = route_request(*this, spec, args); !elsewhere.empty()) {
    return reply.error_text(elsewhere);  // another shard's name or session: changes nothing
  }
  if (needs_read_gate(*this, spec)) {  // cluster mode: barrier / redirect / READONLY
    return run_gated_read(*this, spec, conn, args, std::move(reply));
  }
  run_handler(*this, spec, conn, args, std::move(reply));
}

}  // namespace leasehold::server
