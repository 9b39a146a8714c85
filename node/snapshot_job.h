// node/snapshot_job.h: when a snapshot is due, and the one being taken
// (node/snapshots.cc; docs/log-and-node.md, Snapshots).
//
// SnapshotTrigger counts the commands and bytes applied since the last
// snapshot began; due() says whether either reached its configured bound
// (0 = no bound).
//
// SnapshotJob is the snapshot in flight (at most one): the index of an image
// encoded in steps on the loop, whether its pieces stream to the log (then
// the running checksum of the pieces streamed so far), the helper thread
// that waits for a snapshot child or joins a large image and posts the bytes
// back, and the outcome of the last one (a failure is not fatal: the next
// trigger retries).
//
// Invariant: begin() only while not in_flight(). The encoder thread is
// joined before the next one starts and on destruction.
// Errors: none; the node reports last_error() in its stats.
// Ownership: owns the encoder thread.
// Thread-safety: loop thread only (the encoder thread touches only what it
// was given and posts back through the node's Executor).
#pragma once

#include <cstdint>
#include <string_view>
#include <thread>

#include "leasehold/status.h"
#include "log/log.h"

namespace leasehold::node {

class SnapshotTrigger {
 public:
  void note(std::uint64_t commands, std::uint64_t bytes) {
    commands_ += commands;
    bytes_ += bytes;
  }
  bool due(std::uint64_t every_commands, std::uint64_t every_bytes) const {
    return (every_commands != 0 && commands_ >= every_commands) || (every_bytes != 0 && bytes_ >= every_bytes);
  }
  void restart() {
    commands_ = 0;
    bytes_ = 0;
  }

 private:
  std::uint64_t commands_ = 0;
  std::uint64_t bytes_ = 0;
};

class SnapshotJob {
 public:
  bool in_flight() const { return in_flight_; }
  void begin() { in_flight_ = true; }
  // The job ended (saved, failed, or abandoned when `status` is OK but
  // nothing was saved: see abandon()).
  void finish(Status status);
  // The image being encoded vanished (the state was replaced): not a failure.
  void abandon();
  const Status& last_error() const { return last_error_; }

  // Encoding in steps on the loop: the image's index, and whether its pieces
  // stream to the log.
  void encode_in_steps(log::LogIndex index, bool streaming);
  log::LogIndex index() const { return index_; }
  bool streaming() const { return streaming_; }
  void end_streaming() { streaming_ = false; }
  // Adds a streamed piece to the running checksum.
  void streamed(std::string_view piece);
  std::uint32_t stream_checksum() const { return stream_crc_; }

  // Starts `encoder` as the helper thread, after joining the previous one
  // (which posted its result before in_flight() was cleared, so this waits
  // at most for its return).
  void run_encoder(std::jthread encoder);
  void join_encoder();

 private:
  bool in_flight_ = false;
  log::LogIndex index_ = 0;
  bool streaming_ = false;
  std::uint32_t stream_crc_ = 0;
  Status last_error_;
  std::jthread encoder_;
};

}  // namespace leasehold::node
