// torture/etcd_disk_faults.cc: see etcd_disk_faults.h.
#include "torture/etcd_disk_faults.h"

#include <cstdio>

#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"
#include "torture/faults/fault_fs_mounts.h"
#include "torture/target.h"

namespace leasehold::torture {

using std::chrono::milliseconds;

bool is_etcd_disk_fault(const std::string& name) {
  return name == "disk-eio-etcd" || name == "disk-full-etcd" || name == "power-cut-etcd";
}

EtcdDisks::EtcdDisks() : dir_("etcd-disks") {
  if (const int n = fault_fs::sweep_stale(); n > 0) {
    std::fprintf(stderr, "torture: unmounted %d stale leasehold-fault-fs mount(s)\n", n);
  }
}

std::string EtcdDisks::route(int member) {
  const std::string base = dir_.file("m" + std::to_string(member));
  auto fs = FaultFsProcess::start(LEASEHOLD_FAULT_FS, base + ".backing", base + ".mnt", base + ".control",
                                  testing::scaled(milliseconds(10'000)));
  if (!fs) {
    std::fprintf(stderr, "torture: etcd member %d's disk: %s\n", member, fs.status().to_string().c_str());
    return "";
  }
  if (disks_.size() <= static_cast<std::size_t>(member)) disks_.resize(static_cast<std::size_t>(member) + 1);
  disks_[static_cast<std::size_t>(member)] = std::move(fs).value();
  return disks_[static_cast<std::size_t>(member)]->mount();
}

namespace {
Status no_disk(int member) {
  return Status(ErrorCode::kInvalidArgument, "no fault filesystem for etcd member " + std::to_string(member));
}
}  // namespace

FaultFsProcess* EtcdDisks::disk(int member) {
  const auto i = static_cast<std::size_t>(member);
  return member >= 0 && i < disks_.size() ? disks_[i].get() : nullptr;
}

Status EtcdDisks::set_faults(int member, const std::string& words) {
  FaultFsProcess* d = disk(member);
  if (d == nullptr) return no_disk(member);
  return d->set_faults(words);
}

Result<std::string> EtcdDisks::cut_power(int member) {
  FaultFsProcess* d = disk(member);
  if (d == nullptr) return no_disk(member);
  return d->cut_power();
}

void add_etcd_disk_faults(const RunConfig& c, Nemesis& nemesis, EtcdDisks& disks, testing::EtcdCluster& etcd,
                          std::function<int(int)> pick) {
  auto victim = std::make_shared<int>(-1);
  // Clears the fault; a member that died, or is not healthy soon (it may
  // be dying of the error it just met), is killed and restarted.
  auto heal = [&disks, &etcd, victim] {
    const int i = *victim;
    if (i < 0) return Status();
    *victim = -1;
    if (Status st = disks.set_faults(i, ""); !st) return st;
    if (etcd.running(i) && etcd.healthy(i, testing::scaled(milliseconds(5000)))) return Status();
    std::fprintf(stderr, "torture: etcd member %d %s after its disk fault: restarted\n", i,
                 etcd.running(i) ? "unhealthy" : "died");
    return etcd.restart(i);
  };
  const auto add = [&](const std::string& name, std::function<std::string()> words) {
    if (!wants_fault(c, name)) return;
    nemesis.add({name,
                 [&disks, &etcd, victim, pick, words] {
                   *victim = pick(etcd.size());
                   return disks.set_faults(*victim, words());
                 },
                 heal, milliseconds(500), milliseconds(3000), true});
  };
  add("disk-eio-etcd", [pick] { return pick(2) == 0 ? std::string("eio-fsync") : std::string("eio-write"); });
  add("disk-full-etcd", [] { return std::string("enospc"); });
  if (wants_fault(c, "power-cut-etcd")) {
    auto cut_victim = std::make_shared<int>(-1);
    nemesis.add({"power-cut-etcd",
                 [&disks, &etcd, cut_victim, pick] {
                   *cut_victim = pick(etcd.size());
                   etcd.kill(*cut_victim);  // SIGKILL and reap: nothing uses the disk now
                   auto report = disks.cut_power(*cut_victim);
                   if (!report) return report.status();
                   std::fprintf(stderr, "torture: etcd member %d power cut: %s\n", *cut_victim, report->c_str());
                   return Status();
                 },
                 [&etcd, cut_victim] {
                   const int i = *cut_victim;
                   *cut_victim = -1;
                   return i < 0 ? Status() : etcd.restart(i);
                 },
                 milliseconds(500), milliseconds(3000), true});
  }
}

}  // namespace leasehold::torture
