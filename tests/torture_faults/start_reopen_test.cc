// THE START AFTER AN UNCLEAN STOP: a real `leasehold server` whose first log
// append (the start's Reopen) is held back by the unsafe test switch
// `hold-first-append` (timing only, docs/faults.md), under the disk-fault
// shim.
//   - Until the Reopen is durable and applied, the server accepts
//     connections but answers no command, and /readyz and the state views of
//     the HTTP API answer 503 "starting". The first answers already show
//     what the Reopen did: after a lease-mode crash, every pre-crash session
//     is expired (no listing shows it, its keepalive fails, its lock is
//     free), instead of the state the stopped run left.
//   - A Reopen that cannot be written (EIO on the journal's fdatasync) stops
//     the server with a clear message and a non-zero exit, without answering
//     anything; the next start serves, with tokens above every earlier one.
#include <gtest/gtest.h>

#include <fstream>

#include "testkit/http_client.h"
#include "tests/torture_faults/fault_fixtures.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

class StartReopen : public ::testing::Test {
 protected:
  // Lets the held first append go on (log/rocksdb_log.cc deletes the file).
  void release_first_append() { std::ofstream(shimmed_.data_dir() + "/release-first-append") << "go\n"; }
  // The flags of a start whose Reopen waits for release_first_append().
  static std::vector<std::string> held(std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--unsafe-test-fault", "hold-first-append"});
    return flags;
  }

  TempDir dir_;
  ShimmedServer shimmed_{dir_};
};

TEST_F(StartReopen, NoCommandIsAnsweredBeforeTheReopenAndTheFirstAnswersShowIt) {
  ASSERT_TRUE(shimmed_.start({"--durability", "lease"}));
  std::string session;
  {
    RespClient c = shimmed_.server().client();
    session = open_session(c, 4000);
    ASSERT_EQ(c.call({"LOCK.ACQUIRE", "L", session}).type, Type::kInteger);
  }
  shimmed_.server().process().kill9();

  // fsync mode: the Reopen that expires the lease-mode run's sessions is
  // applied only once its append is durable, and that append is held.
  const std::uint16_t http_port = free_port();
  ASSERT_TRUE(shimmed_.start(held({"--http-listen", loopback(http_port)}), /*unsafe_allowed=*/true));
  ASSERT_TRUE(wait_for_port(http_port, 10s));
  RespClient c = shimmed_.server().client();
  ASSERT_TRUE(c.connected()) << "the port accepts connections while the Reopen is held";
  ASSERT_TRUE(c.send({"SESSION.LIST"}));
  ASSERT_TRUE(c.send({"SESSION.KEEPALIVE", session}));
  ASSERT_TRUE(c.send({"LOCK.INFO", "L"}));
  auto early = c.read(300ms);
  EXPECT_FALSE(early) << "answered before the start's Reopen was durable: " << early->debug_string();
  auto ready = http_get(http_port, "/readyz");
  ASSERT_TRUE(ready) << ready.status().to_string();
  EXPECT_EQ(ready->status, 503) << ready->body;
  EXPECT_NE(ready->body.find("starting"), std::string::npos) << ready->body;
  auto sessions_view = http_get(http_port, "/api/sessions");
  ASSERT_TRUE(sessions_view) << sessions_view.status().to_string();
  EXPECT_EQ(sessions_view->status, 503) << sessions_view->body;

  release_first_append();
  const auto listed = c.read(30s);
  ASSERT_TRUE(listed) << listed.status().to_string();
  EXPECT_EQ(listed->debug_string().find(session), std::string::npos)
      << "the first listing shows a session the Reopen expires: " << listed->debug_string();
  const auto keepalive = c.read(10s);
  ASSERT_TRUE(keepalive) << keepalive.status().to_string();
  EXPECT_EQ(keepalive->type, Type::kError) << "kept alive a session the Reopen expires";
  const auto info = c.read(10s);
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->type, Type::kNull) << "the first LOCK.INFO shows the expired holder's lock: "
                                      << info->debug_string();

  // Quarantined from here on (the lease-mode crash), and says so.
  EXPECT_GT(std::stoll(info_value(c, "log", "quarantine_remaining_ms").value_or("0")), 0);
  auto quarantined = http_get(http_port, "/readyz");
  ASSERT_TRUE(quarantined) << quarantined.status().to_string();
  EXPECT_NE(quarantined->body.find("quarantined"), std::string::npos) << quarantined->body;
}

TEST_F(StartReopen, AReopenThatCannotBeWrittenStopsTheServerWithoutAnswering) {
  ASSERT_TRUE(shimmed_.start());
  std::int64_t token = 0;
  {
    RespClient c = shimmed_.server().client();
    const std::string session = open_session(c);
    const Value t = c.call({"LOCK.ACQUIRE", "L", session});
    ASSERT_EQ(t.type, Type::kInteger) << t.str;
    token = t.integer;
  }
  shimmed_.server().process().kill9();  // unclean: the start proposes a Reopen

  ASSERT_TRUE(shimmed_.start(held({}), /*unsafe_allowed=*/true));
  RespClient c = shimmed_.server().client();
  ASSERT_TRUE(c.send({"PING"}));
  shimmed_.set_faults("eio-fsync only:journal");
  release_first_append();
  const std::optional<int> code = shimmed_.server().process().wait(30s);
  ASSERT_TRUE(code) << "the server kept running after its Reopen failed";
  EXPECT_NE(*code, 0);
  const std::string err = read_file(shimmed_.server().stderr_path());
  EXPECT_NE(err.find("stopped: cannot start serving"), std::string::npos) << err;
  EXPECT_NE(err.find("Input/output error"), std::string::npos) << err;
  const auto answer = c.read(5s);
  EXPECT_FALSE(answer) << "answered although the Reopen failed: " << answer->debug_string();

  shimmed_.set_faults("");
  ASSERT_TRUE(shimmed_.start());
  RespClient again = shimmed_.server().client();
  const std::string session = open_session(again);
  const Value next = again.call({"LOCK.ACQUIRE", "after", session});
  ASSERT_EQ(next.type, Type::kInteger) << next.str;
  EXPECT_GT(next.integer, token);
}

}  // namespace
}  // namespace leasehold::testing
