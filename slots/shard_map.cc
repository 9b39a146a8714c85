#include "slots/shard_map.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "slots/partition.h"

namespace leasehold::slots {
namespace {

Status bad(std::string_view text, const std::string& why) {
  return {ErrorCode::kInvalidArgument,
          "shard peer '" + std::string(text.substr(0, 200)) + "': " + why + " (want ID@HOST:PORT=SLOTS, e.g. "
          "2@127.0.0.1:7380=8192-16383)"};
}

template <typename T>
bool parse_number(std::string_view s, T max, T& out) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v > max) return false;
  out = static_cast<T>(v);
  return true;
}

}  // namespace

std::string ShardAddress::endpoint() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

Result<ShardAddress> parse_shard_peer(std::string_view text) {
  ShardAddress out;
  const std::size_t at = text.find('@');
  const std::size_t eq = text.find('=');
  if (at == std::string_view::npos || eq == std::string_view::npos || eq < at) {
    return bad(text, "missing '@' or '='");
  }
  if (!parse_number<std::uint32_t>(text.substr(0, at), kMaxShardId, out.id) || out.id == 0) {
    return bad(text, "the shard id must be a number from 1 to " + std::to_string(kMaxShardId));
  }
  const std::string_view address = text.substr(at + 1, eq - at - 1);
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad(text, "the address must be HOST:PORT");
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || host.size() > 253 || host.find_first_of(" ,[]@=") != std::string_view::npos) {
    return bad(text, "bad host");
  }
  out.host = std::string(host);
  if (!parse_number<std::uint16_t>(address.substr(colon + 1), 65535, out.port) || out.port == 0) {
    return bad(text, "the port must be a number from 1 to 65535");
  }
  auto owned = SlotSet::parse(text.substr(eq + 1));
  if (!owned) return bad(text, owned.status().message());
  out.slots = std::move(owned).value();
  return out;
}

Result<ShardMap> ShardMap::build(ShardAddress self, std::vector<ShardAddress> peers) {
  if (self.id == 0 || self.id > kMaxShardId) {
    return Status(ErrorCode::kInvalidArgument,
                  "the shard id must be a number from 1 to " + std::to_string(kMaxShardId));
  }
  const std::uint32_t self_id = self.id;
  ShardMap map;
  map.shards_.push_back(std::move(self));
  for (ShardAddress& p : peers) map.shards_.push_back(std::move(p));
  std::sort(map.shards_.begin(), map.shards_.end(),
            [](const ShardAddress& a, const ShardAddress& b) { return a.id < b.id; });
  std::set<std::string> endpoints;
  std::vector<ShardSlots> parts;
  for (std::size_t i = 0; i < map.shards_.size(); ++i) {
    const ShardAddress& s = map.shards_[i];
    if (i > 0 && map.shards_[i - 1].id == s.id) {
      return Status(ErrorCode::kInvalidArgument, "shard id " + std::to_string(s.id) + " is given twice");
    }
    if (!endpoints.insert(s.endpoint()).second) {
      return Status(ErrorCode::kInvalidArgument, "address " + s.endpoint() + " is given to two shards");
    }
    parts.push_back(ShardSlots{"shard " + std::to_string(s.id) + " (" + s.endpoint() + ")", s.slots});
  }
  if (Status st = check_partition(parts); !st) return st;
  for (std::size_t i = 0; i < map.shards_.size(); ++i) {
    if (map.shards_[i].id == self_id) map.self_ = i;
    for (const SlotRange& r : map.shards_[i].slots.ranges()) {
      for (std::uint32_t slot = r.first; slot <= r.last; ++slot) map.owner_[slot] = static_cast<std::uint16_t>(i);
    }
  }
  return map;
}

const ShardAddress* ShardMap::by_id(std::uint32_t id) const {
  for (const ShardAddress& s : shards_) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

}  // namespace leasehold::slots
