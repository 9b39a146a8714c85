#include "demo/loopback.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

namespace leasehold::demo {

Result<ScratchDir> ScratchDir::create(const std::string& prefix) {
  std::string templ = "/tmp/" + prefix + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return Status(ErrorCode::kIoError, "mkdtemp " + templ + ": " + std::strerror(errno));
  }
  return ScratchDir(std::string(buf.data()));
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

ScratchDir& ScratchDir::operator=(ScratchDir&& other) noexcept {
  if (this != &other) {
    remove_now();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

ScratchDir::~ScratchDir() { remove_now(); }

void ScratchDir::remove_now() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  path_.clear();
}

}  // namespace leasehold::demo
