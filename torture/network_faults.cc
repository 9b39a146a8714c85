// torture/network_faults.cc: the network faults of a torture run, on a
// FaultProxy between the workers and the server (torture/faults/fault_proxy.h):
//   partition     both ways, bytes held (TCP outlives it) or dropped (the
//                 connections that lost bytes are reset at heal), current
//                 connections sometimes reset at once
//   one-way-loss  one direction dropped: requests never arrive, or replies
//                 never come back (unknown outcomes)
//   slow-link     20-400 ms added each way, sometimes a rate cap
// Each is healed by FaultProxy::heal(). Faults picked with a seeded rng.
// Thread-safety: the faults run on the nemesis thread; the proxy is
// thread-safe.
#include <memory>
#include <random>

#include "torture/faults/fault_proxy.h"
#include "torture/nemesis.h"
#include "torture/run.h"
#include "torture/target.h"

namespace leasehold::torture {

void add_network_faults(const RunConfig& c, Nemesis& nemesis, FaultProxy& proxy) {
  using std::chrono::milliseconds;
  const milliseconds ttl(c.ttl_ms);
  auto rng = std::make_shared<std::mt19937_64>(c.seed ^ 0x3c6ef372ULL);
  auto coin = [rng] { return std::uniform_int_distribution<int>(0, 1)(*rng) == 1; };
  auto heal = [&proxy] { proxy.heal(); return Status(); };
  if (wants_fault(c, "partition")) {
    nemesis.add({"partition",
                 [&proxy, coin] {
                   proxy.partition(coin() ? BlockMode::kHold : BlockMode::kDrop, /*reset_existing=*/coin());
                   return Status();
                 },
                 heal, ttl / 4, ttl * 2, false});
  }
  if (wants_fault(c, "one-way-loss")) {
    nemesis.add({"one-way-loss",
                 [&proxy, coin] {
                   proxy.block(coin() ? Direction::kClientToServer : Direction::kServerToClient, BlockMode::kDrop);
                   return Status();
                 },
                 heal, ttl / 4, ttl * 3 / 2, false});
  }
  if (wants_fault(c, "slow-link")) {
    nemesis.add({"slow-link",
                 [&proxy, rng, coin] {
                   const milliseconds delay(std::uniform_int_distribution<int>(20, 400)(*rng));
                   proxy.set_delay(Direction::kClientToServer, delay);
                   proxy.set_delay(Direction::kServerToClient, delay);
                   if (coin()) {
                     const auto rate = static_cast<std::uint64_t>(std::uniform_int_distribution<int>(2000, 20000)(*rng));
                     proxy.set_rate(Direction::kServerToClient, rate);
                     proxy.set_rate(Direction::kClientToServer, rate);
                   }
                   return Status();
                 },
                 heal, ttl / 2, ttl * 2, false});
  }
}

}  // namespace leasehold::torture
