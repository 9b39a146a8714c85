// A write, then a read that must wait for it, then an incomplete frame: the
// shape that once made Connection::pump recurse until the stack ran out (one
// packet killed the server). Every shape from the report, a long redis-py-like
// pipeline, and a mixed pipeline split at every byte boundary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "resp/parser.h"
#include "resp/writer.h"
#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

std::string command(std::initializer_list<std::string_view> args) {
  std::string frame;
  resp::append_command(frame, args);
  return frame;
}

// Each test runs with the default read budget and with a 1 us one
// (server/net/read_budget.h: nearly every request then waits for a later turn).
class PipelineSplit : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start(dir_.file("data"), {"--read-budget-us", GetParam()})); }
  RespClient client() {
    RespClient c = server_.client();
    EXPECT_TRUE(c.connected());
    return c;
  }
  // The connection still works after the partial frame is completed, and the
  // server process is alive.
  void expect_alive(RespClient& c, std::string_view rest_of_frame) {
    ASSERT_TRUE(c.send_raw(rest_of_frame));
    auto r = c.read();
    ASSERT_TRUE(r) << r.status().to_string();
    EXPECT_EQ(r->str, "PONG");
    EXPECT_TRUE(server_.process().running());
  }

  TempDir dir_{"server-pipeline-split"};
  ServerProcess server_;
};

TEST_P(PipelineSplit, WriteThenReadThenPartialInlineFrame) {
  RespClient c = client();
  ASSERT_TRUE(c.send_raw("SET a b PX 60000\r\nGET a\r\nP"));
  EXPECT_EQ(*c.read(), Value::simple("OK"));
  EXPECT_EQ(*c.read(), Value::bulk("b"));
  expect_alive(c, "ING\r\n");
}

TEST_P(PipelineSplit, SessionOpenThenPingThenPartialArray) {
  RespClient c = client();
  ASSERT_TRUE(c.send_raw("SESSION.OPEN 1000\r\nPING\r\n*"));
  EXPECT_EQ(c.read()->type, Type::kInteger);
  EXPECT_EQ(c.read()->str, "PONG");
  expect_alive(c, "1\r\n$4\r\nPING\r\n");
}

TEST_P(PipelineSplit, BlockedWaitWithPingAndPartialFrameBehindIt) {
  RespClient holder = client(), waiter = client();
  const std::string sa = std::to_string(holder.call({"SESSION.OPEN", "60000"}).integer);
  const std::string sb = std::to_string(waiter.call({"SESSION.OPEN", "60000"}).integer);
  const Value ta = holder.call({"LOCK.ACQUIRE", "L", sa});
  ASSERT_EQ(ta.type, Type::kInteger);
  ASSERT_TRUE(waiter.send_raw(command({"LOCK.ACQUIRE", "L", sb, "WAIT", "0"}) + "PING\r\n*1\r\n$4\r\nPI"));
  // The waiter stays blocked (and the server up) while the partial frame sits
  // behind the queued PING; then the release hands the lock over.
  EXPECT_EQ(waiter.read(300ms).status().code(), ErrorCode::kTimedOut);
  EXPECT_TRUE(server_.process().running());
  ASSERT_EQ(holder.call({"LOCK.RELEASE", "L", sa, std::to_string(ta.integer)}), Value::simple("OK"));
  const auto tb = waiter.read();
  ASSERT_TRUE(tb) << tb.status().to_string();
  EXPECT_EQ(tb->type, Type::kInteger);
  EXPECT_GT(tb->integer, ta.integer);
  EXPECT_EQ(waiter.read()->str, "PONG");
  expect_alive(waiter, "NG\r\n");
}

// What redis-py sends for a pipeline of 2,000 SET/GET pairs with 200-byte
// values: one large write that TCP delivers in pieces, so frames are split.
TEST_P(PipelineSplit, LongPipelineOfWritesAndReads) {
  RespClient c = client();
  const std::string value(200, 'v');
  std::string bytes;
  constexpr int kPairs = 2000;
  for (int i = 0; i < kPairs; ++i) {
    const std::string key = "key:" + std::to_string(i);
    bytes += command({"SET", key, value, "PX", "60000"});
    bytes += command({"GET", key});
  }
  ASSERT_TRUE(c.send_raw(bytes));
  for (int i = 0; i < kPairs; ++i) {
    auto ok = c.read(10s);
    ASSERT_TRUE(ok) << i << ": " << ok.status().to_string();
    ASSERT_EQ(*ok, Value::simple("OK")) << i;
    auto got = c.read(10s);
    ASSERT_TRUE(got) << i << ": " << got.status().to_string();
    ASSERT_EQ(*got, Value::bulk(value)) << i;
  }
  expect_alive(c, "PING\r\n");
}

// A mixed pipeline (writes, reads that wait for them, inline and RESP frames)
// sent in two parts, split at every byte. The replies to the frames complete
// in the first part are read before the second part is sent, so the server
// always holds the partial frame while the earlier commands are in flight.
TEST_P(PipelineSplit, EverySplitPointOfAMixedPipeline) {
  const std::string pipeline = "SET s v EX 60\r\n" + command({"GET", "s"}) + command({"SESSION.OPEN", "60000"}) +
                               "PING\r\n" + command({"SET", "t", "w", "NX", "PX", "60000"}) + command({"PTTL", "t"}) +
                               command({"DEL", "t"}) + "ECHO done\r\n";
  // Expected reply types, in order (the session id and PTTL vary).
  const std::vector<Type> types = {Type::kSimpleString, Type::kBulkString, Type::kInteger, Type::kSimpleString,
                                   Type::kSimpleString, Type::kInteger,    Type::kInteger, Type::kBulkString};
  for (std::size_t split = 1; split < pipeline.size(); ++split) {
    SCOPED_TRACE("split at byte " + std::to_string(split));
    // How many whole requests the first part holds.
    resp::Parser counter(resp::Parser::Mode::kRequest);
    std::string_view head = std::string_view(pipeline).substr(0, split);
    std::size_t complete = 0;
    for (;;) {
      resp::ParseOutcome o = counter.parse(head);
      head.remove_prefix(o.consumed);
      if (o.status != resp::ParseStatus::kValue) break;
      ++complete;
    }
    RespClient c = client();
    ASSERT_TRUE(c.send_raw(std::string_view(pipeline).substr(0, split)));
    std::size_t i = 0;
    for (; i < complete; ++i) {
      auto r = c.read();
      ASSERT_TRUE(r) << "reply " << i << ": " << r.status().to_string();
      ASSERT_EQ(r->type, types[i]) << "reply " << i << ": " << r->debug_string();
    }
    ASSERT_TRUE(c.send_raw(std::string_view(pipeline).substr(split)));
    for (; i < types.size(); ++i) {
      auto r = c.read();
      ASSERT_TRUE(r) << "reply " << i << ": " << r.status().to_string();
      ASSERT_EQ(r->type, types[i]) << "reply " << i << ": " << r->debug_string();
    }
  }
  EXPECT_TRUE(server_.process().running());
}

// A number from INFO clients (e.g. total_writes_processed), -1 if absent.
long long clients_number(RespClient& c, const std::string& key) {
  const std::string info = c.call({"INFO", "clients"}).str;
  const auto at = info.find(key + ":");
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + key.size() + 1));
}

TEST_P(PipelineSplit, RepliesOfOneCommitGoOutInOneWritePerConnection) {
  // 500 pipelined SESSION.OPENs are answered by a few group commits. Each
  // commit's replies used to be written one write(2) each (~500 writes);
  // now the connection is pumped once per loop phase (server/net/deferred_pumps.h).
  RespClient c = client(), admin = client();
  std::string pipeline;
  constexpr int kOpens = 500;
  for (int i = 0; i < kOpens; ++i) resp::append_command(pipeline, {"SESSION.OPEN", "60000"});
  const long long writes_before = clients_number(admin, "total_writes_processed");
  const std::string log_before = admin.call({"INFO", "log"}).str;
  ASSERT_GE(writes_before, 0);
  ASSERT_TRUE(c.send_raw(pipeline));
  for (int i = 0; i < kOpens; ++i) {
    auto r = c.read();
    ASSERT_TRUE(r) << i << ": " << r.status().to_string();
    ASSERT_EQ(r->type, Type::kInteger) << i;
  }
  const long long writes = clients_number(admin, "total_writes_processed") - writes_before;
  const auto number = [](const std::string& info, const std::string& key) {
    const auto at = info.find(key + ":");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + key.size() + 1));
  };
  const std::string log_after = admin.call({"INFO", "log"}).str;
  const long long commits = number(log_after, "batches_committed") - number(log_before, "batches_committed");
  ASSERT_GT(commits, 0);
  // A commit applied in steps (--apply-step-us; on a slow or busy machine a
  // batch of 500 opens can take more than one) answers once per step.
  const long long steps =
      number(log_after, "apply_steps_deferred") - number(log_before, "apply_steps_deferred");
  ASSERT_GE(steps, 0);
  // One write per commit and deferred step for `c`, plus the admin's own
  // replies in between (the two INFOs answered after the first count was taken).
  EXPECT_LE(writes, commits + steps + 2) << "writes " << writes << ", commits " << commits << ", steps " << steps;
}

INSTANTIATE_TEST_SUITE_P(ReadBudget, PipelineSplit, ::testing::Values("2000", "1"),
                         [](const ::testing::TestParamInfo<const char*>& budget) {
                           return std::string("Us") + budget.param;
                         });

}  // namespace
}  // namespace leasehold::testing
