// torture/faults/power_cut.cc: replays the disk-fault shim's journal
// (disk_fault_shim.h) and applies the power cut it implies (power_cut.h).
#include "torture/faults/power_cut.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "common/unique_fd.h"

namespace leasehold::torture {
namespace {

struct Undo {  // an `undo` line: the bytes [offset, offset + length) held before a write
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string backup;  // the undo data file holding them, from backup_offset on
  std::uint64_t backup_offset = 0;
};

struct FileState {
  std::uint64_t durable = 0;  // bytes that survive the cut
  bool name_durable = true;   // its directory entry survives the cut
  std::vector<Undo> undos;    // journaled since its last sync, oldest first
};

struct PendingOp {  // a namespace change no directory fsync has covered yet
  bool rename = false;
  std::string from;    // rename only
  std::string to;      // the created or renamed-to path
  std::string backup;  // rename only: copy of the file it replaced, or empty
  std::optional<FileState> replaced;  // rename only: the journal's state of that file
};

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

Status io_error(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(errno));
}

bool parse_u64(const std::string& text, std::uint64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

struct Replay {
  std::map<std::string, FileState> files;
  std::vector<PendingOp> pending;

  Status line(const std::string& text, std::size_t number) {
    std::vector<std::string> f;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, '\t');) f.push_back(part);
    if (f.size() < 3) return bad(number);
    const std::string& op = f[0];
    if (op == "undo") return undo(f, number);
    std::uint64_t size = 0;
    if (!parse_u64(f[1], &size)) return bad(number);
    const std::string& a = f[2];
    if (op == "open") {
      files.try_emplace(a, FileState{size, true, {}});
    } else if (op == "create") {
      files[a] = FileState{0, false, {}};
      pending.push_back(PendingOp{false, {}, a, {}, std::nullopt});
    } else if (op == "sync") {
      files[a].durable = size;
      files[a].undos.clear();
    } else if (op == "dirsync") {
      std::erase_if(pending, [&](const PendingOp& p) {
        if (parent_of(p.to) != a) return false;
        if (auto it = files.find(p.to); it != files.end()) it->second.name_durable = true;
        return true;
      });
    } else if (op == "rename") {
      if (f.size() != 5) return bad(number);
      const std::string& to = f[3];
      std::optional<FileState> replaced;
      if (auto it = files.find(to); it != files.end()) replaced = it->second;
      FileState moved = files.count(a) != 0 ? files[a] : FileState{};
      files.erase(a);
      files[to] = moved;
      for (PendingOp& p : pending) {
        if (p.to == a) p.to = to;
      }
      pending.push_back(PendingOp{true, a, to, f[4] == "-" ? std::string() : f[4], replaced});
    } else if (op == "unlink") {
      files.erase(a);
      std::erase_if(pending, [&](const PendingOp& p) { return p.to == a; });
    } else {
      return bad(number);
    }
    return Status::ok();
  }

  // undo <offset> <length> <path> <undo data file> <offset in it>
  Status undo(const std::vector<std::string>& f, std::size_t number) {
    Undo u;
    if (f.size() != 6 || !parse_u64(f[1], &u.offset) || !parse_u64(f[2], &u.length) ||
        !parse_u64(f[5], &u.backup_offset) || f[4].empty()) {
      return bad(number);
    }
    u.backup = f[4];
    auto it = files.find(f[3]);
    if (it == files.end()) {
      return Status(ErrorCode::kInvalidArgument,
                    "journal line " + std::to_string(number) + ": undo of a file never opened: " + f[3]);
    }
    it->second.undos.push_back(std::move(u));
    return Status::ok();
  }

  static Status bad(std::size_t number) {
    return Status(ErrorCode::kInvalidArgument, "malformed journal line " + std::to_string(number));
  }
};

// Copies `length` bytes at `from_offset` of `from` to `to_offset` of `to`.
Status copy_bytes(int from, const std::string& from_path, std::uint64_t from_offset, int to,
                  const std::string& to_path, std::uint64_t to_offset, std::uint64_t length) {
  char buf[65536];
  for (std::uint64_t done = 0; done < length;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, length - done));
    const ssize_t n = ::pread(from, buf, want, static_cast<off_t>(from_offset + done));
    if (n < 0) return io_error("read", from_path);
    if (n == 0) {
      return Status(ErrorCode::kIoError, from_path + " ends before offset " + std::to_string(from_offset + length));
    }
    if (::pwrite(to, buf, static_cast<std::size_t>(n), static_cast<off_t>(to_offset + done)) != n) {
      return io_error("restore bytes of", to_path);
    }
    done += static_cast<std::uint64_t>(n);
  }
  return Status::ok();
}

// Writes back the bytes of `path` its undo entries saved, newest first (so
// the oldest, the one from the last sync, stays), within its durable size.
Status restore_overwrites(const std::string& path, const FileState& state, PowerCutReport& report) {
  UniqueFd file;
  for (auto it = state.undos.rbegin(); it != state.undos.rend(); ++it) {
    if (it->offset >= state.durable) continue;
    const std::uint64_t length = std::min(it->length, state.durable - it->offset);
    if (!file.valid()) file = UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!file.valid()) return io_error("open", path);
    const UniqueFd backup(::open(it->backup.c_str(), O_RDONLY | O_CLOEXEC));
    if (!backup.valid()) return io_error("open undo data", it->backup);
    if (Status st = copy_bytes(backup.get(), it->backup, it->backup_offset, file.get(), path, it->offset, length);
        !st) {
      return st;
    }
    report.overwrites_undone.push_back(path + " [" + std::to_string(it->offset) + ", " +
                                       std::to_string(it->offset + length) + ")");
    report.bytes_restored += length;
  }
  return Status::ok();
}

// Reads the journal's complete lines into `replay`. A last line without its
// newline was torn by the kill (the shim writes each line with one write())
// and is ignored: the call it described had not returned.
Status read_journal(const std::string& journal_path, Replay& replay) {
  std::ifstream in(journal_path);
  if (!in) return io_error("open journal", journal_path);
  std::size_t number = 0;
  for (std::string text; std::getline(in, text);) {
    ++number;
    if (in.eof()) break;  // no newline after it
    if (text.empty()) continue;
    if (Status st = replay.line(text, number); !st) return st;
  }
  return Status::ok();
}

}  // namespace

Result<PowerCutReport> power_cut(const std::string& journal_path) {
  Replay replay;
  if (Status st = read_journal(journal_path, replay); !st) return st;

  PowerCutReport report;
  // Renames no directory fsync made durable: undone, newest first.
  for (auto it = replay.pending.rbegin(); it != replay.pending.rend(); ++it) {
    if (!it->rename || ::access(it->to.c_str(), F_OK) != 0) continue;
    if (::rename(it->to.c_str(), it->from.c_str()) != 0) return io_error("undo rename of", it->to);
    FileState moved = replay.files[it->to];
    replay.files.erase(it->to);
    replay.files[it->from] = moved;
    if (!it->backup.empty()) {
      std::error_code ec;
      std::filesystem::copy_file(it->backup, it->to, std::filesystem::copy_options::overwrite_existing, ec);
      if (ec) return Status(ErrorCode::kIoError, "restore " + it->to + " from " + it->backup + ": " + ec.message());
      if (it->replaced) replay.files[it->to] = *it->replaced;  // the copy is as the rename found it
    }
    report.renames_undone.push_back(it->from + " <- " + it->to);
  }
  for (const auto& [path, state] : replay.files) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!state.name_durable) {
      if (::unlink(path.c_str()) != 0) return io_error("delete", path);
      report.deleted.push_back(path);
      report.bytes_dropped += static_cast<std::uint64_t>(st.st_size);
      continue;
    }
    if (Status restored = restore_overwrites(path, state, report); !restored) return restored;
    if (!state.undos.empty() && ::stat(path.c_str(), &st) != 0) return io_error("stat", path);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > state.durable) {
      if (::truncate(path.c_str(), static_cast<off_t>(state.durable)) != 0) return io_error("truncate", path);
      report.truncated.push_back(path + " " + std::to_string(size) + " -> " + std::to_string(state.durable));
      report.bytes_dropped += size - state.durable;
    }
  }
  if (::rename(journal_path.c_str(), (journal_path + ".cut").c_str()) != 0) {
    return io_error("rename journal", journal_path);
  }
  return report;
}

}  // namespace leasehold::torture
