// TLS against a real server with certificates made at run time by the
// `openssl` command (no private key is committed): redis-cli --tls and
// redis-py ssl=True unchanged, client certificates required / optional / off
// with the CN mapped to a user, bad, foreign and expired certificates refused
// with a clear message, plain and TLS side by side, certificates reloaded on
// SIGHUP.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "tests/server/security_fixture.h"
#include "tests/server/tls_certs.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

class Tls : public ::testing::Test {
 protected:
  void start(const std::string& auth_clients, std::vector<std::string> extra = {}) {
    ASSERT_TRUE(certs_.ok());
    write_text(dir_.file("users.acl"), standard_users());
    tls_port_ = free_port();
    std::vector<std::string> flags = {"--users-file", dir_.file("users.acl"), "--tls-listen",
                                      loopback(tls_port_), "--tls-cert-file", certs_.path("server.crt"),
                                      "--tls-key-file", certs_.path("server.key"), "--tls-ca-cert-file",
                                      certs_.path("ca.crt"), "--tls-auth-clients", auth_clients};
    flags.insert(flags.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.start(dir_.file("data"), flags));
    ASSERT_TRUE(wait_for_port(tls_port_, std::chrono::seconds(10)));
  }
  std::string cli(const std::string& args) {
    return sh("redis-cli --no-auth-warning --tls --cacert " + certs_.path("ca.crt") + " -p " +
              std::to_string(tls_port_) + " " + args);
  }
  std::string with_cert(const std::string& name) {
    return "--cert " + certs_.path(name + ".crt") + " --key " + certs_.path(name + ".key") + " ";
  }
  std::string server_log() { return read_file(dir_.file("data") + ".stderr"); }
  // Polls the server log for `text` (the log line follows the refusal).
  bool log_has(const std::string& text) {
    return eventually([&] { return server_log().find(text) != std::string::npos; }, std::chrono::seconds(20),
                      std::chrono::milliseconds(50));
  }

  TempDir dir_{"server-tls"};
  TlsCerts certs_{dir_};
  ServerProcess server_;
  std::uint16_t tls_port_ = 0;
};

TEST_F(Tls, ClientCertificateRequiredMapsTheCnToAUser) {
  start("yes");
  EXPECT_EQ(cli(with_cert("alice") + "ACL WHOAMI"), "alice\n");
  EXPECT_EQ(cli(with_cert("alice") + "SESSION.OPEN 5000").find("NOPERM"), std::string::npos);
  EXPECT_NE(cli(with_cert("alice") + "LOCK.LIST").find("NOPERM User alice"), std::string::npos);
  // Plain and TLS side by side: the plain port still needs AUTH.
  RespClient plain = server_.client();
  EXPECT_EQ(plain.call({"PING"}).str, "NOAUTH Authentication required.");
  EXPECT_EQ(plain.call({"AUTH", "alice", "alicepw"}), resp::Value::simple("OK"));

  // No certificate, another CA's certificate, an expired one: refused, and
  // the server says why.
  EXPECT_NE(cli("PING"), "PONG\n");
  EXPECT_TRUE(log_has("peer did not return a certificate")) << server_log();
  EXPECT_NE(cli(with_cert("foreign") + "PING"), "PONG\n");
  EXPECT_TRUE(log_has("certificate verify failed")) << server_log();
  EXPECT_NE(cli(with_cert("expired") + "PING"), "PONG\n");
  EXPECT_TRUE(log_has("certificate has expired")) << server_log();
  // A plain client on the TLS port is closed, the server lives on.
  RespClient wrong = RespClient::connect(tls_port_).value();
  (void)wrong.send({"PING"});
  EXPECT_TRUE(wrong.wait_closed(std::chrono::seconds(10)));
  EXPECT_EQ(plain.call({"PING"}), resp::Value::simple("PONG"));
}

TEST_F(Tls, NoClientCertificatesWithPasswordsAndRedisPy) {
  start("no");
  EXPECT_EQ(cli("--user bob --pass bobpw ACL WHOAMI"), "bob\n");
  EXPECT_NE(cli("PING").find("NOAUTH"), std::string::npos);
  const std::string script = dir_.file("tls.py");
  write_text(script, "import redis\nr = redis.Redis(host=\"127.0.0.1\", port=" + std::to_string(tls_port_) +
                         ", ssl=True, ssl_ca_certs=\"" + certs_.path("ca.crt") +
                         "\", username=\"alice\", password=\"alicepw\", socket_timeout=10)\n"
                         "print(r.ping())\nprint(r.execute_command(\"ACL\", \"WHOAMI\"))\n"
                         "print(r.set(\"keys/t\", \"v\", px=5000))\n");
  EXPECT_EQ(sh("/usr/bin/python3 " + script, 60), "True\nb'alice'\nTrue\n");
}

TEST_F(Tls, OptionalClientCertificateAndReloadOnSighup) {
  start("optional");
  EXPECT_EQ(cli(with_cert("alice") + "ACL WHOAMI"), "alice\n");
  EXPECT_NE(cli("PING").find("NOAUTH"), std::string::npos) << "no certificate: AUTH as usual";
  EXPECT_EQ(cli("--user bob --pass bobpw ACL WHOAMI"), "bob\n");
  EXPECT_NE(cli(with_cert("foreign") + "PING"), "PONG\n") << "a certificate that is sent is verified";

  auto subject = [&] {
    return sh("openssl s_client -connect 127.0.0.1:" + std::to_string(tls_port_) + " -CAfile " +
              certs_.path("ca.crt") + " </dev/null 2>/dev/null | openssl x509 -noout -subject");
  };
  EXPECT_NE(subject().find("CN = 127.0.0.1"), std::string::npos) << subject();
  // A new server certificate (other CN), then SIGHUP: new connections get it.
  certs_.issue("server", "renewed.example", "ca", "-days 2 -extfile san.ext");
  server_.process().signal(SIGHUP);
  const bool renewed =
      eventually([&] { return subject().find("CN = renewed.example") != std::string::npos; }, std::chrono::seconds(20));
  EXPECT_TRUE(renewed) << subject();
  EXPECT_EQ(cli(with_cert("alice") + "ACL WHOAMI"), "alice\n");
}

TEST(TlsConfig, BadCertificateFilesRefuseToStart) {
  TempDir dir("tls-config");
  write_text(dir.file("junk.pem"), "not a certificate\n");
  const auto refused = ServerProcess().run_to_exit(
      dir.file("data"), {"--tls-listen", loopback(free_port()), "--tls-cert-file", dir.file("junk.pem"),
                         "--tls-key-file", dir.file("junk.pem"), "--tls-auth-clients", "no"});
  ASSERT_TRUE(refused) << "the server did not exit by itself";
  EXPECT_EQ(refused->code, 64);  // a bad config file: usage (docs/client.md, "Exit codes")
  EXPECT_NE(refused->stderr_text.find("cannot load the certificate " + dir.file("junk.pem")), std::string::npos)
      << refused->stderr_text;
}

}  // namespace
}  // namespace leasehold::testing
