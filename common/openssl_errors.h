// common/openssl_errors.h: OpenSSL's queued errors as one line of text.
//
// take_openssl_errors() pops every error on the calling thread's OpenSSL
// error queue (so the next call starts clean) and joins their texts with
// "; "; "" when the queue was empty. Thread-safety: OpenSSL keeps one queue
// per thread. Header-only so that leasehold_common does not link OpenSSL;
// the client's and the server's TLS code, which do, include it.
#pragma once

#include <openssl/err.h>

#include <array>
#include <string>

namespace leasehold {

inline std::string take_openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    std::array<char, 256> text{};
    ERR_error_string_n(e, text.data(), text.size());
    if (!out.empty()) out += "; ";
    out += text.data();
  }
  return out;
}

}  // namespace leasehold
