// Cluster mode against a secured etcd (docs/security.md "Cluster mode"):
// etcd serves https:// only, requires client certificates and has
// authentication on (root, a `leasehold` user whose role is readwrite on
// /leasehold/test/, a `nobody` user without permissions), all set up with
// the real etcdctl. Certificates are made at run time by
// tests/server/tls_certs.h. Checks: a 2-node cluster on it grants locks
// with increasing tokens, renews its etcd token when etcd's auth store
// changes, re-reads its password file on SIGHUP (and logs in with it after
// the password changed in etcd), and fails over; a standby's redirect keeps
// the client's scheme (plain client -> plain address, redis-cli --tls ->
// TLS address); a wrong password, no CA or the wrong one, a missing CA
// file, a user without permission and a world-readable password file each
// stop the node at start with a message naming the problem (and the etcd
// endpoint where etcd was reached).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>

#include "common/exit_codes.h"
#include "testkit/cluster_fixture.h"
#include "tests/server/tls_certs.h"

namespace leasehold::testing {
namespace {

class SecureEtcd : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok());
    certs_.issue("etcd-client", "leasehold", "ca", "-days 2");
    write_password("leasehold.pw", "lh-secret\n", 0600);
    write_password("wrong.pw", "not-the-password\n", 0600);
    write_password("nobody.pw", "nobody-secret\n", 0600);
    write_password("open.pw", "lh-secret\n", 0644);
  }

  void write_password(const std::string& name, const std::string& text, mode_t mode) {
    write_text(dir_.file(name), text);
    ASSERT_EQ(::chmod(dir_.file(name).c_str(), mode), 0);
  }

  EtcdClusterOptions etcd_options() const {
    EtcdClusterOptions o;
    o.members = 1;
    o.tls = EtcdTlsFiles{certs_.path("server.crt"), certs_.path("server.key"), certs_.path("ca.crt"),
                         certs_.path("etcd-client.crt"), certs_.path("etcd-client.key")};
    return o;
  }

  static Status setup_auth(EtcdCluster& etcd) {
    return etcd.enable_auth("root-secret", {{"leasehold", "lh-secret", "/leasehold/test/"},
                                            {"nobody", "nobody-secret", ""}});
  }

  // The node's etcd flags: CA, client certificate, user and password file.
  std::vector<std::string> etcd_flags(const std::string& user, const std::string& password_file,
                                      bool with_ca = true) const {
    std::vector<std::string> f = {"--etcd-cert", certs_.path("etcd-client.crt"), "--etcd-key",
                                  certs_.path("etcd-client.key"), "--etcd-user", user,
                                  "--etcd-password-file", dir_.file(password_file)};
    if (with_ca) f.insert(f.end(), {"--etcd-ca", certs_.path("ca.crt")});
    return f;
  }

  TempDir dir_{"secure-etcd"};
  TlsCerts certs_{dir_};
};

TEST_F(SecureEtcd, ClusterGrantsFailsOverAndRedirectsKeepTheScheme) {
  // Snapshots every 5 commands: the snapshot writes and etcd compactions run under auth too.
  std::vector<std::string> flags = etcd_flags("leasehold", "leasehold.pw");
  flags.insert(flags.end(), {"--snapshot-every-commands", "5"});
  auto c = LeaseholdCluster::start_with(etcd_options(), 2, flags, &setup_auth,
                                        [this](ClusterNodeProcess& n) {
                                          if (n.tls_port == 0) n.tls_port = free_port();
                                          return std::vector<std::string>{
                                              "--tls-listen", loopback(n.tls_port), "--tls-cert-file",
                                              certs_.path("server.crt"), "--tls-key-file",
                                              certs_.path("server.key"), "--tls-auth-clients", "no"};
                                        });
  ASSERT_TRUE(c);
  ASSERT_EQ(c->etcd().endpoint(0).rfind("https://", 0), 0u);
  ASSERT_GE(c->wait_primary(60s), 0) << "no primary; see " << c->stderr_of(0) << " / " << c->stderr_of(1);

  std::int64_t last = 0;
  // A lock on the current primary: a new session, LOCK.ACQUIRE, LOCK.RELEASE;
  // the token must be above every earlier one. Retried for scaled(within)
  // (a step down and a new election may be under way).
  auto grant = [&](std::chrono::milliseconds within) {
    std::string seen;
    const bool granted = eventually([&] {
      const int at = c->wait_primary(5s);
      auto conn = at < 0 ? Result<RespClient>(Status(ErrorCode::kUnavailable, "no primary"))
                         : RespClient::connect(c->node(at).port);
      if (!conn) return false;
      auto session = conn->call({"SESSION.OPEN", "30000"}, 10s);
      auto tok = session.type == resp::Type::kInteger
                     ? conn->call({"LOCK.ACQUIRE", "res", std::to_string(session.integer)}, 10s)
                     : session;
      seen = tok.debug_string();
      if (tok.type != resp::Type::kInteger) return false;
      EXPECT_GT(tok.integer, last);
      last = tok.integer;
      (void)conn->call({"LOCK.RELEASE", "res", std::to_string(session.integer), std::to_string(tok.integer)}, 10s);
      return true;
    }, within, 100ms);
    if (!granted) ADD_FAILURE() << "no grant in time; last reply " << seen;
    return granted;
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(grant(30s));

  // A change to etcd's users or roles makes the nodes' tokens stale: they
  // authenticate again and go on.
  const std::string root = "root:root-secret";
  ASSERT_TRUE(c->etcd().etcdctl({"role", "add", "bump"}, root).is_ok());
  ASSERT_TRUE(grant(30s));

  // A new password: into the file, SIGHUP (both nodes re-read it), then into
  // etcd (the user re-created: every token is refused, the nodes log in
  // with the new password).
  write_password("leasehold.pw", "lh-secret-2\n", 0600);
  for (int i = 0; i < 2; ++i) {
    c->node(i).process.signal(SIGHUP);
    const bool reloaded = eventually(
        [&] { return sh("cat " + c->stderr_of(i)).find("etcd password reloaded") != std::string::npos; }, 20s, 50ms);
    ASSERT_TRUE(reloaded) << "node " << i << " did not reload its etcd password";
  }
  ASSERT_TRUE(c->etcd().etcdctl({"user", "delete", "leasehold"}, root).is_ok());
  ASSERT_TRUE(c->etcd().etcdctl({"user", "add", "leasehold:lh-secret-2"}, root).is_ok());
  ASSERT_TRUE(c->etcd().etcdctl({"user", "grant-role", "leasehold", "leasehold"}, root).is_ok());
  ASSERT_TRUE(grant(60s));

  const int p = c->wait_primary(30s);
  ASSERT_GE(p, 0);
  const int s = 1 - p;

  // The standby redirects a plain client to the primary's plain address...
  auto standby = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(standby);
  std::string seen;
  const bool redirected = eventually([&] {
    seen = standby->call({"SESSION.OPEN", "1000"}, 5s).str;
    return seen == "REDIRECT " + loopback(c->node(p).port);
  }, 20s, 50ms);
  EXPECT_TRUE(redirected) << seen;
  // ... and a TLS client (redis-cli --tls, unchanged) to its TLS address.
  const std::string tls_reply =
      sh("redis-cli --tls --cacert " + certs_.path("ca.crt") + " -p " + std::to_string(c->node(s).tls_port) +
         " SESSION.OPEN 1000");
  EXPECT_NE(tls_reply.find("REDIRECT " + loopback(c->node(p).tls_port)), std::string::npos) << tls_reply;
  const std::string role = sh("redis-cli --tls --cacert " + certs_.path("ca.crt") + " -p " +
                              std::to_string(c->node(s).tls_port) + " ROLE");
  EXPECT_NE(role.find(loopback(c->node(p).tls_port)), std::string::npos) << role;

  // Failover: the standby takes over through the secured etcd; tokens go on increasing.
  c->node(p).process.kill9();
  const int q = c->wait_primary(60s, p);
  ASSERT_EQ(q, s) << "see " << c->stderr_of(s);
  auto next = RespClient::connect(c->node(q).port);
  ASSERT_TRUE(next);
  EXPECT_TRUE(grant(30s));
}

class SecureEtcdRefusals : public SecureEtcd {
 protected:
  void SetUp() override {
    SecureEtcd::SetUp();
    auto etcd = EtcdCluster::start(etcd_options());
    ASSERT_TRUE(etcd) << etcd.status().to_string();
    etcd_ = std::move(etcd).value();
    const Status st = setup_auth(*etcd_);
    ASSERT_TRUE(st.is_ok()) << st.to_string();
  }

  // Starts a node with `flags`; expects it to exit with `expected_exit`
  // (common/exit_codes.h) within the bound and returns what it printed on
  // stderr.
  std::string start_fails(const std::string& name, const std::vector<std::string>& flags,
                          int expected_exit = exit_code::kUsage) {
    std::vector<std::string> argv = {leasehold_binary(), "server", "--listen", loopback(free_port()),
                                     "--data-dir", dir_.file(name + ".data"), "--etcd", etcd_->endpoints(),
                                     "--cluster", "test", "--etcd-timeout-ms", "2000",
                                     "--etcd-startup-wait-ms", "3000"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    SpawnOptions opts;
    opts.stderr_path = dir_.file(name + ".stderr");
    auto p = Subprocess::spawn(argv, opts);
    EXPECT_TRUE(p) << p.status().to_string();
    if (!p) return "";
    const std::optional<int> code = p->wait(60s);
    EXPECT_TRUE(code.has_value()) << name << ": still running";
    EXPECT_EQ(code.value_or(0), expected_exit) << name;
    return read_file(opts.stderr_path);
  }

  std::string etcd_target() const { return loopback(etcd_->client_port(0)); }
  std::unique_ptr<EtcdCluster> etcd_;
};

TEST_F(SecureEtcdRefusals, EachMisconfigurationStopsTheStartWithAClearMessage) {
  const std::string wrong = start_fails("wrong-password", etcd_flags("leasehold", "wrong.pw"));
  EXPECT_NE(wrong.find("etcd authentication as user 'leasehold' failed: wrong user name or password"),
            std::string::npos)
      << wrong;
  EXPECT_NE(wrong.find(etcd_target()), std::string::npos) << wrong;

  const std::string no_ca = start_fails("no-ca", etcd_flags("leasehold", "leasehold.pw", false), exit_code::kUnavailable);
  EXPECT_NE(no_ca.find("TLS handshake failed"), std::string::npos) << no_ca;
  EXPECT_NE(no_ca.find(etcd_target()), std::string::npos) << no_ca;

  const std::string other_ca = start_fails("other-ca", [&] {
    auto f = etcd_flags("leasehold", "leasehold.pw", false);
    f.insert(f.end(), {"--etcd-ca", certs_.path("other-ca.crt")});  // a CA that did not sign etcd's certificate
    return f;
  }(), exit_code::kUnavailable);
  EXPECT_NE(other_ca.find("TLS handshake failed"), std::string::npos) << other_ca;
  EXPECT_NE(other_ca.find(etcd_target()), std::string::npos) << other_ca;

  const std::string missing_ca =
      start_fails("missing-ca", [&] {
        auto f = etcd_flags("leasehold", "leasehold.pw", false);
        f.insert(f.end(), {"--etcd-ca", dir_.file("no-such-ca.crt")});
        return f;
      }());
  EXPECT_NE(missing_ca.find("--etcd-ca: cannot read " + dir_.file("no-such-ca.crt")), std::string::npos)
      << missing_ca;

  const std::string denied = start_fails("no-permission", etcd_flags("nobody", "nobody.pw"));
  EXPECT_NE(denied.find("etcd user 'nobody' has no permission"), std::string::npos) << denied;
  EXPECT_NE(denied.find("/leasehold/test/"), std::string::npos) << denied;
  EXPECT_NE(denied.find(etcd_target()), std::string::npos) << denied;

  const std::string open = start_fails("open-password-file", etcd_flags("leasehold", "open.pw"));
  EXPECT_NE(open.find("is readable by every user"), std::string::npos) << open;

  // The right credentials do start (the refusals above were about them).
  const std::uint16_t port = free_port();
  std::vector<std::string> argv = {leasehold_binary(), "server", "--listen", loopback(port),
                                   "--data-dir", dir_.file("good.data"), "--etcd", etcd_->endpoints(),
                                   "--cluster", "test"};
  const auto good = etcd_flags("leasehold", "leasehold.pw");
  argv.insert(argv.end(), good.begin(), good.end());
  SpawnOptions opts;
  opts.stderr_path = dir_.file("good.stderr");
  auto p = Subprocess::spawn(argv, opts);
  ASSERT_TRUE(p);
  EXPECT_TRUE(wait_for_port(port, 60s)) << read_file(opts.stderr_path);
}

}  // namespace
}  // namespace leasehold::testing
