// torture/faults/fault_fs_process.cc: see fault_fs_process.h.
#include "torture/faults/fault_fs_process.h"

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "testkit/eventually.h"
#include "testkit/temp_dir.h"
#include "torture/faults/fault_fs_mounts.h"

namespace leasehold::torture {
namespace {

std::string normal(const std::string& path) {
  std::error_code ec;
  std::string p = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

Status make_dir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Status(ErrorCode::kIoError, "cannot create " + path + ": " + ec.message());
  ::chmod(path.c_str(), 0700);
  return Status();
}

}  // namespace

Result<std::unique_ptr<FaultFsProcess>> FaultFsProcess::start(const std::string& binary, const std::string& backing,
                                                              const std::string& mount, const std::string& control,
                                                              std::chrono::milliseconds timeout) {
  std::unique_ptr<FaultFsProcess> fs(
      new FaultFsProcess(normal(backing), normal(mount), control, normal(mount) + ".fault-fs.log"));
  if (Status st = make_dir(fs->backing_); !st) return st;
  // A stale mount (its daemon died with its helper) fails every use with
  // ENOTCONN, creating the directory too: detach it first.
  if (!fault_fs::unmount_lazily(fs->mount_)) return Status(ErrorCode::kIoError, "cannot unmount " + fs->mount_);
  if (Status st = make_dir(fs->mount_); !st) return st;
  if (Status st = fs->set_faults(""); !st) return st;
  testing::SpawnOptions opts;
  opts.stderr_path = fs->log_;
  auto p = testing::Subprocess::spawn({binary, fs->backing_, fs->mount_, control}, opts);
  if (!p) return p.status();
  fs->process_ = std::move(p).value();
  const bool mounted = testing::eventually(
      [&] { return fault_fs::is_mounted(fs->mount_) || !fs->process_.running(); }, timeout);
  if (!mounted || !fault_fs::is_mounted(fs->mount_)) {
    return Status(ErrorCode::kUnavailable,
                  "leasehold-fault-fs did not mount " + fs->mount_ + ": " + testing::read_file(fs->log_));
  }
  return fs;
}

FaultFsProcess::~FaultFsProcess() { (void)stop(); }

Status FaultFsProcess::set_faults(const std::string& words) {
  const std::string tmp = control_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << (words.empty() ? "none" : words) << "\n";
    if (!out) return Status(ErrorCode::kIoError, "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, control_, ec);
  return ec ? Status(ErrorCode::kIoError, "cannot rename " + tmp + ": " + ec.message()) : Status();
}

Result<std::string> FaultFsProcess::cut_power() {
  const std::string report = control_ + ".cut";
  const auto lines = [&] {
    const std::string text = testing::read_file(report);
    return std::count(text.begin(), text.end(), '\n');
  };
  const auto before = lines();
  process_.signal(SIGUSR1);
  if (!testing::eventually([&] { return lines() > before; }, std::chrono::milliseconds(10'000))) {
    return Status(ErrorCode::kUnavailable, "leasehold-fault-fs did not report a power cut on " + mount_);
  }
  const std::string text = testing::read_file(report);
  const auto start = text.rfind('\n', text.size() - 2);
  std::string last = text.substr(start == std::string::npos ? 0 : start + 1);
  if (!last.empty() && last.back() == '\n') last.pop_back();
  if (last.find(" errors 0") == std::string::npos) return Status(ErrorCode::kUnavailable, "power cut: " + last);
  return last;
}

Status FaultFsProcess::stop() {
  if (process_.pid() > 0 && process_.running()) {
    process_.signal(SIGTERM);
    if (!process_.wait(testing::scaled(std::chrono::milliseconds(5000)))) process_.kill9();
  }
  // A clean exit unmounted; after a kill the auto_unmount helper does,
  // unless it died too: detach it then.
  if (testing::eventually([&] { return !fault_fs::is_mounted(mount_); }, std::chrono::milliseconds(2000))) {
    return Status();
  }
  return fault_fs::unmount_lazily(mount_) ? Status()
                                          : Status(ErrorCode::kUnavailable, "cannot unmount " + mount_);
}

}  // namespace leasehold::torture
