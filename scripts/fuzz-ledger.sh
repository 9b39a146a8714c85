#!/usr/bin/env bash
# The fuzzing runs (docs/fuzzing.md, "Volume"): one JSON line per long
# fuzzing run, written under the fuzz build (never into a tracked file),
# then folded into the aggregate kept in the repository
# (docs/reliability/totals.json, section "fuzz"), so the volume adds up
# across clones and machines, and docs/RELIABILITY.md's fuzzing section.
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
#   fuzz-ledger.sh fold TOTALS PAGE LEDGER...
#       Adds the LEDGERs' runs to TOTALS (per target the runs, executions
#       or frames, seconds and failed runs; the executions and frames since
#       the last failed run; the first and last run's commit and date) and
#       rewrites PAGE's fuzzing section (scripts/reliability_totals.py).
#       Fold a ledger once: `make fuzz` moves it aside after folding.
#
# Errors: a missing argument or unreadable LOG exits 2 and writes nothing;
# so does a malformed ledger line or TOTALS (the message names the line).
set -euo pipefail

usage() {
  sed -n '8,27p' "$0" >&2
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

fold() {
  (($# >= 3)) || usage
  python3 "$(dirname "$0")/reliability_totals.py" fuzz "$@"
}

(($# >= 1)) || usage
cmd=$1
shift
case "$cmd" in
  record) record "$@" ;;
  fold) fold "$@" ;;
  *) usage ;;
esac
