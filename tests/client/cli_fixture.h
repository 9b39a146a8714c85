// tests/client/cli_fixture.h: the CLI test fixture: a real `leasehold server`
// and helpers to run the real `leasehold` binary against it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testkit/server_process.h"
#include "testkit/eventually.h"

namespace leasehold::testing {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start(dir_.file("data"))); }

  SpawnOptions opts(const std::string& tag, const std::string& endpoints = "") {
    SpawnOptions o;
    o.env = {{"LEASEHOLD_ENDPOINTS", endpoints.empty() ? server_.endpoint() : endpoints}};
    o.stdout_path = dir_.file(tag + ".out");
    o.stderr_path = dir_.file(tag + ".err");
    return o;
  }
  Subprocess spawn(const std::string& tag, std::vector<std::string> args,
                   const std::string& endpoints = "") {
    args.insert(args.begin(), leasehold_binary());
    auto p = Subprocess::spawn(args, opts(tag, endpoints));
    EXPECT_TRUE(p.is_ok()) << p.status().to_string();
    return p ? std::move(p).value() : Subprocess();
  }
  CliRun run(const std::string& tag, std::vector<std::string> args, const std::string& endpoints = "",
          std::chrono::milliseconds timeout = 20s) {
    Subprocess p = spawn(tag, std::move(args), endpoints);
    CliRun r;
    r.code = p.wait(timeout).value_or(-1);
    r.out = read_file(dir_.file(tag + ".out"));
    r.err = read_file(dir_.file(tag + ".err"));
    return r;
  }
  // Waits until `path` contains `needle`.
  static bool wait_for_text(const std::string& path, const std::string& needle,
                            std::chrono::milliseconds limit = 10s) {
    return eventually([&] { return read_file(path).find(needle) != std::string::npos; }, limit);
  }
  // A field of the first holder of `lock`, via `leasehold info --json`.
  std::string holder_field(const std::string& lock, const std::string& field) {
    CliRun r = run("info-" + lock + "-" + field, {"info", lock, "--json"});
    const std::string key = "\"" + field + "\":";
    auto at = r.out.find(key);
    if (at == std::string::npos) return "";
    at += key.size();
    return r.out.substr(at, r.out.find_first_of(",}", at) - at);
  }
  // The session holding `lock`.
  std::string holder_session(const std::string& lock) { return holder_field(lock, "session"); }

  TempDir dir_{"client-cli"};
  ServerProcess server_;
};

}  // namespace leasehold::testing
