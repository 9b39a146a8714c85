// etcd/endpoints.h: parsing the etcd endpoint list.
//
// Accepts a comma-separated list of client URLs as etcd prints them,
// "http://127.0.0.1:2379,http://127.0.0.1:22379", and returns gRPC targets
// ("127.0.0.1:2379"), each with its scheme: https:// endpoints are reached
// over TLS (etcd/client.h ClientOptions::tls), http:// and a bare
// "host:port" in plain text.
// Errors: kInvalidArgument naming the bad entry (empty list, empty entry,
// missing or non-numeric port, another scheme, a path after the port);
// kLimitExceeded for more than kMaxEndpoints entries.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::etcd {

inline constexpr std::size_t kMaxEndpoints = 16;

struct EndpointUrl {
  std::string target;  // "127.0.0.1:2379"
  bool tls = false;    // https://
  bool operator==(const EndpointUrl&) const = default;
};

Result<std::vector<EndpointUrl>> parse_endpoints(std::string_view comma_separated);

}  // namespace leasehold::etcd
