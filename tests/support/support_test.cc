#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <optional>
#include <thread>

#include "tests/support/net.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace leasehold::testing {
namespace {

TEST(Subprocess, ReportsExitCode) {
  auto p = Subprocess::spawn({"/bin/sh", "-c", "exit 7"});
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->wait(std::chrono::seconds(10)), 7);
}

TEST(Subprocess, MissingBinaryIsAnError) {
  auto p = Subprocess::spawn({"/nonexistent/binary"});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kIoError);
}

TEST(Subprocess, KillNineAndSignals) {
  auto p = Subprocess::spawn({"/bin/sleep", "30"});
  ASSERT_TRUE(p.is_ok());
  EXPECT_TRUE(p->running());
  EXPECT_EQ(p->wait(std::chrono::milliseconds(50)), std::nullopt);
  p->signal(SIGTERM);
  EXPECT_EQ(p->wait(std::chrono::seconds(10)), 128 + SIGTERM);
}

TEST(Subprocess, KillWhenParentDiesEndsTheChildWithItsSpawningThread) {
  std::optional<Subprocess> child;
  std::thread spawner([&] {
    SpawnOptions opt;
    opt.kill_when_parent_dies = true;
    auto p = Subprocess::spawn({"/bin/sleep", "60"}, opt);
    ASSERT_TRUE(p.is_ok());
    child.emplace(std::move(p).value());
  });
  spawner.join();  // the spawning thread is gone: the child gets SIGKILL
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(child->wait(std::chrono::seconds(30)), 128 + SIGKILL);
}

TEST(Subprocess, WritesOutputToFile) {
  TempDir dir("support");
  SpawnOptions opt;
  opt.stdout_path = dir.file("out");
  opt.env = {{"GREETING", "hello"}};
  auto p = Subprocess::spawn({"/bin/sh", "-c", "echo $GREETING"}, opt);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->wait(std::chrono::seconds(10)), 0);
  EXPECT_EQ(read_file(dir.file("out")), "hello\n");
}

TEST(Net, FreePortIsListenable) {
  auto port = free_port();
  ASSERT_NE(port, 0);
  EXPECT_FALSE(wait_for_port(port, std::chrono::milliseconds(50)));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  EXPECT_TRUE(wait_for_port(port, std::chrono::seconds(10)));
  EXPECT_EQ(loopback(port), "127.0.0.1:" + std::to_string(port));
  ::close(fd);
}

TEST(TempDirTest, RemovedOnDestruction) {
  std::string path;
  {
    TempDir dir("support");
    path = dir.path();
    EXPECT_TRUE(std::filesystem::is_directory(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace leasehold::testing
