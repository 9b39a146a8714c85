#include "cluster/etcd_security.h"

#include <sys/stat.h>

#include <fstream>

namespace leasehold::cluster {
namespace {

constexpr std::size_t kMaxPemBytes = 1 << 20;
constexpr std::size_t kMaxPasswordBytes = 512;
constexpr std::string_view kTlsTag = " tls=";

Result<std::string> read_small_file(const std::string& flag, const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kInvalidArgument, flag + ": cannot read " + path);
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_bytes) {
    return Status(ErrorCode::kInvalidArgument, flag + ": " + path + " is over " + std::to_string(max_bytes) + " bytes");
  }
  return text;
}

Result<std::string> read_pem(const std::string& flag, const std::string& path) {
  if (path.empty()) return std::string();
  auto text = read_small_file(flag, path, kMaxPemBytes);
  if (!text) return text.status();
  if (text->find("-----BEGIN ") == std::string::npos) {
    return Status(ErrorCode::kInvalidArgument, flag + ": " + path + " holds no PEM block (-----BEGIN ...)");
  }
  return text;
}

}  // namespace

Result<std::string> read_etcd_password(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status(ErrorCode::kInvalidArgument, "--etcd-password-file: cannot read " + path);
  }
  if ((st.st_mode & S_IROTH) != 0) {
    return Status(ErrorCode::kInvalidArgument, "--etcd-password-file: " + path +
                                                   " is readable by every user of this machine; "
                                                   "restrict it (chmod 600 or 640) and start again");
  }
  auto text = read_small_file("--etcd-password-file", path, kMaxPasswordBytes + 2);
  if (!text) return text.status();
  std::string pass = std::move(text).value();
  if (!pass.empty() && pass.back() == '\n') pass.pop_back();
  if (!pass.empty() && pass.back() == '\r') pass.pop_back();
  if (pass.empty() || pass.size() > kMaxPasswordBytes || pass.find('\n') != std::string::npos) {
    return Status(ErrorCode::kInvalidArgument, "--etcd-password-file: " + path + ": the password is 1.." +
                                                   std::to_string(kMaxPasswordBytes) + " bytes (one line)");
  }
  return pass;
}

Result<etcd::ClientOptions> etcd_client_options(const ClusterOptions& options) {
  etcd::ClientOptions co;
  co.endpoints = options.etcd_endpoints;
  co.call_timeout = options.etcd_timeout;
  auto ca = read_pem("--etcd-ca", options.etcd_ca_file);
  if (!ca) return ca.status();
  auto cert = read_pem("--etcd-cert", options.etcd_cert_file);
  if (!cert) return cert.status();
  auto key = read_pem("--etcd-key", options.etcd_key_file);
  if (!key) return key.status();
  if (cert->empty() != key->empty()) {
    return Status(ErrorCode::kInvalidArgument, "--etcd-cert and --etcd-key go together (one is missing)");
  }
  co.tls = {std::move(ca).value(), std::move(cert).value(), std::move(key).value()};
  if (options.etcd_user.empty() && !options.etcd_password_file.empty()) {
    return Status(ErrorCode::kInvalidArgument, "--etcd-password-file needs --etcd-user");
  }
  if (!options.etcd_user.empty() && options.etcd_password_file.empty()) {
    return Status(ErrorCode::kInvalidArgument,
                  "--etcd-user needs --etcd-password-file (for an etcd user named by a client certificate's CN, "
                  "give --etcd-cert/--etcd-key without --etcd-user)");
  }
  co.user = options.etcd_user;
  if (!options.etcd_password_file.empty()) {
    auto pass = read_etcd_password(options.etcd_password_file);
    if (!pass) return pass.status();
    co.password = std::move(pass).value();
  }
  return co;
}

std::string encode_advertised(const AdvertisedAddresses& addresses) {
  if (addresses.tls.empty()) return addresses.plain;
  return addresses.plain + std::string(kTlsTag) + addresses.tls;
}

AdvertisedAddresses decode_advertised(const std::string& value) {
  const std::size_t at = value.find(kTlsTag);
  if (at == std::string::npos) return {value, ""};
  return {value.substr(0, at), value.substr(at + kTlsTag.size())};
}

}  // namespace leasehold::cluster
