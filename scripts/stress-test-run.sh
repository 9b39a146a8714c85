#!/usr/bin/env bash
# One run of the "make test passes on a busy machine" goal (docs/testing.md,
# "On a busy machine"): clones this repository's committed HEAD into a fresh
# directory, keeps every core busy with stress-ng, runs the README's
# `make test` there, and records the run in a ledger kept in the
# repository, so consecutive passes add up across sessions and machines.
#
#   scripts/stress-test-run.sh [LEDGER]     (default docs/reliability/stress-runs.jsonl)
#
# The ledger line: date, commit, load, result ("passed"/"failed"), seconds,
# and the failing tests' names (from ctest's "The following tests FAILED").
#
# The load is `stress-ng --cpu <cores>` unless STRESS_LOAD=fuzz: then
# scripts/fuzz-as-load.sh keeps every core busy with the libFuzzer targets
# of this checkout's build-fuzz/ (at normal priority, like stress-ng), and
# their runs go to the fuzzing ledger, so the same CPU adds fuzzing volume.
# The clone and its log stay in $STRESS_RUN_DIR (default /tmp) for a look
# at a failure; the script prints where. stress-ng is installed with apt-get
# when missing. Exit status: make test's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ledger=${1:-$root/docs/reliability/stress-runs.jsonl}
cores=$(nproc)
if ! command -v stress-ng >/dev/null; then
  apt-get install -y -q stress-ng >/dev/null
fi
commit=$(git -C "$root" rev-parse HEAD)
dir=$(mktemp -d "${STRESS_RUN_DIR:-/tmp}/leasehold-stress.XXXXXX")
git clone -q "$root" "$dir/repo"
git -C "$dir/repo" checkout -q "$commit"
log="$dir/make-test.log"
if [[ "${STRESS_LOAD:-stress-ng}" == fuzz ]]; then
  load="fuzz-as-load.sh (libFuzzer targets, $cores workers)"
  bash "$root/scripts/fuzz-as-load.sh" "$root/build-fuzz" "$root/docs/reliability/fuzz-runs.jsonl" "$cores" 600 \
    >"$dir/fuzz-load.log" 2>&1 &
else
  load="stress-ng --cpu $cores"
  stress-ng --cpu "$cores" --timeout 4h >/dev/null 2>&1 &
fi
stress=$!
echo "stress-test-run: $commit in $dir/repo under $load; log $log"
trap 'kill "$stress" 2>/dev/null || true' EXIT
start=$(date +%s)
status=0
(cd "$dir/repo" && make test) >"$log" 2>&1 || status=$?
seconds=$(($(date +%s) - start))
kill "$stress" 2>/dev/null || true
load_status=0
wait "$stress" 2>/dev/null || load_status=$?
if [[ "${STRESS_LOAD:-}" == fuzz ]] && ((load_status != 0)); then
  echo "stress-test-run: a fuzzing run of the load FAILED; see $dir/fuzz-load.log" >&2
fi
result=passed
((status == 0)) || result=failed
# "\t<n> - <name> (Failed)" lines after ctest's summary line.
failed=$(awk '/The following tests FAILED/ {on = 1; next} on && /^\t *[0-9]+ - / {print $3} !/^\t/ {on = 0}' "$log" |
  sort -u | paste -sd, -)
printf '{"date":"%s","commit":"%s","load":"%s","result":"%s","seconds":%s,"failed":"%s"}\n' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${commit:0:12}" "$load" "$result" "$seconds" "$failed" >>"$ledger"
streak=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    if line.strip():
        n = n + 1 if json.loads(line)["result"] == "passed" else 0
print(n)' "$ledger")
echo "stress-test-run: $result after ${seconds}s${failed:+ (failed: $failed)}; consecutive passes in $ledger: $streak"
exit "$status"
