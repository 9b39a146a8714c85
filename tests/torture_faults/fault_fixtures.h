// tests/torture_faults/fault_fixtures.h: helpers shared by the tests of the
// fault injectors: a real server started under the disk-fault shim, the
// `leasehold-power-cut` tool, opening a session and reading fields of RESP2
// replies.
//
// The server's environment is set with ScopedEnv around start() only (the
// child copies it at spawn), so the tool and other children never run
// under the shim. Thread-safety: one owner per object.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "testkit/server_process.h"
#include "torture/faults/disk_fault_shim.h"

namespace leasehold::testing {

// Sets environment variables for its lifetime (nullptr value: unset), then
// restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::pair<std::string, const char*>>& vars) {
    for (auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value) {
        ::setenv(name.c_str(), value, 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ~ScopedEnv() {
    for (auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The value after `key` in a flat RESP2 map reply (array of key, value...).
inline std::optional<resp::Value> field(const resp::Value& map, const std::string& key) {
  for (std::size_t i = 0; i + 1 < map.elements.size(); i += 2) {
    if (map.elements[i].str == key) return map.elements[i + 1];
  }
  return std::nullopt;
}

// SESSION.OPEN with `ttl_ms`; the session id as text (a test failure, and
// "0", if the server refused).
inline std::string open_session(RespClient& c, int ttl_ms = 600'000) {
  const resp::Value v = c.call({"SESSION.OPEN", std::to_string(ttl_ms)});
  EXPECT_EQ(v.type, resp::Type::kInteger) << v.str;
  return std::to_string(v.integer);
}

// A server whose data dir is under the disk-fault shim, with its control
// file and journal beside it.
class ShimmedServer {
 public:
  explicit ShimmedServer(const TempDir& dir)
      : data_(dir.path() + "/data"), control_(dir.path() + "/control"), journal_(dir.path() + "/journal") {
    std::filesystem::create_directories(data_);
  }
  bool start(const std::vector<std::string>& flags = {}, bool unsafe_allowed = false) {
    ScopedEnv env({{"LD_PRELOAD", LEASEHOLD_DISK_FAULT_SHIM},
                   {torture::disk_fault::kDirEnv, data_.c_str()},
                   {torture::disk_fault::kControlEnv, control_.c_str()},
                   {torture::disk_fault::kJournalEnv, journal_.c_str()},
                   {"LEASEHOLD_UNSAFE_TEST_FAULTS", unsafe_allowed ? "1" : nullptr}});
    return server_.start(data_, flags);
  }
  // Replaces the control file (torture/faults/disk_fault_shim.h).
  void set_faults(const std::string& words) {
    const std::string tmp = control_ + ".tmp";
    std::ofstream(tmp) << words << "\n";
    std::filesystem::rename(tmp, control_);
  }
  // Runs `leasehold-power-cut` on the journal; its exit code, output in `out`.
  int power_cut(std::string* out = nullptr) {
    SpawnOptions opts;
    opts.stdout_path = journal_ + ".power-cut.out";
    auto p = Subprocess::spawn({LEASEHOLD_POWER_CUT, journal_}, opts);
    if (!p) return -1;
    const auto code = p->wait(std::chrono::seconds(60));
    if (out) *out = read_file(opts.stdout_path);
    return code.value_or(-1);
  }
  ServerProcess& server() { return server_; }
  const std::string& data_dir() const { return data_; }

 private:
  std::string data_, control_, journal_;
  ServerProcess server_;
};

}  // namespace leasehold::testing
