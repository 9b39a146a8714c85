// core/snapshot_encoder.h: encodes the snapshot image (layout in
// docs/core.md) of the state as it was at one moment, in steps, while the
// state goes on changing between the steps.
//
// Why: one image of millions of sessions takes the owner's thread hundreds
// of milliseconds (the node's event loop: every client would wait). In
// steps, the loop encodes a bounded number of sessions at a time and serves
// clients in between.
//
// How the image stays the state at begin: the sections other than sessions
// (locks, fenced keys, compat keys) are encoded whole at the start. Sessions
// are encoded in id order behind a cursor. A session the cursor has not
// reached yet is copied (encoded as it is) just before anything changes it
// (before_change(): the handlers call it through CoreState::encoder before
// every change of an encoded session field and before erasing a session);
// the step then writes the copy. Sessions opened later have ids above the
// revision at begin and are never written. The bytes equal
// encode_snapshot() of the state at begin (tests/core/snapshot_steps_test.cc
// checks it against random commands interleaved with the steps).
//
// Ownership: the encoder keeps the pieces it wrote; finish() hands them over.
// The state being encoded is passed to each call (it is not owned).
// Thread-safety: none; the state's owner makes every call. join() is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/byte_io.h"
#include "core/types.h"

namespace leasehold::core::detail {

struct CoreState;
struct Session;

class SnapshotEncoder {
 public:
  // Encodes the header and the sections after the sessions: O(locks +
  // holders + waiters + keys, and sorting their names).
  explicit SnapshotEncoder(const CoreState& s);

  // Encodes up to `max_sessions` more sessions (stale ids count as one
  // each). True when every session of the image is written.
  bool step(const CoreState& s, std::size_t max_sessions);
  bool done() const { return done_; }

  // Called before session `id` changes or is erased: keeps its encoding as
  // it is now if the image still needs it. O(1) when it does not.
  void before_change(const CoreState& s, SessionId id);

  // The image in pieces, in order (checksum not yet added). Precondition:
  // done() (asserted). Leaves the encoder empty.
  std::vector<std::string> finish();

  // The pieces finished so far, in order (the rest come from later calls
  // and finish()). Leaves them out of the encoder.
  std::vector<std::string> take_pieces() { return std::exchange(pieces_, {}); }

  // The pieces concatenated, with the checksum appended: the bytes
  // StateMachine::restore() reads. Pure; any thread.
  static std::string join(std::vector<std::string> pieces);
  // The bytes that follow the last piece: the checksum of all of them
  // (snapshot_crc folded over the pieces). Pure.
  static std::string trailer(std::uint32_t crc);

 private:
  SessionId through_;           // the highest id opened by begin: no later session is in the image
  SessionId next_ = 1;          // every session with a lower id is written
  std::size_t expected_ = 0;    // sessions live at begin
  std::size_t written_ = 0;
  std::uint8_t version_ = 0;    // the image's version (core/snapshot_format.h)
  bool done_ = false;
  std::map<SessionId, std::string> copies_;  // sessions >= next_ changed since begin, as at begin
  std::vector<std::string> pieces_;
  ByteWriter current_;
  std::string tail_;            // locks, fenced keys, compat keys
};

// The encoding of one session as it appears in the image.
void put_session(ByteWriter& w, SessionId id, const Session& sess, std::uint8_t version);

}  // namespace leasehold::core::detail
