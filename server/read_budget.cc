#include "server/read_budget.h"

#include "server/connection.h"

namespace leasehold::server {

void ReadBudget::open(uv_loop_t* loop) {
  if (open_) return;
  loop_ = loop;
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  open_ = true;
}

void ReadBudget::close() {
  if (!open_) return;
  open_ = false;
  idle_active_ = false;
  queue_.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), nullptr);
}

void ReadBudget::new_turn() {
  if (budget_ns_ == 0 || !open_) return;
  turn_start_ns_ = uv_hrtime();
  turn_idle_ns_ = uv_metrics_idle_time(loop_);
}

bool ReadBudget::spent() const {
  if (budget_ns_ == 0 || !open_ || turn_start_ns_ == 0) return false;
  const std::uint64_t wall = uv_hrtime() - turn_start_ns_;
  const std::uint64_t waited = uv_metrics_idle_time(loop_) - turn_idle_ns_;
  return wall > waited && wall - waited >= budget_ns_;
}

bool ReadBudget::defer(std::weak_ptr<Connection> connection) {
  if (budget_ns_ == 0 || !open_) return false;
  queue_.push_back(std::move(connection));
  ++deferred_;
  if (!idle_active_) {
    uv_idle_start(&idle_, [](uv_idle_t* h) { static_cast<ReadBudget*>(h->data)->run(); });
    idle_active_ = true;
  }
  return true;
}

void ReadBudget::run() {
  // Only the connections queued before this run: one that queues again
  // (its budget ran out mid-buffer) waits for the next turn, behind them.
  std::size_t left = queue_.size();
  bool resumed_one = false;
  while (left > 0 && !queue_.empty() && open_ && (!resumed_one || !spent())) {
    --left;
    std::shared_ptr<Connection> connection = queue_.front().lock();
    queue_.pop_front();
    if (!connection || connection->closed()) continue;
    resumed_one = true;
    connection->resume_parsing();
  }
  if (queue_.empty() && idle_active_) {
    uv_idle_stop(&idle_);
    idle_active_ = false;
  }
}

}  // namespace leasehold::server
