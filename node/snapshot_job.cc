// node/snapshot_job.cc: the snapshot in flight (node/snapshot_job.h).
#include "node/snapshot_job.h"

#include "core/state_machine.h"

namespace leasehold::node {

void SnapshotJob::finish(Status status) {
  in_flight_ = false;
  last_error_ = std::move(status);
}

void SnapshotJob::abandon() {
  streaming_ = false;
  in_flight_ = false;
}

void SnapshotJob::encode_in_steps(log::LogIndex index, bool streaming) {
  index_ = index;
  streaming_ = streaming;
  if (streaming) stream_crc_ = 0;
}

void SnapshotJob::streamed(std::string_view piece) {
  stream_crc_ = core::StateMachine::snapshot_checksum(piece, stream_crc_);
}

void SnapshotJob::run_encoder(std::jthread encoder) {
  join_encoder();
  encoder_ = std::move(encoder);
}

void SnapshotJob::join_encoder() {
  if (encoder_.joinable()) encoder_.join();
}

}  // namespace leasehold::node
