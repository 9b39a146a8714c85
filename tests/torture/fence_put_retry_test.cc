// Regression test for a bug the torture suite's one-way-loss fault found
// (docs/torture.md, "What it found"): the C++ client retried a FENCE.PUT
// whose reply was lost on a new connection; once the lock had moved on, the
// retry was refused (stale_token) and the caller took a put that the server
// had applied for a failed one. A lost reply must leave the outcome unknown
// (kUnreachable). A real server behind a real FaultProxy dropping replies.
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "leasehold/client.h"
#include "testkit/server_process.h"
#include "testkit/eventually.h"
#include "testkit/temp_dir.h"
#include "torture/faults/fault_proxy.h"

namespace leasehold::testing {
namespace {

TEST(FencePutRetryTest, APutWhoseReplyIsLostIsUnknownNotARetriedRefusal) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.start(dir.path() + "/data"));
  auto proxy = torture::FaultProxy::start(server.port());
  ASSERT_TRUE(proxy) << proxy.status().to_string();

  RespClient direct = server.client();
  const resp::Value session = direct.call({"SESSION.OPEN", "600000"});
  ASSERT_EQ(session.type, resp::Type::kInteger) << session.str;
  const resp::Value token = direct.call({"LOCK.ACQUIRE", "L", std::to_string(session.integer)});
  ASSERT_EQ(token.type, resp::Type::kInteger) << token.str;

  client::ClientOptions opts;
  opts.endpoints = {client::Endpoint{"127.0.0.1", (*proxy)->port()}};
  opts.call_timeout = client::Millis(120'000);  // the reply is lost, not late: no timeout in play
  auto c = client::Client::create(opts);
  ASSERT_TRUE(c) << c.status().to_string();
  ASSERT_TRUE((*c)->ping());  // a pooled connection, made before the fault

  (*proxy)->block(torture::Direction::kServerToClient, torture::BlockMode::kDrop);
  std::optional<Result<std::uint64_t>> put;
  std::thread writer([&] { put = (*c)->fence_put("F", "v", "L", static_cast<std::uint64_t>(token.integer)); });
  // The server applied the put, and the proxy has read and thrown away its
  // reply. Both must hold before the heal: on a busy machine the proxy's
  // thread may not have read the reply yet when the put shows as applied,
  // and a heal before that read forwards the reply intact.
  const bool applied = eventually([&] { return direct.call({"FENCE.GET", "F"}).type == resp::Type::kArray; },
                                  std::chrono::seconds(30));
  const int s2c = static_cast<int>(torture::Direction::kServerToClient);
  const bool dropped = eventually([&] { return (*proxy)->stats().bytes_dropped[s2c] > 0; }, std::chrono::seconds(30));
  // The lock moves on, so a repeated put would now be refused.
  const resp::Value released =
      direct.call({"LOCK.RELEASE", "L", std::to_string(session.integer), std::to_string(token.integer)});
  (*proxy)->heal();  // the connection that lost bytes is reset
  writer.join();
  ASSERT_TRUE(applied);
  ASSERT_TRUE(dropped) << "the proxy never dropped the put's reply";
  ASSERT_EQ(released.str, "OK");
  ASSERT_TRUE(put.has_value());
  ASSERT_FALSE(static_cast<bool>(*put)) << "the reply was dropped, yet the put returned a token";
  EXPECT_EQ(put->status().code(), ErrorCode::kUnreachable) << put->status().to_string();
}

}  // namespace
}  // namespace leasehold::testing
