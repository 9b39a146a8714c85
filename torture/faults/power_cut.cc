#include "torture/faults/power_cut.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace leasehold::torture {
namespace {

struct FileState {
  std::uint64_t durable = 0;  // bytes that survive the cut
  bool name_durable = true;   // its directory entry survives the cut
};

struct PendingOp {  // a namespace change no directory fsync has covered yet
  bool rename = false;
  std::string from;    // rename only
  std::string to;      // the created or renamed-to path
  std::string backup;  // rename only: copy of the file it replaced, or empty
};

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

Status io_error(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(errno));
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
    std::uint64_t size = 0;
    try {
      size = std::stoull(f[1]);
    } catch (const std::exception&) {
      return bad(number);
    }
    const std::string& a = f[2];
    if (op == "open") {
      files.try_emplace(a, FileState{size, true});
    } else if (op == "create") {
      files[a] = FileState{0, false};
      pending.push_back(PendingOp{false, {}, a, {}});
    } else if (op == "sync") {
      files[a].durable = size;
    } else if (op == "dirsync") {
      std::erase_if(pending, [&](const PendingOp& p) {
        if (parent_of(p.to) != a) return false;
        if (auto it = files.find(p.to); it != files.end()) it->second.name_durable = true;
        return true;
      });
    } else if (op == "rename") {
      if (f.size() != 5) return bad(number);
      const std::string& to = f[3];
      FileState moved = files.count(a) != 0 ? files[a] : FileState{};
      files.erase(a);
      files[to] = moved;
      for (PendingOp& p : pending) {
        if (p.to == a) p.to = to;
      }
      pending.push_back(PendingOp{true, a, to, f[4] == "-" ? std::string() : f[4]});
    } else if (op == "unlink") {
      files.erase(a);
      std::erase_if(pending, [&](const PendingOp& p) { return p.to == a; });
    } else {
      return bad(number);
    }
    return Status::ok();
  }

  static Status bad(std::size_t number) {
    return Status(ErrorCode::kInvalidArgument, "malformed journal line " + std::to_string(number));
  }
};

}  // namespace

Result<PowerCutReport> power_cut(const std::string& journal_path) {
  std::ifstream in(journal_path);
  if (!in) return io_error("open journal", journal_path);
  Replay replay;
  std::size_t number = 0;
  for (std::string text; std::getline(in, text);) {
    ++number;
    if (text.empty()) continue;
    if (Status st = replay.line(text, number); !st) return st;
  }

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
    }
    report.renames_undone.push_back(it->from + " <- " + it->to);
  }
  for (const auto& [path, state] : replay.files) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (!state.name_durable) {
      if (::unlink(path.c_str()) != 0) return io_error("delete", path);
      report.deleted.push_back(path);
      report.bytes_dropped += size;
    } else if (size > state.durable) {
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
