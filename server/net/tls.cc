#include "server/net/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>

#include <fmt/format.h>

#include "common/openssl_errors.h"

namespace leasehold::server {
namespace {

// OpenSSL's queued errors as one line (and clears the queue).
std::string openssl_errors() {
  std::string out = take_openssl_errors();
  return out.empty() ? "unknown error" : out;
}

Status bad(const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, fmt::format("TLS: {}: {}", what, openssl_errors()));
}

}  // namespace

Result<std::shared_ptr<TlsContext>> TlsContext::load(const TlsOptions& options) {
  ERR_clear_error();
  SSL_CTX* raw = SSL_CTX_new(TLS_server_method());
  if (raw == nullptr) return bad("cannot create a context");
  std::shared_ptr<TlsContext> ctx(new TlsContext(raw));
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  SSL_CTX_set_mode(raw, SSL_MODE_RELEASE_BUFFERS);
  if (options.cert_file.empty() || options.key_file.empty()) {
    return Status(ErrorCode::kInvalidArgument, "TLS needs --tls-cert-file and --tls-key-file");
  }
  if (SSL_CTX_use_certificate_chain_file(raw, options.cert_file.c_str()) != 1) {
    return bad("cannot load the certificate " + options.cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(raw, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return bad("cannot load the private key " + options.key_file);
  }
  if (SSL_CTX_check_private_key(raw) != 1) {
    return bad("the private key " + options.key_file + " does not match the certificate " + options.cert_file);
  }
  if (!options.ca_cert_file.empty()) {
    if (SSL_CTX_load_verify_locations(raw, options.ca_cert_file.c_str(), nullptr) != 1) {
      return bad("cannot load the CA certificates " + options.ca_cert_file);
    }
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_cert_file.c_str())) {
      SSL_CTX_set_client_CA_list(raw, names);
    }
  } else if (options.auth_clients != TlsClientAuth::kNo) {
    return Status(ErrorCode::kInvalidArgument,
                  "TLS: --tls-auth-clients yes/optional needs --tls-ca-cert-file (the CA of the client "
                  "certificates), or pass --tls-auth-clients no");
  }
  switch (options.auth_clients) {
    case TlsClientAuth::kYes:
      SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
    case TlsClientAuth::kOptional: SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr); break;
    case TlsClientAuth::kNo: SSL_CTX_set_verify(raw, SSL_VERIFY_NONE, nullptr); break;
  }
  static const unsigned char kSessionContext[] = "leasehold";
  SSL_CTX_set_session_id_context(raw, kSessionContext, sizeof(kSessionContext) - 1);
  return ctx;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsStream::TlsStream(const std::shared_ptr<TlsContext>& context) : context_(context) {
  ssl_ = SSL_new(context_->get());
  if (ssl_ == nullptr) return;
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl_, in, out);  // ssl_ owns both
  SSL_set_accept_state(ssl_);
}

TlsStream::~TlsStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

Status TlsStream::failure(int rc, std::string_view what) {
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_ZERO_RETURN) return Status(ErrorCode::kNotFound, "close_notify");
  std::string reason = openssl_errors();
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK) {
    reason += fmt::format(" (client certificate: {})", X509_verify_cert_error_string(verify));
  }
  if (err == SSL_ERROR_SYSCALL && reason == "unknown error") reason = "unexpected end of the TLS stream";
  return Status(ErrorCode::kIoError, fmt::format("{}: {}", what, reason));
}

Status TlsStream::feed(std::string_view cipher, std::string& plain) {
  if (ssl_ == nullptr) return Status(ErrorCode::kIoError, "TLS: no memory for the connection");
  ERR_clear_error();
  if (!cipher.empty() && BIO_write(SSL_get_rbio(ssl_), cipher.data(), static_cast<int>(cipher.size())) <= 0) {
    return Status(ErrorCode::kIoError, "TLS: cannot buffer input");
  }
  if (!done_) {
    const int rc = SSL_do_handshake(ssl_);
    if (rc != 1) {
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Status::ok();
      return failure(rc, "TLS handshake failed");
    }
    done_ = true;
  }
  std::array<char, 16 * 1024> buf{};
  while (true) {
    const int n = SSL_read(ssl_, buf.data(), static_cast<int>(buf.size()));
    if (n > 0) {
      plain.append(buf.data(), static_cast<std::size_t>(n));
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Status::ok();
    return failure(n, "TLS read failed");
  }
}

Status TlsStream::encrypt(std::string_view plain) {
  if (!done_ || ssl_ == nullptr) return Status(ErrorCode::kIoError, "TLS: write before the handshake");
  ERR_clear_error();
  while (!plain.empty()) {
    const int n = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<std::size_t>(plain.size(), 1 << 20)));
    if (n <= 0) return failure(n, "TLS write failed");
    plain.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::ok();
}

void TlsStream::drain(std::string& out) {
  if (ssl_ == nullptr) return;
  BIO* wbio = SSL_get_wbio(ssl_);
  const auto pending = static_cast<std::size_t>(BIO_ctrl_pending(wbio));
  if (pending == 0) return;
  const std::size_t at = out.size();
  out.resize(at + pending);
  const int n = BIO_read(wbio, out.data() + at, static_cast<int>(pending));
  out.resize(at + static_cast<std::size_t>(n > 0 ? n : 0));
}

std::string TlsStream::peer_common_name() const {
  if (ssl_ == nullptr || !done_ || SSL_get_verify_result(ssl_) != X509_V_OK) return {};
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (cert == nullptr) return {};
  std::array<char, 256> cn{};
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn.data(),
                                          static_cast<int>(cn.size()));
  X509_free(cert);
  return n > 0 ? std::string(cn.data(), static_cast<std::size_t>(n)) : std::string();
}

}  // namespace leasehold::server
