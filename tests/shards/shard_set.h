// tests/shards/shard_set.h: N real `leasehold server` processes on 127.0.0.1
// as the shards of one namespace (docs/scale-out.md): shard k (1-based) has
// --shard-id k, its own data dir, and every other shard as a peer. The
// slots are split evenly unless the test gives the ranges.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "testkit/net.h"
#include "testkit/server_process.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {

class ShardSet {
 public:
  // Shard k of n gets 16384 * k / n to 16384 * (k + 1) / n - 1 (0-based k), as
  // scripts/shards.sh splits them: "0-5460", "5461-10921", "10922-16383" for n = 3.
  static std::vector<std::string> even_split(std::size_t n) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t first = 16384 * i / n;
      const std::size_t last = 16384 * (i + 1) / n - 1;
      out.push_back(std::to_string(first) + "-" + std::to_string(last));
    }
    return out;
  }

  explicit ShardSet(const std::string& name) : dir_(name) {}

  // Starts one shard per entry of `slots` on fresh ports (retrying with
  // others if a port was taken meanwhile). False after printing why.
  bool start(const std::vector<std::string>& slots) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      ports_.clear();
      for (std::size_t i = 0; i < slots.size(); ++i) ports_.push_back(free_port());
      if (launch(slots)) return true;
      stop();
    }
    return false;
  }

  // Stops every shard and starts them again on the same ports and data dirs
  // with this assignment (the map changed while they were down).
  bool restart(const std::vector<std::string>& slots) {
    stop();
    return launch(slots);
  }

  void stop() {
    for (auto& s : servers_) s->stop();
  }

  // The flags of shard `index` (0-based) under `slots`.
  std::vector<std::string> flags(std::size_t index, const std::vector<std::string>& slots) const {
    std::vector<std::string> f = {"--shard-id", std::to_string(index + 1), "--shard-slots", slots[index]};
    for (std::size_t j = 0; j < slots.size(); ++j) {
      if (j == index) continue;
      f.push_back("--shard-peers");
      f.push_back(std::to_string(j + 1) + "@" + loopback(ports_[j]) + "=" + slots[j]);
    }
    return f;
  }

  std::string data_dir(std::size_t index) const { return dir_.file("shard-" + std::to_string(index + 1)); }
  std::size_t size() const { return ports_.size(); }
  std::uint16_t port(std::size_t index) const { return ports_[index]; }
  std::string endpoint(std::size_t index) const { return loopback(ports_[index]); }
  ServerProcess& server(std::size_t index) { return *servers_[index]; }
  RespClient client(std::size_t index) { return servers_[index]->client(); }
  const TempDir& dir() const { return dir_; }

 private:
  bool launch(const std::vector<std::string>& slots) {
    while (servers_.size() < slots.size()) servers_.push_back(std::make_unique<ServerProcess>());
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (!servers_[i]->start_on(ports_[i], data_dir(i), flags(i, slots))) {
        std::fprintf(stderr, "ShardSet: shard %zu never listened on port %u\n", i + 1,
                     static_cast<unsigned>(ports_[i]));
        return false;
      }
    }
    return true;
  }

  TempDir dir_;
  std::vector<std::uint16_t> ports_;
  std::vector<std::unique_ptr<ServerProcess>> servers_;
};

}  // namespace leasehold::testing
