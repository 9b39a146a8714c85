// torture/worker.h: one workload client of a torture run (runs in its own
// process, `leasehold-torture worker ...`, so the nemesis can SIGSTOP it).
//
// It opens a session (C++ client, keepalives, the drift-bounded safe
// deadline; with close_grace_ms >= 0 an ONCLOSE session with that grace,
// SessionOptions::close_grace) and loops until `seconds` have passed, each round picking at
// random (seeded) one of:
//   exclusive  LOCK.ACQUIRE x<k> WAIT SEQ; hold; a write to the fenced
//              register and FENCE.PUT f<k>, FENCE.GET f<k> (also when the
//              session was lost meanwhile: a zombie's writes must be
//              refused); LOCK.RELEASE SEQ
//   rw         LOCK.ACQUIRE rw0 [SHARED] (readers and writers on one name)
//   semaphore  LOCK.ACQUIRE sem0 LIMIT 2
//   compat     SET c<k> v NX PX ttl TOKEN; hold; DELIFEQ c<k> v
// Every operation is appended to `history` (torture/history.h); each
// granted lock also yields a `hold` record. A reply that never came
// (unreachable, timed out) is recorded as unknown and the worker starts
// over on a fresh session (the old one expires on the server).
// SEQ-tagged acquires and releases are retried by the client library after
// a connection failure within the call's deadline; when the call still
// ends without a reply, the worker asks once more with the same SEQ (a
// second record, aux "seq-retry N"): the server answers a retry from its
// idempotence table and never grants twice.
// While it holds a lock it keeps "1" in <register_dir>/holding-<id>, "2"
// while that lock's fenced writes are still to come (the window the seeds'
// GC pause hits), "0" otherwise, so that the nemesis can pause a holder.
// Thread-safety: run_worker blocks the calling thread.
#pragma once

#include <cstdint>
#include <string>

namespace leasehold::torture {

struct WorkerConfig {
  std::string endpoints;     // "127.0.0.1:port[,...]"
  int id = 0;
  std::uint64_t seed = 0;
  int seconds = 10;
  int ttl_ms = 2000;
  int keys = 2;              // x0..x<keys-1>, f*, c*
  int close_grace_ms = -1;   // >= 0: sessions open with ONCLOSE and this grace (<= ttl_ms); -1: without
  std::string history;       // JSON-lines file to append to
  std::string register_dir;  // FencedRegister directory
};

// Runs the loop; 0 on a normal end, 1 when it could not start.
int run_worker(const WorkerConfig& config);

}  // namespace leasehold::torture
