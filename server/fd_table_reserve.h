// server/fd_table_reserve.h: grows the process's table of file descriptors
// once, at start, to the size the server will need, so that accepting
// clients never grows it on the event loop.
//
// Why: the kernel keeps each process's descriptors in a table that starts
// at 64 slots and doubles when a new descriptor does not fit. Once the
// process has more than one thread, every growth waits for an RCU grace
// period (expand_files -> synchronize_rcu) inside the accept4() or open()
// that needed the slot. On this project's test VM one such wait took
// 10-25 ms of the loop thread asleep, at the start of every phase in which
// 1,000 clients connected at once (the capacity benchmark's keepalive
// phase). The table
// never shrinks, so growing it once, before other threads exist, costs no
// wait and keeps later accepts free of it.
//
// What: reserve_fd_table(n) first raises the soft RLIMIT_NOFILE to n when
// it is lower (up to the hard limit, which only root may raise: a shell's
// default soft limit of 1,024 would otherwise refuse the 1,000th client of
// a server told --max-clients 10000), then makes the table hold that many
// descriptors by duplicating a descriptor to the last slot and closing it
// again; it leaves no descriptor open. The table costs 8 bytes per slot
// (128 KiB for the default --max-clients of 10,000, rounded up to 16,384).
//
// Errors: kIoError if getrlimit, setrlimit, open or fcntl fail (the server
// logs it and runs on; accepts then grow the table as before).
// Thread-safety: call once at start, before other threads exist (with more
// threads it still works, but waits for the grace period itself).
#pragma once

#include <cstddef>

#include "leasehold/status.h"

namespace leasehold::server {

// Slots beyond --max-clients for the server's own descriptors (listeners,
// the log's and RocksDB's files, snapshots, the HTTP endpoint).
inline constexpr std::size_t kOwnDescriptors = 256;

struct FdReservation {
  std::size_t limit = 0;  // the soft RLIMIT_NOFILE afterwards
  std::size_t slots = 0;  // slots the table holds at least: min(n, limit)
};
// `slots` is less than n when the hard limit is lower (the caller warns).
Result<FdReservation> reserve_fd_table(std::size_t n);

}  // namespace leasehold::server
