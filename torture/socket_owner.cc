// torture/socket_owner.cc: see socket_owner.h.
#include "torture/socket_owner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace leasehold::torture {
namespace {

// The port of "0100007F:1F90" (/proc/net/tcp's hex address:port).
unsigned long hex_port(const std::string& address) {
  const auto colon = address.find(':');
  return colon == std::string::npos ? 0 : std::strtoul(address.c_str() + colon + 1, nullptr, 16);
}

// The inode of the matching socket, "" if none.
std::string socket_inode(std::uint16_t local_port, std::uint16_t remote_port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, skip, inode;
    fields >> slot >> local >> remote;
    for (int i = 0; i < 6; ++i) fields >> skip;  // st, queues, timer, retransmits, uid, timeout
    fields >> inode;
    if (hex_port(local) == local_port && hex_port(remote) == remote_port && inode != "0") return inode;
  }
  return "";
}

bool holds(const std::filesystem::path& proc, const std::string& link) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc / "fd", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code gone;
    if (std::filesystem::read_symlink(it->path(), gone).string() == link) return true;
  }
  return false;
}

}  // namespace

pid_t loopback_socket_owner(std::uint16_t local_port, std::uint16_t remote_port, const std::string& comm) {
  const std::string inode = socket_inode(local_port, remote_port);
  if (inode.empty()) return -1;
  const std::string link = "socket:[" + inode + "]";
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm_in(it->path() / "comm");
    std::string process_comm;
    std::getline(comm_in, process_comm);
    if (process_comm == comm && holds(it->path(), link)) return static_cast<pid_t>(std::atol(name.c_str()));
  }
  return -1;
}

std::vector<std::string> process_cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

}  // namespace leasehold::torture
