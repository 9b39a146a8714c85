// Standard Redis commands: HELLO, PING, ECHO, QUIT, INFO, COMMAND, CLIENT, CONFIG, ROLE.
#include <unistd.h>

#include <fmt/format.h>

#include "server/commands/config_get.h"
#include "server/security/acl.h"
#include "server/commands/auth.h"
#include "server/net/connection.h"
#include "server/commands/handler_util.h"

namespace leasehold::server {
namespace {

constexpr std::string_view kVersion = "0.1.0";

void hello(CommandContext& ctx) {
  resp::Protocol proto = ctx.conn->protocol();
  std::size_t i = 1;
  if (ctx.args.size() > 1) {
    auto v = parse_int(ctx.args[1], "protocol version", INT64_MIN, INT64_MAX);
    if (!v || (*v != 2 && *v != 3)) {
      ctx.reply.error_text("NOPROTO unsupported protocol version");
      return;
    }
    proto = *v == 3 ? resp::Protocol::kResp3 : resp::Protocol::kResp2;
    i = 2;
  }
  std::string name = ctx.conn->name();
  const std::string* auth_user = nullptr;
  const std::string* auth_pass = nullptr;
  for (; i < ctx.args.size(); ++i) {
    if (iequals(ctx.args[i], "SETNAME") && i + 1 < ctx.args.size()) {
      name = ctx.args[++i];
    } else if (iequals(ctx.args[i], "AUTH") && i + 2 < ctx.args.size()) {
      auth_user = &ctx.args[i + 1];
      auth_pass = &ctx.args[i + 2];
      i += 2;
    } else {
      ctx.reply.error_text(fmt::format("ERR syntax error in HELLO option '{}'", ctx.args[i].substr(0, 32)));
      return;
    }
  }
  if (auth_user != nullptr) {
    if (!authenticate(ctx, *auth_user, *auth_pass)) return;  // WRONGPASS (delayed); nothing changed
  } else if (ctx.conn->user().empty()) {
    ctx.reply.error_text(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> "
        "AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol "
        "version at the same time");
    return;
  }
  ctx.conn->set_protocol(proto);
  ctx.conn->set_name(name);
  std::string out;
  resp::Writer w(out, proto);  // the reply already speaks the new protocol
  w.map_header(7);
  w.bulk("server");
  w.bulk("leasehold");
  w.bulk("version");
  w.bulk(kVersion);
  w.bulk("proto");
  w.integer(static_cast<int>(proto));
  w.bulk("id");
  w.integer(static_cast<std::int64_t>(ctx.conn->id()));
  w.bulk("mode");  // "cluster" for a member of a replicated cluster (its role below)
  w.bulk(ctx.server.config().cluster.enabled() ? "cluster" : "standalone");
  w.bulk("role");
  w.bulk(node::role_name(ctx.server.node().role()));
  w.bulk("modules");
  w.array_header(0);
  ctx.reply.finish(std::move(out));
}

void ping(CommandContext& ctx) {
  if (ctx.args.size() == 2) {
    ctx.reply.bulk(ctx.args[1]);
  } else if (ctx.args.size() == 1) {
    ctx.reply.write([](resp::Writer& w) { w.simple("PONG"); });
  } else {
    ctx.reply.error_text(CommandTable::arity_error(*CommandTable::instance().find("PING")));
  }
}

void echo(CommandContext& ctx) { ctx.reply.bulk(ctx.args[1]); }

void quit(CommandContext& ctx) {
  ctx.conn->close_after_replies();
  ctx.reply.ok();
}

// An INFO value stays on its line whatever an error message holds.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

std::string info_text(ServerServices& server, std::string_view section) {
  const bool all = section.empty() || iequals(section, "all") || iequals(section, "default") ||
                   iequals(section, "everything");
  const node::NodeStats st = server.node().stats();
  const core::StateMachine& sm = server.node().state();
  std::string out;
  if (all || iequals(section, "server")) {
    const auto up = std::chrono::steady_clock::now() - server.started_at();
    out += "# Server\r\n";
    out += fmt::format("leasehold_version:{}\r\n", kVersion);
    out += fmt::format("role:{}\r\n", node::role_name(st.role));
    out += fmt::format("durability:{}\r\n", server.config().node.acknowledge_before_durable ? "lease" : "fsync");
    out += fmt::format("listen:{}\r\n", server.listen_address());
    out += fmt::format("data_dir:{}\r\n", server.config().data_dir);
    out += fmt::format("process_id:{}\r\n", static_cast<long>(getpid()));
    out += fmt::format("uptime_in_seconds:{}\r\n",
                       std::chrono::duration_cast<std::chrono::seconds>(up).count());
    const LoopTurnMeter::Stats& turns = server.loop_turns();
    out += fmt::format("loop_longest_turn_ms:{:.1f}\r\n", turns.longest_ms);
    out += fmt::format("loop_turns_over_10ms:{}\r\n", turns.over_10ms);
    out += fmt::format("loop_turns_over_100ms:{}\r\n", turns.over_100ms);
    out += fmt::format("loop_longest_turn_cpu_ms:{:.1f}\r\n", turns.longest_cpu_ms);
    out += fmt::format("loop_turns_over_10ms_on_cpu:{}\r\n", turns.over_10ms_on_cpu);
    out += fmt::format("loop_turns_over_10ms_blocked:{}\r\n", turns.over_10ms_blocked);
    out += fmt::format("loop_turns_over_10ms_preempted:{}\r\n", turns.over_10ms_preempted);
    const ReadBudget::Stats reads = server.read_budget().stats();
    out += fmt::format("loop_reads_deferred:{}\r\n", reads.deferred);
    out += fmt::format("loop_clients_waiting_for_budget:{}\r\n", reads.waiting);
    out += "\r\n";
  }
  if (all || iequals(section, "log")) {
    out += "# Log\r\n";
    out += fmt::format("applied_revision:{}\r\n", st.applied_revision);
    out += fmt::format("applied_index:{}\r\n", st.applied_index);
    out += fmt::format("log_first_index:{}\r\n", st.log.first);
    out += fmt::format("log_last_index:{}\r\n", st.log.last);
    out += fmt::format("snapshot_index:{}\r\n", st.log.snapshot);
    out += fmt::format("batches_committed:{}\r\n", st.batches_committed);
    out += fmt::format("commands_committed:{}\r\n", st.commands_committed);
    out += fmt::format("average_batch_commands:{:.2f}\r\n", st.average_batch_commands);
    out += fmt::format("pending_proposals:{}\r\n", st.pending_proposals);
    out += fmt::format("apply_steps_deferred:{}\r\n", st.apply_steps_deferred);
    out += fmt::format("snapshots_saved:{}\r\n", st.snapshots_saved);
    out += fmt::format("snapshot_error:{}\r\n", st.snapshot_error.is_ok() ? "" : st.snapshot_error.to_string());
    out += fmt::format("replayed_entries:{}\r\n", st.replayed_entries);
    out += fmt::format("catch_up_recoveries:{}\r\n", st.catch_up_recoveries);
    out += fmt::format("reserved_revision:{}\r\n", st.reserved_revision);
    out += fmt::format("revision_record_writes:{}\r\n", st.revision_record_writes);
    out += fmt::format("quarantine_remaining_ms:{}\r\n", st.quarantine_remaining_ms);
    out += fmt::format("node_failure:{}\r\n", st.failure.is_ok() ? "" : st.failure.to_string());
    out += "\r\n";
  }
  if (const cluster::ClusterMember* member = server.cluster();
      member != nullptr && (all || iequals(section, "cluster"))) {
    const cluster::CampaignStatus cs = member->campaign_status();
    out += "# Cluster\r\n";
    out += fmt::format("cluster_campaign:{}\r\n", cluster::phase_name(cs.phase));
    out += fmt::format("cluster_campaign_detail:{}\r\n", one_line(cs.detail));
    out += fmt::format("cluster_campaign_phase_ms:{}\r\n", cs.in_phase.count());
    out += fmt::format("cluster_abandoned_leases:{}\r\n", cs.abandoned_leases);
    out += fmt::format("cluster_abandoned_leases_revoked:{}\r\n", cs.abandoned_leases_revoked);
    out += fmt::format("cluster_log_watch:{}\r\n", cs.log_watch ? 1 : 0);
    out += fmt::format("cluster_leader_watch:{}\r\n", cs.leader_watch ? 1 : 0);
    out += "\r\n";
  }
  // A shard (docs/scale-out.md): cluster_enabled:1 as Redis Cluster prints
  // it (Redis Cluster clients check it before CLUSTER SLOTS).
  if (const slots::ShardMap& map = server.config().shards;
      map.enabled() && (all || iequals(section, "cluster") || iequals(section, "shard"))) {
    out += "# Shard\r\n";
    out += "cluster_enabled:1\r\n";
    out += fmt::format("shard_id:{}\r\n", map.self().id);
    out += fmt::format("shard_slots:{}\r\n", map.self().slots.describe());
    const bool recorded = sm.shard() == map.self().id && sm.owned_slots() == map.self().slots;
    out += fmt::format("shard_slots_recorded:{}\r\n", recorded ? 1 : 0);
    out += fmt::format("shard_count:{}\r\n", map.shards().size());
    out += "\r\n";
  }
  if (all || iequals(section, "state")) {
    const std::size_t waiters = sm.waiter_count();  // O(1): every field here is a counter
    out += "# State\r\n";
    out += fmt::format("sessions:{}\r\n", sm.session_count());
    out += fmt::format("locks:{}\r\n", sm.lock_count());
    out += fmt::format("waiters:{}\r\n", waiters);
    out += fmt::format("timed_sessions:{}\r\n", st.timed_sessions);
    out += "\r\n";
  }
  if (all || iequals(section, "clients")) {
    const ServerCounters& c = server.counters();
    out += "# Clients\r\n";
    out += fmt::format("connected_clients:{}\r\n", server.client_count());
    out += fmt::format("blocked_clients:{}\r\n", server.blocked_client_count());
    out += fmt::format("parked_waits:{}\r\n", server.parked_wait_count());
    out += fmt::format("maxclients:{}\r\n", server.config().max_clients);
    out += fmt::format("total_connections_received:{}\r\n", c.connections_total);
    out += fmt::format("rejected_connections:{}\r\n", c.connections_rejected);
    out += fmt::format("total_commands_processed:{}\r\n", c.commands_total);
    out += fmt::format("total_reads_processed:{}\r\n", c.reads_total);
    out += fmt::format("total_writes_processed:{}\r\n", c.writes_total);
    out += "\r\n";
  }
  return out;
}

void info(CommandContext& ctx) {
  // Details (paths, process, log, state, clients) are for admins; others get
  // the version and role.
  const AclUser* user = ctx.server.user_of(*ctx.conn);
  if (user != nullptr && !user->admin()) {
    const node::Role r = ctx.server.node().role();
    const bool sharded = ctx.server.config().shards.enabled();
    return ctx.reply.bulk(fmt::format("# Server\r\nleasehold_version:{}\r\nrole:{}\r\n\r\n{}", kVersion,
                                      node::role_name(r), sharded ? "# Shard\r\ncluster_enabled:1\r\n\r\n" : ""));
  }
  const std::string text = info_text(ctx.server, ctx.args.size() > 1 ? ctx.args[1] : "");
  ctx.reply.bulk(text);
}

void command(CommandContext& ctx) {
  ctx.reply.write([&](resp::Writer& w) { write_command_reply(CommandTable::instance(), ctx.args, w); });
}

void client(CommandContext& ctx) {
  const std::string& sub = ctx.args[1];
  if (iequals(sub, "SETNAME") && ctx.args.size() == 3) {
    for (char c : ctx.args[2]) {
      if (c <= ' ' || c > '~') {
        ctx.reply.error_text("ERR Client names cannot contain spaces, newlines or special characters.");
        return;
      }
    }
    ctx.conn->set_name(ctx.args[2]);
    ctx.reply.ok();
  } else if (iequals(sub, "GETNAME") && ctx.args.size() == 2) {
    if (ctx.conn->name().empty()) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(ctx.conn->name());
    }
  } else if (iequals(sub, "ID") && ctx.args.size() == 2) {
    ctx.reply.integer(static_cast<std::int64_t>(ctx.conn->id()));
  } else if (iequals(sub, "SETINFO") && ctx.args.size() == 4) {
    ctx.reply.ok();
  } else {
    ctx.reply.error_text(fmt::format("ERR unknown subcommand or wrong number of arguments for 'client|{}'",
                                     sub.substr(0, 32)));
  }
}

void role(CommandContext& ctx) {
  const node::Role r = ctx.server.node().role();
  std::string primary = ctx.server.node().primary_address();
  if (!primary.empty() && ctx.conn->tls()) {
    // The address this client can use: the primary's TLS one (its plain one if it has none).
    const std::string tls = ctx.server.primary_for(primary, true);
    if (!tls.empty()) primary = tls;
  }
  if (primary.empty()) primary = ctx.server.listen_address();
  ctx.reply.write([&](resp::Writer& w) {
    w.array_header(2);
    w.bulk(node::role_name(r));
    w.bulk(primary);
  });
}

}  // namespace

void add_standard_commands(std::vector<CommandSpec>& out) {
  out.push_back({"HELLO", -1, kConnection | kFast | kNoAuth, "connection",
                 "Handshake: switch protocol (2 or 3), set a client name", "[protover [AUTH user pass] [SETNAME name]]",
                 &hello, kAclConnection});
  out.push_back({"PING", -1, kConnection | kFast, "connection", "PONG, or the message", "[message]", &ping, kAclConnection});
  out.push_back({"ECHO", 2, kConnection | kFast, "connection", "Returns the message", "message", &echo, kAclConnection});
  out.push_back({"QUIT", 1, kConnection | kFast | kNoAuth, "connection", "Closes the connection after +OK", "", &quit, kAclConnection});
  out.push_back({"INFO", -1, kReadonly, "server", "Server, log, state and client statistics",
                 "[server|log|state|clients]", &info, kAclRead});
  out.push_back({"COMMAND", -1, kConnection, "server", "Describes the commands (COUNT, DOCS, INFO, LIST)",
                 "[COUNT | DOCS [name ...] | INFO [name ...] | LIST]", &command, kAclConnection});
  out.push_back({"CLIENT", -2, kConnection | kFast, "connection", "Client name and id",
                 "SETNAME name | GETNAME | ID", &client, kAclConnection});
  out.push_back({"CONFIG", -2, kConnection | kAdmin, "server",
                 "CONFIG GET: the Redis parameters tools ask for (server/commands/config_get.h)", "GET pattern [pattern ...]",
                 &config_command, kAclAdmin});
  out.push_back({"ROLE", 1, kConnection | kFast, "server", "primary/standby and the primary's address", "", &role, kAclConnection});
}

}  // namespace leasehold::server
