#!/usr/bin/env python3
"""bench/long_turns.py: what the server's event loop did in its longest turns.

The loop-turn meter (INFO loop_longest_turn_ms) says how long the longest
turns were, not what they did. This reads a `perf record -g` of the server
with a uprobe on LoopTurnMeter::on_turn, which the server calls once per
turn just before poll, so consecutive hits bound one turn exactly. For each
turn whose samples add up to at least --min-ms of CPU it prints the
functions with the most samples inclusive (anywhere on the stack): whether
the turn applied commands, grew a table, encoded a snapshot or page-faulted.

  perf probe -x build/leasehold --add \
      'turn=_ZN9leasehold6server13LoopTurnMeter7on_turnEP9uv_loop_s'
  perf record -p <server pid> --call-graph dwarf,8192 -e cpu-clock/period=2500000/ \
      -e probe_leasehold:turn/call-graph=no/ -o perf.data -- sleep 10
  perf script -F tid,time,event,ip,sym -i perf.data | bench/long_turns.py --freq 400 [--min-ms 10]

Set the sampling rate on cpu-clock's own period (2,500,000 ns of the
thread's CPU = 400 samples/s, hence --freq 400), never with perf record's
-F or -c: those apply to every event, the probe included, which then
records only some of its hits (at most ~F per second), so two consecutive
hits no longer bound one turn and busy stretches of many turns read as one
long turn. Without them a tracepoint or uprobe records every hit. Check
that the count of hits is plausible (perf report --stats): every turn is
one, tens of thousands per second on a busy server. The server's own meter
(INFO loop_longest_turn_ms and loop_longest_turn_cpu_ms) is the check on
this script's longest turn.

Without the probe's hits it falls back to busy stretches: runs of samples
with gaps under --gap-ms. That only finds turns when the loop sleeps in
poll between them; a saturated loop is one long stretch.
"""
import argparse
import collections
import re
import sys

# On every stack of the loop thread: says nothing about a turn.
GENERIC = {"_start", "main", "__libc_start_main", "__libc_start_call_main", "uv_run", "[unknown]"}
# "tid time: [event:] [ip sym]": the event is named when there are several
# (it may carry terms: cpu-clock/period=2500000/); a sample without a call
# graph (the probe, call-graph=no) has its one frame on the same line.
HEADER = re.compile(r"^\s*(\d+)\s+(\d+\.\d+):(?:\s+(\S+):)?(?:\s+[0-9a-f]+\s.*)?\s*$")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.+?)\s*$")


def samples(lines):
    """Yields (tid, seconds, event, [frames, leaf first]) per sample."""
    tid = when = event = None
    frames = []
    for line in lines:
        header = HEADER.match(line)
        if header:
            if tid is not None:
                yield tid, when, event, frames
            tid, when, event, frames = int(header.group(1)), float(header.group(2)), header.group(3) or "", []
            continue
        frame = FRAME.match(line)
        if frame and tid is not None:
            frames.append(frame.group(1).split("+0x")[0])
    if tid is not None:
        yield tid, when, event, frames


def turns(all_samples, marker):
    """Splits one thread's samples at the marker's hits: (start, end, samples)."""
    start = None
    current = []
    for sample in all_samples:
        if sample[2] == marker:
            if start is not None:
                yield start, sample[1], current
            start, current = sample[1], []
        elif start is not None:
            current.append(sample)


def stretches(all_samples, gap_s):
    """Groups one thread's samples into busy stretches."""
    current = []
    for sample in all_samples:
        if current and sample[1] - current[-1][1] > gap_s:
            yield current
            current = []
        current.append(sample)
    if current:
        yield current


def report(title, stretch, top):
    print(title)
    inclusive = collections.Counter()
    for _, _, _, frames in stretch:
        for name in set(frames):
            if name not in GENERIC and "Server::run(" not in name:
                inclusive[name] += 1
    for name, count in inclusive.most_common(top):
        print(f"  {100.0 * count / len(stretch):5.1f}%  {name[:150]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-ms", type=float, default=10.0, help="report turns with at least this much CPU")
    parser.add_argument("--freq", type=float, default=400.0, help="cpu-clock samples per second of CPU (1e9 / its period in ns)")
    parser.add_argument("--marker", default="probe_leasehold:turn", help="the uprobe event of on_turn")
    parser.add_argument("--gap-ms", type=float, default=2.0, help="without markers: a gap this long ends a stretch")
    parser.add_argument("--top", type=int, default=12, help="functions per turn")
    parser.add_argument("--tid", type=int, help="the loop thread (default: the one with the marker's hits, "
                        "else the one with most samples)")
    args = parser.parse_args()

    by_tid = collections.defaultdict(list)
    for sample in samples(sys.stdin):
        by_tid[sample[0]].append(sample)
    if not by_tid:
        sys.exit("long_turns.py: no samples on standard input (perf script -F tid,time,event,ip,sym)")
    marked = [t for t in by_tid if any(s[2] == args.marker for s in by_tid[t])]
    if args.tid is not None:
        tid = args.tid
    elif marked:
        tid = max(marked, key=lambda t: len(by_tid[t]))
    else:
        tid = max(by_tid, key=lambda t: len(by_tid[t]))
    chosen = sorted(by_tid.get(tid, []), key=lambda s: s[1])
    if not chosen:
        sys.exit(f"long_turns.py: no samples of thread {tid}")
    sample_ms = 1000.0 / args.freq
    t0 = chosen[0][1]
    if tid in marked:
        found = [(len(ss) * sample_ms, start, end, ss) for start, end, ss in turns(chosen, args.marker)]
        total = len(found)
        found = [f for f in found if f[0] >= args.min_ms]
        print(f"thread {tid}: {total} turns; {len(found)} with {args.min_ms:g} ms of CPU samples or more")
        for cpu_ms, start, end, ss in sorted(found, key=lambda f: -f[0]):
            report(f"\nturn at +{start - t0:.3f} s: {(end - start) * 1000:.1f} ms long, "
                   f"{len(ss)} samples (~{cpu_ms:.1f} ms CPU)", ss, args.top)
        return
    found = []
    for stretch in stretches(chosen, args.gap_ms / 1000.0):
        length_ms = (stretch[-1][1] - stretch[0][1]) * 1000.0
        if length_ms >= args.min_ms:
            found.append((length_ms, stretch))
    print(f"thread {tid}: no {args.marker} hits; {len(found)} busy stretches of {args.min_ms:g} ms or more")
    for length_ms, stretch in sorted(found, key=lambda x: -x[0]):
        report(f"\n{length_ms:.1f} ms at +{stretch[0][1] - t0:.3f} s, {len(stretch)} samples", stretch, args.top)


if __name__ == "__main__":
    main()
