// node/lease_commit.cc: the `lease` durability mode
// (NodeOptions::acknowledge_before_durable; DESIGN.md section 6).
//
// Proposals are applied and answered as soon as the loop gets to them (one
// round per loop iteration, like a batch), and written behind: one append
// at a time carries every chunk applied since the last one started, and
// appends start at most once per NodeOptions::lease_write_interval (fewer
// fsyncs under load). No reply waits for an fsync, except FENCE.PUT's:
// fenced values are the resource's data and are acknowledged only once
// durable, so a chunk holding one is written without waiting for the pace.
//
// What keeps the promises: the revision guard bounds every revision before
// it is applied (tokens never go backwards, whatever the disk lost), and it
// records that this run acknowledges before durability, so that the start
// after an unclean stop expires every session and grants nothing for the
// longest TTL in use (node/revision_guard.h). A clean shutdown writes
// everything and marks the record clean: no quarantine follows it.
//
// Fenced values are read only once durable: FENCE.GET shows a key's value
// from before its FENCE.PUTs that are applied but not yet written
// (Node::fence_get), so no reader sees a value that a crash could take back.
//
// Snapshots need the state to equal the log: when one is due while chunks
// are unwritten, applying pauses (proposals wait in the queue) until the
// log caught up, for about one fsync.
#include <optional>
#include <variant>

#include "common/assert.h"
#include "core/command_codec.h"
#include "node/node_impl.h"

namespace leasehold::node {

void Node::Impl::lease_apply_queued() {
  if (!failure_.is_ok() || hold_for_snapshot_) return;
  while (!queued_.empty()) {
    Batch batch = take_queued_batch();
    if (guard_) {
      if (Status st = guard_->before_append(batch.commands, durable_revision_); !st) {
        stop_writes(Status(st.code(), "revision record: " + st.message()), std::move(batch));
        return;
      }
    }
    LeaseChunk chunk;
    chunk.bytes = batch.bytes;
    for (std::size_t i = 0; i < batch.commands.size(); ++i) {
      ProposeDone& done = batch.dones[i];
      if (const auto* put = std::get_if<core::FencePut>(&batch.commands[i].body)) {
        std::optional<core::FencedValue> before = state_.fence_get(put->key);
        core::ApplyResult result = apply_one(0, batch.commands[i], nullptr);  // index 0: not written yet
        if (!result.reply.is_error()) {
          auto it = undurable_fences_.try_emplace(put->key, UndurableFence{std::move(before), 0}).first;
          it->second.last_put = state_.revision();
        }
        if (done) chunk.held_replies.emplace_back(std::move(done), std::move(result));
      } else {
        apply_one(0, batch.commands[i], &done);
      }
    }
    chunk.revision_after = state_.revision();
    chunk.commands = std::move(batch.commands);
    commands_since_snapshot_ += chunk.commands.size();
    bytes_since_snapshot_ += chunk.bytes;
    unwritten_commands_ += chunk.commands.size();
    unwritten_.push_back(std::move(chunk));
  }
  lease_write();
}

bool Node::Impl::lease_write_can_wait() const {
  if (options_.lease_write_interval.count() <= 0 || shutting_down_ || hold_for_snapshot_) return false;
  for (const LeaseChunk& chunk : unwritten_) {
    if (!chunk.held_replies.empty()) return false;
  }
  return true;
}

void Node::Impl::end_due_lease_write() {
  if (lease_write_at_ && clock_.now() >= *lease_write_at_) lease_write();
}

void Node::Impl::lease_write() {
  if (append_in_flight_ || unwritten_.empty() || !failure_.is_ok()) return;
  if (lease_write_can_wait()) {
    if (!lease_write_at_) lease_write_at_ = append_started_ + options_.lease_write_interval;
    if (clock_.now() < *lease_write_at_) return;  // a timer deadline (next_timer_deadline)
  }
  lease_write_at_.reset();
  std::size_t commands = 0;
  std::size_t bytes = 0;
  std::vector<core::Command> all;
  all.reserve(std::min(unwritten_commands_, options_.max_batch_commands));
  while (!unwritten_.empty()) {
    LeaseChunk& next = unwritten_.front();
    const bool fits = commands + next.commands.size() <= options_.max_batch_commands &&
                      bytes + next.bytes <= options_.max_batch_bytes;
    if (!writing_.empty() && !fits) break;
    commands += next.commands.size();
    bytes += next.bytes;
    for (core::Command& c : next.commands) all.push_back(std::move(c));
    next.commands.clear();
    writing_.push_back(std::move(next));
    unwritten_.pop_front();
  }
  append_in_flight_ = true;
  append_started_ = clock_.now();
  writing_commands_ = commands;
  log_->append(core::encode_batch(all), [weak = weak_from_this(), post = post_](Result<log::LogIndex> r) {
    post([weak, r = std::move(r)]() mutable {
      if (auto self = weak.lock()) self->on_appended(std::move(r));
    });
  });
}

void Node::Impl::on_lease_appended(Result<log::LogIndex> result) {
  last_append_latency_ = clock_.now() - append_started_;
  append_in_flight_ = false;
  std::vector<LeaseChunk> written = std::move(writing_);
  writing_.clear();
  unwritten_commands_ -= writing_commands_;
  const std::size_t commands = writing_commands_;
  writing_commands_ = 0;
  if (observer_.committed) observer_.committed(commands, last_append_latency_, result.is_ok());
  if (!result) {
    // Already answered commands are lost if the process stops now; held
    // replies get the failure (outcome unknown). The node stops writing; the
    // next start is unclean and quarantines.
    Batch held;
    for (LeaseChunk& chunk : written) {
      for (auto& [done, reply] : chunk.held_replies) held.dones.push_back(std::move(done));
    }
    for (LeaseChunk& chunk : unwritten_) {
      for (auto& [done, reply] : chunk.held_replies) held.dones.push_back(std::move(done));
    }
    unwritten_.clear();
    unwritten_commands_ = 0;
    stop_writes(result.status(), std::move(held));
    maybe_finish_shutdown();
    return;
  }
  LEASEHOLD_ASSERT(!written.empty(), "a lease-mode append completed with no chunk written (index {})", *result);
  applied_index_ = *result;  // the log now holds the state up to revision_after
  durable_revision_ = written.back().revision_after;
  std::erase_if(undurable_fences_, [this](const auto& entry) { return entry.second.last_put <= durable_revision_; });
  ++batches_committed_;
  commands_committed_ += commands;
  for (LeaseChunk& chunk : written) {
    for (auto& [done, reply] : chunk.held_replies) done(reply);
  }
  if (unwritten_.empty()) {
    // The state equals the log: a due snapshot can be taken now.
    maybe_snapshot();
    if (hold_for_snapshot_) {
      hold_for_snapshot_ = false;
      schedule_append();
    }
  } else {
    const bool due = (options_.snapshot_every_commands != 0 &&
                      commands_since_snapshot_ >= options_.snapshot_every_commands) ||
                     (options_.snapshot_every_bytes != 0 && bytes_since_snapshot_ >= options_.snapshot_every_bytes);
    if (due && !snapshot_in_flight_) hold_for_snapshot_ = true;
    lease_write();
  }
  release_apply_waiters();
  maybe_finish_shutdown();
}

}  // namespace leasehold::node
