// tests/torture_faults/file_ops.cc: `leasehold_test_file_ops OP [ARGS] ...`,
// a test helper that performs scripted file calls through glibc (so the
// disk-fault shim sees them), on one current fd, in the order given:
//   open PATH | open-wronly PATH   open (O_RDWR or O_WRONLY) | O_CREAT, 0644
//   write TEXT                     write() at the file position
//   seek OFFSET                    lseek(SEEK_SET)
//   pwrite OFFSET TEXT             pwrite()
//   pwritev OFFSET TEXT TEXT       pwritev() of two pieces
//   fsync | fdatasync | close
//   syncdir DIR                    fsync of a directory
//   rename FROM TO
//   kill                           raise(SIGKILL): the end, as a crash
// Exit 0 when every call succeeded; 1 at the first that failed (its name and
// errno on stderr); 2 on a usage error.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace {

struct State {
  int fd = -1;
  char** args = nullptr;  // this op's arguments
};

off_t offset_arg(const char* text) { return static_cast<off_t>(std::strtoll(text, nullptr, 10)); }

// Each returns the call's result: negative (with errno) on failure.
using OpFn = long (*)(State&);

struct Op {
  const char* name;
  int arity;
  OpFn run;
};

long open_as(State& s, int access) {
  if (s.fd >= 0) ::close(s.fd);
  s.fd = ::open(s.args[0], access | O_CREAT | O_CLOEXEC, 0644);
  return s.fd;
}

long pwritev_two(State& s) {
  struct iovec iov[2] = {{s.args[1], std::strlen(s.args[1])}, {s.args[2], std::strlen(s.args[2])}};
  return ::pwritev(s.fd, iov, 2, offset_arg(s.args[0]));
}

long sync_dir(State& s) {
  const int dir = ::open(s.args[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  const int rc = ::fsync(dir);
  ::close(dir);
  return rc;
}

const Op kOps[] = {
    {"open", 1, [](State& s) { return open_as(s, O_RDWR); }},
    {"open-wronly", 1, [](State& s) { return open_as(s, O_WRONLY); }},
    {"write", 1, [](State& s) -> long { return ::write(s.fd, s.args[0], std::strlen(s.args[0])); }},
    {"seek", 1, [](State& s) -> long { return ::lseek(s.fd, offset_arg(s.args[0]), SEEK_SET); }},
    {"pwrite", 2,
     [](State& s) -> long { return ::pwrite(s.fd, s.args[1], std::strlen(s.args[1]), offset_arg(s.args[0])); }},
    {"pwritev", 3, pwritev_two},
    {"fsync", 0, [](State& s) -> long { return ::fsync(s.fd); }},
    {"fdatasync", 0, [](State& s) -> long { return ::fdatasync(s.fd); }},
    {"close", 0, [](State& s) -> long { return ::close(std::exchange(s.fd, -1)); }},
    {"syncdir", 1, sync_dir},
    {"rename", 2, [](State& s) -> long { return ::rename(s.args[0], s.args[1]); }},
    {"kill", 0, [](State&) -> long { return std::raise(SIGKILL); }},
};

}  // namespace

int main(int argc, char** argv) {
  State state;
  for (int i = 1; i < argc;) {
    const std::string_view name = argv[i];
    const Op* op = nullptr;
    for (const Op& candidate : kOps) {
      if (name == candidate.name) op = &candidate;
    }
    if (op == nullptr || i + op->arity >= argc) {
      std::fprintf(stderr, "usage: %s OP [ARGS] ... (see file_ops.cc); bad op at %s\n", argv[0], argv[i]);
      return 2;
    }
    state.args = argv + i + 1;
    if (op->run(state) < 0) {
      std::fprintf(stderr, "%s: %s failed: %s\n", argv[0], op->name, std::strerror(errno));
      return 1;
    }
    i += 1 + op->arity;
  }
  return 0;
}
