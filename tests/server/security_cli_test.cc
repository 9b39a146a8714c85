// The `leasehold` CLI (and so the C++ client) against a server with users
// and TLS: --user with --password-file or LEASEHOLD_PASSWORD, a refused
// password, tls:// endpoints with a client certificate, an untrusted server.
#include <gtest/gtest.h>

#include "tests/server/security_fixture.h"

namespace leasehold::testing {
namespace {

struct CliRun {
  std::optional<int> code;
  std::string err;
};

class SecureCli : public SecureServer {
 protected:
  CliRun cli(std::vector<std::string> args, std::vector<std::pair<std::string, std::string>> env = {}) {
    args.insert(args.begin(), leasehold_binary());
    SpawnOptions o;
    o.env = std::move(env);
    o.stdout_path = dir_.file("cli.out");
    o.stderr_path = dir_.file("cli.err");
    auto p = Subprocess::spawn(args, o);
    EXPECT_TRUE(p.is_ok());
    CliRun r;
    r.code = p->wait(std::chrono::seconds(60));
    r.err = read_file(dir_.file("cli.err"));
    return r;
  }
  std::string endpoint() const { return loopback(server_.port()); }
};

TEST_F(SecureCli, UserAndPassword) {
  write_text(dir_.file("alice.pw"), "alicepw\n");
  CliRun ok = cli({"lock", "--endpoints", endpoint(), "--user", "alice", "--password-file", dir_.file("alice.pw"),
                "locks/cli", "--", "true"});
  EXPECT_EQ(ok.code, std::optional<int>(0)) << ok.err;
  CliRun env = cli({"lock", "--endpoints", endpoint(), "--user", "alice", "locks/cli", "--", "true"},
                {{"LEASEHOLD_PASSWORD", "alicepw"}});
  EXPECT_EQ(env.code, std::optional<int>(0)) << env.err;
  CliRun wrong = cli({"lock", "--endpoints", endpoint(), "--user", "alice", "locks/cli", "--", "true"},
                  {{"LEASEHOLD_PASSWORD", "nope"}});
  EXPECT_EQ(wrong.code, std::optional<int>(64)) << wrong.err;
  EXPECT_NE(wrong.err.find("WRONGPASS"), std::string::npos) << wrong.err;
  CliRun denied = cli({"lock", "--endpoints", endpoint(), "--user", "alice", "other/x", "--", "true"},
                   {{"LEASEHOLD_PASSWORD", "alicepw"}});
  EXPECT_NE(denied.code, std::optional<int>(0));
  EXPECT_NE(denied.err.find("NOPERM No permissions to access a key"), std::string::npos) << denied.err;
  CliRun none = cli({"info", "--endpoints", endpoint(), "locks/cli"});
  EXPECT_NE(none.err.find("NOAUTH"), std::string::npos) << none.err;
}

TEST_F(SecureCli, TlsEndpoints) {
  // A second server with TLS; certificates made now by `openssl`.
  const std::string d = dir_.path();
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string made = sh(
      "cd " + d + " && ( printf \"subjectAltName=IP:127.0.0.1\\n\" > san.ext"
      " && openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=ca"
      " && openssl req -x509 " + key + " -keyout other.key -out other.crt -days 2 -subj /CN=other"
      " && openssl req " + key + " -keyout srv.key -out srv.csr -subj /CN=127.0.0.1"
      " && openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile san.ext"
      " && openssl req " + key + " -keyout alice.key -out alice.csr -subj /CN=alice"
      " && openssl x509 -req -in alice.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out alice.crt -days 2"
      " ) >/dev/null 2>&1 && echo made", 120);
  ASSERT_EQ(made, "made\n");
  ServerProcess tls_server;
  const std::uint16_t tls_port = free_port();
  ASSERT_TRUE(tls_server.start(dir_.file("data-tls"),
                               {"--users-file", users_file(), "--tls-listen", loopback(tls_port), "--tls-cert-file",
                                d + "/srv.crt", "--tls-key-file", d + "/srv.key", "--tls-ca-cert-file", d + "/ca.crt",
                                "--tls-auth-clients", "optional"}));
  ASSERT_TRUE(wait_for_port(tls_port, std::chrono::seconds(10)));
  const std::string tls_ep = "tls://" + loopback(tls_port);
  // The client certificate's CN (alice) is the user: no password.
  CliRun cert = cli({"lock", "--endpoints", tls_ep, "--tls-ca-file", d + "/ca.crt", "--tls-cert-file",
                  d + "/alice.crt", "--tls-key-file", d + "/alice.key", "locks/tls", "--", "true"});
  EXPECT_EQ(cert.code, std::optional<int>(0)) << cert.err;
  // No certificate: a password over TLS.
  CliRun pw = cli({"lock", "--endpoints", tls_ep, "--tls-ca-file", d + "/ca.crt", "--user", "bob", "locks/tls", "--",
                "true"},
               {{"LEASEHOLD_PASSWORD", "bobpw"}});
  EXPECT_EQ(pw.code, std::optional<int>(0)) << pw.err;
  // A server certificate from a CA the client does not trust.
  CliRun untrusted = cli({"info", "--endpoints", tls_ep, "--tls-ca-file", d + "/other.crt", "locks/tls"});
  EXPECT_NE(untrusted.code, std::optional<int>(0));
  EXPECT_NE(untrusted.err.find("certificate is not trusted"), std::string::npos) << untrusted.err;
}

}  // namespace
}  // namespace leasehold::testing
