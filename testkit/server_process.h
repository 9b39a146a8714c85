// testkit/server_process.h: a real `leasehold server` child process on
// 127.0.0.1 with a random free port and a data dir: the one server fixture of
// the server, client, CLI, torture and fuzz tests.
//
// start() picks a free port (retrying if another process takes it first);
// restart() starts again on the same port, data dir and flags, as a client
// that keeps its endpoint list sees a restart. The server's stderr goes to
// stderr_path() (<data_dir>.stderr), its stdout to <data_dir>.stdout.
// The child is killed (SIGKILL) when the object is destroyed.
// Thread-safety: none (the test thread only).
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "testkit/net.h"
#include "testkit/resp_client.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {

class ServerProcess {
 public:
  // Starts the server on a fresh port with `data_dir`; retries with another
  // port if the first one was taken. False (after printing why) on failure.
  bool start(const std::string& data_dir, const std::vector<std::string>& extra_flags = {}) {
    data_dir_ = data_dir;
    flags_ = extra_flags;
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      const Launch l = launch();
      if (l == Launch::kListening) return true;
      if (l == Launch::kCannotRun) return false;  // another port will not help
    }
    std::fprintf(stderr, "ServerProcess: the server never listened; its stderr: %s\n",
                 read_file(stderr_path()).c_str());
    return false;
  }
  // Starts the server on `port`, chosen by the caller (e.g. so that other
  // servers' flags can name it first), with `data_dir`; also to start again
  // with other flags after stop(). False when it never listened (the port
  // may have been taken meanwhile: pick another and retry).
  bool start_on(std::uint16_t port, const std::string& data_dir, const std::vector<std::string>& extra_flags = {}) {
    data_dir_ = data_dir;
    flags_ = extra_flags;
    port_ = port;
    return launch() == Launch::kListening;
  }
  // Starts again on the port, data dir and flags of the last start(), after
  // stop() or kill9(). False (after printing why) on failure.
  bool restart() {
    const Launch l = launch();
    if (l == Launch::kNotListening) {
      std::fprintf(stderr, "ServerProcess: the restarted server never listened on port %u; its stderr: %s\n",
                   static_cast<unsigned>(port_), read_file(stderr_path()).c_str());
    }
    return l == Launch::kListening;
  }
  std::uint16_t port() const { return port_; }
  // "127.0.0.1:<port>", the form of --endpoints and LEASEHOLD_ENDPOINTS.
  std::string endpoint() const { return loopback(port_); }
  std::string stderr_path() const { return data_dir_ + ".stderr"; }
  Subprocess& process() { return process_; }
  RespClient client() {
    auto c = RespClient::connect(port_);
    return c ? std::move(c).value() : RespClient();
  }
  // SIGTERM, then the exit code (nullopt, after SIGKILL, if it did not exit
  // within 10 s).
  std::optional<int> stop() {
    process_.signal(SIGTERM);
    const std::optional<int> code = process_.wait(std::chrono::seconds(10));
    if (!code) process_.kill9();
    return code;
  }
  void kill9() { process_.kill9(); }
  // SIGSTOP and SIGCONT: a server that is alive but answers nothing.
  void pause() { process_.signal(SIGSTOP); }
  void resume() { process_.signal(SIGCONT); }

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
    SpawnOptions opts;
    opts.stderr_path = data_dir + ".refused." + std::to_string(++refusals_) + ".stderr";
    auto p = Subprocess::spawn(server_argv(free_port(), data_dir, extra_flags), opts);
    if (!p) return std::nullopt;
    const std::optional<int> code = p->wait(timeout);
    if (!code) {
      p->kill9();
      return std::nullopt;
    }
    return Exit{*code, read_file(opts.stderr_path)};
  }

 private:
  static std::vector<std::string> server_argv(std::uint16_t port, const std::string& data_dir,
                                              const std::vector<std::string>& extra_flags) {
    std::vector<std::string> argv = {leasehold_binary(), "server",  "--listen",    loopback(port),
                                     "--data-dir",       data_dir, "--log-level", "warn"};
    argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
    return argv;
  }

  enum class Launch { kListening, kNotListening, kCannotRun };
  // Spawns the server on port_ and waits for it to listen (killing it if it
  // does not). kCannotRun: the exec failed, which another port will not help.
  Launch launch() {
    SpawnOptions opts;
    opts.stderr_path = stderr_path();
    opts.stdout_path = data_dir_ + ".stdout";
    auto p = Subprocess::spawn(server_argv(port_, data_dir_, flags_), opts);
    if (!p) {
      std::fprintf(stderr, "ServerProcess: cannot run %s (run the test from the build dir, or set "
                   "LEASEHOLD_BUILD_DIR): %s\n", leasehold_binary().c_str(), p.status().to_string().c_str());
      return Launch::kCannotRun;
    }
    process_ = std::move(p).value();
    if (wait_for_port(port_, std::chrono::seconds(10))) return Launch::kListening;
    process_.kill9();
    return Launch::kNotListening;
  }

  std::string data_dir_;
  std::vector<std::string> flags_;
  std::uint16_t port_ = 0;
  Subprocess process_;
  int refusals_ = 0;
};

}  // namespace leasehold::testing
