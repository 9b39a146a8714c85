// torture/disk_faults.cc: see disk_faults.h.
#include "torture/disk_faults.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "torture/faults/disk_fault_shim.h"
#include "torture/faults/power_cut.h"

namespace leasehold::torture {

void put_env(EnvList& env, const std::string& key, const std::string& value) {
  for (auto& [k, v] : env) {
    if (k != key) continue;
    v = key == "LD_PRELOAD" && !v.empty() ? v + ":" + value : value;
    return;
  }
  env.emplace_back(key, value);
}

EnvList shim_env(const DiskFaultFiles& files, EnvList env) {
  put_env(env, "LD_PRELOAD", LEASEHOLD_DISK_FAULT_SHIM);
  put_env(env, disk_fault::kDirEnv, files.data_dir);
  put_env(env, disk_fault::kControlEnv, files.control);
  put_env(env, disk_fault::kJournalEnv, files.journal);
  // An ASan build refuses a library preloaded ahead of its runtime unless
  // told not to check the link order (as run.cc does for libfaketime).
  bool has_asan = false;
  for (const auto& [k, v] : env) has_asan = has_asan || k == "ASAN_OPTIONS";
  if (!has_asan) {
    const char* asan = std::getenv("ASAN_OPTIONS");
    env.emplace_back("ASAN_OPTIONS", std::string(asan != nullptr ? asan : "") + ":verify_asan_link_order=0");
  }
  return env;
}

Status set_control(const DiskFaultFiles& files, const std::string& words) {
  const std::string tmp = files.control + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << words << "\n";
    if (!out) return Status(ErrorCode::kIoError, "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, files.control, ec);
  return ec ? Status(ErrorCode::kIoError, "cannot rename " + tmp + ": " + ec.message()) : Status();
}

Status cut_power(const DiskFaultFiles& files) {
  if (!std::filesystem::exists(files.journal)) return Status();
  auto report = power_cut(files.journal);
  return report ? Status() : report.status();
}

bool is_disk_fault(const std::string& name) {
  return name == "power-cut" || name == "disk-eio" || name == "disk-full";
}

}  // namespace leasehold::torture
