// ETCD ON THE FAULT FILESYSTEM: a real 1-member etcd whose data dir is a
// leasehold-fault-fs mount. It serves through the mount; with `eio-fsync`
// its next write fails and etcd exits (a WAL fsync error is fatal to it)
// without acknowledging the write; with the fault cleared it restarts on
// the same data, keeps what it had acknowledged and takes writes again.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"
#include "testkit/http_client.h"
#include "testkit/temp_dir.h"
#include "torture/faults/fault_fs_process.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using torture::FaultFsProcess;

// A put through etcd's JSON gateway: its HTTP status, 0 when no reply came.
int put(EtcdCluster& etcd, const std::string& key_b64, const std::string& value_b64) {
  const std::string body = R"({"key":")" + key_b64 + R"(","value":")" + value_b64 + R"("})";
  const std::string raw = "POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                          "Content-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
  auto r = http_exchange(etcd.client_port(0), raw, scaled(5s));
  return r ? r->status : 0;
}

TEST(EtcdFaultFsTest, EioOnFsyncStopsEtcdAndARestartOnTheHealedDiskServesItsData) {
  if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no usable /dev/fuse on this machine";
  TempDir dir("etcd-fault-fs");
  auto fs = FaultFsProcess::start(LEASEHOLD_FAULT_FS, dir.file("backing"), dir.file("mnt"), dir.file("control"));
  ASSERT_TRUE(fs) << fs.status().to_string();
  EtcdClusterOptions options{.members = 1};
  options.data_dir_route = [&](int, const std::string&) { return (*fs)->mount(); };
  auto etcd = EtcdCluster::start(options);
  ASSERT_TRUE(etcd) << etcd.status().to_string();
  EtcdCluster& e = **etcd;
  ASSERT_EQ(put(e, "a2V5MQ==", "djE="), 200);  // key1 = v1
  EXPECT_TRUE(std::filesystem::exists(dir.file("backing") + "/member/wal"));

  ASSERT_TRUE((*fs)->set_faults("eio-fsync"));
  EXPECT_NE(put(e, "a2V5Mg==", "djI="), 200) << "etcd acknowledged a write it could not fsync";
  ASSERT_TRUE(eventually([&] { return !e.running(0); }, 15s)) << "etcd kept running after a failed fsync";
  const std::string log = read_file(e.log_path(0));
  EXPECT_NE(log.find("input/output error"), std::string::npos) << log.substr(log.size() > 3000 ? log.size() - 3000 : 0);

  ASSERT_TRUE((*fs)->set_faults(""));
  ASSERT_TRUE(e.restart(0)) << "etcd did not restart on the healed disk";
  ASSERT_TRUE(e.wait_healthy(20s));
  auto got = e.etcdctl({"get", "key1", "--print-value-only"});
  ASSERT_TRUE(got) << got.status().to_string();
  EXPECT_EQ(*got, "v1\n");
  EXPECT_EQ(put(e, "a2V5Mw==", "djM="), 200);  // key3 = v3
  got = e.etcdctl({"get", "key3", "--print-value-only"});
  ASSERT_TRUE(got) << got.status().to_string();
  EXPECT_EQ(*got, "v3\n");
  etcd->reset();  // etcd dies before its disk is unmounted
}

}  // namespace
}  // namespace leasehold::testing
