// demo/loopback.h: ports on 127.0.0.1 for the demo's private services, and
// a private scratch directory.
// Thread-safety: free functions are safe anywhere; ScratchDir has one owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/loopback.h"
#include "leasehold/status.h"

namespace leasehold::demo {

// Ports on 127.0.0.1: common/loopback.h.
using net::pick_free_port;
using net::wait_until_accepting;

// A fresh directory "/tmp/<prefix>.XXXXXX", removed with its contents when
// the object dies.
class ScratchDir {
 public:
  static Result<ScratchDir> create(const std::string& prefix);
  ScratchDir() = default;
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&& other) noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::string& path() const { return path_; }
  void remove_now();

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace leasehold::demo
