// torture/socket_owner.h: which process owns one end of a TCP connection on
// 127.0.0.1, read from /proc (the fault proxies' routers use it to tell
// which etcd member dialed them: torture/etcd_peer_links.h).
//
// loopback_socket_owner(local_port, remote_port, comm) finds the socket
// whose local port is `local_port` and whose peer port is `remote_port`
// (/proc/net/tcp), then the process named `comm` (/proc/<pid>/comm) that
// holds it among its file descriptors. process_cmdline(pid) is that
// process's arguments.
// Errors: -1 (or an empty list) when not found or /proc is unreadable.
// Thread-safety: free functions, reading /proc only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace leasehold::torture {

pid_t loopback_socket_owner(std::uint16_t local_port, std::uint16_t remote_port, const std::string& comm);
std::vector<std::string> process_cmdline(pid_t pid);

}  // namespace leasehold::torture
