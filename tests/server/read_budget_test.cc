// The loop's read budget (server/net/read_budget.h): a turn parses requests for
// --read-budget-us of busy time, and connections read after that wait, with
// their bytes, for a later turn in arrival order. With a 1 us budget nearly
// every request waits at least once; nothing may be lost, reordered or
// answered twice, and a client that keeps sending while it waits must lose
// nothing either.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "resp/writer.h"
#include "testkit/server_process.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

// A number from INFO server (e.g. loop_reads_deferred), -1 if absent.
long long server_number(RespClient& c, const std::string& key) {
  const auto value = info_value(c, "server", key);
  return value ? std::stoll(*value) : -1;
}

class ReadBudgetTest : public ::testing::Test {
 protected:
  void start(const std::string& budget_us) {
    ASSERT_TRUE(server_.start(dir_.file("data"), {"--read-budget-us", budget_us}));
  }
  RespClient client() {
    RespClient c = server_.client();
    EXPECT_TRUE(c.connected());
    return c;
  }
  TempDir dir_{"server-read-budget"};
  ServerProcess server_;
};

// Each of 20 clients pipelines 300 SET/GET pairs on its own keys, all sent
// before any reply is read: every reply arrives, in order, with its own value.
TEST_F(ReadBudgetTest, ManyPipeliningClientsAreAnsweredInOrderWithATinyBudget) {
  start("1");
  constexpr int kClients = 20;
  constexpr int kPairs = 300;
  std::vector<RespClient> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(client());
  for (int c = 0; c < kClients; ++c) {
    std::string bytes;
    for (int i = 0; i < kPairs; ++i) {
      const std::string key = "k" + std::to_string(c) + ":" + std::to_string(i);
      resp::append_command(bytes, {"SET", key, "v" + key, "PX", "60000"});
      resp::append_command(bytes, {"GET", key});
    }
    ASSERT_TRUE(clients[c].send_raw(bytes));
  }
  for (int c = 0; c < kClients; ++c) {
    for (int i = 0; i < kPairs; ++i) {
      const std::string key = "k" + std::to_string(c) + ":" + std::to_string(i);
      auto ok = clients[c].read(30s);
      ASSERT_TRUE(ok) << key << ": " << ok.status().to_string();
      ASSERT_EQ(*ok, Value::simple("OK")) << key;
      auto got = clients[c].read(30s);
      ASSERT_TRUE(got) << key << ": " << got.status().to_string();
      ASSERT_EQ(*got, Value::bulk("v" + key)) << key;
    }
  }
  RespClient admin = client();
  EXPECT_GT(server_number(admin, "loop_reads_deferred"), 0);
  EXPECT_EQ(server_number(admin, "loop_clients_waiting_for_budget"), 0);
}

// One client sends 20,000 SET + ECHO pairs (more than the socket buffers
// and --max-pipeline hold) from another thread while this one reads: the
// connection waits for the budget many times, stops reading each time, and
// every command is answered exactly once, in order.
TEST_F(ReadBudgetTest, AClientThatKeepsSendingWhileItWaitsLosesNothing) {
  start("1");
  RespClient c = client();
  constexpr int kPairs = 20'000;
  std::string bytes;
  for (int i = 1; i <= kPairs; ++i) {
    resp::append_command(bytes, {"SET", "counter", std::to_string(i), "PX", "60000"});
    resp::append_command(bytes, {"ECHO", std::to_string(i)});
  }
  Status sent;
  std::thread writer([&] { sent = c.send_raw(bytes); });
  for (int i = 1; i <= kPairs; ++i) {
    auto set = c.read(30s);
    auto echo = set ? c.read(30s) : set;
    if (!set || !echo || *set != Value::simple("OK") || *echo != Value::bulk(std::to_string(i))) {
      writer.join();
      FAIL() << "pair " << i << ": " << (set ? set->debug_string() : set.status().to_string()) << " / "
             << (echo ? echo->debug_string() : echo.status().to_string());
    }
  }
  writer.join();
  ASSERT_TRUE(sent) << sent.to_string();
  EXPECT_EQ(c.call({"GET", "counter"}), Value::bulk(std::to_string(kPairs)));
  EXPECT_GT(server_number(c, "loop_reads_deferred"), 0);
}

// Blocking waits behind deferred reads: holders and waiters on one lock,
// every command pipelined, with a 1 us budget. Each waiter is granted in
// FIFO order with a larger token than the one before.
TEST_F(ReadBudgetTest, BlockedWaitsAreGrantedInOrderWithATinyBudget) {
  start("1");
  constexpr int kWaiters = 8;
  RespClient holder = client(), admin = client();
  ASSERT_EQ(admin.call({"HELLO", "3"}).type, Type::kMap);  // LOCK.INFO as a map
  const std::string hs = std::to_string(holder.call({"SESSION.OPEN", "60000"}).integer);
  const Value first = holder.call({"LOCK.ACQUIRE", "L", hs});
  ASSERT_EQ(first.type, Type::kInteger);
  std::vector<RespClient> waiters;
  std::vector<std::string> sessions;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(client());
    sessions.push_back(std::to_string(waiters.back().call({"SESSION.OPEN", "60000"}).integer));
    std::string bytes;
    resp::append_command(bytes, {"PING"});
    resp::append_command(bytes, {"LOCK.ACQUIRE", "L", sessions.back(), "WAIT", "30000"});
    resp::append_command(bytes, {"ECHO", "after"});
    ASSERT_TRUE(waiters.back().send_raw(bytes));
    ASSERT_EQ(waiters.back().read(10s)->str, "PONG");
    // Queued before the next waiter sends (FIFO is the order of arrival).
    ASSERT_TRUE(eventually(
        [&] {
          const Value info = admin.call({"LOCK.INFO", "L"});
          const Value* w = info.find("waiters");
          return w != nullptr && w->elements.size() == static_cast<std::size_t>(i + 1);
        },
        10s))
        << "waiter " << i << " never queued";
  }
  long long token = first.integer;
  std::string holding = hs;
  RespClient* holding_client = &holder;
  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_EQ(holding_client->call({"LOCK.RELEASE", "L", holding, std::to_string(token)}), Value::simple("OK"));
    auto granted = waiters[i].read(10s);
    ASSERT_TRUE(granted) << "waiter " << i << ": " << granted.status().to_string();
    ASSERT_EQ(granted->type, Type::kInteger) << granted->debug_string();
    EXPECT_GT(granted->integer, token);
    EXPECT_EQ(waiters[i].read(10s)->str, "after");
    token = granted->integer;
    holding = sessions[i];
    holding_client = &waiters[i];
  }
}

// --read-budget-us 0 turns the budget off: nothing ever waits.
TEST_F(ReadBudgetTest, ZeroBudgetNeverDefers) {
  start("0");
  RespClient c = client();
  std::string bytes;
  for (int i = 1; i <= 2000; ++i) resp::append_command(bytes, {"ECHO", std::to_string(i)});
  ASSERT_TRUE(c.send_raw(bytes));
  for (int i = 1; i <= 2000; ++i) {
    auto r = c.read(10s);
    ASSERT_TRUE(r) << r.status().to_string();
    ASSERT_EQ(*r, Value::bulk(std::to_string(i)));
  }
  EXPECT_EQ(server_number(c, "loop_reads_deferred"), 0);
}

// Out-of-range budgets are refused at start (CLI11's range check, exit 64).
TEST_F(ReadBudgetTest, ABudgetAboveOneSecondIsRefused) {
  auto exit = server_.run_to_exit(dir_.file("data"), {"--read-budget-us", "1000001"});
  ASSERT_TRUE(exit.has_value()) << "the server started with --read-budget-us 1000001";
  EXPECT_EQ(exit->code, 64) << exit->stderr_text;
  EXPECT_NE(exit->stderr_text.find("--read-budget-us"), std::string::npos) << exit->stderr_text;
}

}  // namespace
}  // namespace leasehold::testing
