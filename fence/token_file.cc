// fence/token_file.cc: the two-slot, checksummed token record with flock.
#include "fence/token_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

namespace leasehold::fence::detail {
namespace {

constexpr std::size_t kSlotBytes = 32;
constexpr off_t kSlotOffset[2] = {0, 4096};
constexpr std::array<unsigned char, 4> kMagic = {'L', 'H', 'F', 'T'};
constexpr std::uint32_t kVersion = 1;

using Slot = std::array<unsigned char, kSlotBytes>;

void put_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint32_t checksum(const unsigned char* p, std::size_t n) {
  return static_cast<std::uint32_t>(crc32(0L, p, static_cast<uInt>(n)));
}

Slot encode(std::uint64_t seq, Token token) {
  Slot s{};
  std::memcpy(s.data(), kMagic.data(), kMagic.size());
  put_u32(s.data() + 4, kVersion);
  put_u64(s.data() + 8, seq);
  put_u64(s.data() + 16, token);
  put_u32(s.data() + 24, checksum(s.data(), 24));
  return s;
}

struct Decoded {
  bool valid = false;
  bool blank = true;  // all zero or absent: never written
  std::uint64_t seq = 0;
  Token token = 0;
};

Decoded decode(const Slot& s, std::size_t got) {
  Decoded d;
  for (std::size_t i = 0; i < got; ++i) {
    if (s[i] != 0) d.blank = false;
  }
  if (got != kSlotBytes || d.blank) return d;
  if (std::memcmp(s.data(), kMagic.data(), kMagic.size()) != 0) return d;
  if (get_u32(s.data() + 4) != kVersion) return d;
  if (get_u32(s.data() + 24) != checksum(s.data(), 24)) return d;
  d.valid = true;
  d.seq = get_u64(s.data() + 8);
  d.token = get_u64(s.data() + 16);
  return d;
}

}  // namespace

Status io_error(const std::string& what, const std::string& path, int err) {
  return Status(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(err));
}

Status fsync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return io_error("fsync directory", dir, err);
  return Status::ok();
}

Result<LockedTokenFile> LockedTokenFile::open(const std::string& path, LockMode mode, bool create,
                                              std::chrono::milliseconds lock_timeout) {
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    if (errno == ENOENT && !create) return Status(ErrorCode::kNotFound, "no token file " + path);
    return io_error("open token file", path, errno);
  }
  LockedTokenFile file(fd, path);
  const int op = (mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
  const auto deadline = std::chrono::steady_clock::now() + lock_timeout;
  auto backoff = std::chrono::microseconds(100);
  while (::flock(fd, op) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return io_error("flock", path, errno);
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(ErrorCode::kTimedOut, "lock on " + path + " still busy after " +
                                              std::to_string(lock_timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::microseconds(5000));
  }
  return file;
}

LockedTokenFile::LockedTokenFile(LockedTokenFile&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), seq_(other.seq_), read_ok_(other.read_ok_) {
  other.fd_ = -1;
}

LockedTokenFile& LockedTokenFile::operator=(LockedTokenFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    seq_ = other.seq_;
    read_ok_ = other.read_ok_;
    other.fd_ = -1;
  }
  return *this;
}

LockedTokenFile::~LockedTokenFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::optional<Token>> LockedTokenFile::read() {
  read_ok_ = false;
  Decoded best;
  bool any_bytes = false;
  for (off_t offset : kSlotOffset) {
    Slot slot{};
    ssize_t got = ::pread(fd_, slot.data(), slot.size(), offset);
    while (got < 0 && errno == EINTR) got = ::pread(fd_, slot.data(), slot.size(), offset);
    if (got < 0) return io_error("read token file", path_, errno);
    Decoded d = decode(slot, static_cast<std::size_t>(got));
    if (!d.blank) any_bytes = true;
    if (d.valid && (!best.valid || d.seq > best.seq)) best = d;
  }
  if (!best.valid) {
    seq_ = 0;
    if (any_bytes) {
      return Status(ErrorCode::kCorruption,
                    "token file " + path_ + " has data but no valid record; refusing all tokens");
    }
    read_ok_ = true;
    return std::optional<Token>();
  }
  read_ok_ = true;
  seq_ = best.seq;
  return std::optional<Token>(best.token);
}

Status LockedTokenFile::write(Token token) {
  if (!read_ok_) return Status(ErrorCode::kInternal, "token file " + path_ + " written before read");
  const std::uint64_t seq = seq_ + 1;
  const Slot slot = encode(seq, token);
  const off_t offset = kSlotOffset[seq % 2];
  ssize_t put = ::pwrite(fd_, slot.data(), slot.size(), offset);
  while (put < 0 && errno == EINTR) put = ::pwrite(fd_, slot.data(), slot.size(), offset);
  if (put < 0) return io_error("write token file", path_, errno);
  if (static_cast<std::size_t>(put) != slot.size()) {
    return Status(ErrorCode::kIoError, "short write to token file " + path_);
  }
  if (::fdatasync(fd_) != 0) return io_error("fdatasync token file", path_, errno);
  seq_ = seq;
  return Status::ok();
}

}  // namespace leasehold::fence::detail
