// fence/durable_gate.cc: DurableFenceGate, one flocked token file per key.
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "fence/token_file.h"
#include "leasehold/fence_durable.h"

namespace leasehold::fence {

using detail::LockedTokenFile;
using detail::LockMode;

Result<std::string> DurableFenceGate::file_name_for(std::string_view key) {
  if (Status s = validate_key(key); !s) return s;
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string name;
  for (unsigned char c : key) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (keep) {
      name += static_cast<char>(c);
    } else {
      name += '%';
      name += kHex[c >> 4];
      name += kHex[c & 0xF];
    }
  }
  if (name.size() > kMaxEncodedKeyChars) {
    return Status(ErrorCode::kInvalidArgument,
                  "fence key encodes to " + std::to_string(name.size()) +
                      " file name characters; the durable gate's limit is " +
                      std::to_string(kMaxEncodedKeyChars));
  }
  return name + ".fence";
}

Result<std::unique_ptr<DurableFenceGate>> DurableFenceGate::open(std::string dir,
                                                                 DurableFenceGateOptions options) {
  if (dir.empty()) return Status(ErrorCode::kInvalidArgument, "durable fence gate: empty directory");
  if (::mkdir(dir.c_str(), 0755) == 0) {
    std::string parent = std::filesystem::path(dir).lexically_normal().parent_path().string();
    if (parent.empty()) parent = ".";
    if (Status s = detail::fsync_directory(parent); !s) return s;
  } else if (errno != EEXIST) {
    return detail::io_error("create fence directory", dir, errno);
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return detail::io_error("stat", dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    return Status(ErrorCode::kInvalidArgument, "durable fence gate: " + dir + " is not a directory");
  }
  return std::unique_ptr<DurableFenceGate>(new DurableFenceGate(std::move(dir), options));
}

Result<Admission> DurableFenceGate::admit(std::string_view key, Token token) {
  Result<std::string> name = file_name_for(key);
  if (!name) return name.status();
  Result<LockedTokenFile> file = LockedTokenFile::open(dir_ + "/" + *name, LockMode::kExclusive,
                                                       /*create=*/true, options_.lock_timeout);
  if (!file) return file.status();
  Result<std::optional<Token>> current = file->read();
  if (!current) return current.status();
  if (current->has_value()) {
    if (token < **current) return Admission{false, **current};
  }
  if (!current->has_value() || token > **current) {
    if (Status s = file->write(token); !s) return s;
  }
  // The file may be new (created by us, or by a writer that crashed before
  // syncing the directory): make its name durable before acknowledging.
  if (Status s = ensure_entry_durable(*name); !s) return s;
  return Admission{true, token};
}

Status DurableFenceGate::ensure_entry_durable(const std::string& name) {
  constexpr std::size_t kMaxRemembered = 65536;
  {
    std::lock_guard lock(durable_mu_);
    if (durable_names_.contains(name)) return Status::ok();
  }
  if (Status s = detail::fsync_directory(dir_); !s) return s;
  std::lock_guard lock(durable_mu_);
  if (durable_names_.size() >= kMaxRemembered) durable_names_.clear();
  durable_names_.insert(name);
  return Status::ok();
}

Result<std::optional<Token>> DurableFenceGate::highest(std::string_view key) {
  Result<std::string> name = file_name_for(key);
  if (!name) return name.status();
  Result<LockedTokenFile> file = LockedTokenFile::open(dir_ + "/" + *name, LockMode::kShared,
                                                       /*create=*/false, options_.lock_timeout);
  if (!file) {
    if (file.status().code() == ErrorCode::kNotFound) return std::optional<Token>();
    return file.status();
  }
  return file->read();
}

}  // namespace leasehold::fence
