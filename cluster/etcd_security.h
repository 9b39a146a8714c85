// cluster/etcd_security.h: how a cluster node reaches a secured etcd: TLS
// material and the etcd user (docs/security.md "Cluster mode"), and the
// addresses a node advertises in the election (a plain and a TLS one, so a
// standby's -REDIRECT keeps the client's scheme).
//
// Files are read here, once at start (the password file again on SIGHUP,
// ClusterMember::reload_etcd_password):
//  - --etcd-ca / --etcd-cert / --etcd-key: PEM files (at most 1 MiB each);
//    cert and key go together; any of them needs an https:// endpoint.
//  - --etcd-password-file: one line, 1..512 bytes (a final newline is
//    dropped). A file that every user may read (mode o+r) is refused, like
//    ssh refuses such a private key; needs --etcd-user.
// Errors: kInvalidArgument naming the flag, the file and the problem.
// Thread-safety: pure functions (they read files).
#pragma once

#include <string>

#include "cluster/cluster_member.h"
#include "etcd/client.h"
#include "leasehold/status.h"

namespace leasehold::cluster {

// The etcd client options of a node: endpoints, timeout, TLS and user.
Result<etcd::ClientOptions> etcd_client_options(const ClusterOptions& options);

// Reads --etcd-password-file (see above).
Result<std::string> read_etcd_password(const std::string& path);

// What a node campaigns with (the election key's value): "host:port", or
// "host:port tls=host:port" when it also serves TLS clients.
struct AdvertisedAddresses {
  std::string plain;
  std::string tls;  // "" = no TLS listener
};
std::string encode_advertised(const AdvertisedAddresses& addresses);
// Any value: one without " tls=" is a plain address (older nodes).
AdvertisedAddresses decode_advertised(const std::string& value);

}  // namespace leasehold::cluster
