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

namespace leasehold::testing {
namespace {

// A CA, a server certificate for 127.0.0.1, client certificates for alice
// (good), alice from another CA (foreign) and an expired one.
class TlsCerts {
 public:
  explicit TlsCerts(const TempDir& dir) : d_(dir.path()) {
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=leasehold-test-ca");
    run("openssl req -x509 " + key + " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca");
    issue("server", "127.0.0.1", "ca", "-days 2 -extfile san.ext");
    issue("alice", "alice", "ca", "-days 2");
    issue("foreign", "alice", "other-ca", "-days 2");
    // An expired certificate: `openssl ca` takes explicit dates.
    write_text(d_ + "/ca.cnf",
               "[ca]\ndefault_ca=c\n[c]\ndatabase=" + d_ + "/index.txt\nnew_certs_dir=" + d_ +
                   "\nserial=" + d_ + "/serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n");
    write_text(d_ + "/index.txt", "");
    write_text(d_ + "/serial", "1000\n");
    run("openssl req " + key + " -keyout expired.key -out expired.csr -subj /CN=alice");
    run("openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr -out expired.crt "
        "-startdate 20200101000000Z -enddate 20200102000000Z");
  }
  std::string path(const std::string& name) const { return d_ + "/" + name; }
  bool ok() const { return ok_; }
  // Issues name.crt/name.key with subject CN `cn`, signed by `ca`.
  void issue(const std::string& name, const std::string& cn, const std::string& ca, const std::string& extra) {
    write_text(d_ + "/san.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name + ".key -out " +
        name + ".csr -subj /CN=" + cn);
    run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".crt -CAkey " + ca + ".key -CAcreateserial -out " +
        name + ".crt " + extra);
  }

 private:
  void run(const std::string& command) {
    const std::string out = sh("cd " + d_ + " && " + command + " >/dev/null 2>&1 && echo done", 60);
    if (out != "done\n") {
      ok_ = false;
      ADD_FAILURE() << command << ": " << out;
    }
  }
  std::string d_;
  bool ok_ = true;
};

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
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (server_log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
    }
    return false;
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
                         "print(r.set(\"keys/t\", \"v\"))\n");
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
  bool renewed = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!renewed && std::chrono::steady_clock::now() < deadline) {
    renewed = subject().find("CN = renewed.example") != std::string::npos;
  }
  EXPECT_TRUE(renewed) << subject();
  EXPECT_EQ(cli(with_cert("alice") + "ACL WHOAMI"), "alice\n");
}

TEST(TlsConfig, BadCertificateFilesRefuseToStart) {
  TempDir dir("tls-config");
  write_text(dir.file("junk.pem"), "not a certificate\n");
  auto p = Subprocess::spawn({leasehold_binary(), "server", "--listen", loopback(free_port()), "--data-dir",
                              dir.file("data"), "--tls-listen", loopback(free_port()), "--tls-cert-file",
                              dir.file("junk.pem"), "--tls-key-file", dir.file("junk.pem"), "--tls-auth-clients",
                              "no"},
                             SpawnOptions{{}, "", "", dir.file("err")});
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->wait(std::chrono::seconds(30)), std::optional<int>(1));
  EXPECT_NE(read_file(dir.file("err")).find("cannot load the certificate " + dir.file("junk.pem")), std::string::npos)
      << read_file(dir.file("err"));
}

}  // namespace
}  // namespace leasehold::testing
