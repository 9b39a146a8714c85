// server/commands/read_gate.cc: the cluster read gate and READONLY/READWRITE (see
// the header).
#include "server/commands/read_gate.h"

#include "server/net/connection.h"
#include "server/services/server_services.h"

namespace leasehold::server {

void run_handler(ServerServices& server, const CommandSpec& spec, const std::shared_ptr<Connection>& conn,
                 const std::vector<std::string>& args, Responder reply) {
  CommandContext ctx{server, conn, args, std::move(reply)};
  spec.handler(ctx);
}

namespace {

Status standby_refusal(ServerServices& server) {
  const std::string primary = server.node().primary_address();
  if (!primary.empty()) return Status(ErrorCode::kRedirect, primary);
  return Status(ErrorCode::kUnavailable, "no primary known (send READONLY to read this standby's state)");
}

void readonly(CommandContext& ctx) {
  ctx.conn->set_stale_reads(true);
  ctx.reply.ok();
}

void readwrite(CommandContext& ctx) {
  ctx.conn->set_stale_reads(false);
  ctx.reply.ok();
}

}  // namespace

bool needs_read_gate(const ServerServices& server, const CommandSpec& spec) {
  return (spec.flags & kReadonly) != 0 && spec.group != "server" && server.config().cluster.enabled();
}

void run_gated_read(ServerServices& server, const CommandSpec& spec, const std::shared_ptr<Connection>& conn,
                    const std::vector<std::string>& args, Responder reply) {
  if (server.node().role() != node::Role::kPrimary) {
    if (conn->stale_reads()) return run_handler(server, spec, conn, args, std::move(reply));
    return reply.error(standby_refusal(server));
  }
  // The handler may run after the request is gone: the barrier keeps a copy.
  server.node().read_barrier([&server, &spec, weak = std::weak_ptr<Connection>(conn), args,
                              reply](Status st) mutable {
    auto alive = weak.lock();
    if (!alive || alive->closed()) return;
    if (!st) return reply.error(st);
    run_handler(server, spec, alive, args, std::move(reply));
  });
}

void add_read_mode_commands(std::vector<CommandSpec>& out) {
  out.push_back({"READONLY", 1, kConnection | kFast, "connection",
                 "Cluster: this connection's reads may be served (stale) by a standby", "", &readonly, kAclConnection});
  out.push_back({"READWRITE", 1, kConnection | kFast, "connection",
                 "Cluster: reads on a standby redirect to the primary again (the default)", "", &readwrite, kAclConnection});
}

}  // namespace leasehold::server
