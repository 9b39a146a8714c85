// server/commands/read_gate.h: how read-only commands are answered in cluster mode
// (docs/cluster.md "Reads", docs/protocol.md READONLY/READWRITE).
//
// Every command flagged kReadonly in the command table (LOCK.INFO, LOCK.LIST,
// FENCE.GET, GET, PTTL, SESSION.LIST, SESSION.WATCH) passes the gate; INFO
// (server statistics, group "server") does not: it always describes the node
// it is sent to.
//   - embedded mode: the handler runs at once (the node is always primary);
//   - cluster primary: after Node::read_barrier() (linearizable: it confirms
//     the election key in etcd and waits for the apply); its error is the
//     reply (-UNAVAILABLE etcd unavailable ..., -REDIRECT host:port);
//   - cluster standby: -REDIRECT <primary> (or -UNAVAILABLE <reason> when no
//     primary is known), unless the connection sent READONLY: then the
//     handler runs at once on the standby's applied state (stale reads).
//
// Thread-safety: loop thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/commands/command_table.h"

namespace leasehold::server {

// True when `spec` has to go through run_gated_read() on this server.
bool needs_read_gate(const ServerServices& server, const CommandSpec& spec);

// Runs `spec`'s handler with a CommandContext built from the arguments.
void run_handler(ServerServices& server, const CommandSpec& spec, const std::shared_ptr<Connection>& conn,
                 const std::vector<std::string>& args, Responder reply);

// Runs `spec`'s handler now or after the read barrier (see above), or
// answers the refusal. The barrier path copies `args`: the handler may run
// after the caller's request is gone; it does not run if the connection
// closed meanwhile.
void run_gated_read(ServerServices& server, const CommandSpec& spec, const std::shared_ptr<Connection>& conn,
                    const std::vector<std::string>& args, Responder reply);

}  // namespace leasehold::server
