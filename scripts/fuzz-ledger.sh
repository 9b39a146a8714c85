#!/usr/bin/env bash
# The fuzzing ledger (docs/fuzzing.md, "Volume"): one JSON line per long
# fuzzing run, kept in the repository so the volume adds up across clones
# and machines, and a report of the totals.
#
#   fuzz-ledger.sh record LEDGER TARGET LOG EXIT_STATUS SECONDS
#       Appends the run whose output is in LOG and which took SECONDS. For
#       a libFuzzer target the count is libFuzzer's
#       stat::number_of_executed_units (run-fuzzer.sh asks for
#       -print_final_stats=1); for TARGET "net" it is the frames the net
#       fuzzer's final "net_fuzzer: OK ..." / "FAILED ..." line reports
#       (so for every TARGET named net*: "net" is the ASan server `make fuzz`
#       attacks, "net-release" a run against the release server).
#       A run whose count cannot be read is recorded with count 0 and
#       result "no-count" (it adds no volume). EXIT_STATUS 0 is "ok",
#       anything else "failed" (a crash, leak, sanitizer report or check).
#   fuzz-ledger.sh report LEDGER
#       Prints a Markdown table: per target the runs, executions (or
#       frames), seconds and failed runs, and the libFuzzer total; then the
#       executions and frames since the last failed run of each kind.
#
# Errors: a missing argument or unreadable LOG exits 2 and writes nothing.
set -euo pipefail

usage() {
  sed -n '4,22p' "$0" >&2
  exit 2
}

record() {
  (($# == 5)) || usage
  local ledger=$1 target=$2 log=$3 status=$4 seconds=$5
  [[ -r "$log" ]] || { echo "fuzz-ledger: cannot read $log" >&2; exit 2; }
  [[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz-ledger: SECONDS must be a whole number: $seconds" >&2; exit 2; }
  local count result commit
  if [[ "$target" == net* ]]; then
    count=$(grep -o 'net_fuzzer: [A-Z]* seed=[0-9]* frames=[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  else
    count=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  fi
  result=ok
  ((status == 0)) || result=failed
  if [[ -z "$count" ]]; then
    count=0
    [[ "$result" == ok ]] && result=no-count
  fi
  commit=$(git -C "$(dirname "$0")" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  printf '{"date":"%s","commit":"%s","target":"%s","count":%s,"seconds":%s,"result":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$commit" "$target" "$count" "$seconds" "$result" >>"$ledger"
  echo "fuzz-ledger: $target: $count $( [[ $target == net* ]] && echo frames || echo executions ), $result -> $ledger"
}

report() {
  (($# == 1)) || usage
  python3 - "$1" <<'EOF'
import json, sys
rows = {}
# Executions (libFuzzer) and frames (net) since the last failed run of
# their kind: the clean stretch the goal "0 failures in N" asks for.
clean = {"lib": 0, "net": 0}
for n, line in enumerate(open(sys.argv[1]), 1):
    line = line.strip()
    if not line:
        continue
    try:
        r = json.loads(line)
    except ValueError:
        sys.exit(f"fuzz-ledger: {sys.argv[1]}:{n}: not JSON")
    t = rows.setdefault(r["target"], [0, 0, 0, 0])
    t[0] += 1
    t[1] += r["count"]
    t[2] += r["seconds"]
    t[3] += r["result"] == "failed"
    kind = "net" if r["target"].startswith("net") else "lib"
    clean[kind] = 0 if r["result"] == "failed" else clean[kind] + r["count"]
print("# Fuzzing volume\n")
print(f"Every long fuzzing run in `{sys.argv[1]}`, added up (written by")
print("`scripts/fuzz-ledger.sh report`; see docs/fuzzing.md, \"Volume\").\n")
print("| target | runs | executions (net: frames) | seconds | failed runs |")
print("|---|---|---|---|---|")
tot = [0, 0, 0, 0]
for name in sorted(rows, key=lambda k: (k.startswith("net"), k)):
    t = rows[name]
    print(f"| {name} | {t[0]} | {t[1]:,} | {t[2]:,} | {t[3]} |")
    if not name.startswith("net"):
        tot = [a + b for a, b in zip(tot, t)]
print(f"| **libFuzzer total** | {tot[0]} | {tot[1]:,} | {tot[2]:,} | {tot[3]} |")
print(f"\nSince the last failed run (in ledger order): {clean['lib']:,} libFuzzer executions, "
      f"{clean['net']:,} network frames.")
EOF
}

(($# >= 1)) || usage
cmd=$1
shift
case "$cmd" in
  record) record "$@" ;;
  report) report "$@" ;;
  *) usage ;;
esac
