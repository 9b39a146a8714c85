// core/fence_kv.cc: the fenced key-value store. A write is accepted only from
// a current holder's token of the named lock, and never with a token lower
// than the one that wrote the current value (tokens are fencing tokens).
#include <string>

#include "common/unsafe_test_faults.h"
#include "core/state.h"

namespace leasehold::core::detail {

Reply apply_fence_put(Ctx& c, const FencePut& p) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, p.key)) return bad_name(lim, "key", p.key);
  if (!name_ok(lim, p.lock)) return bad_name(lim, "lock name", p.lock);
  if (p.value.size() > lim.max_value_bytes) {
    return Reply::fail(ErrorCode::kLimitExceeded, "value is " + std::to_string(p.value.size()) +
                                                      " bytes, over max_value_bytes " +
                                                      std::to_string(lim.max_value_bytes));
  }
  const auto lit = c.s.locks.find(p.lock);
  bool holder = false;
  if (lit != c.s.locks.end()) {
    for (const Holder& h : lit->second.holders) holder = holder || h.token == p.token;
  }
  // UNSAFE TEST FAULT skip-fence-check (common/unsafe_test_faults.h): any token passes.
  const bool skip_check = unsafe::enabled(unsafe::TestFault::kSkipFenceCheck);
  if (!holder && !skip_check) {
    return Reply::fail(ErrorCode::kStaleToken, "token " + std::to_string(p.token) +
                                                   " is not a current holder's token of lock '" +
                                                   p.lock + "'");
  }
  const auto kit = c.s.fence.find(p.key);
  if (kit != c.s.fence.end() && kit->second.token > p.token && !skip_check) {
    return Reply::fail(ErrorCode::kStaleToken, "key '" + p.key + "' was written with newer token " +
                                                   std::to_string(kit->second.token) + " > " +
                                                   std::to_string(p.token));
  }
  if (kit == c.s.fence.end() && c.s.fence.size() >= lim.max_fence_keys) {
    return Reply::fail(ErrorCode::kLimitExceeded, "fence key count " + std::to_string(c.s.fence.size()) +
                                                      " is at max_fence_keys " +
                                                      std::to_string(lim.max_fence_keys));
  }
  FencedValue& v = kit == c.s.fence.end() ? c.s.fence[p.key] : kit->second;
  v.value = p.value;
  v.token = p.token;
  Reply r;
  r.token = p.token;
  return r;
}

}  // namespace leasehold::core::detail
