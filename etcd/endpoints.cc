#include "etcd/endpoints.h"

#include <charconv>

namespace leasehold::etcd {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Result<EndpointUrl> parse_one(std::string_view entry) {
  std::string_view rest = trim(entry);
  if (rest.empty()) return Status(ErrorCode::kInvalidArgument, "etcd endpoint list has an empty entry");
  bool tls = false;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    tls = true;
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return Status(ErrorCode::kInvalidArgument,
                  "etcd endpoint '" + std::string(rest) + "': the scheme must be http:// or https://");
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
    return Status(ErrorCode::kInvalidArgument,
                  "etcd endpoint '" + std::string(trim(entry)) + "' needs host:port");
  }
  std::string_view port_text = rest.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    return Status(ErrorCode::kInvalidArgument,
                  "etcd endpoint '" + std::string(trim(entry)) + "': bad port '" + std::string(port_text) + "'");
  }
  if (rest.substr(0, colon).find('/') != std::string_view::npos) {
    return Status(ErrorCode::kInvalidArgument,
                  "etcd endpoint '" + std::string(trim(entry)) + "': unexpected path");
  }
  return EndpointUrl{std::string(rest), tls};
}

}  // namespace

Result<std::vector<EndpointUrl>> parse_endpoints(std::string_view comma_separated) {
  std::vector<EndpointUrl> targets;
  if (trim(comma_separated).empty()) {
    return Status(ErrorCode::kInvalidArgument, "etcd endpoint list is empty");
  }
  std::size_t start = 0;
  while (start <= comma_separated.size()) {
    std::size_t comma = comma_separated.find(',', start);
    if (comma == std::string_view::npos) comma = comma_separated.size();
    auto target = parse_one(comma_separated.substr(start, comma - start));
    if (!target) return target.status();
    if (targets.size() == kMaxEndpoints) {
      return Status(ErrorCode::kLimitExceeded,
                    "etcd endpoint list has more than " + std::to_string(kMaxEndpoints) + " entries");
    }
    targets.push_back(std::move(*target));
    start = comma + 1;
  }
  return targets;
}

}  // namespace leasehold::etcd
