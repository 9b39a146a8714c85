#include "tests/log/log_test_util.h"

#include <future>

namespace leasehold::log::testing {

Result<LogIndex> append_sync(Log& log, std::string batch) {
  std::promise<Result<LogIndex>> promise;
  auto future = promise.get_future();
  log.append(std::move(batch), [&promise](Result<LogIndex> r) { promise.set_value(std::move(r)); });
  return future.get();
}

Status save_snapshot_sync(Log& log, LogIndex index, std::string bytes) {
  std::promise<Status> promise;
  auto future = promise.get_future();
  log.save_snapshot(index, std::move(bytes), [&promise](Status s) { promise.set_value(std::move(s)); });
  return future.get();
}

Result<std::vector<std::pair<LogIndex, std::string>>> read_all(Log& log, LogIndex from) {
  std::vector<std::pair<LogIndex, std::string>> out;
  Status st = log.read(from, [&out](LogIndex index, std::string_view batch) {
    out.emplace_back(index, std::string(batch));
    return Status::ok();
  });
  if (!st) return st;
  return out;
}

std::string payload_for(LogIndex index) {
  std::string out = "entry-" + std::to_string(index) + "-";
  out.append(static_cast<std::size_t>((index * 7919) % 300), static_cast<char>('a' + index % 26));
  return out;
}

}  // namespace leasehold::log::testing
