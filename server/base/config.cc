#include "server/base/config.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "server/base/wire_ceilings.h"

namespace leasehold::server {

namespace {

Status refuse(std::string message) {
  return Status(ErrorCode::kInvalidArgument, "impossible limits: " + std::move(message));
}

// Floors below which no command of the command set fits a request.
constexpr std::size_t kMinBulkBytes = 64;     // a command name and a 20-digit number
constexpr std::size_t kMinArrayLen = 16;      // the longest LOCK.ACQUIRE / SET has 10
constexpr std::size_t kMinRequestBytes = 1024;
constexpr std::size_t kMinOutputBytes = 64 * 1024;
// Envelope and field overhead of one encoded command (tags, varints).
constexpr std::size_t kCommandOverhead = 128;

}  // namespace

Status validate_config(const ServerConfig& c) {
  const core::Limits& l = c.node.limits;
  struct AtLeastOne {
    std::size_t value;
    const char* flag;
    const char* why;
  };
  const AtLeastOne positive[] = {
      {l.max_name_bytes, "--max-name-bytes", "no lock name or key would be accepted"},
      {l.max_sessions, "--max-sessions", "no session could be opened"},
      {l.max_locks, "--max-locks", "no lock could be acquired"},
      {l.max_holders_per_lock, "--max-holders-per-lock", "no lock could be acquired"},
      {l.max_fence_keys, "--max-fence-keys", "no fenced write could succeed"},
      {c.max_clients, "--max-clients", "every connection would be refused"},
      {c.max_pipeline, "--max-pipeline", "no request would be read"},
      {c.max_pipeline_bytes, "--max-pipeline-bytes", "no request would be read"},
      {c.node.max_batch_commands, "--max-batch-commands", "nothing could be committed"},
      {c.node.max_pending_proposals, "--max-pending-proposals", "every write would be refused"},
  };
  for (const auto& p : positive) {
    if (p.value == 0) return refuse(fmt::format("{} 0: {}", p.flag, p.why));
  }
  if (l.max_ttl_ms == 0) return refuse("--max-ttl-ms 0: no session could be opened");
  if (l.max_ttl_ms > core::kMaxSessionTtlMs) {
    return refuse(fmt::format("--max-ttl-ms {} is above the largest session TTL, {} ms (about 24.8 days)",
                              l.max_ttl_ms, core::kMaxSessionTtlMs));
  }
  // A WAIT or DELAY above the wire ceiling is refused before core sees it,
  // so a larger configured limit would promise what no request can ask.
  const struct {
    std::uint64_t value;
    const char* flag;
  } durations[] = {{l.max_wait_ms, "--max-wait-ms"}, {l.max_delay_ms, "--max-delay-ms"}};
  for (const auto& d : durations) {
    if (d.value > kMaxWireDurationMs) {
      return refuse(fmt::format("{} {} is out of range: it must be 0 to {} ms (about 292 years, the longest "
                                "duration a request can carry)",
                                d.flag, d.value, kMaxWireDurationMs));
    }
  }
  if (l.min_ttl_ms > l.max_ttl_ms) {
    return refuse(fmt::format("--min-ttl-ms {} is above --max-ttl-ms {}: no session could be opened",
                              l.min_ttl_ms, l.max_ttl_ms));
  }
  if (Status st = validate_max_holds(c.max_hold); !st) return st;
  if (c.protocol.max_bulk_bytes < kMinBulkBytes) {
    return refuse(fmt::format("--proto-max-bulk-len {} is below {}: commands would not fit", c.protocol.max_bulk_bytes,
                              kMinBulkBytes));
  }
  if (c.protocol.max_array_len < kMinArrayLen) {
    return refuse(fmt::format("--proto-max-array-len {} is below {}: commands would not fit",
                              c.protocol.max_array_len, kMinArrayLen));
  }
  if (c.protocol.max_frame_bytes < kMinRequestBytes) {
    return refuse(fmt::format("--proto-max-request-bytes {} is below {}: commands would not fit",
                              c.protocol.max_frame_bytes, kMinRequestBytes));
  }
  if (c.max_output_bytes < kMinOutputBytes) {
    return refuse(fmt::format("--max-output-bytes {} is below {}: clients would be disconnected for ordinary replies",
                              c.max_output_bytes, kMinOutputBytes));
  }
  // The largest command the limits allow (a fenced write: key, lock name and
  // value) must fit one group-commit batch, or it could never be committed.
  const std::size_t largest =
      std::max(l.max_value_bytes + 2 * l.max_name_bytes, l.max_owner_bytes) + kCommandOverhead;
  if (c.node.max_batch_bytes < largest) {
    return refuse(fmt::format("--max-batch-bytes {} cannot hold the largest command the limits allow ({} bytes: "
                              "--max-value-bytes + 2 x --max-name-bytes + {})",
                              c.node.max_batch_bytes, largest, kCommandOverhead));
  }
  return Status::ok();
}

Status parse_listen(const std::string& text, std::string& host, std::uint16_t& port) {
  std::string h;
  std::string p;
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status(ErrorCode::kInvalidArgument, fmt::format("bad listen address '{}': want [ipv6]:port", text));
    }
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return Status(ErrorCode::kInvalidArgument, fmt::format("bad listen address '{}': want host:port", text));
    }
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc() || ptr != p.data() + p.size() || value > 65535) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("bad listen port in '{}'", text));
  }
  if (h == "localhost") h = "127.0.0.1";
  host = h;
  port = static_cast<std::uint16_t>(value);
  return Status::ok();
}

bool is_loopback_host(const std::string& host) {
  return host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace leasehold::server
