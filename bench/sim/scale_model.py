#!/usr/bin/env python3
"""A discrete-event model of leasehold shards, each on its own machine.

It predicts W1 (lock cycles per second: acquire, then release) and the p99
acquire latency for 1 to 64 shards, under uniform and Zipf lock popularity,
from what one shard costs (bench/sim/calibration.json: the server's CPU per
command, the commit latency, the client round trip). It also counts what
grows with the number of shards: the sessions and keepalives each shard
carries, and the map refreshes after a slot moves.

What is modelled, per shard (DESIGN.md section 7: a whole leasehold service):
  - one loop thread that parses and applies commands in arrival order,
    each taking `server_cpu_us_per_command`;
  - a group-committing log: commands applied while a commit is in flight
    wait for the next one, which takes all of them (up to
    `max_batch_commands`); a commit takes a log-normal time with the
    calibrated p50 and p99;
  - the replies of a batch leave when its commit is done (no reply before
    its command is durable);
  - a lock granted to the first waiter when its holder releases, in the
    same command (FIFO hand-off, as the state machine does).
Clients are closed loops, `clients_per_shard` per shard, each with a cached
map: a cycle picks a lock (uniform over `locks`, or Zipf), sends
LOCK.ACQUIRE to the lock's shard (the slot of its name, as hash_slot()
computes it), waits for the grant, sends LOCK.RELEASE, waits for its reply,
and starts over. Half a round trip each way.

Not modelled: sessions' own traffic inside the cycle (keepalives are
counted apart, below), failures and slot moves (only their map refreshes
are counted), and any client-side cost.

Usage:
  bench/sim/scale_model.py [--calibration FILE] [--shards 1,2,4,...]
                           [--cycles N] [--seed S] [--json FILE]
Prints a table of the prediction and the goal line (uniform W1 at the
largest shard count >= 0.9x linear). Exit status 0 whether or not the goal
is met (a prediction, not a test); 2 on bad arguments or calibration.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import itertools
import json
import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, NoReturn, Optional, Tuple

SLOTS = 16384
DEFAULT_CALIBRATION = Path(__file__).resolve().parent / "calibration.json"
REQUIRED = ("server_cpu_us_per_command", "commit_p50_us", "commit_p99_us", "rtt_us", "max_batch_commands",
            "clients_per_shard", "locks", "zipf_exponent", "session_ttl_s", "keepalive_interval_fraction",
            "session_idle_close_s")


def fail(message: str) -> NoReturn:
    """Bad arguments or calibration: the message on stderr, exit status 2."""
    print(f"scale_model: {message}", file=sys.stderr)
    sys.exit(2)


def crc16_xmodem(data: bytes) -> int:
    """CRC16-XMODEM, as slots/hash_slot.cc (and Redis Cluster) compute it."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def hash_slot(name: str) -> int:
    """The slot of a name with Redis's hash-tag rule (slots/hash_slot.h)."""
    raw = name.encode()
    start = raw.find(b"{")
    if start >= 0:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1:end]
    return crc16_xmodem(raw) % SLOTS


def shard_of_slot(slot: int, shards: int) -> int:
    """Equal contiguous slot ranges, shard 0 owning the lowest."""
    return slot * shards // SLOTS


@dataclass
class Calibration:
    values: Dict[str, float]

    @staticmethod
    def load(path: Path) -> "Calibration":
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            fail(f"cannot read calibration {path}: {e}")
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            fail(f"calibration {path} lacks {', '.join(missing)}")
        for k in REQUIRED:
            v = data[k]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
                fail(f"calibration {path}: {k} must be a positive number, not {v!r}")
        if data["commit_p99_us"] < data["commit_p50_us"]:
            fail(f"calibration {path}: commit_p99_us is below commit_p50_us")
        return Calibration({k: float(data[k]) for k in REQUIRED})

    def __getitem__(self, key: str) -> float:
        return self.values[key]


_CDF_CACHE: Dict[Tuple[int, float], List[float]] = {}


def zipf_cdf(locks: int, exponent: float) -> List[float]:
    """The cumulative Zipf(exponent) distribution over lock ids 0..locks-1."""
    key = (locks, exponent)
    if key not in _CDF_CACHE:
        cdf = list(itertools.accumulate(1.0 / (k ** exponent) for k in range(1, locks + 1)))
        total = cdf[-1]
        _CDF_CACHE[key] = [c / total for c in cdf]
    return _CDF_CACHE[key]


class LockPicker:
    """Lock ids 0..locks-1, uniform or Zipf(s) (id 0 the most popular)."""

    def __init__(self, locks: int, zipf: Optional[float], rng: random.Random) -> None:
        self._locks = locks
        self._rng = rng
        self._cdf: Optional[List[float]] = None
        if zipf is not None:
            self._cdf = zipf_cdf(locks, zipf)

    def pick(self) -> int:
        if self._cdf is None:
            return self._rng.randrange(self._locks)
        return min(bisect.bisect_left(self._cdf, self._rng.random()), self._locks - 1)

    def probability(self, lock: int) -> float:
        if self._cdf is None:
            return 1.0 / self._locks
        return self._cdf[lock] - (self._cdf[lock - 1] if lock > 0 else 0.0)


@dataclass
class Shard:
    cpu_free_at: float = 0.0
    batch: List[Tuple[int, str]] = field(default_factory=list)  # (client, reply kind)
    committing: bool = False
    commands: int = 0
    commits: int = 0


@dataclass
class Result:
    shards: int
    clients: int
    cycles_per_s: float
    p50_acquire_ms: float
    p99_acquire_ms: float
    hot_shard_share: float  # the busiest shard's share of the commands


class Simulation:
    """One run: `shards` shards, clients_per_shard clients each."""

    def __init__(self, cal: Calibration, shards: int, zipf: Optional[float], seed: int) -> None:
        self.cal = cal
        self.n = shards
        self.rng = random.Random(seed)
        self.picker = LockPicker(int(cal["locks"]), zipf, self.rng)
        self.shard_cache: Dict[int, int] = {}
        self.shards = [Shard() for _ in range(shards)]
        self.events: List[Tuple[float, int, Callable[[float], None]]] = []
        self.seq = itertools.count()
        self.holder: Dict[int, int] = {}           # lock -> client
        self.waiters: Dict[int, List[int]] = {}     # lock -> FIFO of clients
        self.client_lock: Dict[int, int] = {}
        self.sent_at: Dict[int, float] = {}
        self.half_rtt = cal["rtt_us"] / 2e6
        self.cpu = cal["server_cpu_us_per_command"] / 1e6
        # log-normal commit time with the calibrated p50 and p99
        self.mu = math.log(cal["commit_p50_us"] / 1e6)
        self.sigma = (math.log(cal["commit_p99_us"]) - math.log(cal["commit_p50_us"])) / 2.3263
        self.max_batch = int(cal["max_batch_commands"])
        self.measuring = False
        self.cycles = 0
        self.latencies: List[float] = []

    # --- plumbing ---
    def at(self, t: float, action: Callable[[float], None]) -> None:
        heapq.heappush(self.events, (t, next(self.seq), action))

    def shard_of(self, lock: int) -> int:
        s = self.shard_cache.get(lock)
        if s is None:
            s = shard_of_slot(hash_slot(f"lock:{lock}"), self.n)
            self.shard_cache[lock] = s
        return s

    # --- the client ---
    def start_cycle(self, client: int, t: float) -> None:
        lock = self.picker.pick()
        self.client_lock[client] = lock
        self.sent_at[client] = t
        self.at(t + self.half_rtt, lambda now: self.arrive(now, client, "acquire"))

    def on_reply(self, client: int, kind: str, t: float) -> None:
        if kind == "granted":
            if self.measuring:
                self.latencies.append(t - self.sent_at[client])
            self.at(t + self.half_rtt, lambda now: self.arrive(now, client, "release"))
        elif kind == "released":
            if self.measuring:
                self.cycles += 1
            self.start_cycle(client, t)

    # --- the shard ---
    def arrive(self, t: float, client: int, op: str) -> None:
        shard = self.shards[self.shard_of(self.client_lock[client])]
        start = max(t, shard.cpu_free_at)
        shard.cpu_free_at = start + self.cpu
        self.at(shard.cpu_free_at, lambda now: self.apply(now, shard, client, op))

    def apply(self, t: float, shard: Shard, client: int, op: str) -> None:
        lock = self.client_lock[client]
        shard.commands += 1
        if op == "acquire":
            if lock not in self.holder:
                self.holder[lock] = client
                shard.batch.append((client, "granted"))
            else:
                self.waiters.setdefault(lock, []).append(client)
                shard.batch.append((-1, ""))  # the enqueue is written too; its reply waits for the grant
        else:
            assert self.holder.get(lock) == client, "release by a non-holder"
            shard.batch.append((client, "released"))
            queue = self.waiters.get(lock)
            if queue:
                nxt = queue.pop(0)
                if not queue:
                    del self.waiters[lock]
                self.holder[lock] = nxt
                shard.batch.append((nxt, "granted"))  # the same command grants the next waiter
            else:
                del self.holder[lock]
        if not shard.committing:
            self.start_commit(t, shard)

    def start_commit(self, t: float, shard: Shard) -> None:
        batch, shard.batch = shard.batch[:self.max_batch], shard.batch[self.max_batch:]
        shard.committing = True
        shard.commits += 1
        took = self.rng.lognormvariate(self.mu, self.sigma)
        self.at(t + took, lambda now: self.committed(now, shard, batch))

    def committed(self, t: float, shard: Shard, batch: List[Tuple[int, str]]) -> None:
        for client, kind in batch:
            if client >= 0:
                self.at(t + self.half_rtt, lambda now, c=client, k=kind: self.on_reply(c, k, now))
        shard.committing = False
        if shard.batch:
            self.start_commit(t, shard)

    # --- a run ---
    def run(self, cycles: int, warmup_cycles: int) -> Result:
        clients = int(self.cal["clients_per_shard"]) * self.n
        for c in range(clients):
            self.start_cycle(c, self.rng.random() * 1e-3)
        t = 0.0
        started = 0.0
        seen = 0
        counts_at_start: List[int] = []
        while self.events:
            t, _, action = heapq.heappop(self.events)
            action(t)
            if not self.measuring:
                seen += 1
                # ~6 events per cycle: warm up for about warmup_cycles
                if seen >= warmup_cycles * 6:
                    self.measuring = True
                    started = t
                    counts_at_start = [s.commands for s in self.shards]
            elif self.cycles >= cycles:
                break
        elapsed = t - started
        per_shard = [s.commands - c0 for s, c0 in zip(self.shards, counts_at_start)]
        lat = sorted(self.latencies)
        return Result(
            shards=self.n,
            clients=clients,
            cycles_per_s=self.cycles / elapsed if elapsed > 0 else 0.0,
            p50_acquire_ms=lat[len(lat) // 2] * 1e3 if lat else 0.0,
            p99_acquire_ms=lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3 if lat else 0.0,
            hot_shard_share=max(per_shard) / max(1, sum(per_shard)),
        )


def shard_weights(picker: LockPicker, shards: int, sample: int, rng: random.Random) -> List[float]:
    """Each shard's share of the acquires (sampled for Zipf's long tail)."""
    counts = [0] * shards
    for _ in range(sample):
        counts[shard_of_slot(hash_slot(f"lock:{picker.pick()}"), shards)] += 1
    return [c / sample for c in counts]


def session_load(cal: Calibration, shards: int, cycles_per_client_s: float, weights: List[float]) -> Dict[str, float]:
    """Sessions and keepalives per shard with sessions opened lazily (one per
    shard a client uses) and closed after `session_idle_close_s` idle;
    keepalives one per connection and interval (a client's sessions on one
    shard share its connection, so one keepalive carries them all)."""
    clients = cal["clients_per_shard"] * shards
    per_window = cycles_per_client_s * cal["session_idle_close_s"]  # locks a client touches per idle window
    # a session stays open on shard s if the client touched s in the window
    open_per_shard = [clients * (1.0 - (1.0 - w) ** per_window) for w in weights]
    interval = cal["session_ttl_s"] * cal["keepalive_interval_fraction"]
    worst = max(open_per_shard)
    return {
        "clients": int(clients),
        "sessions_per_shard_max": worst,
        "sessions_per_shard_if_never_closed": clients,
        "keepalives_per_s_per_shard": worst / interval,
        # keepalives against the commands a shard serves (two per cycle)
        "keepalive_share": (worst / interval) / max(1e-9, 2.0 * cycles_per_client_s * clients / shards),
        "map_refreshes_per_change": clients,  # each client refetches once, at its next -MOVED
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibration", type=Path, default=DEFAULT_CALIBRATION)
    parser.add_argument("--shards", default="1,2,4,8,16,32,64")
    parser.add_argument("--cycles", type=int, default=20000, help="measured cycles per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    try:
        counts = [int(x) for x in args.shards.split(",")]
    except ValueError:
        parser.error(f"--shards: '{args.shards}' is not a comma-separated list of numbers")
    if not counts or any(c < 1 or c > SLOTS for c in counts):
        parser.error(f"--shards: each count must be 1 to {SLOTS}")
    if args.cycles < 100:
        parser.error("--cycles: at least 100")
    cal = Calibration.load(args.calibration)

    rows = []
    for dist, zipf in (("uniform", None), (f"zipf({cal['zipf_exponent']:g})", cal["zipf_exponent"])):
        base: Optional[float] = None
        for n in counts:
            sim = Simulation(cal, n, zipf, args.seed + n)
            r = sim.run(args.cycles, warmup_cycles=max(2000, args.cycles // 4))
            if base is None:
                base = r.cycles_per_s / n
            weights = shard_weights(sim.picker, n, 20000, random.Random(args.seed))
            load = session_load(cal, n, r.cycles_per_s / r.clients, weights)
            rows.append({"distribution": dist, "shards": n, "clients": r.clients,
                         "w1_cycles_per_s": r.cycles_per_s, "vs_linear": r.cycles_per_s / (base * n),
                         "p50_acquire_ms": r.p50_acquire_ms, "p99_acquire_ms": r.p99_acquire_ms,
                         "hot_shard_share": r.hot_shard_share, **load})

    shown = args.calibration.resolve()
    root = Path(__file__).resolve().parents[2]
    shown_text = str(shown.relative_to(root)) if shown.is_relative_to(root) else str(shown)
    print(f"leasehold shards, each on its own machine (model calibrated by {shown_text}):")
    print(f"  server CPU {cal['server_cpu_us_per_command']:g} us/command, commit p50 {cal['commit_p50_us']:g} us "
          f"p99 {cal['commit_p99_us']:g} us, RTT {cal['rtt_us']:g} us, {int(cal['clients_per_shard'])} clients "
          f"per shard, {int(cal['locks']):,} locks")
    print()
    print("| locks | shards | clients | W1 cycles/s | vs linear | p50 acquire ms | p99 acquire ms | "
          "busiest shard | sessions/shard | keepalives/s/shard |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['distribution']} | {r['shards']} | {r['clients']:,} | {r['w1_cycles_per_s']:,.0f} | "
              f"{r['vs_linear']:.2f}x | {r['p50_acquire_ms']:.2f} | {r['p99_acquire_ms']:.2f} | "
              f"{r['hot_shard_share'] * 100:.1f}% | {r['sessions_per_shard_max']:,.0f} | "
              f"{r['keepalives_per_s_per_shard']:,.1f} ({r['keepalive_share'] * 100:.1f}% of its commands) |")
    uniform = [r for r in rows if r["distribution"] == "uniform"]
    top = uniform[-1]
    status = "met" if top["vs_linear"] >= 0.9 else "NOT met"
    print()
    print(f"goal: uniform W1 at {top['shards']} shards >= 0.9x linear: {top['vs_linear']:.2f}x ({status})")
    zipf_rows = [r for r in rows if r["distribution"] != "uniform"]
    broken = next((r for r in zipf_rows if r["vs_linear"] < 0.9), None)
    if broken:
        print(f"zipf: below 0.9x linear from {broken['shards']} shards ({broken['vs_linear']:.2f}x): the most "
              f"popular lock lives on one shard and its holders queue for it whatever the shard count")
    worst = top  # the design point: uniform load at the largest shard count
    print(f"sessions: a client opens a session on a shard when it first uses it and closes it after "
          f"{cal['session_idle_close_s']:g} s idle; at {worst['shards']} shards each shard keeps up to "
          f"{worst['sessions_per_shard_max']:,.0f} sessions and {worst['keepalives_per_s_per_shard']:,.0f} "
          f"keepalives/s ({worst['keepalive_share'] * 100:.1f}% of its commands); after a slot moves, each of "
          f"the {worst['clients']:,} clients refetches the map once, at its next -MOVED")
    if args.json:
        args.json.write_text(json.dumps({"calibration": cal.values, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
