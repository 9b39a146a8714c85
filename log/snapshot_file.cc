#include "log/snapshot_file.h"

#include <cstdio>
#include <algorithm>
#include <filesystem>

#include "log/durable_file.h"
#include "log/log_format.h"

namespace leasehold::log {
namespace {

constexpr std::string_view kMagic = "LHSNAP01";
constexpr std::size_t kHeaderBytes = 8 + 8 + 8 + 4;
constexpr std::string_view kPrefix = "snapshot-";
constexpr std::string_view kSuffix = ".bin";
constexpr std::size_t kDigits = 20;

std::uint32_t snapshot_crc(std::string_view index_and_length, std::string_view payload) {
  return crc32_update(crc32_update(0, index_and_length), payload);
}

}  // namespace

std::string snapshot_path(const std::string& dir, LogIndex index) {
  char name[64];
  std::snprintf(name, sizeof name, "snapshot-%020llu.bin", static_cast<unsigned long long>(index));
  return dir + "/" + name;
}

Status write_snapshot_file(const std::string& dir, LogIndex index, std::string_view bytes) {
  const std::string path = snapshot_path(dir, index);
  std::string header(kMagic);
  std::string fields;
  put_u64_le(fields, index);
  put_u64_le(fields, bytes.size());
  header += fields;
  put_u32_le(header, snapshot_crc(fields, bytes));

  std::string image = header;
  image.append(bytes);
  return replace_file_durably(path, image);
}

Result<Snapshot> read_snapshot_file(const std::string& path, LogIndex expected_index) {
  auto read = read_whole_file(path);
  if (!read) return read.status();
  const std::string data = std::move(read).value();
  const auto corrupt = [&](const std::string& why) {
    return Status(ErrorCode::kCorruption, "snapshot file " + path + ": " + why);
  };
  if (data.size() < kHeaderBytes) return corrupt("truncated header");
  const std::string_view view(data);
  if (view.substr(0, 8) != kMagic) return corrupt("bad magic");
  const LogIndex index = get_u64_le(view.substr(8, 8));
  const std::uint64_t length = get_u64_le(view.substr(16, 8));
  const std::uint32_t stored_crc = get_u32_le(view.substr(24, 4));
  if (length != data.size() - kHeaderBytes) {
    return corrupt("length field " + std::to_string(length) + " but " +
                   std::to_string(data.size() - kHeaderBytes) + " payload bytes");
  }
  if (stored_crc != snapshot_crc(view.substr(8, 16), view.substr(kHeaderBytes))) {
    return corrupt("checksum mismatch");
  }
  if (index != expected_index) {
    return corrupt("holds index " + std::to_string(index) + ", name says " +
                   std::to_string(expected_index));
  }
  Snapshot snap;
  snap.index = index;
  snap.bytes = data.substr(kHeaderBytes);
  return snap;
}

Result<std::vector<SnapshotFileName>> list_snapshot_files(const std::string& dir, bool remove_temp) {
  std::vector<SnapshotFileName> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return Status(ErrorCode::kIoError, "list " + dir + ": " + ec.message());
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kPrefix)) continue;
    if (name.ends_with(".tmp")) {
      if (remove_temp) std::filesystem::remove(entry.path(), ec);
      continue;
    }
    if (!name.ends_with(kSuffix) || name.size() != kPrefix.size() + kDigits + kSuffix.size()) continue;
    const std::string digits = name.substr(kPrefix.size(), kDigits);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.push_back({std::stoull(digits), entry.path().string()});
  }
  std::sort(out.begin(), out.end(),
            [](const SnapshotFileName& a, const SnapshotFileName& b) { return a.index < b.index; });
  return out;
}

}  // namespace leasehold::log
