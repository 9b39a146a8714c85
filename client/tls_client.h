// client/tls_client.h: the client side of TLS (OpenSSL) for `tls://`
// endpoints (internal). One TlsClientContext per Client holds the CA that
// must have signed the server's certificate and, optionally, this client's
// certificate and key (for servers with --tls-auth-clients yes; its CN names
// the user). TlsSocket wraps one non-blocking socket.
//
// Thread-safety: a TlsClientContext is shared read-only between
// connections; a TlsSocket has one user at a time.
#pragma once

#include <memory>
#include <string>

#include "leasehold/client.h"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace leasehold::client::detail {

class TlsClientContext {
 public:
  // Errors: kInvalidArgument naming the file and OpenSSL's reason.
  static Result<std::shared_ptr<TlsClientContext>> create(const ClientOptions& options);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsClientContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

// The result of one non-blocking TLS operation.
enum class TlsWant { kDone, kRead, kWrite, kClosed, kFailed };

class TlsSocket {
 public:
  // Checks the server's certificate against the CA and `host` (name or IP).
  TlsSocket(std::shared_ptr<TlsClientContext> context, int fd, const std::string& host);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  TlsWant handshake();
  // n: bytes written / read on kDone.
  TlsWant write(const char* data, std::size_t size, std::size_t& n);
  TlsWant read(char* data, std::size_t size, std::size_t& n);
  // Plaintext already decrypted and waiting.
  bool pending() const;
  // Why the last kFailed happened (OpenSSL's reason, verification result).
  const std::string& error() const { return error_; }
  // True when the last failure was the server's certificate not verifying.
  bool verify_failed() const { return verify_failed_; }

 private:
  TlsWant result(int rc);

  std::shared_ptr<TlsClientContext> context_;
  SSL* ssl_ = nullptr;
  std::string error_;
  bool verify_failed_ = false;
};

}  // namespace leasehold::client::detail
