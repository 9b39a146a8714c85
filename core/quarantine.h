// core/quarantine.h: when the grant quarantine of a Reopen ends, for those
// who need to know before the Reopen is applied (node/: INFO and /readyz
// report a start's quarantine from the moment it is proposed).
//
// Thread-safety: a pure function.
#pragma once

#include "core/command.h"

namespace leasehold::core {

// The log time at which the quarantine set by `reopen`, stamped `now`, ends:
// now + quarantine_ms, saturating at the largest LogMillis. Applying the
// Reopen pauses grants until at least this time.
LogMillis quarantine_end(const Reopen& reopen, LogMillis now);

}  // namespace leasehold::core
