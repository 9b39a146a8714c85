#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "testkit/eventually.h"
#include "testkit/net.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

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

// True once `pid` has exited (gone, or a zombie waiting for init).
bool process_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() && line[close_paren + 2] == 'Z';
}

bool eventually_ended(pid_t pid, std::chrono::seconds timeout) {
  return eventually([pid] { return process_ended(pid); }, timeout);
}

TEST(Subprocess, AChildOutlivesTheThreadThatSpawnedIt) {
  std::optional<Subprocess> child;
  std::thread spawner([&] {
    auto p = Subprocess::spawn({"/bin/sleep", "60"});
    ASSERT_TRUE(p.is_ok());
    child.emplace(std::move(p).value());
  });
  spawner.join();
  ASSERT_TRUE(child.has_value());
  // Before every fork ran on one process-long thread, the parent-death
  // signal killed the child right here, when its spawning thread exited.
  EXPECT_EQ(child->wait(std::chrono::milliseconds(300)), std::nullopt);
  EXPECT_TRUE(child->running());
}

TEST(Subprocess, AChildDiesWithTheProcessThatSpawnedIt) {
  // A copy of this process spawns a child from a short-lived thread, reports
  // its pid and is then killed with SIGKILL (no destructor runs): the child
  // must die too, as a server spawned by a test that ctest kills must.
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t copy = ::fork();
  ASSERT_GE(copy, 0);
  if (copy == 0) {
    ::close(pipefd[0]);
    pid_t pid = -1;
    std::thread([&] {
      auto p = Subprocess::spawn({"/bin/sleep", "60"});
      if (!p.is_ok()) return;
      pid = p->pid();
      new Subprocess(std::move(p).value());  // leaked: the copy dies before it could reap
    }).join();
    [[maybe_unused]] auto n = ::write(pipefd[1], &pid, sizeof pid);
    while (true) ::pause();
  }
  ::close(pipefd[1]);
  pid_t grandchild = -1;
  ssize_t n;
  do {
    n = ::read(pipefd[0], &grandchild, sizeof grandchild);
  } while (n < 0 && errno == EINTR);
  ::close(pipefd[0]);
  ::kill(copy, SIGKILL);
  int st = 0;
  ::waitpid(copy, &st, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof grandchild));
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(eventually_ended(grandchild, std::chrono::seconds(30)));
  if (!process_ended(grandchild)) ::kill(grandchild, SIGKILL);
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

// A port freed by a test (an etcd member it killed) must not reach another
// test process: each port is handed out once per process, below the
// kernel's ephemeral range, and reserved machine-wide while we live.
TEST(Net, FreePortsAreDistinctBelowTheEphemeralRangeAndReservedForThisProcess) {
  int ephemeral_low = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  ASSERT_GE(ephemeral_low, 4096) << "an unusual ip_local_port_range; free_port() falls back to the kernel's pick";
  std::set<std::uint16_t> ports;
  for (int i = 0; i < 200; ++i) {
    const std::uint16_t port = free_port();
    ASSERT_NE(port, 0);
    EXPECT_LT(port, ephemeral_low);
    EXPECT_GE(port, ephemeral_low / 2);
    EXPECT_TRUE(ports.insert(port).second) << "port " << port << " handed out twice";
  }
  // Another process cannot take the reservation of any of them.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int taken = 0;
    for (const std::uint16_t port : ports) {
      const std::string path = "/tmp/leasehold-test-ports/" + std::to_string(port);
      const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) ::_exit(2);
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ++taken;
      ::close(fd);
    }
    ::_exit(taken == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: another process could reserve one of our ports; 2: a reservation file "
                                       "is missing";
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
