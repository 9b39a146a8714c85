// `leasehold lock -- CMD` stops everything it started: CMD runs in its own
// process group, and a lost lease (revoke, a release by another connection),
// the CLI's own SIGTERM or CMD's exit stop the whole group (SIGTERM, then
// SIGKILL after --grace) before the lock is released.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/client/cli_fixture.h"
#include "testkit/resp_client.h"

namespace leasehold::testing {
namespace {

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }
bool group_gone(pid_t pgid) { return ::kill(-pgid, 0) != 0 && errno == ESRCH; }

// The pids a command body wrote: "<its own pid> <its background child's pid>".
// Kills both groups at the end of the test if anything is left (a failing
// test must not leave `sleep 777` behind).
struct CommandPids {
  pid_t shell = 0;
  pid_t background = 0;
  ~CommandPids() {
    if (shell > 0 && !group_gone(shell)) ::kill(-shell, SIGKILL);
    if (background > 0 && !process_gone(background)) ::kill(background, SIGKILL);
  }
};

// A body that starts a grandchild in the background, records the pids, then
// waits in the foreground (`sh -c 'sleep 777 & sleep 778; wait'`).
std::string tree_body(const std::string& pid_file, const std::string& prefix = "") {
  return prefix + "sleep 777 & echo \"$$ $!\" > " + pid_file + ".tmp; mv " + pid_file + ".tmp " +
         pid_file + "; sleep 778; wait";
}

class CliStopTest : public CliTest {
 protected:
  // Waits for the pid file of tree_body and reads it.
  bool read_pids(const std::string& pid_file, CommandPids& pids) {
    if (!wait_for_text(pid_file, "\n")) return false;
    std::istringstream in(read_file(pid_file));
    in >> pids.shell >> pids.background;
    return pids.shell > 0 && pids.background > 0;
  }
};

TEST_F(CliStopTest, RevokeStopsEveryProcessOfTheCommand) {
  const std::string pid_file = dir_.file("tree.pids");
  Subprocess a = spawn("tree", {"lock", "--ttl", "20s", "--grace", "1s", "tree", "--", "sh", "-c",
                                tree_body(pid_file)});
  CommandPids pids;
  ASSERT_TRUE(read_pids(pid_file, pids)) << read_file(dir_.file("tree.err"));
  EXPECT_EQ(::getpgid(pids.shell), pids.shell) << "the command must lead its own process group";
  EXPECT_EQ(::getpgid(pids.background), pids.shell);
  ASSERT_EQ(run("revoke", {"revoke", "tree"}).code, 0);
  EXPECT_EQ(a.wait(10s), 76) << read_file(dir_.file("tree.err"));
  EXPECT_TRUE(eventually([&] { return group_gone(pids.shell); }, 5s)) << "processes of the group are left";
  EXPECT_TRUE(eventually([&] { return process_gone(pids.background); }, 5s)) << "the grandchild is left";
}

TEST_F(CliStopTest, AGroupIgnoringTermIsKilledAfterTheGrace) {
  const std::string pid_file = dir_.file("stubborn.pids");
  Subprocess a = spawn("stubborn", {"lock", "--ttl", "20s", "--grace", "500ms", "stubborn", "--", "sh",
                                    "-c", tree_body(pid_file, "trap '' TERM; ")});
  CommandPids pids;
  ASSERT_TRUE(read_pids(pid_file, pids)) << read_file(dir_.file("stubborn.err"));
  const auto t0 = Clock::now();
  ASSERT_EQ(run("revoke", {"revoke", "stubborn"}).code, 0);
  EXPECT_EQ(a.wait(10s), 76);
  EXPECT_GE(Clock::now() - t0, 500ms) << "SIGKILL before the grace period";
  // The CLI returns only when the group is gone (it reaped the grandchild).
  EXPECT_TRUE(group_gone(pids.shell));
  EXPECT_TRUE(process_gone(pids.background));
}

TEST_F(CliStopTest, SigtermToTheCliStopsTheGroupThenReleases) {
  const std::string pid_file = dir_.file("term.pids");
  Subprocess a = spawn("term", {"lock", "--ttl", "20s", "--grace", "5s", "term", "--", "sh", "-c",
                                tree_body(pid_file)});
  CommandPids pids;
  ASSERT_TRUE(read_pids(pid_file, pids)) << read_file(dir_.file("term.err"));
  a.signal(SIGTERM);  // the CLI only, not its group
  EXPECT_EQ(a.wait(10s), 128 + SIGTERM) << read_file(dir_.file("term.err"));
  EXPECT_TRUE(group_gone(pids.shell));
  EXPECT_TRUE(process_gone(pids.background));
  // The lock was released (not left to expire after the 20 s TTL).
  EXPECT_EQ(run("again", {"lock", "--wait", "0s", "term", "--", "true"}).code, 0);
}

TEST_F(CliStopTest, ProcessesLeftBehindAreStoppedBeforeTheRelease) {
  const std::string pid_file = dir_.file("left.pids");
  const std::string body = "sleep 777 & echo \"$$ $!\" > " + pid_file + ".tmp; mv " + pid_file + ".tmp " +
                           pid_file + "; exit 3";
  CliRun r = run("left", {"lock", "--grace", "5s", "left", "--", "sh", "-c", body});
  EXPECT_EQ(r.code, 3) << r.err;
  CommandPids pids;
  ASSERT_TRUE(read_pids(pid_file, pids));
  EXPECT_TRUE(process_gone(pids.background)) << "a background process outlived the lock";
  EXPECT_NE(r.err.find("stopping the processes it left"), std::string::npos) << r.err;
}

// LOCK.RELEASE with the holder's session and token, sent by another
// connection: the holder is told (`lost` push, released-by-other), stops its
// command and exits 76 at once, while a second `leasehold lock` takes over.
TEST_F(CliStopTest, AReleaseByAnotherConnectionStopsTheHolder) {
  const std::string marker = dir_.file("mutex.marker");
  const std::string body = "trap 'echo term >> " + marker + "; exit 0' TERM; echo started >> " + marker +
                           "; while true; do sleep 0.05; done";
  Subprocess a = spawn("holder", {"lock", "--ttl", "20s", "mutex", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  const std::string session = holder_session("mutex");
  const std::string token = holder_field("mutex", "token");
  ASSERT_FALSE(session.empty());
  ASSERT_FALSE(token.empty());
  Subprocess b = spawn("second", {"lock", "--wait", "20s", "mutex", "--", "sh", "-c", "echo second >> " + marker});

  auto raw = RespClient::connect(server_.port());
  ASSERT_TRUE(raw.is_ok());
  const auto released_at = Clock::now();
  EXPECT_EQ(raw->call({"LOCK.RELEASE", "mutex", session, token}), resp::Value::simple("OK"));
  EXPECT_EQ(a.wait(10s), 76) << read_file(dir_.file("holder.err"));
  const auto noticed = Clock::now() - released_at;
  EXPECT_LT(noticed, 5s) << "long after the release (the TTL is 20 s)";
  EXPECT_TRUE(wait_for_text(marker, "term", 1s));
  const std::string err = read_file(dir_.file("holder.err"));
  EXPECT_NE(err.find("lost lock 'mutex'"), std::string::npos) << err;
  EXPECT_NE(err.find("released-by-other"), std::string::npos) << err;
  EXPECT_EQ(b.wait(10s), 0) << read_file(dir_.file("second.err"));
  EXPECT_TRUE(wait_for_text(marker, "second", 1s));
}

// --max-hold: the lock is taken with LEASE; at the end of the hold CMD's
// group is stopped (SIGTERM first) and the CLI exits 79 with a clear message.
TEST_F(CliStopTest, MaxHoldStopsTheCommandAtTheEndOfTheHold) {
  const std::string marker = dir_.file("hold.marker");
  const std::string body = "trap 'echo term >> " + marker + "; exit 0' TERM; echo started >> " + marker +
                           "; while true; do sleep 0.05; done";
  Subprocess a = spawn("held", {"lock", "--ttl", "20s", "--max-hold", "700ms", "hold", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  EXPECT_EQ(a.wait(20s), 79) << read_file(dir_.file("held.err"));
  EXPECT_TRUE(wait_for_text(marker, "term", 1s));
  const std::string err = read_file(dir_.file("held.err"));
  EXPECT_NE(err.find("the max hold (700ms) of lock 'hold' ended"), std::string::npos) << err;
  CliRun bad = run("bad-hold", {"lock", "--max-hold", "0", "x", "--", "true"});
  EXPECT_EQ(bad.code, 64) << bad.err;
  EXPECT_NE(bad.err.find("--max-hold"), std::string::npos) << bad.err;
}

// `leasehold transfer NAME --to SESSION` looks the holder up, moves the lock
// (a higher token) and the old holder's `leasehold lock` stops its command.
TEST_F(CliStopTest, TransferMovesTheLockAndStopsTheOldHolder) {
  const std::string marker = dir_.file("moved.marker");
  const std::string body = "trap 'echo term >> " + marker + "; exit 0' TERM; echo started >> " + marker +
                           "; while true; do sleep 0.05; done";
  Subprocess a = spawn("old", {"lock", "--ttl", "20s", "moved", "--", "sh", "-c", body});
  ASSERT_TRUE(wait_for_text(marker, "started"));
  const std::string old_token = holder_field("moved", "token");
  ASSERT_FALSE(old_token.empty());
  auto raw = RespClient::connect(server_.port());
  ASSERT_TRUE(raw.is_ok());
  const resp::Value target = raw->call({"SESSION.OPEN", "30000"});
  ASSERT_EQ(target.type, resp::Type::kInteger);
  const std::string to = std::to_string(target.integer);
  CliRun dead = run("transfer-dead", {"transfer", "moved", "--to", "99999999"});
  EXPECT_EQ(dead.code, 1) << dead.err;
  CliRun moved = run("transfer", {"transfer", "moved", "--to", to});
  ASSERT_EQ(moved.code, 0) << moved.err;
  EXPECT_NE(moved.out.find("to session " + to), std::string::npos) << moved.out;
  EXPECT_EQ(holder_session("moved"), to);
  // The new token, from the CLI's line ("... to session S, token N").
  const auto at = moved.out.rfind("token ");
  ASSERT_NE(at, std::string::npos) << moved.out;
  EXPECT_GT(std::stoull(moved.out.substr(at + 6)), std::stoull(old_token)) << moved.out;
  EXPECT_EQ(a.wait(10s), 76) << read_file(dir_.file("old.err"));
  EXPECT_NE(read_file(dir_.file("old.err")).find("transferred"), std::string::npos) << read_file(dir_.file("old.err"));
}

// Interactive use: on a terminal (a pty from `script`), CMD's group becomes
// the foreground group, so CMD can read the terminal (a background group
// reading it would be stopped by SIGTTIN and hang).
TEST_F(CliStopTest, AnInteractiveCommandOwnsTheTerminal) {
  const std::string runner = dir_.file("tty.sh");
  {
    std::ofstream out(runner);
    out << "echo hello | script -qec \"" << leasehold_binary()
        << " lock tty -- sh -c 'read x; echo got:\\$x; exit 4'\" /dev/null\n";
  }
  auto p = Subprocess::spawn({"sh", runner}, opts("tty"));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->wait(30s), 4) << read_file(dir_.file("tty.out")) << read_file(dir_.file("tty.err"));
  EXPECT_NE(read_file(dir_.file("tty.out")).find("got:hello"), std::string::npos);
}

}  // namespace
}  // namespace leasehold::testing
