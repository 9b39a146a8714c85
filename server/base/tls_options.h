// server/base/tls_options.h: what the TLS listener is told (--tls-listen,
// the certificate files, --tls-auth-clients). Loading them is the net room's
// TlsContext (server/net/tls.h); this is only the configuration, so that
// ServerConfig does not depend on OpenSSL.
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold::server {

enum class TlsClientAuth { kNo, kYes, kOptional };

struct TlsOptions {
  std::string listen;        // "host:port"; "" = no TLS listener
  std::string cert_file;     // PEM certificate chain of the server
  std::string key_file;      // PEM private key
  std::string ca_cert_file;  // PEM CA(s) that sign client certificates
  TlsClientAuth auth_clients = TlsClientAuth::kYes;
};

// Parses "yes" / "no" / "optional". Error: kInvalidArgument.
Result<TlsClientAuth> parse_tls_client_auth(std::string_view text);

}  // namespace leasehold::server
