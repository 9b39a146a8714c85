// node/lease_buffer.h: LeaseBuffer, the write-behind buffer of the `lease`
// durability mode (NodeOptions::acknowledge_before_durable;
// node/lease_commit.cc): commands applied and answered but not yet durable,
// in apply order. A chunk is what one apply round took; an append writes
// several chunks at once (take_for_write), and they stay "writing" until the
// log answered (finish_write).
//
// It also keeps what readers may see of fenced values: for each key whose
// value in the state comes from a FENCE.PUT applied but not yet durable, the
// value from before the first such put (nullopt: none), shown by
// Node::fence_get until the revision of the last one is durable.
//
// And the two things that hold the writer: a due snapshot (applies wait
// until the log caught up) and the pace of the next append
// (NodeOptions::lease_write_interval).
//
// Invariants: commands() counts the commands in the unwritten and writing
// chunks; durable_revision() never falls.
// Errors: none. Ownership: owns the chunks, their commands and the replies
// held until durable (FENCE.PUT's).
// Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/state_machine.h"
#include "node/clock.h"
#include "node/node.h"

namespace leasehold::node {

class LeaseBuffer {
 public:
  struct Chunk {
    std::vector<core::Command> commands;
    std::size_t bytes = 0;
    core::Revision revision_after = 0;  // the state's revision after the chunk
    // Replies held until the chunk is durable (FENCE.PUT: fenced data stays
    // durable before it is acknowledged in every mode).
    std::vector<std::pair<Node::ProposeDone, core::ApplyResult>> held_replies;
  };
  struct Written {
    std::vector<Chunk> chunks;  // their commands were moved to the append
    std::size_t commands = 0;
  };

  // An applied chunk, to be written.
  void add(Chunk chunk);
  bool unwritten_empty() const { return unwritten_.empty(); }
  bool writing() const { return !writing_.empty(); }
  std::size_t commands() const { return unwritten_commands_; }
  // True when an unwritten chunk holds a reply (it may not wait for the pace).
  bool holds_reply() const;

  // Moves unwritten chunks to "writing", up to the batch limits (at least
  // one chunk), and returns their commands for one append.
  std::vector<core::Command> take_for_write(std::size_t max_commands, std::size_t max_bytes);
  // The append of the writing chunks completed (either way).
  Written finish_write();
  // The append failed: drops the unwritten chunks, handing over their held
  // replies (appended to `dones`).
  void drop_unwritten(std::vector<Node::ProposeDone>& dones);

  // The state's revision the log holds durably; forgets the undurable
  // fenced values the log now holds.
  core::Revision durable_revision() const { return durable_revision_; }
  void set_durable(core::Revision revision);

  // A FENCE.PUT of `key` applied at `revision`, not yet durable; `before` is
  // the key's value before it (kept from the first such put only).
  void fence_put(const std::string& key, std::optional<core::FencedValue> before, core::Revision revision);
  // The durable value of `key` if it has undurable puts (nullptr if none).
  const std::optional<core::FencedValue>* undurable_fence(std::string_view key) const;

  // A snapshot is due: applies wait until the log caught up.
  bool holding_for_snapshot() const { return hold_for_snapshot_; }
  void set_holding_for_snapshot(bool hold) { hold_for_snapshot_ = hold; }

  // When the paced next append may start.
  const std::optional<TimePoint>& write_at() const { return write_at_; }
  void set_write_at(TimePoint at) { write_at_ = at; }
  void clear_write_at() { write_at_.reset(); }

 private:
  struct UndurableFence {
    std::optional<core::FencedValue> durable;
    core::Revision last_put = 0;
  };

  std::deque<Chunk> unwritten_;
  std::vector<Chunk> writing_;          // the append in flight
  std::size_t unwritten_commands_ = 0;  // in unwritten_ and writing_
  std::size_t writing_commands_ = 0;    // in writing_
  core::Revision durable_revision_ = 0;
  std::map<std::string, UndurableFence, std::less<>> undurable_fences_;
  bool hold_for_snapshot_ = false;
  std::optional<TimePoint> write_at_;
};

}  // namespace leasehold::node
