#include "client/tls_client.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>

#include "common/openssl_errors.h"

namespace leasehold::client::detail {
namespace {

Status bad(const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, "TLS: " + what + ": " + take_openssl_errors());
}

bool is_ip(const std::string& host) {
  std::array<unsigned char, 16> buf{};
  return ::inet_pton(AF_INET, host.c_str(), buf.data()) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf.data()) == 1;
}

}  // namespace

Result<std::shared_ptr<TlsClientContext>> TlsClientContext::create(const ClientOptions& options) {
  ERR_clear_error();
  SSL_CTX* raw = SSL_CTX_new(TLS_client_method());
  if (raw == nullptr) return bad("cannot create a context");
  std::shared_ptr<TlsClientContext> ctx(new TlsClientContext(raw));
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
  if (!options.tls_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(raw, options.tls_ca_file.c_str(), nullptr) != 1) {
      return bad("cannot load the CA certificates " + options.tls_ca_file);
    }
  } else if (SSL_CTX_set_default_verify_paths(raw) != 1) {
    return bad("cannot load the system CA certificates");
  }
  if (!options.tls_cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(raw, options.tls_cert_file.c_str()) != 1) {
      return bad("cannot load the certificate " + options.tls_cert_file);
    }
    const std::string& key = options.tls_key_file.empty() ? options.tls_cert_file : options.tls_key_file;
    if (SSL_CTX_use_PrivateKey_file(raw, key.c_str(), SSL_FILETYPE_PEM) != 1) {
      return bad("cannot load the private key " + key);
    }
  }
  return ctx;
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(ctx_); }

TlsSocket::TlsSocket(std::shared_ptr<TlsClientContext> context, int fd, const std::string& host)
    : context_(std::move(context)) {
  ssl_ = SSL_new(context_->get());
  if (ssl_ == nullptr) return;
  SSL_set_fd(ssl_, fd);
  SSL_set_connect_state(ssl_);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  if (is_ip(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    // SNI (SSL_set_tlsext_host_name is a macro with a C cast).
    SSL_ctrl(ssl_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(host.c_str()));
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  }
}

TlsSocket::~TlsSocket() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

TlsWant TlsSocket::result(int rc) {
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ: return TlsWant::kRead;
    case SSL_ERROR_WANT_WRITE: return TlsWant::kWrite;
    case SSL_ERROR_ZERO_RETURN: return TlsWant::kClosed;
    default: break;
  }
  error_ = take_openssl_errors();
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK) {
    verify_failed_ = true;
    error_ = std::string("the server's certificate is not trusted: ") + X509_verify_cert_error_string(verify);
  }
  if (error_.empty()) error_ = "the connection closed during TLS";
  return TlsWant::kFailed;
}

TlsWant TlsSocket::handshake() {
  if (ssl_ == nullptr) return TlsWant::kFailed;
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  return rc == 1 ? TlsWant::kDone : result(rc);
}

TlsWant TlsSocket::write(const char* data, std::size_t size, std::size_t& n) {
  ERR_clear_error();
  // OpenSSL writes with write(2): a peer that closed would raise SIGPIPE
  // (plain sockets use MSG_NOSIGNAL). Block it for this thread, and take a
  // SIGPIPE this write raised before unblocking.
  sigset_t pipe_set;
  sigset_t old_set;
  sigset_t pending_before;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending_before);
  const int rc = SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)));
  const int saved_errno = errno;
  if (rc <= 0 && saved_errno == EPIPE && sigismember(&pending_before, SIGPIPE) == 0) {
    const timespec zero{};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved_errno;
  if (rc > 0) {
    n = static_cast<std::size_t>(rc);
    return TlsWant::kDone;
  }
  return result(rc);
}

TlsWant TlsSocket::read(char* data, std::size_t size, std::size_t& n) {
  ERR_clear_error();
  const int rc = SSL_read(ssl_, data, static_cast<int>(size));
  if (rc > 0) {
    n = static_cast<std::size_t>(rc);
    return TlsWant::kDone;
  }
  return result(rc);
}

bool TlsSocket::pending() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }

}  // namespace leasehold::client::detail
