#include "server/base/tls_options.h"

namespace leasehold::server {

Result<TlsClientAuth> parse_tls_client_auth(std::string_view text) {
  if (text == "yes") return TlsClientAuth::kYes;
  if (text == "no") return TlsClientAuth::kNo;
  if (text == "optional") return TlsClientAuth::kOptional;
  return Status(ErrorCode::kInvalidArgument, "--tls-auth-clients is yes, no or optional");
}

}  // namespace leasehold::server
