// The `leasehold` client commands as real processes against a real server:
// mutual exclusion of `lock -- CMD`, loss -> SIGTERM, exit codes, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/client/cli_fixture.h"
#include "testkit/resp_client.h"

namespace leasehold::testing {
namespace {

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Each child logs "start <ns> <token>" and "end <ns> <token>"; the runs must
// not overlap and tokens must increase in run order.
TEST_F(CliTest, LockRunsCommandsStrictlyOneAfterTheOther) {
  const std::string log = dir_.file("runs.log");
  const std::string body = "echo \"start $(date +%s%N) $LEASEHOLD_TOKEN\" >> " + log +
                           "; sleep 0.2; echo \"end $(date +%s%N) $LEASEHOLD_TOKEN\" >> " + log;
  std::vector<Subprocess> procs;
  for (int i = 0; i < 4; ++i) {
    procs.push_back(spawn("lock" + std::to_string(i),
                          {"lock", "--ttl", "2s", "--wait", "20s", "shared-name", "--", "sh", "-c", body}));
  }
  for (auto& p : procs) EXPECT_EQ(p.wait(30s), 0);
  const auto lines = lines_of(read_file(log));
  ASSERT_EQ(lines.size(), 8u) << read_file(log);
  std::int64_t last_end = 0;
  std::uint64_t last_token = 0;
  for (std::size_t i = 0; i < lines.size(); i += 2) {
    std::istringstream start(lines[i]), end(lines[i + 1]);
    std::string w1, w2;
    std::int64_t t1 = 0, t2 = 0;
    std::uint64_t k1 = 0, k2 = 0;
    start >> w1 >> t1 >> k1;
    end >> w2 >> t2 >> k2;
    EXPECT_EQ(w1, "start");
    EXPECT_EQ(w2, "end") << "runs overlap:\n" << read_file(log);
    EXPECT_EQ(k1, k2);
    EXPECT_GE(t1, last_end);
    EXPECT_GT(k1, last_token);
    last_end = t2;
    last_token = k1;
  }
}

TEST_F(CliTest, KilledHolderFreesTheLockAfterItsTtlNotBefore) {
  const std::string log = dir_.file("kill9.log");
  const std::string holder_body = "trap 'echo term >> " + log + "; exit 0' TERM; echo \"start $LEASEHOLD_TOKEN\" >> " + log +
                                  "; while true; do sleep 0.05; done";
  // Without ONCLOSE only the TTL frees the lock (the default, grace 0, is
  // KilledHolderWithCloseGraceFreesTheLockWellBeforeItsTtl below).
  Subprocess a = spawn("holder", {"lock", "--ttl", "1500ms", "--no-close-grace", "k9", "--", "sh", "-c", holder_body});
  ASSERT_TRUE(wait_for_text(log, "start"));
  ASSERT_TRUE(eventually([&] { return !holder_session("k9").empty(); }, 10s)) << "the server shows no holder";
  // The holder's session's remaining TTL as the server counts it, read
  // before the kill: the server expires it no earlier than that after
  // `asked_at` (a keepalive between the read and the kill only adds time).
  const std::string session = holder_session("k9");
  ASSERT_FALSE(session.empty());
  auto raw = RespClient::connect(server_.port());
  ASSERT_TRUE(raw) << raw.status().to_string();
  ASSERT_FALSE(raw->call({"HELLO", "3"}).is_error());  // replies as maps (Value::find)
  const std::int64_t asked_at = wall_ns();
  const resp::Value sessions = raw->call({"SESSION.LIST"});
  std::int64_t remaining_ms = -1;
  for (const resp::Value& entry : sessions.elements) {
    const resp::Value* id = entry.find("id");
    const resp::Value* remaining = entry.find("remaining_ms");
    if (id && remaining && std::to_string(id->integer) == session) remaining_ms = remaining->integer;
  }
  ASSERT_GT(remaining_ms, 0) << sessions.debug_string();
  const std::int64_t killed_at = wall_ns();
  a.signal(SIGKILL);
  EXPECT_TRUE(a.wait(5s).has_value());
  CliRun b = run("taker", {"lock", "--wait", "10s", "k9", "--", "sh", "-c", "date +%s%N"});
  ASSERT_EQ(b.code, 0) << b.err;
  const std::int64_t got_at = std::stoll(b.out);
  const auto waited = std::chrono::nanoseconds(got_at - killed_at);
  std::cout << "kill -9 to next grant: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
            << " ms (TTL 1500 ms)\n";
  // Server-side expiry is at least TTL after the last keepalive the server
  // saw: no grant before the remaining time read above has passed.
  EXPECT_GE(std::chrono::nanoseconds(got_at - asked_at), std::chrono::milliseconds(remaining_ms))
      << "lock granted before the holder's lease ran out";
  EXPECT_LE(waited, 1500ms + scaled(3s));
  // The orphaned command was told to stop (parent-death signal).
  EXPECT_TRUE(wait_for_text(log, "term", 3s)) << read_file(log);
}

// The default close grace 0 (SESSION.OPEN ... ONCLOSE 0): kill -9 of the
// CLI closes its connections, and the server frees the lock at once, long
// before the 30 s TTL.
TEST_F(CliTest, KilledHolderWithCloseGraceFreesTheLockWellBeforeItsTtl) {
  const std::string log = dir_.file("onclose.log");
  Subprocess a = spawn("holder", {"lock", "--ttl", "30s", "oc", "--", "sh", "-c", "echo start >> " + log + "; exec sleep 60"});
  ASSERT_TRUE(wait_for_text(log, "start"));
  ASSERT_TRUE(eventually([&] { return !holder_session("oc").empty(); }, 10s)) << "the server shows no holder";
  const std::int64_t killed_at = wall_ns();
  a.signal(SIGKILL);
  EXPECT_TRUE(a.wait(5s).has_value());
  CliRun b = run("taker", {"lock", "--wait", "15s", "oc", "--", "sh", "-c", "date +%s%N"});
  ASSERT_EQ(b.code, 0) << b.err;
  const auto waited = std::chrono::nanoseconds(std::stoll(b.out) - killed_at);
  std::cout << "kill -9 to next grant with close grace 0: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms (TTL 30 s)\n";
  EXPECT_LT(waited, 20s) << "freed by the close, not the 30 s TTL";
}

// SIGSTOP is silence, not a close: a holder with close grace 0 stopped for
// less than its TTL keeps its connections open, so the server keeps its
// lock, and it carries on after SIGCONT.
TEST_F(CliTest, StoppedHolderWithCloseGraceKeepsTheLockForLessThanItsTtl) {
  const std::string log = dir_.file("stopped.log");
  Subprocess a = spawn("holder", {"lock", "--ttl", "6s", "--close-grace", "0", "st", "--", "sh", "-c",
                                  "echo start >> " + log + "; exec sleep 60"});
  ASSERT_TRUE(wait_for_text(log, "start"));
  ASSERT_TRUE(eventually([&] { return !holder_session("st").empty(); }, 10s)) << "the server shows no holder";
  const std::string session = holder_session("st");
  a.signal(SIGSTOP);
  // deliberate: stopped while another `lock` waits 2 s, under the 6 s TTL.
  CliRun b = run("taker", {"lock", "--wait", "2s", "st", "--", "true"});
  EXPECT_EQ(b.code, 75) << "the lock was granted while its holder was stopped: " << b.err;
  a.signal(SIGCONT);
  EXPECT_EQ(holder_session("st"), session);
  EXPECT_TRUE(a.running()) << "the holder stopped after SIGCONT";
  a.signal(SIGKILL);
  EXPECT_TRUE(a.wait(5s).has_value());
}

TEST_F(CliTest, SessionKillStopsTheCommandAndExits76) {
  const std::string marker = dir_.file("killed.marker");
  const std::string body = "trap 'echo term >> " + marker + "; exit 0' TERM; echo started >> " + marker +
                           "; while true; do sleep 0.05; done";
  Subprocess a = spawn("victim", {"lock", "--ttl", "20s", "sk", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  const std::string session = holder_session("sk");
  ASSERT_FALSE(session.empty());
  CliRun k = run("kill", {"session", "kill", session});
  EXPECT_EQ(k.code, 0) << k.err;
  EXPECT_EQ(a.wait(5s), 76);  // long before the 20 s TTL
  EXPECT_TRUE(wait_for_text(marker, "term", 1s));
  const auto err = read_file(dir_.file("victim.err"));
  EXPECT_NE(err.find("lost lock 'sk'"), std::string::npos) << err;
}

TEST_F(CliTest, RevokeStopsTheCommandAndExits76) {
  const std::string marker = dir_.file("revoked.marker");
  const std::string body = "trap 'echo term >> " + marker + "; exit 0' TERM; echo started >> " + marker +
                           "; while true; do sleep 0.05; done";
  Subprocess a = spawn("victim", {"lock", "--ttl", "20s", "rv", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  CliRun r = run("revoke", {"revoke", "rv"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(a.wait(5s), 76);
  EXPECT_TRUE(wait_for_text(marker, "term", 1s));
  CliRun again = run("revoke2", {"revoke", "rv"});
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(lines_of(again.err).size(), 1u) << again.err;
}

// With the server frozen no keepalive is acknowledged: at the safe deadline
// the command is stopped, before the server could have freed the lock.
TEST_F(CliTest, FrozenServerStopsTheCommandAtTheSafeDeadline) {
  const std::string marker = dir_.file("frozen.marker");
  const std::string body = "trap 'echo term >> " + marker + "; exit 0' TERM; echo started >> " + marker +
                           "; while true; do sleep 0.05; done";
  Subprocess a = spawn("frozen", {"lock", "--ttl", "1s", "fz", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  server_.pause();
  const auto t0 = Clock::now();
  EXPECT_TRUE(wait_for_text(marker, "term", 5s));
  const auto stopped_after = Clock::now() - t0;
  // At most one TTL after the last acknowledged keepalive (plus polling).
  EXPECT_LE(stopped_after, 1s + scaled(1s));
  std::cout << "frozen server: command stopped after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(stopped_after).count()
            << " ms (TTL 1000 ms)\n";
  const auto code = a.wait(5s);
  const auto exited_after = Clock::now() - t0;
  server_.resume();
  EXPECT_EQ(code, 76);
  EXPECT_LE(exited_after, scaled(3s));  // one short SESSION.CLOSE attempt at most
  const auto err = read_file(dir_.file("frozen.err"));
  EXPECT_NE(err.find("safe deadline"), std::string::npos) << err;
}

TEST_F(CliTest, ACommandIgnoringTermIsKilledAfterTheGrace) {
  const std::string marker = dir_.file("stubborn.marker");
  const std::string body = "trap '' TERM; echo started >> " + marker + "; exec sleep 30";
  Subprocess a = spawn("stubborn", {"lock", "--ttl", "20s", "--grace", "500ms", "gr", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  const auto t0 = Clock::now();
  ASSERT_EQ(run("revoke", {"revoke", "gr"}).code, 0);
  EXPECT_EQ(a.wait(10s), 76);
  const auto took = Clock::now() - t0;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, scaled(3s));
}

TEST_F(CliTest, NotAcquiredExits75) {
  const std::string marker = dir_.file("busy.marker");
  Subprocess a = spawn("holder", {"lock", "busy", "--", "sh", "-c", "echo started >> " + marker + "; exec sleep 60"});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  CliRun waited = run("waiter", {"lock", "--wait", "300ms", "busy", "--", "true"});
  EXPECT_EQ(waited.code, 75);
  EXPECT_EQ(lines_of(waited.err).size(), 1u) << waited.err;
  EXPECT_NE(waited.err.find("not acquired"), std::string::npos);
  CliRun tried = run("trier", {"lock", "--wait", "0s", "busy", "--", "true"});
  EXPECT_EQ(tried.code, 75);
  // Shared and semaphore flags reach the server: a shared try fails too.
  EXPECT_EQ(run("shared", {"lock", "--wait", "0s", "--shared", "busy", "--", "true"}).code, 75);
}

TEST_F(CliTest, ExitStatusAndEnvironmentOfTheCommand) {
  const std::string env = dir_.file("env.txt");
  CliRun r = run("env", {"lock", "envlock", "--", "sh", "-c",
                      "echo \"$LEASEHOLD_LOCK $LEASEHOLD_TOKEN $LEASEHOLD_ENDPOINT\" > " + env + "; exit 7"});
  EXPECT_EQ(r.code, 7) << r.err;
  std::istringstream in(read_file(env));
  std::string lock, endpoint;
  std::uint64_t token = 0;
  in >> lock >> token >> endpoint;
  EXPECT_EQ(lock, "envlock");
  EXPECT_GT(token, 0u);
  EXPECT_EQ(endpoint, server_.endpoint());
  EXPECT_EQ(run("missing", {"lock", "m", "--", "/nonexistent/cmd"}).code, 127);
  EXPECT_EQ(run("signalled", {"lock", "s", "--", "sh", "-c", "kill -KILL $$"}).code, 128 + SIGKILL);
  // The lock was released each time: it can be tried at once.
  EXPECT_EQ(run("after", {"lock", "--wait", "0s", "envlock", "--", "true"}).code, 0);
}

TEST_F(CliTest, ErrorsAreOneLineAndNonZero) {
  const std::string down = loopback(free_port());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"status"}, {"locks"}, {"info", "x"}, {"revoke", "x"}, {"session", "list"},
           {"lock", "x", "--", "true"}}) {
    auto with_timeout = args;
    with_timeout.insert(with_timeout.begin() + (args[0] == "session" ? 2 : 1), {"--timeout", "300ms"});
    const auto t0 = Clock::now();
    CliRun r = run("down-" + args[0], with_timeout, down);
    EXPECT_LT(Clock::now() - t0, scaled(3s));
    EXPECT_EQ(r.code, 69) << args[0] << ": " << r.err;
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("no leasehold server reachable"), std::string::npos) << r.err;
  }
  CliRun bad_ttl = run("badttl", {"lock", "--ttl", "5", "x", "--", "true"});
  EXPECT_EQ(bad_ttl.code, 64);
  EXPECT_EQ(lines_of(bad_ttl.err).size(), 1u) << bad_ttl.err;
  EXPECT_NE(bad_ttl.err.find("bad duration"), std::string::npos);
  CliRun bad_ep = run("badep", {"status", "--endpoints", "nohostport"});
  EXPECT_EQ(bad_ep.code, 64);
  EXPECT_NE(bad_ep.err.find("bad endpoint"), std::string::npos);
  CliRun unknown_flag = run("flag", {"locks", "--bogus"});
  EXPECT_NE(unknown_flag.code, 0);
  EXPECT_NE(unknown_flag.err.find("--bogus"), std::string::npos);
  CliRun no_cmd = run("nocmd", {"lock", "x"});
  EXPECT_NE(no_cmd.code, 0);
  CliRun unknown_lock = run("unknown", {"info", "no-such-lock"});
  EXPECT_EQ(unknown_lock.code, 1);
  EXPECT_EQ(lines_of(unknown_lock.err).size(), 1u);
  EXPECT_NE(unknown_lock.err.find("no-such-lock"), std::string::npos);
  CliRun no_session = run("nosession", {"session", "kill", "987654"});
  EXPECT_EQ(no_session.code, 1);
  EXPECT_EQ(lines_of(no_session.err).size(), 1u) << no_session.err;
}

TEST_F(CliTest, ReadCommandsPrintTextAndJson) {
  const std::string marker = dir_.file("json.marker");
  // Held for longer than the (slow, loaded) reads below take; `exec` so that
  // the parent-death signal reaches the sleep when the test kills the CLI.
  Subprocess a = spawn("holder", {"lock", "--ttl", "5s", "jobs/one", "--", "sh", "-c",
                                  "echo started >> " + marker + "; exec sleep 120"});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  CliRun status = run("status", {"status", "--json"});
  EXPECT_EQ(status.code, 0);
  EXPECT_NE(status.out.find("\"role\":\"primary\""), std::string::npos) << status.out;
  CliRun status_text = run("status-text", {"status"});
  EXPECT_NE(status_text.out.find("role: primary"), std::string::npos) << status_text.out;
  CliRun locks = run("locks", {"locks", "jobs/", "--json"});
  EXPECT_EQ(locks.code, 0);
  EXPECT_NE(locks.out.find("\"name\":\"jobs/one\""), std::string::npos) << locks.out;
  CliRun table = run("table", {"locks"});
  EXPECT_NE(table.out.find("HELD-FOR"), std::string::npos);
  EXPECT_NE(table.out.find("jobs/one"), std::string::npos);
  CliRun none = run("none", {"locks", "other/", "--json"});
  EXPECT_EQ(none.out, "[]\n");
  CliRun info = run("info", {"info", "jobs/one"});
  EXPECT_NE(info.out.find("mode:       exclusive"), std::string::npos) << info.out;
  CliRun sessions = run("sessions", {"session", "list", "--json"});
  EXPECT_NE(sessions.out.find("\"owner\":\"leasehold lock pid"), std::string::npos) << sessions.out;
}

// docs/client.md shows client/examples/quickstart.cc verbatim, and it runs.
TEST_F(CliTest, QuickstartExampleRunsAndIsTheDocumentedOne) {
#ifdef LEASEHOLD_SOURCE_DIR
  const std::string source_dir = LEASEHOLD_SOURCE_DIR;  // set by leasehold_test_support
#else
  const std::string source_dir = std::getenv("LEASEHOLD_SOURCE_DIR") ? std::getenv("LEASEHOLD_SOURCE_DIR") : ".";
#endif
  const std::string example = read_file(source_dir + "/client/examples/quickstart.cc");
  ASSERT_FALSE(example.empty());
  EXPECT_NE(read_file(source_dir + "/docs/client.md").find(example), std::string::npos)
      << "docs/client.md must contain client/examples/quickstart.cc verbatim";
  auto p = Subprocess::spawn({build_dir() + "/leasehold_client_quickstart", server_.endpoint()},
                             opts("quickstart"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->wait(20s), 0) << read_file(dir_.file("quickstart.err"));
  EXPECT_NE(read_file(dir_.file("quickstart.out")).find("holding reports/daily with token"),
            std::string::npos);
}

}  // namespace
}  // namespace leasehold::testing
