// torture/checker/linearizability.h: a Wing–Gong/Lowe linearizability
// search over one key's operations.
//
// Ops are given with invoke/complete times; an op with outcome unknown may
// take effect at any point after its invoke, or never. The search walks the
// calls in real-time order, linearizing each call whose model step is legal
// and backtracking when a return is reached before its call was linearized;
// (linearized set, state) pairs already seen are skipped (Lowe's cache).
//
// The models (one State type for both):
//   fenced store  fput ok: the stored token is <= the put's, the put's
//                 value/token become the state; fput fail (STALE) changes
//                 nothing; fget ok: equals the state (token 0 = nil).
//   compat key    cset ok: the key is absent, becomes (value, expiry lower
//                 bound = inv + px - drift margin); cset fail (nil): present;
//                 cdel ok (1): present with that value, becomes absent;
//                 cdel fail (0): absent or another value. Before any op
//                 whose completion is past the key's expiry lower bound the
//                 key may also have expired (both branches are searched).
//                 crash (lease runs only, see check_linearizable): the key
//                 becomes absent (the restart expires every session, and
//                 with it every key set with PX).
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "torture/checker/checker.h"
#include "torture/history.h"

namespace leasehold::torture {

enum class Linearizable : std::uint8_t { kYes, kNo, kBudgetExhausted };

// `ops`: the fput/fget, or the cset/cdel (and crash), records of ONE key.
Linearizable check_key_linearizable(const std::vector<Op>& ops, const CheckOptions& options);

}  // namespace leasehold::torture
