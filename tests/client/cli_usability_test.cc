// What a new user trips over, against the real `leasehold` binary and a real
// server: plain usage messages and one exit-code scheme (common/exit_codes.h),
// JSON that survives binary lock names, who holds a lock while `lock` waits
// and when it gives up, long holds (`locks --older-than`), and the server's
// start errors (data dir in use, address in use), each said once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tests/client/cli_fixture.h"

namespace leasehold::testing {
namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class CliUsability : public CliTest {
 protected:
  // `leasehold lock --ttl 20s NAME -- sh -c 'echo held >> M; exec sleep 120'`,
  // returned once the command runs (the lock is held).
  Subprocess hold(const std::string& tag, const std::string& name) {
    const std::string marker = dir_.file(tag + ".marker");
    Subprocess p = spawn(tag, {"lock", "--ttl", "20s", name, "--", "sh", "-c",
                               "echo held >> " + marker + "; exec sleep 120"});
    EXPECT_TRUE(wait_for_text(marker, "held", 20s)) << read_file(dir_.file(tag + ".err"));
    return p;
  }
  void expect_usage(const std::string& tag, const std::vector<std::string>& args, const std::string& says) {
    CliRun r = run(tag, args);
    EXPECT_EQ(r.code, 64) << tag << ": " << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << tag << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << tag << ": " << r.err;
  }
};

TEST_F(CliUsability, UsageErrorsSayWhatIsWrongAndExit64) {
  expect_usage("bogus", {"bogus"}, "unknown subcommand 'bogus' (subcommands: completion,");
  expect_usage("none", {}, "a subcommand is required (subcommands: completion,");
  expect_usage("session-bogus", {"session", "bogus"}, "unknown subcommand 'bogus' of 'session' (subcommands: list, kill)");
  expect_usage("limit", {"lock", "x", "--limit", "abc", "--", "true"}, "--limit: 'abc' is not a number");
  expect_usage("count", {"locks", "--count", "0"}, "'0' is out of range (a whole number from 1 to 100000)");
  CliRun negative = run("negative", {"session", "kill", "--", "-5"});
  EXPECT_EQ(negative.code, 64) << negative.err;
  EXPECT_NE(negative.err.find("'-5' is negative"), std::string::npos) << negative.err;
  EXPECT_EQ(negative.err.find("18446744073709551611"), std::string::npos) << negative.err;
  expect_usage("half-ms", {"lock", "--ttl", "0.5ms", "x", "--", "true"}, "not a whole number of milliseconds");
  expect_usage("unit", {"lock", "--ttl", "5", "x", "--", "true"}, "examples: 500ms, 1.5s, 10s, 2m, 1h");
  expect_usage("flag", {"locks", "--bogus"}, "--bogus");
}

TEST_F(CliUsability, FractionalDurationsAndWaitZeroWork) {
  CliRun r = run("fraction", {"lock", "--ttl", "1.5s", "--wait", "0", "frac", "--", "true"});
  EXPECT_EQ(r.code, 0) << r.err;
  CliRun w = run("wait-half", {"lock", "--wait", "0.5s", "frac", "--", "true"});
  EXPECT_EQ(w.code, 0) << w.err;
}

TEST_F(CliUsability, ACommandThatCannotRunIsNamedWithTheOsError) {
  CliRun missing = run("missing", {"lock", "m", "--", "leasehold-no-such-command"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_EQ(lines_of(missing.err).size(), 1u) << missing.err;
  EXPECT_NE(missing.err.find("'leasehold-no-such-command' not found"), std::string::npos) << missing.err;
  const std::string plain = dir_.file("not-executable");
  { std::ofstream(plain) << "echo hi\n"; }
  CliRun denied = run("denied", {"lock", "m", "--", plain});
  EXPECT_EQ(denied.code, 126);
  EXPECT_NE(denied.err.find(plain), std::string::npos) << denied.err;
  EXPECT_NE(denied.err.find("Permission denied"), std::string::npos) << denied.err;
  // Neither took the lock: it is free now, and nothing was ever granted.
  CliRun history = run("history", {"history", "m", "--json"});
  EXPECT_EQ(history.out, "[]\n") << history.err;
}

TEST_F(CliUsability, ATimeoutIsCalledATimeoutNotUnreachable) {
  server_.pause();  // up, but answers nothing
  CliRun r = run("paused", {"status", "--timeout", "300ms"});
  server_.resume();
  EXPECT_EQ(r.code, 69) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("request timed out after 300ms"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no leasehold server reachable"), std::string::npos) << r.err;
}

TEST_F(CliUsability, JsonKeepsBinaryLockNamesAsBase64) {
  const std::string name = std::string("bin\xff\xfe/lock");
  Subprocess holder = hold("binary", name);
  for (const auto& args : std::vector<std::vector<std::string>>{{"locks", "--json"}, {"info", name, "--json"}}) {
    CliRun r = run("json-" + args[0], args);
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;  // strict: valid UTF-8 JSON
    const nlohmann::json& lock = j.is_array() ? j.at(0) : j;
    EXPECT_EQ(lock.at("name_b64"), "Ymlu//4vbG9jaw==") << r.out;
    EXPECT_EQ(lock.at("name_binary"), true);
    EXPECT_EQ(lock.at("name"), "bin\xef\xbf\xbd\xef\xbf\xbd/lock");  // U+FFFD for each bad byte
    EXPECT_GT(lock.at("holders").at(0).at("token").get<std::uint64_t>(), 0u);
    EXPECT_FALSE(lock.at("holders").at(0).contains("owner_b64"));  // a UTF-8 owner is left alone
  }
  CliRun history = run("json-history", {"history", name, "--json"});
  ASSERT_EQ(history.code, 0) << history.err;
  const auto h = nlohmann::json::parse(history.out);
  ASSERT_FALSE(h.empty()) << history.out;
  EXPECT_EQ(h.at(0).at("lock_b64"), "Ymlu//4vbG9jaw==");
  CliRun sessions = run("json-sessions", {"session", "list", "--json"});
  EXPECT_TRUE(nlohmann::json::accept(sessions.out)) << sessions.out;
  CliRun status = run("json-status", {"status", "--json"});
  EXPECT_EQ(nlohmann::json::parse(status.out).at("role"), "primary") << status.out;
  holder.kill9();
}

// Not a terminal: no progress line before the first 5 s (the period of the
// log lines, cli_exit_codes_test.cc), and the one timeout line names the holder.
TEST_F(CliUsability, TimeoutNamesTheHolderAndIsQuietWithoutATerminal) {
  Subprocess holder = hold("holder", "busy");
  const std::string session = holder_session("busy");
  ASSERT_FALSE(session.empty());
  CliRun r = run("waiter", {"lock", "--wait", "1500ms", "busy", "--", "true"});
  EXPECT_EQ(r.code, 75) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.find("waiting for lock"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not acquired within 1500ms: held by session " + session + " (owner 'leasehold lock pid"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(", token "), std::string::npos) << r.err;
  CliRun once = run("once", {"lock", "--wait", "0", "busy", "--", "true"});
  EXPECT_EQ(once.code, 75);
  EXPECT_NE(once.err.find("tried once, --wait 0): held by session " + session), std::string::npos) << once.err;
  holder.kill9();
}

// On a terminal (a pty from `script`), the waiting `lock` draws a progress
// line naming the holder and since when.
TEST_F(CliUsability, ProgressLineOnATerminalNamesTheHolder) {
  Subprocess holder = hold("holder", "tty-busy");
  const std::string session = holder_session("tty-busy");
  ASSERT_FALSE(session.empty());
  const std::string runner = dir_.file("tty.sh");
  { std::ofstream(runner) << "script -qec \"" << leasehold_binary() << " lock --wait 4s tty-busy -- true\" /dev/null\n"; }
  auto p = Subprocess::spawn({"sh", runner}, opts("tty"));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->wait(30s), 75) << read_file(dir_.file("tty.out")) << read_file(dir_.file("tty.err"));
  const std::string screen = read_file(dir_.file("tty.out"));  // the pty's output
  EXPECT_NE(screen.find("waiting for lock 'tty-busy' ("), std::string::npos) << screen;
  EXPECT_NE(screen.find("): held by session " + session + " (owner 'leasehold lock pid"), std::string::npos) << screen;
  EXPECT_NE(screen.find(" since "), std::string::npos) << screen;
  holder.kill9();
}

TEST_F(CliUsability, OlderThanListsOnlyLongHolds) {
  Subprocess old_holder = hold("old", "jobs/old");
  // Until jobs/old has been held 3 s (the server's own clock says so).
  ASSERT_TRUE(eventually(
      [&] { return run("poll", {"locks", "--older-than", "3s"}).out.find("jobs/old") != std::string::npos; }, 30s));
  Subprocess young_holder = hold("young", "jobs/young");
  CliRun r = run("older", {"locks", "--older-than", "3s", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u) << r.out;
  EXPECT_EQ(j.at(0).at("name"), "jobs/old");
  CliRun all = run("all", {"locks", "--json"});
  EXPECT_EQ(nlohmann::json::parse(all.out).size(), 2u) << all.out;
  CliRun none = run("none", {"locks", "--older-than", "10m"});
  EXPECT_EQ(none.code, 0);
  EXPECT_EQ(lines_of(none.out).size(), 1u) << none.out;  // the header only
  expect_usage("bad-age", {"locks", "--older-than", "abc"}, "--older-than: bad duration 'abc'");
  old_holder.kill9();
  young_holder.kill9();
}

TEST_F(CliUsability, ServerStartErrorsArePlainOnceAndFollowTheScheme) {
  auto start_server = [&](const std::string& tag, std::vector<std::string> flags) {
    flags.insert(flags.begin(), "server");
    return run(tag, flags, "", 60s);
  };
  const std::string data = dir_.file("data");  // the running server's data dir
  CliRun in_use = start_server("in-use", {"--listen", loopback(free_port()), "--data-dir", data});
  EXPECT_EQ(in_use.code, 69) << in_use.err;
  EXPECT_EQ(count_of(in_use.err, "another leasehold server is using " + data), 1u) << in_use.err;
  EXPECT_EQ(in_use.err.find("LOCK: Resource temporarily unavailable"), std::string::npos) << in_use.err;
  CliRun bound = start_server("bound", {"--listen", server_.endpoint(), "--data-dir", dir_.file("other")});
  EXPECT_EQ(bound.code, 69) << bound.err;
  EXPECT_EQ(count_of(bound.err, "cannot listen on " + server_.endpoint()), 1u) << bound.err;
  CliRun bad_listen = start_server("bad-listen", {"--listen", "127.0.0.1:x", "--data-dir", dir_.file("other")});
  EXPECT_EQ(bad_listen.code, 64) << bad_listen.err;
  CliRun bad_flag = start_server("bad-flag", {"--bogus"});
  EXPECT_EQ(bad_flag.code, 64) << bad_flag.err;
  CliRun etcd_flag_alone = start_server("etcd-flag-alone", {"--listen", loopback(free_port()), "--data-dir",
                                                            dir_.file("other"), "--etcd-user", "u"});
  EXPECT_EQ(etcd_flag_alone.code, 64) << etcd_flag_alone.err;
  EXPECT_EQ(count_of(etcd_flag_alone.err, "are for cluster mode (--etcd)"), 1u) << etcd_flag_alone.err;
  // The running server was not disturbed.
  EXPECT_EQ(run("still", {"status"}).code, 0);
}

}  // namespace
}  // namespace leasehold::testing
