#include "server/config.h"

#include <charconv>

#include <fmt/format.h>

namespace leasehold::server {

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
