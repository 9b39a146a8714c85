#include "log/log.h"

#include "common/assert.h"

namespace leasehold::log {

// A backend without streamed snapshots: the node checks streams_snapshots()
// and calls save_snapshot() instead, so reaching these is a bug.
void Log::begin_snapshot_stream(LogIndex) { LEASEHOLD_ASSERT(false, "{} does not stream snapshots", describe()); }
void Log::add_snapshot_piece(std::string) { LEASEHOLD_ASSERT(false, "{} does not stream snapshots", describe()); }
void Log::finish_snapshot_stream(StatusDone) { LEASEHOLD_ASSERT(false, "{} does not stream snapshots", describe()); }
void Log::abandon_snapshot_stream() { LEASEHOLD_ASSERT(false, "{} does not stream snapshots", describe()); }

}  // namespace leasehold::log
