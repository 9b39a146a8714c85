// server/net/tls.h: TLS for server connections (OpenSSL), as a byte transform
// between the socket and the RESP code (docs/security.md, TLS).
//
// TlsContext is one loaded certificate / key / CA set (an SSL_CTX); the
// server builds a new one on SIGHUP and gives it to new connections, while
// open connections keep the one they started with.
// TlsStream is one connection's TLS state over two memory BIOs: the
// connection feeds it the bytes it reads from the socket and gets plaintext
// back; it hands it plaintext replies and sends the ciphertext it drains.
// No socket I/O happens here, so plain and TLS connections share the same
// libuv reading, writing, parsing and pipelining code.
//
// Client certificates (--tls-auth-clients): kYes requires a certificate
// signed by the CA, kOptional verifies one if sent, kNo never asks. A
// verified certificate's subject CN names the user the connection is
// authenticated as (when such a user exists and is on).
//
// Thread-safety: a TlsContext may be shared (OpenSSL refcounts it); a
// TlsStream belongs to one connection on the loop thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "server/base/tls_options.h"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace leasehold::server {

class TlsContext {
 public:
  // Errors: kInvalidArgument naming the file and OpenSSL's reason (missing
  // file, bad PEM, key not matching the certificate, kYes/kOptional without
  // a CA file).
  static Result<std::shared_ptr<TlsContext>> load(const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

class TlsStream {
 public:
  explicit TlsStream(const std::shared_ptr<TlsContext>& context);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Takes bytes read from the socket; appends the plaintext they complete to
  // `plain`. Errors: kIoError with OpenSSL's reason (a failed handshake says
  // why, e.g. "certificate verify failed: certificate has expired"); kNotFound
  // when the peer sent close_notify. After an error, drain() may still hold
  // an alert to send before closing.
  Status feed(std::string_view cipher, std::string& plain);
  // Encrypts `plain` (only once handshake_done()). Errors: kIoError.
  Status encrypt(std::string_view plain);
  // Moves the ciphertext waiting to be sent into `out` (appends).
  void drain(std::string& out);
  bool handshake_done() const { return done_; }
  // The subject CN of a verified client certificate; "" when none.
  std::string peer_common_name() const;

 private:
  Status failure(int rc, std::string_view what);

  std::shared_ptr<TlsContext> context_;
  SSL* ssl_ = nullptr;
  bool done_ = false;
};

}  // namespace leasehold::server
