// Pure tests of the etcd client's input handling (no etcd needed).
#include <gtest/gtest.h>

#include "etcd/client.h"
#include "etcd/endpoints.h"
#include "etcd/key_queue.h"
#include "etcd/types.h"

namespace leasehold::etcd {
namespace {

TEST(EtcdEndpoints, ParsesUrlsAndBareHostPort) {
  auto targets = parse_endpoints("http://127.0.0.1:2379, 127.0.0.1:22379 ,http://localhost:3/,https://127.0.0.1:4");
  ASSERT_TRUE(targets) << targets.status().to_string();
  EXPECT_EQ(*targets, (std::vector<EndpointUrl>{{"127.0.0.1:2379", false},
                                                {"127.0.0.1:22379", false},
                                                {"localhost:3", false},
                                                {"127.0.0.1:4", true}}));
}

TEST(EtcdEndpoints, RejectsBadEntries) {
  for (const char* bad : {"", " ", "http://127.0.0.1", "127.0.0.1:", "127.0.0.1:abc", "127.0.0.1:70000",
                          "a:1,,b:2", "unix://127.0.0.1:2379", "https://127.0.0.1", "http://h/p:1", ":2379"}) {
    auto targets = parse_endpoints(bad);
    ASSERT_FALSE(targets) << "accepted '" << bad << "'";
    EXPECT_EQ(targets.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(EtcdEndpoints, LimitsTheCount) {
  std::string many;
  for (std::size_t i = 0; i <= kMaxEndpoints; ++i) many += (i ? "," : "") + std::string("127.0.0.1:1");
  EXPECT_EQ(parse_endpoints(many).status().code(), ErrorCode::kLimitExceeded);
}

TEST(EtcdTypes, PrefixEnd) {
  EXPECT_EQ(prefix_end("a/"), "a0");
  EXPECT_EQ(prefix_end("ab"), "ac");
  EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
  EXPECT_EQ(prefix_end(""), std::string(1, '\0'));
  EXPECT_EQ(prefix_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
}

TEST(EtcdTypes, QueueKeyNameIsPrefixSlashLeaseHex) {
  EXPECT_EQ(queue_key_name("/lh/election", 0x694d77b1c6a2f10e), "/lh/election/694d77b1c6a2f10e");
  EXPECT_EQ(queue_key_name("p", 255), "p/ff");
}

ClientOptions opts(std::string endpoints, std::chrono::milliseconds timeout) {
  ClientOptions o;
  o.endpoints = std::move(endpoints);
  o.call_timeout = timeout;
  return o;
}

TEST(EtcdClient, CreateValidatesSecurityOptions) {
  ClientOptions o = opts("http://127.0.0.1:1", std::chrono::milliseconds(100));
  o.tls.ca_pem = "ca";
  EXPECT_EQ(Client::create(o).status().code(), ErrorCode::kInvalidArgument);  // TLS without https
  o.endpoints = "https://127.0.0.1:1";
  o.tls.cert_pem = "cert";
  EXPECT_EQ(Client::create(o).status().code(), ErrorCode::kInvalidArgument);  // a certificate without key
  o.tls = {};
  o.password = "pw";
  EXPECT_EQ(Client::create(o).status().code(), ErrorCode::kInvalidArgument);  // a password without user
  o.user = "leasehold";
  EXPECT_TRUE(Client::create(o));
}

TEST(EtcdClient, CreateValidatesOptionsWithoutConnecting) {
  EXPECT_EQ(Client::create(opts("", std::chrono::milliseconds(100))).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Client::create(opts("127.0.0.1:1", std::chrono::milliseconds(0))).status().code(),
            ErrorCode::kInvalidArgument);
  auto client = Client::create(opts("127.0.0.1:1,127.0.0.1:2", std::chrono::milliseconds(500)));
  ASSERT_TRUE(client);
  EXPECT_EQ((*client)->endpoint_count(), 2u);
}

TEST(EtcdClient, RejectsBadInputBeforeSending) {
  auto client = Client::create(opts("127.0.0.1:1", std::chrono::milliseconds(500)));
  ASSERT_TRUE(client);
  Client& c = **client;
  EXPECT_EQ(c.put("", "v").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.range("").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.put("k", std::string(kMaxValueBytes + 1, 'x')).status().code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(c.put(std::string(kMaxKeyBytes + 1, 'k'), "v").status().code(), ErrorCode::kLimitExceeded);
  std::vector<TxnOp> ops(kMaxTxnOps + 1, TxnOp::put("k", "v"));
  EXPECT_EQ(c.txn({}, ops).status().code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(c.lease_grant(0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.compact(0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(EtcdClient, NothingListeningIsUnavailableWithinTheDeadline) {
  auto client = Client::create(opts("127.0.0.1:1", std::chrono::milliseconds(1000)));
  ASSERT_TRUE(client);
  const auto start = std::chrono::steady_clock::now();
  auto put = (*client)->put("k", "v");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(put);
  EXPECT_EQ(put.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(put.status().message().find("etcd unavailable"), std::string::npos) << put.status().message();
  EXPECT_LT(elapsed, std::chrono::milliseconds(3000));
}

}  // namespace
}  // namespace leasehold::etcd
