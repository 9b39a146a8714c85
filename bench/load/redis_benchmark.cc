#include "bench/load/redis_benchmark.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

namespace leasehold::bench {
namespace {

constexpr std::size_t kMaxOutputBytes = 1024 * 1024;

// The fields of one CSV line with "quoted" fields (redis-benchmark never
// puts quotes or commas inside a field except in the test name).
std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::string tail(const std::string& text) {
  constexpr std::size_t kKeep = 400;
  return text.size() <= kKeep ? text : "..." + text.substr(text.size() - kKeep);
}

}  // namespace

Result<double> parse_redis_benchmark_csv(std::string_view output) {
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t eol = output.find('\n', pos);
    if (eol == std::string_view::npos) eol = output.size();
    std::string_view line = output.substr(pos, eol - pos);
    pos = eol + 1;
    auto fields = split_csv_line(line);
    if (fields.size() < 2 || fields[0] == "test") continue;
    char* end = nullptr;
    double rps = std::strtod(fields[1].c_str(), &end);
    if (end != fields[1].c_str() && *end == '\0' && rps >= 0) return rps;
  }
  return Status(ErrorCode::kCorruption,
                "no result line in redis-benchmark output: " + tail(std::string(output)));
}

Result<double> run_redis_benchmark(const RedisBenchmarkOptions& o) {
  std::vector<std::string> args = {
      o.binary,   "-h", o.endpoint.host, "-p", std::to_string(o.endpoint.port),
      "-c",       std::to_string(o.clients), "-n", std::to_string(o.requests),
      "-r",       std::to_string(o.keyspace), "--csv",
      "SET",      "key:__rand_int__", "v", "NX", "PX", std::to_string(o.lease_ms)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status(ErrorCode::kIoError, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, o.binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    return Status(ErrorCode::kIoError, "cannot start " + o.binary + ": " + std::strerror(rc));
  }

  std::string output;
  bool timed_out = false;
  auto deadline = std::chrono::steady_clock::now() + o.timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed its output
    if (output.size() < kMaxOutputBytes) output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status(ErrorCode::kTimedOut, "redis-benchmark ran past " +
                                            std::to_string(o.timeout.count()) + " ms");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status(ErrorCode::kIoError, "redis-benchmark failed: " + tail(output));
  }
  return parse_redis_benchmark_csv(output);
}

}  // namespace leasehold::bench
