// torture/nemesis.cc: see nemesis.h.
#include "torture/nemesis.h"

#include <algorithm>
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
    // One fault, or (one time in three, when there are several) two
    // different ones at once; healed in reverse order.
    std::vector<std::size_t> chosen = {std::uniform_int_distribution<std::size_t>(0, faults_.size() - 1)(rng_)};
    if (faults_.size() > 1 && std::uniform_int_distribution<int>(0, 2)(rng_) == 0) {
      const std::size_t other = std::uniform_int_distribution<std::size_t>(0, faults_.size() - 2)(rng_);
      const std::size_t second = other >= chosen[0] ? other + 1 : other;
      if (compatible(faults_[chosen[0]], faults_[second])) chosen.push_back(second);
    }
    std::chrono::milliseconds hold{0};
    std::vector<Op> records;
    std::vector<Status> injected;
    for (std::size_t i : chosen) {
      const Fault& fault = faults_[i];
      hold = std::max(hold, pick(fault.min_hold, fault.max_hold));
      Op record;
      record.op = fault.crash ? "crash" : "fault";
      record.process = -1;
      record.key = fault.name;
      record.value = fault.name;
      record.inv = now_ns();
      injected.push_back(fault.inject());
      ++counts_[fault.name];
      if (chosen.size() > 1) record.aux = "combined";
      records.push_back(std::move(record));
    }
    if (chosen.size() > 1) ++counts_["(combined)"];
    (void)wait_or_stop(stop, hold);  // heal early when the run ends
    for (std::size_t k = chosen.size(); k-- > 0;) {
      const Fault& fault = faults_[chosen[k]];
      Status healed = fault.heal();
      Op& record = records[k];
      record.cmp = now_ns();
      record.out = injected[k] && healed ? Outcome::kOk : Outcome::kFail;
      if (!injected[k]) record.aux += " inject: " + injected[k].to_string();
      if (!healed) record.aux += " heal: " + healed.to_string();
      if (!injected[k] || !healed) ++counts_[fault.name + ":error"];
      history_.write(record);
    }
  }
}

bool Nemesis::compatible(const Fault& a, const Fault& b) {
  // Two faults that kill etcd members share their victims' bookkeeping.
  const bool a_etcd = a.name.rfind("kill-etcd", 0) == 0 || a.name == "power-cut-etcd";
  const bool b_etcd = b.name.rfind("kill-etcd", 0) == 0 || b.name == "power-cut-etcd";
  // A failed or full disk is healed by a restart with the fault cleared;
  // another crash's restart while it is still in place would fail.
  // (disk-eio, disk-full, disk-eio-etcd, disk-full-etcd)
  const bool a_disk = a.name.rfind("disk-", 0) == 0;
  const bool b_disk = b.name.rfind("disk-", 0) == 0;
  return !(a_etcd && b_etcd) && !((a_disk || b_disk) && a.crash && b.crash);
}

}  // namespace leasehold::torture
