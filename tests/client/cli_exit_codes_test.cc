// The exit-code table of docs/client.md ("Exit codes"), case by case against
// real servers: a plain one, one with a users file (NOAUTH, WRONGPASS,
// NOPERM) and one with a TLS port (a plain endpoint on it). Each row runs the
// real `leasehold` binary and checks its exit code and the words of its one
// stderr line. Also: `lock --progress` prints who holds the lock in a log.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/client/cli_fixture.h"
#include "tests/server/security_fixture.h"
#include "tests/server/tls_certs.h"

namespace leasehold::testing {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

struct Row {
  std::string tag;
  std::vector<std::string> args;
  std::string endpoints;  // "" = the plain server
  Env env;
  int code;
  std::string says;  // in stderr
};

class CliExitCodes : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_text(dir_.file("users.acl"), standard_users());
    ASSERT_TRUE(secure_.start(dir_.file("data-secure"), {"--users-file", dir_.file("users.acl")}));
    write_text(dir_.file("alice.pw"), "alicepw\n");
  }
  // A server with a TLS port (certificates made now by `openssl`,
  // tests/server/tls_certs.h); its "host:port" of the TLS port.
  std::string start_tls_server() {
    const TlsCerts certs(dir_);
    EXPECT_TRUE(certs.ok());
    const std::uint16_t port = free_port();
    EXPECT_TRUE(tls_.start(dir_.file("data-tls"), {"--tls-listen", loopback(port), "--tls-cert-file", certs.path("server.crt"),
                                                   "--tls-key-file", certs.path("server.key"), "--tls-auth-clients", "no"}));
    EXPECT_TRUE(wait_for_port(port, 10s));
    return loopback(port);
  }
  void check(const Row& row) {
    SpawnOptions o = opts(row.tag, row.endpoints);
    for (const auto& e : row.env) o.env.push_back(e);
    std::vector<std::string> argv = row.args;
    argv.insert(argv.begin(), leasehold_binary());
    auto p = Subprocess::spawn(argv, o);
    ASSERT_TRUE(p.is_ok()) << p.status().to_string();
    const int code = p->wait(20s).value_or(-1);
    const std::string err = read_file(dir_.file(row.tag + ".err"));
    EXPECT_EQ(code, row.code) << row.tag << ": " << err;
    EXPECT_EQ(lines_of(err).size(), 1u) << row.tag << ": " << err;
    EXPECT_NE(err.find(row.says), std::string::npos) << row.tag << ": " << err;
  }

  ServerProcess secure_;
  ServerProcess tls_;
};

TEST_F(CliExitCodes, EachCaseExitsAsTheTableSays) {
  const std::string secure = secure_.endpoint();
  const std::string nobody = loopback(free_port());  // nothing listens there
  const Env alice = {{"LEASEHOLD_USER", "alice"}, {"LEASEHOLD_PASSWORD", "alicepw"}};
  const std::vector<Row> rows = {
      // The server refused (1): no such lock, no history, no session; NOPERM.
      {"info-nosuch", {"info", "NOSUCH"}, "", {}, 1, "lock 'NOSUCH' is not held and has no waiters"},
      {"history-nosuch", {"history", "NOSUCH"}, "", {}, 1, "no history for lock 'NOSUCH'"},
      {"revoke-nosuch", {"revoke", "NOSUCH"}, "", {}, 1, "lock 'NOSUCH' is not held"},
      {"kill-nosuch", {"session", "kill", "999999"}, "", {}, 1, "no live session 999999"},
      {"noperm", {"info", "other/x"}, secure, alice, 1, "NOPERM"},
      {"noperm-lock", {"lock", "--wait", "0", "other/x", "--", "true"}, secure, alice, 1, "NOPERM"},
      // Usage (64): flags, before anything is sent (nothing listens at
      // `nobody`: a request would exit 69).
      {"ttl-zero", {"lock", "--ttl", "0", "x", "--", "true"}, nobody, {}, 64, "--ttl: '0' is out of range"},
      {"ttl-huge", {"lock", "--ttl", "1000h", "x", "--", "true"}, nobody, {}, 64,
       "--ttl: '1000h' is out of range (from 1ms to 596h31m"},
      {"ttl-unit", {"lock", "--ttl", "5", "x", "--", "true"}, nobody, {}, 64, "--ttl: bad duration '5'"},
      // Usage (64): credentials.
      {"noauth", {"info", "locks/x"}, secure, {}, 64,
       "the server requires authentication: pass --password-file or set LEASEHOLD_PASSWORD"},
      {"noauth-lock", {"lock", "locks/x", "--", "true"}, secure, {}, 64, "the server requires authentication"},
      {"wrongpass", {"info", "locks/x"}, secure, {{"LEASEHOLD_USER", "alice"}, {"LEASEHOLD_PASSWORD", "nope"}}, 64,
       "WRONGPASS"},
      // Unavailable (69).
      {"nobody", {"info", "x"}, nobody, {}, 69, "no leasehold server reachable"},
  };
  for (const Row& row : rows) check(row);
  // Allowed: alice on her own names, with the password from a file.
  CliRun ok = run("alice-ok", {"lock", "--user", "alice", "--password-file", dir_.file("alice.pw"), "locks/x", "--",
                               "true"},
                  secure);
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// A plain endpoint on a TLS port: said at once (a usage error, 64), not
// retried until --timeout as a lost connection.
TEST_F(CliExitCodes, APlainEndpointOnATlsPortSaysUseTls) {
  const std::string tls_port = start_tls_server();
  // A generous --timeout: retrying to it would outlast check()'s 20 s bound.
  check({"tls-plain", {"info", "x", "--timeout", "60s"}, tls_port, {}, 64,
         tls_port + " speaks TLS: use the endpoint tls://" + tls_port});
  check({"tls-plain-lock", {"lock", "--timeout", "60s", "x", "--", "true"}, tls_port, {}, 64, "speaks TLS"});
}

// Not on a terminal (cron, CI): a line every --progress-interval names the
// holder while `lock` waits; --no-progress is quiet.
TEST_F(CliExitCodes, ProgressLinesInALogNameTheHolder) {
  const std::string marker = dir_.file("holder.marker");
  Subprocess holder = spawn("holder", {"lock", "--ttl", "20s", "cron", "--", "sh", "-c",
                                       "echo held >> " + marker + "; exec sleep 120"});
  ASSERT_TRUE(wait_for_text(marker, "held", 20s)) << read_file(dir_.file("holder.err"));
  const std::string session = holder_session("cron");
  ASSERT_FALSE(session.empty());
  Subprocess waiter = spawn("waiter", {"lock", "--wait", "60s", "--progress-interval", "100ms", "cron", "--", "true"});
  const std::string err = dir_.file("waiter.err");
  const std::string line = "leasehold lock: waiting for lock 'cron' (";
  ASSERT_TRUE(wait_for_text(err, "): held by session " + session + " (owner 'leasehold lock pid", 20s))
      << read_file(err);
  // Whole lines, again and again (not one redrawn line). The text up to
  // its last newline: a line may be in the middle of being written.
  const auto whole_lines = [&] {
    const std::string text = read_file(err);
    return lines_of(text.substr(0, text.rfind('\n') + 1));
  };
  ASSERT_TRUE(eventually([&] { return whole_lines().size() >= 2; }, 20s)) << read_file(err);
  for (const std::string& l : whole_lines()) EXPECT_EQ(l.rfind(line, 0), 0u) << l;
  EXPECT_EQ(read_file(err).find('\r'), std::string::npos);
  // `lock` closes its session's connection when killed (its close grace is
  // 0 by default): the server ends the session at once and the waiter runs.
  holder.kill9();
  EXPECT_EQ(waiter.wait(30s), std::optional<int>(0)) << read_file(err);

  Subprocess holder2 = spawn("holder2", {"lock", "--ttl", "20s", "cron", "--", "sh", "-c",
                                         "echo held >> " + marker + "2; exec sleep 120"});
  ASSERT_TRUE(wait_for_text(marker + "2", "held", 20s));
  // The command's own --wait bounds this run; quiet all along it.
  CliRun quiet = run("quiet", {"lock", "--no-progress", "--progress-interval", "10ms", "--wait", "1s", "cron", "--",
                               "true"});
  EXPECT_EQ(quiet.code, 75) << quiet.err;
  EXPECT_EQ(quiet.err.find("waiting for lock"), std::string::npos) << quiet.err;
  EXPECT_EQ(lines_of(quiet.err).size(), 1u) << quiet.err;
  holder2.kill9();
}

}  // namespace
}  // namespace leasehold::testing
