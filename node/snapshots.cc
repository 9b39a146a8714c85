// node/snapshots.cc: the node's snapshots: when one is due (by commands or
// bytes since the last), encoding the state in a forked child or in steps on
// the loop (streamed to the log when it streams snapshots), and handing the
// image to the log (docs/log-and-node.md, Snapshots).
#include <algorithm>

#include "common/assert.h"
#include "node/node_impl.h"
#include "node/snapshot_child.h"

namespace leasehold::node {

void Node::Impl::maybe_snapshot() {
  if (snapshot_.in_flight() || !failure_.is_ok() || applied_index_ == 0 || applying_.mid_batch()) return;
  // The snapshot is labelled applied_index_: only valid while the state equals
  // the log (`lease` mode applies ahead of it; lease_commit.cc holds applies).
  // Chunks being written are applied but not yet at applied_index_ either.
  if (!lease_.unwritten_empty() || lease_.writing()) return;
  if (!snapshot_due_.due(options_.snapshot_every_commands, options_.snapshot_every_bytes)) return;
  snapshot_due_.restart();
  snapshot_.begin();
  if (options_.snapshot_in_child && snapshot_in_child()) return;
  // Encoded on the loop thread in steps (core/state_machine.h,
  // begin_snapshot): between two steps the loop serves clients and applies
  // commands, which the image at snapshot_.index() never sees.
  state_.begin_snapshot();
  snapshot_.encode_in_steps(applied_index_, log_->streams_snapshots());
  if (snapshot_.streaming()) log_->begin_snapshot_stream(snapshot_.index());
  step_snapshot();
}

void Node::Impl::step_snapshot() {
  if (!state_.snapshot_in_progress()) {
    // reset_to_snapshot() replaced the state: that image is gone, and the
    // new state has its own log position. Not a failure.
    if (snapshot_.streaming()) log_->abandon_snapshot_stream();
    snapshot_.abandon();
    maybe_finish_shutdown();
    return;
  }
  ++counters_.snapshot_steps;
  const std::size_t chunk = std::max<std::size_t>(options_.snapshot_step_sessions, 1);
  const auto started = std::chrono::steady_clock::now();
  bool done = state_.snapshot_step(chunk);
  while (!done && options_.snapshot_step.count() > 0 &&
         std::chrono::steady_clock::now() - started < options_.snapshot_step) {
    done = state_.snapshot_step(chunk);
  }
  if (!done) {
    if (snapshot_.streaming()) stream_snapshot_pieces(state_.take_snapshot_pieces());
    post_guarded([](Impl& self) { self.step_snapshot(); });
    return;
  }
  std::vector<std::string> pieces = state_.finish_snapshot();
  if (snapshot_.streaming()) {
    stream_snapshot_pieces(std::move(pieces));
    log_->add_snapshot_piece(core::StateMachine::snapshot_trailer(snapshot_.stream_checksum()));
    snapshot_.end_streaming();
    // Written and fsynced on the log thread, like save_snapshot().
    log_->finish_snapshot_stream([weak = weak_from_this(), post = post_](Status st) {
      post([weak, st = std::move(st)]() mutable {
        if (auto self = weak.lock()) self->on_snapshot_saved(std::move(st));
      });
    });
    return;
  }
  std::size_t bytes = 0;
  for (const std::string& piece : pieces) bytes += piece.size();
  if (bytes < kJoinOnLoopBytes) {
    save_snapshot(snapshot_.index(), core::StateMachine::join_snapshot(std::move(pieces)));
    return;
  }
  // Joining and checksumming hundreds of MB would stop the loop again: a
  // helper thread does it and posts the bytes back.
  snapshot_.join_encoder();
  snapshot_.run_encoder(std::jthread([pieces = std::move(pieces), index = snapshot_.index(),
                                      weak = weak_from_this(), post = post_]() mutable {
    std::string joined = core::StateMachine::join_snapshot(std::move(pieces));
    post([weak, index, joined = std::move(joined)]() mutable {
      if (auto self = weak.lock()) self->save_snapshot(index, std::move(joined));
    });
  }));
}

void Node::Impl::stream_snapshot_pieces(std::vector<std::string> pieces) {
  for (std::string& piece : pieces) {
    if (piece.empty()) continue;
    snapshot_.streamed(piece);
    log_->add_snapshot_piece(std::move(piece));
  }
}

bool Node::Impl::snapshot_in_child() {
  // The previous encoder posted its result before the job was finished, so
  // this join waits at most for its return.
  snapshot_.join_encoder();
  Result<SnapshotChild> child = SnapshotChild::start(state_);
  if (!child) return false;
  snapshot_.run_encoder(std::jthread([child = std::move(*child), index = applied_index_, weak = weak_from_this(),
                                      post = post_]() mutable {
    Result<std::string> bytes = child.finish();
    post([weak, index, bytes = std::move(bytes)]() mutable {
      if (auto self = weak.lock()) self->save_snapshot(index, std::move(bytes));
    });
  }));
  return true;
}

void Node::Impl::save_snapshot(log::LogIndex index, Result<std::string> bytes) {
  if (!bytes) return on_snapshot_saved(bytes.status());
  // Written and fsynced on the log thread.
  log_->save_snapshot(index, std::move(bytes).value(), [weak = weak_from_this(), post = post_](Status st) {
    post([weak, st = std::move(st)]() mutable {
      if (auto self = weak.lock()) self->on_snapshot_saved(std::move(st));
    });
  });
}

void Node::Impl::on_snapshot_saved(Status status) {
  // Not fatal when it failed: the log and the entries are intact; the next
  // trigger retries.
  if (status.is_ok()) ++counters_.snapshots_saved;
  snapshot_.finish(std::move(status));
  // Commands applied while this snapshot was in flight may have made the
  // next one due; without this it would wait for one more command, which
  // an idle node never gets.
  if (!shutdown_.requested()) maybe_snapshot();
  maybe_finish_shutdown();
}

}  // namespace leasehold::node
