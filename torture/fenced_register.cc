// torture/fenced_register.cc: see fenced_register.h.
#include "torture/fenced_register.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "common/unique_fd.h"

namespace leasehold::torture {
namespace {

using Fd = UniqueFd;

Status io_error(const std::string& what) {
  return {ErrorCode::kIoError, what + ": " + std::strerror(errno)};
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<Op> FencedRegister::write(const std::string& key, std::uint64_t token, Op record) {
  for (const char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == ':' || c == '-';
    if (!ok || key.size() > 100) return Status(ErrorCode::kInvalidArgument, "bad register key " + key);
  }
  Fd file(::open((dir_ + "/reg-" + key).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (file.get() < 0) return io_error("open register " + key);
  while (::flock(file.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return io_error("flock register " + key);
  }
  char buf[32] = {};
  const ssize_t n = ::pread(file.get(), buf, sizeof buf - 1, 0);
  if (n < 0) return io_error("read register " + key);
  std::uint64_t highest = 0;
  std::from_chars(buf, buf + n, highest);
  record.op = "reg";
  record.key = key;
  record.token = token;
  record.out = token > highest ? Outcome::kOk : Outcome::kFail;
  record.aux = "highest " + std::to_string(highest);
  if (record.out == Outcome::kOk) {
    const std::string text = std::to_string(token) + "\n";
    if (::ftruncate(file.get(), 0) != 0 || ::pwrite(file.get(), text.data(), text.size(), 0) < 0) {
      return io_error("write register " + key);
    }
  }
  record.cmp = now_ns();
  Fd log(::open(log_path().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (log.get() < 0 || !write_all(log.get(), to_json(record) + "\n")) return io_error("append register log");
  return record;  // the flock ends with `file`
}

}  // namespace leasehold::torture
