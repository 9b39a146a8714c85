// torture/nemesis.cc: see nemesis.h.
#include "torture/nemesis.h"

#include <condition_variable>
#include <mutex>

namespace leasehold::torture {

bool wait_or_stop(std::stop_token stop, std::chrono::milliseconds d) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, stop, d, [] { return false; }) && !stop.stop_requested();
}

std::chrono::milliseconds Nemesis::pick(std::chrono::milliseconds lo, std::chrono::milliseconds hi) {
  if (hi <= lo) return lo;
  return std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(lo.count(), hi.count())(rng_));
}

void Nemesis::run(std::stop_token stop) {
  if (faults_.empty()) return;
  while (wait_or_stop(stop, pick(min_gap_, max_gap_))) {
    const std::size_t i = std::uniform_int_distribution<std::size_t>(0, faults_.size() - 1)(rng_);
    Fault& fault = faults_[i];
    const auto hold = pick(fault.min_hold, fault.max_hold);
    Op record;
    record.op = fault.crash ? "crash" : "fault";
    record.process = -1;
    record.key = fault.name;
    record.value = fault.name;
    record.inv = now_ns();
    Status st = fault.inject();
    ++counts_[fault.name];
    (void)wait_or_stop(stop, hold);  // heal early when the run ends
    Status healed = fault.heal();
    record.cmp = now_ns();
    record.out = st && healed ? Outcome::kOk : Outcome::kFail;
    if (!st) record.aux = "inject: " + st.to_string();
    if (!healed) record.aux += " heal: " + healed.to_string();
    if (!st || !healed) ++counts_[fault.name + ":error"];
    history_.write(record);
  }
}

}  // namespace leasehold::torture
