#include "etcd/key_queue.h"

#include <charconv>
#include <condition_variable>
#include <mutex>

#include "etcd/watcher.h"

namespace leasehold::etcd {

using Clock = std::chrono::steady_clock;

std::string queue_key_name(std::string_view prefix, std::int64_t lease) {
  char hex[32];
  auto [end, ec] = std::to_chars(hex, hex + sizeof(hex), static_cast<std::uint64_t>(lease), 16);
  (void)ec;  // 32 bytes always fit a 64-bit number in hex
  std::string name(prefix);
  name += '/';
  name.append(hex, end);
  return name;
}

Compare still_owned(const QueueKey& mine) {
  return Compare::create_revision(mine.key, Compare::Op::kEqual, mine.create_revision);
}

Result<QueueKey> enqueue(Client& client, std::string_view prefix, std::int64_t lease, std::string_view value) {
  if (prefix.empty()) return Status(ErrorCode::kInvalidArgument, "etcd queue prefix must not be empty");
  if (lease == 0) return Status(ErrorCode::kInvalidArgument, "etcd queue needs a lease");
  QueueKey mine{queue_key_name(prefix, lease), 0, lease};
  auto created = client.txn({Compare::create_revision(mine.key, Compare::Op::kEqual, 0)},
                            {TxnOp::put(mine.key, std::string(value), lease)}, {TxnOp::get(mine.key)});
  if (!created) return created.status();
  if (created->succeeded) {
    mine.create_revision = created->revision;
    return mine;
  }
  const auto& existing = std::get<RangeResult>(created->responses.at(0));
  if (existing.kvs.empty()) {
    return Status(ErrorCode::kInternal, "etcd queue key '" + mine.key + "' vanished inside a txn");
  }
  mine.create_revision = existing.kvs[0].create_revision;
  if (existing.kvs[0].value != value) {
    auto updated = client.txn({still_owned(mine)}, {TxnOp::put(mine.key, std::string(value), lease)});
    if (!updated) return updated.status();
    if (!updated->succeeded) {
      return Status(ErrorCode::kSessionExpired, "etcd queue key '" + mine.key + "' is gone");
    }
  }
  return mine;
}

namespace {

// Waits until `key` is deleted (from revision `from` on), the deadline, or stop.
// Returns OK on deletion or when the watch ended (caller re-checks).
Status wait_for_delete(Client& client, const std::string& key, std::int64_t from, Clock::time_point deadline,
                       const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable cv;
  bool wake = false;
  auto notify = [&] {
    std::lock_guard lock(mu);
    wake = true;
    cv.notify_all();
  };
  auto watcher = Watcher::start(
      client, WatchOptions{key, {}, from},
      [&](const std::vector<WatchEvent>& events) {
        for (const WatchEvent& e : events) {
          if (e.type == WatchEvent::Type::kDelete) notify();
        }
      },
      [&](const WatchFailure&) { notify(); });
  if (!watcher) return watcher.status();
  std::stop_callback on_stop(stop, notify);
  std::unique_lock lock(mu);
  cv.wait_until(lock, deadline, [&] { return wake; });
  return Status::ok();
}

}  // namespace

Status wait_until_first(Client& client, std::string_view prefix, const QueueKey& mine,
                        Clock::time_point deadline, std::stop_token stop) {
  const std::string dir = std::string(prefix) + "/";
  const std::string dir_end = prefix_end(dir);
  while (true) {
    if (stop.stop_requested()) {
      return Status(ErrorCode::kTimedOut, "etcd queue wait for '" + mine.key + "' canceled");
    }
    if (Clock::now() >= deadline) {
      return Status(ErrorCode::kTimedOut, "etcd queue wait for '" + mine.key + "' passed its deadline");
    }
    RangeOptions predecessor;
    predecessor.limit = 1;
    predecessor.sort_target = SortTarget::kCreate;
    predecessor.sort_order = SortOrder::kDescend;
    predecessor.max_create_revision = mine.create_revision - 1;
    std::vector<TxnOp> reads{TxnOp::get(mine.key)};
    if (mine.create_revision > 1) reads.push_back(TxnOp::get(dir, dir_end, predecessor));
    auto snapshot = client.txn({}, reads);
    if (!snapshot) return snapshot.status();
    const auto& own = std::get<RangeResult>(snapshot->responses.at(0));
    if (own.kvs.empty() || own.kvs[0].create_revision != mine.create_revision) {
      return Status(ErrorCode::kSessionExpired,
                    "etcd queue key '" + mine.key + "' is gone (lease expired or revoked)");
    }
    if (snapshot->responses.size() < 2) return Status::ok();
    const auto& before = std::get<RangeResult>(snapshot->responses.at(1));
    if (before.kvs.empty()) return Status::ok();
    if (Status s = wait_for_delete(client, before.kvs[0].key, snapshot->revision + 1, deadline, stop); !s) {
      return s;
    }
  }
}

Status dequeue(Client& client, const QueueKey& mine) {
  auto result = client.txn({still_owned(mine)}, {TxnOp::del(mine.key)});
  return result.status();
}

}  // namespace leasehold::etcd
