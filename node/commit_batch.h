// node/commit_batch.h: Batch, commands that travel together: one log append
// (group commit) or one committed entry being applied, with the callbacks
// that answer them (same order; a followed entry has none).
//
// Ownership: owns its commands and callbacks. Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <vector>

#include "core/command.h"
#include "node/node.h"

namespace leasehold::node {

struct Batch {
  std::vector<core::Command> commands;
  std::vector<Node::ProposeDone> dones;  // empty, or one per command
  std::size_t bytes = 0;                 // encoded size of the commands
};

}  // namespace leasehold::node
