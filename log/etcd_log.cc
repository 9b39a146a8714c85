// log/etcd_log.cc: the etcd log backend (see etcd_log.h).
#include "log/etcd_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "common/unsafe_test_faults.h"
#include "log/etcd_log_state.h"
#include "log/log_format.h"
#include "log/snapshot_file.h"

namespace leasehold::log {
namespace {

constexpr std::int64_t kReadPage = 64;


}  // namespace



EtcdLog::EtcdLog(EtcdLogOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>()), worker_(std::make_unique<Worker>()) {}

EtcdLog::~EtcdLog() { worker_.reset(); }

Result<std::unique_ptr<EtcdLog>> EtcdLog::open(EtcdLogOptions options) {
  if (!options.client) return Status(ErrorCode::kInvalidArgument, "etcd log needs a client");
  if (options.prefix.empty() || options.prefix.back() == '/') {
    return Status(ErrorCode::kInvalidArgument, "etcd log prefix must be non-empty without a trailing '/'");
  }
  if (options.local_dir.empty()) return Status(ErrorCode::kInvalidArgument, "etcd log needs a local dir");
  if (options.snapshot_chunk_bytes == 0 || options.snapshot_chunk_bytes > etcd::kMaxValueBytes) {
    return Status(ErrorCode::kInvalidArgument, "snapshot chunk size must be in 1..1 MiB");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.local_dir, ec);
  if (ec) return Status(ErrorCode::kIoError, "cannot create " + options.local_dir + ": " + ec.message());
  return std::unique_ptr<EtcdLog>(new EtcdLog(std::move(options)));
}

std::string EtcdLog::log_prefix(std::string_view prefix) { return etcd_log_prefix(prefix); }
std::string EtcdLog::log_key(std::string_view prefix, LogIndex index) { return etcd_log_key(prefix, index); }
std::optional<LogIndex> EtcdLog::parse_log_key(std::string_view prefix, std::string_view key) {
  return parse_etcd_log_key(prefix, key);
}
Result<std::string_view> EtcdLog::entry_batch(std::string_view value) { return etcd_entry_batch(value); }

Result<std::pair<LogIndex, std::int64_t>> EtcdLog::highest_index(etcd::Client& client, std::string_view prefix) {
  const std::string p = log_prefix(prefix);
  etcd::RangeOptions ro;
  ro.limit = 1;
  ro.keys_only = true;
  ro.sort_order = etcd::SortOrder::kDescend;
  ro.sort_target = etcd::SortTarget::kKey;
  auto r = client.range(p, etcd::prefix_end(p), ro);
  if (!r) return r.status();
  LogIndex highest = 0;
  if (!r->kvs.empty()) highest = parse_log_key(prefix, r->kvs.front().key).value_or(0);
  etcd::RangeOptions at;
  at.revision = r->revision;
  auto meta = client.range(meta_key(prefix), {}, at);
  if (!meta) return meta.status();
  if (!meta->kvs.empty() && meta->kvs.front().value.size() >= 12) {
    highest = std::max(highest, get_u64_le(std::string_view(meta->kvs.front().value).substr(4)));
  }
  return std::make_pair(highest, r->revision);
}

void EtcdLog::set_term(std::optional<etcd::QueueKey> term) {
  std::lock_guard lock(state_->mu);
  state_->term = std::move(term);
}
std::optional<etcd::QueueKey> EtcdLog::term() const {
  std::lock_guard lock(state_->mu);
  return state_->term;
}
void EtcdLog::appended(LogIndex index, std::int64_t revision) {
  std::lock_guard lock(state_->mu);
  raise_last(index);
  state_->last_append_revision = std::max(state_->last_append_revision, revision);
}
void EtcdLog::observe(LogIndex index) {
  std::lock_guard lock(state_->mu);
  raise_last(index);
}
void EtcdLog::raise_last(LogIndex index) {
  state_->position.last = std::max(state_->position.last, index);
  if (state_->position.first == 0) state_->position.first = index;
}
std::int64_t EtcdLog::read_revision() const {
  std::lock_guard lock(state_->mu);
  return state_->read_revision;
}
std::int64_t EtcdLog::last_append_revision() const {
  std::lock_guard lock(state_->mu);
  return state_->last_append_revision;
}
Position EtcdLog::position() const {
  std::lock_guard lock(state_->mu);
  return state_->position;
}
std::string EtcdLog::describe() const { return "etcd " + options_.prefix; }

void EtcdLog::append(std::string batch, AppendDone done) {
  if (state_->append_in_flight) {
    worker_->post([done = std::move(done)] {
      if (done) done(Status(ErrorCode::kInternal, "a second append while one is in flight"));
    });
    return;
  }
  if (batch.size() > kEtcdMaxBatchBytes) {
    const std::size_t size = batch.size();
    worker_->post([done = std::move(done), size] {
      if (done) {
        done(Status(ErrorCode::kLimitExceeded, "batch of " + std::to_string(size) +
                                                   " bytes exceeds the etcd entry limit " +
                                                   std::to_string(kEtcdMaxBatchBytes)));
      }
    });
    return;
  }
  state_->append_in_flight = true;
  worker_->post([this, batch = std::move(batch), done = std::move(done)] {
    const LogIndex index = position().last + 1;
    Result<LogIndex> r = do_append(index, batch);
    // UNSAFE TEST FAULT slow-etcd-append-reply (common/unsafe_test_faults.h):
    // a committed append reaches the node late (timing only).
    if (r && unsafe::enabled(unsafe::TestFault::kSlowEtcdAppendReply)) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    state_->append_in_flight = false;
    if (done) done(std::move(r));
  });
}

Result<LogIndex> EtcdLog::do_append(LogIndex index, const std::string& batch) {
  const std::optional<etcd::QueueKey> mine = term();
  if (!mine) return Status(ErrorCode::kConflict, "not the primary: this node holds no election key");
  const std::string value = encode_etcd_entry(mine->create_revision, batch);
  const std::string key = log_key(options_.prefix, index);
  const auto deadline = std::chrono::steady_clock::now() + options_.append_timeout;
  Status last_error;
  for (int attempt = 0;; ++attempt) {
    auto r = options_.client->txn(
        {etcd::still_owned(*mine), etcd::Compare::create_revision(key, etcd::Compare::Op::kEqual, 0)},
        {etcd::TxnOp::put(key, value)}, {etcd::TxnOp::get(key)});
    if (r) {
      if (!r->succeeded) {
        const auto* got = r->responses.empty() ? nullptr : std::get_if<etcd::RangeResult>(&r->responses[0]);
        if (got != nullptr && !got->kvs.empty()) {
          if (got->kvs.front().value == value) {
            appended(index, got->kvs.front().mod_revision);
            return index;  // an earlier attempt of this very append landed
          }
          return Status(ErrorCode::kConflict, "deposed: log entry " + std::to_string(index) +
                                                  " was written by another primary");
        }
        return Status(ErrorCode::kConflict, "deposed: election key " + mine->key +
                                                " is gone (lease expired or revoked); append rejected");
      }
      appended(index, r->revision);
      return index;
    }
    last_error = r.status();
    if (last_error.code() != ErrorCode::kUnavailable || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (last_error.code() == ErrorCode::kUnavailable) {
    std::string msg = last_error.message();
    if (msg.find("outcome unknown") == std::string::npos) msg += " (outcome unknown)";
    return Status(ErrorCode::kUnavailable, msg);
  }
  return last_error;
}

Status EtcdLog::read_entries(LogIndex from, std::int64_t revision, const Visitor& visit, std::int64_t* read_at,
                             LogIndex* last_out) {
  const std::string p = log_prefix(options_.prefix);
  const std::string end = etcd::prefix_end(p);
  std::string start = log_key(options_.prefix, from);
  LogIndex expect = from;
  LogIndex last = from == 0 ? 0 : from - 1;
  for (;;) {
    etcd::RangeOptions ro;
    ro.limit = kReadPage;
    ro.revision = revision;
    auto r = options_.client->range(start, end, ro);
    if (!r) return r.status();
    if (revision == 0) revision = r->revision;
    for (const etcd::KeyValue& kv : r->kvs) {
      auto index = parse_log_key(options_.prefix, kv.key);
      if (!index) return Status(ErrorCode::kCorruption, "unexpected key " + kv.key + " in the etcd log");
      if (*index != expect) {
        if (expect == from && *index > from) {
          return Status(ErrorCode::kNotFound, "etcd log entries before " + std::to_string(*index) +
                                                  " were deleted (wanted " + std::to_string(from) + ")");
        }
        return Status(ErrorCode::kCorruption, "etcd log gap: expected entry " + std::to_string(expect) +
                                                  ", found " + std::to_string(*index));
      }
      auto batch = entry_batch(kv.value);
      if (!batch) return Status(ErrorCode::kCorruption, "etcd log entry " + kv.key + ": " + batch.status().message());
      if (Status st = visit(*index, *batch); !st) return st;
      last = *index;
      ++expect;
    }
    if (!r->more || r->kvs.empty()) break;
    start = r->kvs.back().key + '\0';
  }
  *read_at = revision;
  *last_out = last;
  return Status::ok();
}

Status EtcdLog::read(LogIndex from, const Visitor& visit) {
  std::int64_t revision = 0;
  LogIndex last = 0;
  if (Status st = read_entries(from, 0, visit, &revision, &last); !st) return st;
  std::lock_guard lock(state_->mu);
  state_->read_revision = revision;
  state_->position.last = std::max(state_->position.last, last);
  if (state_->position.first == 0 && last >= from && from > 0) state_->position.first = from;
  return Status::ok();
}

}  // namespace leasehold::log
