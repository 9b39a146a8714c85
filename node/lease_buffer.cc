// node/lease_buffer.cc: the lease mode's write-behind buffer
// (node/lease_buffer.h).
#include "node/lease_buffer.h"

#include <algorithm>

#include "common/assert.h"

namespace leasehold::node {

void LeaseBuffer::add(Chunk chunk) {
  unwritten_commands_ += chunk.commands.size();
  unwritten_.push_back(std::move(chunk));
}

bool LeaseBuffer::holds_reply() const {
  for (const Chunk& chunk : unwritten_) {
    if (!chunk.held_replies.empty()) return true;
  }
  return false;
}

std::vector<core::Command> LeaseBuffer::take_for_write(std::size_t max_commands, std::size_t max_bytes) {
  LEASEHOLD_ASSERT(writing_.empty(), "a lease-mode write begun while {} chunks are being written", writing_.size());
  std::size_t commands = 0;
  std::size_t bytes = 0;
  std::vector<core::Command> all;
  all.reserve(std::min(unwritten_commands_, max_commands));
  while (!unwritten_.empty()) {
    Chunk& next = unwritten_.front();
    const bool fits = commands + next.commands.size() <= max_commands && bytes + next.bytes <= max_bytes;
    if (!writing_.empty() && !fits) break;
    commands += next.commands.size();
    bytes += next.bytes;
    for (core::Command& c : next.commands) all.push_back(std::move(c));
    next.commands.clear();
    writing_.push_back(std::move(next));
    unwritten_.pop_front();
  }
  writing_commands_ = commands;
  return all;
}

LeaseBuffer::Written LeaseBuffer::finish_write() {
  Written written{std::move(writing_), writing_commands_};
  writing_.clear();
  unwritten_commands_ -= writing_commands_;
  writing_commands_ = 0;
  return written;
}

void LeaseBuffer::drop_unwritten(std::vector<Node::ProposeDone>& dones) {
  for (Chunk& chunk : unwritten_) {
    for (auto& [done, reply] : chunk.held_replies) dones.push_back(std::move(done));
  }
  unwritten_.clear();
  unwritten_commands_ = 0;
}

void LeaseBuffer::set_durable(core::Revision revision) {
  LEASEHOLD_ASSERT(revision >= durable_revision_, "the durable revision fell from {} to {}", durable_revision_,
                   revision);
  durable_revision_ = revision;
  std::erase_if(undurable_fences_, [revision](const auto& entry) { return entry.second.last_put <= revision; });
}

void LeaseBuffer::fence_put(const std::string& key, std::optional<core::FencedValue> before, core::Revision revision) {
  auto it = undurable_fences_.try_emplace(key, UndurableFence{std::move(before), 0}).first;
  it->second.last_put = revision;
}

const std::optional<core::FencedValue>* LeaseBuffer::undurable_fence(std::string_view key) const {
  const auto found = undurable_fences_.find(key);
  return found == undurable_fences_.end() ? nullptr : &found->second.durable;
}

}  // namespace leasehold::node
