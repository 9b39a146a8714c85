#!/usr/bin/env bash
# Tests scripts/fuzz-ledger.sh (the fuzzing volume ledger, docs/fuzzing.md):
# counts are read from real-format libFuzzer and net_fuzzer output, a failed
# run is recorded as failed, bad arguments write nothing, and the report adds
# the runs up per target.
#   fuzz_ledger_test.sh SOURCE_DIR
set -euo pipefail
ledger_sh="$1/scripts/fuzz-ledger.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ledger="$dir/ledger.jsonl"
fail() { echo "FAIL: $*" >&2; exit 1; }

# libFuzzer's final stats (run-fuzzer.sh passes -print_final_stats=1).
cat >"$dir/lf.log" <<'LOG'
#225589	DONE   cov: 666 ft: 3124 corp: 446/43Kb lim: 347 exec/s: 10742 rss: 442Mb
Done 225589 runs in 21 second(s)
stat::number_of_executed_units: 225589
stat::average_exec_per_sec:     10742
LOG
bash "$ledger_sh" record "$ledger" resp_parser "$dir/lf.log" 0 21 >/dev/null
# The net fuzzer prints its limits first, then its counters.
cat >"$dir/net.log" <<'LOG'
net_fuzzer: seed=7 seconds=60 frames=18446744073709551615
net_fuzzer: OK seed=7 frames=1234567 mutated=12 bytes=99 pipelines=3 replies=5
LOG
bash "$ledger_sh" record "$ledger" net "$dir/net.log" 0 60 >/dev/null
# A crash: libFuzzer still prints its stats; the run counts as failed.
cat >"$dir/crash.log" <<'LOG'
==1==ERROR: AddressSanitizer: heap-buffer-overflow
stat::number_of_executed_units: 1000
LOG
bash "$ledger_sh" record "$ledger" resp_parser "$dir/crash.log" 1 3 >/dev/null
# No count in the output: recorded, adds no volume.
echo "killed" >"$dir/empty.log"
bash "$ledger_sh" record "$ledger" snapshot "$dir/empty.log" 0 5 >/dev/null

[[ $(wc -l <"$ledger") -eq 4 ]] || fail "expected 4 ledger lines: $(cat "$ledger")"
grep -q '"target":"resp_parser","count":225589,"seconds":21,"result":"ok"' "$ledger" || fail "libFuzzer line: $(cat "$ledger")"
grep -q '"target":"net","count":1234567,"seconds":60,"result":"ok"' "$ledger" || fail "net line: $(cat "$ledger")"
grep -q '"count":1000,"seconds":3,"result":"failed"' "$ledger" || fail "failed line: $(cat "$ledger")"
grep -q '"target":"snapshot","count":0,"seconds":5,"result":"no-count"' "$ledger" || fail "no-count line: $(cat "$ledger")"

# Bad arguments exit 2 and append nothing.
for args in "record $ledger x $dir/missing.log 0 1" "record $ledger x $dir/lf.log 0 ten" "record $ledger x" "nonsense"; do
  status=0
  # shellcheck disable=SC2086  # the words are the arguments
  bash "$ledger_sh" $args >/dev/null 2>&1 || status=$?
  [[ $status -eq 2 ]] || fail "'$args' exited $status, expected 2"
done
[[ $(wc -l <"$ledger") -eq 4 ]] || fail "a refused record wrote to the ledger"

report=$(bash "$ledger_sh" report "$ledger")
grep -q '^| resp_parser | 2 | 226,589 | 24 | 1 |$' <<<"$report" || fail "resp_parser row: $report"
grep -q '^| net | 1 | 1,234,567 | 60 | 0 |$' <<<"$report" || fail "net row: $report"
grep -q '^| \*\*libFuzzer total\*\* | 3 | 226,589 | 29 | 1 |$' <<<"$report" || fail "total row: $report"
# Ledger order: resp_parser ok, net ok, resp_parser failed, snapshot no-count.
grep -q '^Since the last failed run (in ledger order): 0 libFuzzer executions, 1,234,567 network frames.$' \
  <<<"$report" || fail "clean stretch: $report"
bash "$ledger_sh" record "$ledger" resp_parser "$dir/lf.log" 0 21 >/dev/null
grep -q 'Since the last failed run (in ledger order): 225,589 libFuzzer' <<<"$(bash "$ledger_sh" report "$ledger")" ||
  fail "clean stretch after a clean run: $(bash "$ledger_sh" report "$ledger")"
echo "garbage" >>"$ledger"
if bash "$ledger_sh" report "$ledger" >/dev/null 2>&1; then fail "a corrupt ledger was reported"; fi
echo "fuzz_ledger_test: OK"
