// node/node_factory.h: builds the node of an embedded (single-process)
// server: the RocksDB log in data_dir, the durable revision record next to
// it (node/revision_guard.h), and the Node over them, recovered from that
// log. Cluster mode builds its node through cluster::ClusterMember instead.
//
// Errors: the log's open errors (kIoError, kCorruption, ...), the revision
// record's (kCorruption naming the file, kIoError), and Node::open()'s. On
// error nothing stays open.
// Thread-safety: call from the thread that will drive the node (the
// server's loop thread); `clock` must outlive the node.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "node/clock.h"
#include "node/node.h"

namespace leasehold::node {

struct EmbeddedNodeOptions {
  std::string data_dir;  // the log and the revision record
  // The node's options; revision_guard is filled in from the fields below.
  NodeOptions node;
  bool recover_lost_log = false;            // --recover-lost-log
  std::uint64_t revision_floor = 0;         // --revision-floor
  std::uint64_t revision_block = 1u << 20;  // revisions reserved per record write
  // Each synced log write's duration (metrics); may be empty. Called on the
  // log's thread.
  std::function<void(std::chrono::steady_clock::duration)> on_synced_write;
  // Called once the log is open, with its description (for the start's log
  // line); may be empty.
  std::function<void(std::string_view description)> on_log_opened;
};

Result<std::unique_ptr<Node>> make_embedded_node(EmbeddedNodeOptions options, Clock& clock, Executor post);

}  // namespace leasehold::node
