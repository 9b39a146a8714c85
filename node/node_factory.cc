#include "node/node_factory.h"

#include <utility>

#include "log/revision_record.h"
#include "log/rocksdb_log.h"
#include "node/revision_guard.h"

namespace leasehold::node {

Result<std::unique_ptr<Node>> make_embedded_node(EmbeddedNodeOptions options, Clock& clock, Executor post) {
  log::RocksLogOptions log_options;
  log_options.dir = options.data_dir;
  log_options.on_synced_write = std::move(options.on_synced_write);
  log_options.accept_lost_entries = options.recover_lost_log;
  auto log = log::open_rocksdb_log(log_options);
  if (!log) return log.status();
  if (options.on_log_opened) options.on_log_opened((*log)->describe());
  auto loaded = log::load_revision_record(options.data_dir);
  if (!loaded) return loaded.status();
  NodeOptions node_options = std::move(options.node);
  RevisionGuardOptions guard;
  guard.store = [dir = options.data_dir](const log::RevisionRecord& r) { return log::store_revision_record(dir, r); };
  guard.loaded = std::move(loaded).value();
  guard.block = options.revision_block;
  guard.recover_lost_log = options.recover_lost_log;
  guard.revision_floor = options.revision_floor;
  guard.max_ttl_fallback_ms = node_options.limits.max_ttl_ms;
  guard.lease = node_options.acknowledge_before_durable;
  node_options.revision_guard = std::move(guard);
  return Node::open(std::move(node_options), std::move(log).value(), clock, std::move(post));
}

}  // namespace leasehold::node
