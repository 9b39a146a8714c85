// server/commands/shard_routing.cc: see the header.
#include "server/commands/shard_routing.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "server/services/server_services.h"
#include "slots/hash_slot.h"

namespace leasehold::server {
namespace {

std::optional<std::uint64_t> decimal(const std::string& text) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string route_request(ServerServices& server, const CommandSpec& spec, const std::vector<std::string>& args) {
  const slots::ShardMap& map = server.config().shards;
  if (!map.enabled()) return {};

  if (spec.keys.first > 0) {
    const auto n = static_cast<int>(args.size());
    const int last = spec.keys.last < 0 ? n + spec.keys.last : spec.keys.last;
    const int step = spec.keys.step > 0 ? spec.keys.step : 1;
    std::optional<slots::Slot> slot;
    for (int i = spec.keys.first; i <= last && i < n; i += step) {
      const slots::Slot s = slots::hash_slot(args[static_cast<std::size_t>(i)]);
      if (slot && *slot != s) return "CROSSSLOT Keys in request don't hash to the same slot";
      slot = s;
    }
    if (slot) {
      const slots::ShardAddress& owner = map.owner(*slot);
      if (owner.id != map.self().id) return fmt::format("MOVED {} {}", *slot, owner.endpoint());
      if (!server.node().state().owns_slot(*slot)) {
        return fmt::format("TRYAGAIN slot {} is this shard's, but its log does not record that yet", *slot);
      }
    }
  }

  for (std::size_t i = 1; i < args.size(); ++i) {
    if (!spec.is_session_arg(i)) continue;
    const std::optional<std::uint64_t> id = decimal(args[i]);
    if (!id) continue;  // the handler answers the bad number
    const std::uint32_t shard = core::shard_of_session(*id);
    if (shard == 0 || shard == map.self().id) continue;
    const slots::ShardAddress* other = map.by_id(shard);
    return fmt::format("WRONGSHARD session {} belongs to shard {} ({})", *id, shard,
                       other != nullptr ? other->endpoint() : std::string("not in this shard's map"));
  }
  return {};
}

}  // namespace leasehold::server
