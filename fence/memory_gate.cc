// fence/memory_gate.cc: InMemoryFenceGate, one mutex over an ordered map.
#include <string>

#include "leasehold/fence.h"

namespace leasehold::fence {

InMemoryFenceGate::InMemoryFenceGate(std::size_t max_keys) : max_keys_(max_keys) {}

Result<Admission> InMemoryFenceGate::admit(std::string_view key, Token token) {
  if (Status s = validate_key(key); !s) return s;
  std::lock_guard lock(mu_);
  auto it = highest_.find(key);
  if (it == highest_.end()) {
    if (highest_.size() >= max_keys_) {
      return Status(ErrorCode::kLimitExceeded,
                    "in-memory fence gate is full: " + std::to_string(max_keys_) +
                        " keys tracked; cannot admit new key '" + std::string(key) + "'");
    }
    highest_.emplace(std::string(key), token);
    return Admission{true, token};
  }
  if (token < it->second) return Admission{false, it->second};
  it->second = token;
  return Admission{true, token};
}

Result<std::optional<Token>> InMemoryFenceGate::highest(std::string_view key) {
  if (Status s = validate_key(key); !s) return s;
  std::lock_guard lock(mu_);
  auto it = highest_.find(key);
  if (it == highest_.end()) return std::optional<Token>();
  return std::optional<Token>(it->second);
}

std::size_t InMemoryFenceGate::size() const {
  std::lock_guard lock(mu_);
  return highest_.size();
}

}  // namespace leasehold::fence
