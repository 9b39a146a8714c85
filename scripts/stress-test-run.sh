#!/usr/bin/env bash
# One run of the "make test passes on a busy machine" goal (docs/testing.md,
# "On a busy machine"): clones this repository's committed HEAD into a fresh
# directory, keeps every core busy with stress-ng, runs the README's
# `make test` there, and folds the run into the reliability aggregate kept
# in the repository (docs/reliability/totals.json, section "stress", and
# the stressed-run section of docs/RELIABILITY.md; scripts/
# reliability_totals.py), so consecutive passes add up across sessions and
# machines. Commit those two files with the run.
#
#   scripts/stress-test-run.sh [LEDGER]     (default build/stress/runs.jsonl)
#
# LEDGER (under the build, never tracked) gets the run's line too: date,
# commit, load, result ("passed"/"failed"), seconds, and the failing tests'
# names (from ctest's "The following tests FAILED").
#
# The load is `stress-ng --cpu <cores>` unless STRESS_LOAD=fuzz: then
# scripts/fuzz-as-load.sh keeps every core busy with the libFuzzer targets
# of this checkout's build-fuzz/ (at normal priority, like stress-ng), and
# their runs are folded into the fuzzing totals afterwards, so the same CPU
# adds fuzzing volume.
# The clone and its log stay in $STRESS_RUN_DIR (default /tmp) for a look
# at a failure; the script prints where. stress-ng is installed with apt-get
# when missing. Exit status: make test's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ledger=${1:-$root/build/stress/runs.jsonl}
totals=$root/docs/reliability/totals.json
page=$root/docs/RELIABILITY.md
fuzz_ledger=$root/build-fuzz/fuzz/load-runs.jsonl
mkdir -p "$(dirname "$ledger")"
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
  rm -f "$fuzz_ledger"
  bash "$root/scripts/fuzz-as-load.sh" "$root/build-fuzz" "$fuzz_ledger" "$cores" 600 \
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
if [[ "${STRESS_LOAD:-}" == fuzz ]]; then
  ((load_status == 0)) || echo "stress-test-run: a fuzzing run of the load FAILED; see $dir/fuzz-load.log" >&2
  if [[ -s "$fuzz_ledger" ]]; then
    bash "$root/scripts/fuzz-ledger.sh" fold "$totals" "$page" "$fuzz_ledger"
    mv "$fuzz_ledger" "$fuzz_ledger.folded-$(date -u +%Y%m%dT%H%M%SZ)"
  fi
fi
result=passed
((status == 0)) || result=failed
# "\t<n> - <name> (Failed)" lines after ctest's summary line.
failed=$(awk '/The following tests FAILED/ {on = 1; next} on && /^\t *[0-9]+ - / {print $3} !/^\t/ {on = 0}' "$log" |
  sort -u | paste -sd, -)
line=$(printf '{"date":"%s","commit":"%s","load":"%s","result":"%s","seconds":%s,"failed":"%s"}' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${commit:0:12}" "$load" "$result" "$seconds" "$failed")
echo "$line" >>"$ledger"
streak=$(python3 "$root/scripts/reliability_totals.py" stress "$totals" "$page" "$line")
echo "stress-test-run: $result after ${seconds}s${failed:+ (failed: $failed)}; passes in a row: $streak ($totals)"
exit "$status"
