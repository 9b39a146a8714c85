#include "server/net/read_budget.h"

namespace leasehold::server {

void ReadBudget::open(uv_loop_t* loop) {
  if (open_) return;
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

ReadBudget::Meter::Meter(ReadBudget& budget) : budget_(nullptr) {
  if (budget.budget_ns_ == 0 || budget.meter_start_ns_ != 0) return;
  budget_ = &budget;
  budget.meter_start_ns_ = uv_hrtime();
}

ReadBudget::Meter::~Meter() {
  if (budget_ == nullptr) return;
  budget_->charged_ns_ += uv_hrtime() - budget_->meter_start_ns_;
  budget_->meter_start_ns_ = 0;
}

bool ReadBudget::spent() const {
  if (budget_ns_ == 0 || !open_) return false;
  std::uint64_t charged = charged_ns_;
  if (meter_start_ns_ != 0) charged += uv_hrtime() - meter_start_ns_;
  return charged >= budget_ns_;
}

bool ReadBudget::defer(std::weak_ptr<BudgetWaiter> connection) {
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
  // FIFO while the budget lasts; a connection that spends the rest of it
  // mid-buffer queues again at the back (and the run ends). At least one
  // connection per run, whatever the budget.
  bool resumed_one = false;
  while (!queue_.empty() && open_ && (!resumed_one || !spent())) {
    std::shared_ptr<BudgetWaiter> connection = queue_.front().lock();
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
