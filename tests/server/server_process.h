// tests/server/server_process.h: a real `leasehold server` child process on
// 127.0.0.1 with a random free port and a data dir, for the server tests.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/net.h"
#include "tests/support/resp_client.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace leasehold::testing {

class ServerProcess {
 public:
  // Starts the server on a fresh port with `data_dir`; retries with another
  // port if the first one was taken. Aborts the test (returns false) on failure.
  bool start(const std::string& data_dir, const std::vector<std::string>& extra_flags = {}) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      std::vector<std::string> argv = {leasehold_binary(), "server",      "--listen", loopback(port_),
                                       "--data-dir",       data_dir,      "--log-level", "warn"};
      argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
      SpawnOptions opts;
      opts.stderr_path = data_dir + ".stderr";
      auto p = Subprocess::spawn(argv, opts);
      if (!p) {
        std::fprintf(stderr, "ServerProcess: cannot run %s (run the test from the build dir, or set "
                     "LEASEHOLD_BUILD_DIR): %s\n", argv[0].c_str(), p.status().to_string().c_str());
        return false;
      }
      process_ = std::move(p).value();
      if (wait_for_port(port_, std::chrono::seconds(10))) return true;
      process_.kill9();
    }
    std::fprintf(stderr, "ServerProcess: the server never listened; its stderr: %s\n",
                 read_file(data_dir + ".stderr").c_str());
    return false;
  }
  std::uint16_t port() const { return port_; }
  Subprocess& process() { return process_; }
  RespClient client() {
    auto c = RespClient::connect(port_);
    return c ? std::move(c).value() : RespClient();
  }
  // SIGTERM, then the exit code (nullopt if it did not exit in time).
  std::optional<int> stop() {
    process_.signal(SIGTERM);
    return process_.wait(std::chrono::seconds(10));
  }

  // A start that must be refused: runs the server on `data_dir` and waits
  // for it to exit by itself. Value: its exit code and what it wrote to
  // stderr; nullopt (after killing it) if it was still running after
  // `timeout`, i.e. it started instead of refusing.
  struct Exit {
    int code = 0;
    std::string stderr_text;
  };
  std::optional<Exit> run_to_exit(const std::string& data_dir, const std::vector<std::string>& extra_flags = {},
                                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::vector<std::string> argv = {leasehold_binary(), "server", "--listen", loopback(free_port()),
                                     "--data-dir", data_dir, "--log-level", "warn"};
    argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
    SpawnOptions opts;
    opts.stderr_path = data_dir + ".refused." + std::to_string(++refusals_) + ".stderr";
    auto p = Subprocess::spawn(argv, opts);
    if (!p) return std::nullopt;
    const std::optional<int> code = p->wait(timeout);
    if (!code) {
      p->kill9();
      return std::nullopt;
    }
    return Exit{*code, read_file(opts.stderr_path)};
  }

 private:
  std::uint16_t port_ = 0;
  Subprocess process_;
  int refusals_ = 0;
};

}  // namespace leasehold::testing
