// The Redis Cluster topology commands of a sharded server (docs/scale-out.md):
// CLUSTER SLOTS | SHARDS | NODES | KEYSLOT | MYID | INFO, answered by any
// shard with the whole static map (ServerConfig::shards), in Redis's formats
// so that Redis Cluster clients route by themselves; and ASKING (accepted; a
// no-op until slots move at run time). An unsharded server answers CLUSTER
// as a Redis without cluster support does.
#include <fmt/format.h>

#include <algorithm>

#include "server/commands/handler_util.h"
#include "slots/hash_slot.h"

namespace leasehold::server {
namespace {

constexpr std::string_view kDisabled = "ERR This instance has cluster support disabled";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// A shard's node id as CLUSTER NODES / MYID show it: 40 hex digits, from its
// shard id (stable: the id is).
std::string node_id(std::uint32_t shard) { return fmt::format("{:040x}", shard); }

// Every (range, shard) of the map, by first slot.
std::vector<std::pair<slots::SlotRange, const slots::ShardAddress*>> ranges_by_slot(const slots::ShardMap& map) {
  std::vector<std::pair<slots::SlotRange, const slots::ShardAddress*>> out;
  for (const slots::ShardAddress& s : map.shards()) {
    for (const slots::SlotRange& r : s.slots.ranges()) out.emplace_back(r, &s);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first.first < b.first.first; });
  return out;
}

// CLUSTER SLOTS: [[first, last, [ip, port, id]], ...] (one primary, no replicas).
void write_slots(const slots::ShardMap& map, resp::Writer& w) {
  const auto ranges = ranges_by_slot(map);
  w.array_header(ranges.size());
  for (const auto& [range, shard] : ranges) {
    w.array_header(3);
    w.integer(range.first);
    w.integer(range.last);
    w.array_header(3);
    w.bulk(shard->host);
    w.integer(shard->port);
    w.bulk(node_id(shard->id));
  }
}

// CLUSTER SHARDS: [{slots: [first, last, ...], nodes: [{id, port, ip,
// endpoint, role, replication-offset, health}]}, ...].
void write_shards(const slots::ShardMap& map, resp::Writer& w) {
  w.array_header(map.shards().size());
  for (const slots::ShardAddress& s : map.shards()) {
    const auto ranges = s.slots.ranges();
    w.map_header(2);
    w.bulk("slots");
    w.array_header(ranges.size() * 2);
    for (const slots::SlotRange& r : ranges) {
      w.integer(r.first);
      w.integer(r.last);
    }
    w.bulk("nodes");
    w.array_header(1);
    w.map_header(7);
    w.bulk("id");
    w.bulk(node_id(s.id));
    w.bulk("port");
    w.integer(s.port);
    w.bulk("ip");
    w.bulk(s.host);
    w.bulk("endpoint");
    w.bulk(s.host);
    w.bulk("role");
    w.bulk("master");
    w.bulk("replication-offset");
    w.integer(0);
    w.bulk("health");
    w.bulk("online");
  }
}

// CLUSTER NODES: one line per shard, "<id> <ip:port@cport> <flags> <master>
// <ping-sent> <pong-recv> <config-epoch> <link-state> <slot ranges...>". No
// cluster bus: cport 0.
std::string nodes_text(const slots::ShardMap& map) {
  std::string out;
  for (const slots::ShardAddress& s : map.shards()) {
    const bool me = s.id == map.self().id;
    out += fmt::format("{} {}@0 {} - 0 0 {} connected", node_id(s.id), s.endpoint(), me ? "myself,master" : "master",
                       s.id);
    for (const slots::SlotRange& r : s.slots.ranges()) {
      out += r.first == r.last ? fmt::format(" {}", r.first) : fmt::format(" {}-{}", r.first, r.last);
    }
    out += '\n';
  }
  return out;
}

// CLUSTER INFO: Redis's fields; every slot is assigned and served (the map
// is a partition, checked at start).
std::string cluster_info_text(const slots::ShardMap& map) {
  std::uint32_t epoch = 0;
  for (const slots::ShardAddress& s : map.shards()) epoch = std::max(epoch, s.id);
  return fmt::format(
      "cluster_state:ok\r\ncluster_slots_assigned:{0}\r\ncluster_slots_ok:{0}\r\ncluster_slots_pfail:0\r\n"
      "cluster_slots_fail:0\r\ncluster_known_nodes:{1}\r\ncluster_size:{1}\r\ncluster_current_epoch:{2}\r\n"
      "cluster_my_epoch:{3}\r\ncluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n"
      "total_cluster_links_buffer_limit_exceeded:0\r\n",
      slots::kSlotCount, map.shards().size(), epoch, map.self().id);
}

void cluster(CommandContext& ctx) {
  const slots::ShardMap& map = ctx.server.config().shards;
  const std::string& sub = ctx.args[1];
  const std::size_t argc = ctx.args.size();
  const auto wrong_args = [&ctx, &sub] {
    ctx.reply.error_text(fmt::format("ERR unknown subcommand or wrong number of arguments for 'cluster|{}'",
                                     lower(std::string_view(sub).substr(0, 32))));
  };
  if (!map.enabled()) return ctx.reply.error_text(kDisabled);
  if (iequals(sub, "KEYSLOT")) {
    if (argc != 3) return wrong_args();
    return ctx.reply.write([&](resp::Writer& w) { w.integer(slots::hash_slot(ctx.args[2])); });
  }
  if (argc != 2) return wrong_args();
  if (iequals(sub, "SLOTS")) return ctx.reply.write([&map](resp::Writer& w) { write_slots(map, w); });
  if (iequals(sub, "SHARDS")) return ctx.reply.write([&map](resp::Writer& w) { write_shards(map, w); });
  if (iequals(sub, "NODES")) {
    const std::string text = nodes_text(map);
    return ctx.reply.write([&text](resp::Writer& w) { w.verbatim("txt", text); });
  }
  if (iequals(sub, "INFO")) {
    const std::string text = cluster_info_text(map);
    return ctx.reply.write([&text](resp::Writer& w) { w.verbatim("txt", text); });
  }
  if (iequals(sub, "MYID")) {
    const std::string id = node_id(map.self().id);
    return ctx.reply.write([&id](resp::Writer& w) { w.bulk(id); });
  }
  wrong_args();
}

// Accepted so that Redis Cluster clients can follow -ASK; slots do not move
// at run time yet, so no -ASK is ever sent and the flag changes nothing.
void asking(CommandContext& ctx) { ctx.reply.ok(); }

}  // namespace

void add_cluster_commands(std::vector<CommandSpec>& out) {
  out.push_back({"CLUSTER", -2, kConnection | kFast, "server",
                 "The shards' map, Redis Cluster style (SLOTS, SHARDS, NODES, KEYSLOT key, MYID, INFO)",
                 "SLOTS | SHARDS | NODES | KEYSLOT key | MYID | INFO", &cluster, kAclConnection});
  out.push_back({"ASKING", 1, kConnection | kFast, "connection",
                 "Cluster: the next command may touch a slot being imported (accepted; slots do not move yet)", "",
                 &asking, kAclConnection});
}

}  // namespace leasehold::server
