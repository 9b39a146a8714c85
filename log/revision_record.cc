#include "log/revision_record.h"

#include <utility>

#include "log/durable_file.h"
#include "log/log_format.h"

namespace leasehold::log {
namespace {

constexpr std::string_view kRevisionMagic = "LHREV001";
constexpr std::size_t kBodyBytes = 8 + 4 * 8 + 1;
constexpr std::size_t kFileBytes = kBodyBytes + 4;

}  // namespace

std::string revision_record_path_a(const std::string& dir) { return dir + "/revision-record.a"; }
std::string revision_record_path_b(const std::string& dir) { return dir + "/revision-record.b"; }

std::string encode_revision_record(const RevisionRecord& r) {
  std::string out(kRevisionMagic);
  put_u64_le(out, r.reserved_through);
  put_u64_le(out, r.durable_revision);
  put_u64_le(out, r.max_ttl_ms);
  put_u64_le(out, r.clean_revision);
  out.push_back(static_cast<char>((r.clean ? 1 : 0) | (r.lease ? 2 : 0)));
  put_u32_le(out, crc32_update(0, out));
  return out;
}

Result<RevisionRecord> decode_revision_record(std::string_view bytes) {
  const auto corrupt = [](const std::string& why) { return Status(ErrorCode::kCorruption, why); };
  if (bytes.size() != kFileBytes) {
    return corrupt("is " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(kFileBytes));
  }
  if (bytes.substr(0, kRevisionMagic.size()) != kRevisionMagic) return corrupt("bad magic");
  if (get_u32_le(bytes.substr(kBodyBytes, 4)) != crc32_update(0, bytes.substr(0, kBodyBytes))) {
    return corrupt("checksum mismatch");
  }
  RevisionRecord r;
  r.reserved_through = get_u64_le(bytes.substr(8, 8));
  r.durable_revision = get_u64_le(bytes.substr(16, 8));
  r.max_ttl_ms = get_u64_le(bytes.substr(24, 8));
  r.clean_revision = get_u64_le(bytes.substr(32, 8));
  const auto flags = static_cast<unsigned char>(bytes[40]);
  if (flags > 3) return corrupt("unknown flags " + std::to_string(flags));
  r.clean = (flags & 1) != 0;
  r.lease = (flags & 2) != 0;
  if (r.durable_revision > r.reserved_through || (r.clean && r.clean_revision > r.reserved_through)) {
    return corrupt("revisions above the reserved block");
  }
  return r;
}

Result<LoadedRevisionRecord> load_revision_record(const std::string& dir) {
  LoadedRevisionRecord out;
  out.where = dir + "/revision-record.{a,b}";
  bool any_file = false;
  bool any_valid = false;
  for (const std::string& path : {revision_record_path_a(dir), revision_record_path_b(dir)}) {
    auto bytes = read_whole_file(path);
    if (!bytes) {
      if (bytes.status().code() != ErrorCode::kNotFound) return bytes.status();
      out.problems.push_back(path + " is missing");
      continue;
    }
    any_file = true;
    auto record = decode_revision_record(*bytes);
    if (!record) {
      out.problems.push_back(path + " is damaged: " + record.status().message());
      continue;
    }
    if (!any_valid || record->reserved_through >= out.record.reserved_through) out.record = *record;
    any_valid = true;
  }
  out.state = any_valid ? LoadedRevisionRecord::State::kValid
                        : (any_file ? LoadedRevisionRecord::State::kCorrupt : LoadedRevisionRecord::State::kAbsent);
  return out;
}

Status store_revision_record(const std::string& dir, const RevisionRecord& record) {
  const std::string bytes = encode_revision_record(record);
  if (Status st = replace_file_durably(revision_record_path_a(dir), bytes); !st) return st;
  return replace_file_durably(revision_record_path_b(dir), bytes);
}

}  // namespace leasehold::log
