// The file ledger: "<dir>/<entry with / as _>.ledger", three lines
// "writer=..", "token=..", "body=..".
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "demo/ledger_stores.h"
#include "leasehold/fence_file.h"

namespace leasehold::demo {
namespace {

std::string serialize(const LedgerRecord& r) {
  return "writer=" + r.writer + "\ntoken=" + std::to_string(r.token) + "\nbody=" + r.body + "\n";
}

Result<LedgerRecord> parse(const std::string& text, const std::string& path) {
  LedgerRecord r;
  std::istringstream in(text);
  std::string line;
  int fields = 0;
  while (std::getline(in, line)) {
    if (line.rfind("writer=", 0) == 0) {
      r.writer = line.substr(7);
      ++fields;
    } else if (line.rfind("token=", 0) == 0) {
      const std::string v = line.substr(6);
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), r.token);
      if (ec != std::errc{} || end != v.data() + v.size()) break;
      ++fields;
    } else if (line.rfind("body=", 0) == 0) {
      r.body = line.substr(5);
      ++fields;
    }
  }
  if (fields != 3) {
    return Status(ErrorCode::kCorruption, "ledger file " + path + " is not a whole record: '" +
                                              text + "'");
  }
  return r;
}

class FileLedger final : public Ledger {
 public:
  explicit FileLedger(LedgerTarget target) : target_(std::move(target)) {
    std::string name = target_.entry;
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    path_ = target_.location + "/" + name + ".ledger";
  }

  Status prepare(const std::string& initial_body) override {
    // A fresh record and no token record yet: the first fenced write is admitted.
    ::unlink(fence_record_path().c_str());
    return plain_write({"nobody", 0, initial_body});
  }

  Status write(const LedgerRecord& record) override {
    if (record.body.size() > kMaxBodyBytes) {
      return Status(ErrorCode::kLimitExceeded, "ledger body over 4096 bytes");
    }
    if (!target_.fenced) return plain_write(record);
    return fence::FencedFileWriter().write(path_, record.token, serialize(record));
  }

  Result<LedgerRecord> read() override {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return Status(ErrorCode::kNotFound, "no ledger file " + path_);
    std::ostringstream text;
    text << in.rdbuf();
    return parse(text.str(), path_);
  }

  Result<std::optional<std::uint64_t>> highest() override {
    if (!target_.fenced) return std::optional<std::uint64_t>();
    return fence::FencedFileWriter().highest(path_);
  }

  std::string describe() const override {
    return target_.fenced ? "file " + path_ + " (FencedFileWriter: token check + rename under flock)"
                          : "file " + path_ + " (plain open/write, no token check)";
  }

 private:
  std::string fence_record_path() const { return fence::FencedFileWriter::fence_path(path_); }

  // What a naive worker does: truncate and write in place.
  Status plain_write(const LedgerRecord& record) const {
    const std::string bytes = serialize(record);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status(ErrorCode::kIoError, "open " + path_ + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        Status st(ErrorCode::kIoError, "write " + path_ + ": " + std::strerror(errno));
        ::close(fd);
        return st;
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) return Status(ErrorCode::kIoError, "close " + path_ + ": " + std::strerror(errno));
    return Status::ok();
  }

  const LedgerTarget target_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<Ledger>> open_file_ledger(const LedgerTarget& target) {
  return std::unique_ptr<Ledger>(new FileLedger(target));
}

}  // namespace leasehold::demo
