#!/usr/bin/env python3
"""bench/results_page.py: writes docs/bench-results.md from a benchmark run.

Usage: python3 bench/results_page.py RESULTS_DIR [PAGE]   (PAGE: docs/bench-results.md)

RESULTS_DIR is what one run wrote under build/ (`make bench`:
build/bench/results-<UTC time>/; `bash bench/run_capacity.sh`:
build/bench/capacity-<UTC time>/). Each file there that it knows feeds one
section of the page:

  load.txt      bench/run_load.sh's output  -> section "load"
  etcd.txt      bench/run_etcd.sh's output  -> section "etcd"
  capacity.txt  bench/run_capacity.sh's     -> section "capacity"
  core.json     leasehold_core_bench --benchmark_out_format=json -> section "core"
  scale_model.txt  bench/sim/scale_model.py's output -> section "scale_model"

A section is the text between `<!-- generated: NAME -->` and
`<!-- end: NAME -->` on the page. A section whose file the run did not
write keeps its text, so a run of one script updates its own tables only;
everything outside the markers (the conclusions) is kept as written. Each
generated section starts with the command that produced it.

Exit status 0 when the page was written, 1 when a file could not be read
(nothing written), 2 on a usage error.
"""
import json
import os
import re
import sys

SECTIONS = ("load", "etcd", "capacity", "core", "scale_model")


def header_value(text, key):
    """The value of a `key:  value` header line of a script's output, or ""."""
    m = re.search(r"^%s:\s+(.*)$" % re.escape(key), text, re.M)
    return m.group(1).strip() if m else ""


def clean(line):
    """A line of the driver's output, without the tracker numbers it may name."""
    return re.sub(r"\(issue \d+(?:, )?", "(", line).replace("()", "").strip()


def number(cell):
    """ "27371" -> "27,371"; other cells unchanged."""
    return f"{int(cell):,}" if re.fullmatch(r"\d+", cell) else cell


def parse_table(text, first):
    """The driver's rate table whose header starts with `first`: a list of
    {column: cell}. Columns are right-aligned under their names (two or more
    spaces apart); the workload label may be longer than its header."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(first + " ")), None)
    if start is None:
        return []
    header = lines[start]
    spans = [(m.group(0), m.end()) for m in re.finditer(r"\S+(?: \S+)*", header)]
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        c_end = spans[1][1]
        label, _, clients = line[:c_end].rstrip().rpartition(" ")
        row = {spans[0][0]: label.strip(), spans[1][0]: clients}
        prev = c_end
        for name, end in spans[2:]:
            row[name] = line[prev:end].strip()
            prev = end
        rows.append(row)
    return rows


def find_row(rows, workload, clients):
    return next((r for r in rows if r.get("workload") == workload and r.get("C") == str(clients)), None)


def goal_rows(text, heading):
    """The goal lines under `heading` as (goal, measured, status) rows: a
    `limit:` line joins the status of the goal above it; `ratios` lines are
    left out (the full output keeps them)."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(heading)), None)
    if start is None:
        return []
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        line = clean(line)
        if line.startswith("ratios "):
            continue
        if line.startswith("limit:") and rows:
            goal, measured, status = rows[-1]
            rows[-1] = (goal, measured, (status + "; " if status else "") + line)
            continue
        if line.startswith("(") and rows:
            goal, measured, status = rows[-1]
            rows[-1] = (goal, f"{measured} {line}", status)
            continue
        body, arrow, status = line.partition(" -> ")
        goal, _, measured = body.partition(": ")
        rows.append((goal, measured, status if arrow else ""))
    return rows


def goal_table(rows, title):
    out = [f"| {title} | measured | status |", "|---|---|---|"]
    out += [f"| {g} | {m} | {s} |" for g, m, s in rows]
    return out


def produced_by(text, default):
    script = header_value(text, "script") or default
    return f"`{script}` on {header_value(text, 'date')} ({header_value(text, 'machine')})"


def load_section(text):
    rows = parse_table(text, "workload")
    c = 32 if find_row(rows, "W1", 32) else max((int(r["C"]) for r in rows if r["workload"] == "W1"), default=0)
    w1, w2 = find_row(rows, "W1", c), find_row(rows, "W2 r=0", c)
    columns = [("leasehold", "leasehold"), ("leasehold-p", "pipelined"), ("leasehold-lease", "lease"),
               ("redis-always", "redis-always"), ("redis-default", "redis-default"),
               ("zookeeper", "ZooKeeper"), ("ceiling", "ceiling")]
    columns = [(k, t) for k, t in columns if w1 is not None and k in w1]
    ceiling = re.search(r"fdatasync p50 ([\d.]+ ms).*PING RTT p50 ([\d.]+ ms)", text)
    out = [f"Produced by {produced_by(text, 'bash bench/run_load.sh')}"
           + (f"; fdatasync p50 {ceiling.group(1)}, loopback PING {ceiling.group(2)}" if ceiling else "")
           + f". C = {c} clients; the full tables (every C, latencies) are in the run's `load.txt`.", ""]
    out.append("| workload | " + " | ".join(t for _, t in columns) + " |")
    out.append("|---" * (len(columns) + 1) + "|")
    if w1:
        out.append("| W1 cycles/s | " + " | ".join(number(w1[k]) for k, _ in columns) + " |")
    if w2:
        out.append("| W2 grants/s (spin-lock retry 0) | " + " | ".join(number(w2[k]) for k, _ in columns) + " |")
        out.append("| W2 max/min grants per client | "
                   + " | ".join(w2.get("max/min " + k, "") for k, _ in columns) + " |")
    out += ["", *goal_table(goal_rows(text, "Goals ("), f"goal (C = {c})")]
    return out


def etcd_section(text):
    rows = parse_table(text, "workload")
    sizes = sorted({m.group(1) for r in rows[:1] for k in r for m in [re.fullmatch(r"lh-etcd(\d)", k)] if m})
    c = 32 if find_row(rows, "W1", 32) else max((int(r["C"]) for r in rows if r["workload"] == "W1"), default=0)
    out = [f"Produced by {produced_by(text, 'bash bench/run_etcd.sh')}, "
           f"etcd {header_value(text, 'etcd')}. C = {c} clients; `etcd-txn` is one fenced etcd write per "
           "operation, so its C = 1 rate is etcd's own sequential write rate.", "",
           f"| C = {c} | leasehold-on-etcd | pipelined | etcd mutex | etcd-txn, C = 1 |", "|---|---|---|---|---|"]
    for n in sizes:
        members = "1 member" if n == "1" else f"{n} members"
        names = [f"lh-etcd{n}", f"lh-etcd{n}p", f"etcd-mutex{n}"]
        for workload in ("W1", "W2"):
            row, lone = find_row(rows, workload, c), find_row(rows, workload, 1)
            if row is None:
                continue
            txn = lone.get(f"etcd-txn{n}", "") if (workload == "W2" and lone) else ""
            out.append(f"| {workload}, {members} | " + " | ".join(number(row.get(k, "")) for k in names)
                       + f" | {number(txn)} |")
        w2 = find_row(rows, "W2", c)
        if w2:
            out.append(f"| W2 max/min, {members} | " + " | ".join(w2.get("max/min " + k, "") for k in names)
                       + " | |")
    out += ["", *goal_table(goal_rows(text, "Goals of leasehold on etcd"), f"goal (C = {c})")]
    return out


def capacity_section(text):
    phases = {}
    for line in text.split("\n"):
        f = re.split(r"\s{2,}", line.strip())
        if len(f) >= 8 and f[0].isdigit():
            phases.setdefault(int(f[0]), {})[f[1]] = f
    counts = sorted(phases)

    def cell(n, phase, index, pattern):
        f = phases[n].get(phase)
        m = re.search(pattern, f[index]) if f and len(f) > index else None
        return m.group(1) if m else "-"

    def longest_turn(n):
        turns = [float(m.group(1)) for f in phases[n].values() if len(f) > 7
                 for m in [re.search(r"\(([\d.]+) ms\)", f[7])] if m]
        return f"{max(turns)} ms" if turns else "-"

    def sessions(n):
        return f"{n // 1000000}M sessions" if n % 1000000 == 0 else f"{n:,} sessions"

    out = [f"Produced by {produced_by(text, 'bash bench/run_capacity.sh')}; the load shares the "
           "server's cores.", "",
           "| | " + " | ".join(sessions(n) for n in counts) + " |", "|---" * (len(counts) + 1) + "|"]
    out.append("| sessions opened/s | " + " | ".join(number(cell(n, "open", 2, r"^(\d+) sessions/s"))
                                                      for n in counts) + " |")
    out.append("| RSS per session | " + " | ".join(cell(n, "open", 4, r"^(.+)$") for n in counts) + " |")
    conns = cell(counts[0], "keepalive", 2, r"from (\d+) conns") if counts else "-"
    out.append(f"| unpipelined keepalives/s from {number(conns)} connections | "
               + " | ".join(number(cell(n, "keepalive", 2, r"^(\d+) keepalives/s")) for n in counts) + " |")
    out.append("| restart (SIGTERM / SIGKILL), start to PONG | "
               + " | ".join(cell(n, "restart (term)", 2, r"start to PONG ([\d.]+) s") + " / "
                            + cell(n, "restart (kill)", 2, r"start to PONG ([\d.]+ s)") for n in counts) + " |")
    out.append("| longest event-loop turn, any phase | " + " | ".join(longest_turn(n) for n in counts) + " |")
    out += ["", *goal_table(goal_rows(text, "Goals"), "goal")]
    return out


def core_section(data):
    """One line from the Google Benchmark JSON of leasehold_core_bench."""
    benchmarks = data.get("benchmarks", [])

    def bench(prefix):
        return next((b for b in benchmarks if b["name"] == prefix or b["name"].startswith(prefix + "/")), None)

    def ns(prefix):
        b = bench(prefix)
        scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")] if b else 0
        return b["cpu_time"] * scale if b else None

    parts = []
    pair = ns("BM_UncontendedAcquireRelease/idempotent:0/locks:1")
    if pair:
        parts.append(f"{pair:.0f} ns per uncontended acquire+release pair "
                     f"({2e9 / pair / 1e6:.0f} M commands/s on one core)")
    waits = [w for w in ("100", "10000") if ns(f"BM_ContendedWaiters/waiters:{w}")]
    if waits:
        times = "/".join(f"{ns(f'BM_ContendedWaiters/waiters:{w}'):.0f}" for w in waits)
        parts.append(f"{times} ns per hand-off with {' / '.join(f'{int(w):,}' for w in waits)} waiters")
    memory = [(bench(n)[k], what) for n, k, what in (
        ("BM_MemoryPerIdleSession", "bytes/session", "per idle session"),
        ("BM_MemoryPerHeldLock", "bytes/held_lock", "per held lock"),
        ("BM_MemoryPerWaiter", "bytes/waiter", "per waiter")) if bench(n) and k in bench(n)]
    if memory:
        parts.append(", ".join(f"{v:.0f} bytes {what}" for v, what in memory))
    context = data.get("context", {})
    return [f"Produced by `make bench` "
            f"(`build/bench/leasehold_core_bench`) on {context.get('date', '?')}, "
            f"{context.get('num_cpus', '?')} CPUs: " + "; ".join(parts) + "."]


def scale_model_section(text):
    """The model's own output, under the command that produced it."""
    return ["Produced by `python3 bench/sim/scale_model.py` (a prediction from bench/sim/calibration.json, "
            "not a measurement).", ""] + text.rstrip("\n").split("\n")


def main(argv):
    if len(argv) not in (2, 3) or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    run_dir, page = argv[1], argv[2] if len(argv) == 3 else "docs/bench-results.md"
    makers = {"load": ("load.txt", load_section), "etcd": ("etcd.txt", etcd_section),
              "capacity": ("capacity.txt", capacity_section), "core": ("core.json", core_section),
              "scale_model": ("scale_model.txt", scale_model_section)}
    try:
        with open(page) as f:
            text = f.read()
        fresh = {}
        for name, (file_name, make) in makers.items():
            path = os.path.join(run_dir, file_name)
            if os.path.exists(path):
                with open(path) as f:
                    content = json.load(f) if file_name.endswith(".json") else f.read()
                fresh[name] = "\n".join(make(content))
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"results_page.py: {e}", file=sys.stderr)
        return 1
    for name, body in fresh.items():
        begin, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
        if begin not in text or end not in text:
            print(f"results_page.py: {page} has no section {name} ({begin} ... {end})", file=sys.stderr)
            return 1
        head, rest = text.split(begin, 1)
        text = head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]
    with open(page, "w") as f:
        f.write(text)
    print(f"results_page.py: {page}: " + (", ".join(fresh) or "nothing") + f" from {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
