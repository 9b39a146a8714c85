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
  if (!failure_.is_ok() || lease_.holding_for_snapshot()) return;
  while (!queue_.empty()) {
    Batch batch = queue_.take_batch(options_.max_batch_commands, options_.max_batch_bytes);
    if (guard_) {
      if (Status st = guard_->before_append(batch.commands, lease_.durable_revision()); !st) {
        stop_writes(Status(st.code(), "revision record: " + st.message()), std::move(batch));
        return;
      }
    }
    LeaseBuffer::Chunk chunk;
    chunk.bytes = batch.bytes;
    for (std::size_t i = 0; i < batch.commands.size(); ++i) {
      ProposeDone& done = batch.dones[i];
      if (const auto* put = std::get_if<core::FencePut>(&batch.commands[i].body)) {
        std::optional<core::FencedValue> before = state_.fence_get(put->key);
        core::ApplyResult result = apply_one(0, batch.commands[i], nullptr);  // index 0: not written yet
        if (!result.reply.is_error()) lease_.fence_put(put->key, std::move(before), state_.revision());
        if (done) chunk.held_replies.emplace_back(std::move(done), std::move(result));
      } else {
        apply_one(0, batch.commands[i], &done);
      }
    }
    chunk.revision_after = state_.revision();
    chunk.commands = std::move(batch.commands);
    snapshot_due_.note(chunk.commands.size(), chunk.bytes);
    lease_.add(std::move(chunk));
  }
  lease_write();
}

bool Node::Impl::lease_write_can_wait() const {
  if (options_.lease_write_interval.count() <= 0 || shutdown_.requested() || lease_.holding_for_snapshot()) {
    return false;
  }
  return !lease_.holds_reply();
}

void Node::Impl::end_due_lease_write() {
  if (lease_.write_at() && clock_.now() >= *lease_.write_at()) lease_write();
}

void Node::Impl::lease_write() {
  if (append_.busy() || lease_.unwritten_empty() || !failure_.is_ok()) return;
  if (lease_write_can_wait()) {
    if (!lease_.write_at()) lease_.set_write_at(append_.started() + options_.lease_write_interval);
    if (clock_.now() < *lease_.write_at()) return;  // a timer deadline (next_timer_deadline)
  }
  lease_.clear_write_at();
  std::vector<core::Command> all = lease_.take_for_write(options_.max_batch_commands, options_.max_batch_bytes);
  append_.begin(clock_.now());
  log_->append(core::encode_batch(all), [weak = weak_from_this(), post = post_](Result<log::LogIndex> r) {
    post([weak, r = std::move(r)]() mutable {
      if (auto self = weak.lock()) self->on_appended(std::move(r));
    });
  });
}

void Node::Impl::on_lease_appended(Result<log::LogIndex> result) {
  (void)append_.finish(clock_.now());
  LeaseBuffer::Written written = lease_.finish_write();
  const std::size_t commands = written.commands;
  if (observer_.committed) observer_.committed(commands, append_.last_latency(), result.is_ok());
  if (!result) {
    // Already answered commands are lost if the process stops now; held
    // replies get the failure (outcome unknown). The node stops writing; the
    // next start is unclean and quarantines.
    Batch held;
    for (LeaseBuffer::Chunk& chunk : written.chunks) {
      for (auto& [done, reply] : chunk.held_replies) held.dones.push_back(std::move(done));
    }
    lease_.drop_unwritten(held.dones);
    stop_writes(result.status(), std::move(held));
    maybe_finish_shutdown();
    return;
  }
  LEASEHOLD_ASSERT(!written.chunks.empty(), "a lease-mode append completed with no chunk written (index {})",
                   *result);
  applied_index_ = *result;  // the log now holds the state up to revision_after
  lease_.set_durable(written.chunks.back().revision_after);
  ++counters_.batches_committed;
  counters_.commands_committed += commands;
  for (LeaseBuffer::Chunk& chunk : written.chunks) {
    for (auto& [done, reply] : chunk.held_replies) done(reply);
  }
  if (lease_.unwritten_empty()) {
    // The state equals the log: a due snapshot can be taken now.
    maybe_snapshot();
    if (lease_.holding_for_snapshot()) {
      lease_.set_holding_for_snapshot(false);
      schedule_append();
    }
  } else {
    const bool due = snapshot_due_.due(options_.snapshot_every_commands, options_.snapshot_every_bytes);
    if (due && !snapshot_.in_flight()) lease_.set_holding_for_snapshot(true);
    lease_write();
  }
  release_apply_waiters();
  maybe_finish_shutdown();
}

}  // namespace leasehold::node
