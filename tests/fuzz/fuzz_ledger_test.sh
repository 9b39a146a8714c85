#!/usr/bin/env bash
# Tests scripts/fuzz-ledger.sh (the fuzzing runs and their aggregate,
# docs/fuzzing.md "Volume"): counts are read from real-format libFuzzer and
# net_fuzzer output, a failed run is recorded as failed, bad arguments write
# nothing, folding adds the runs up per target into the aggregate (totals,
# the clean stretch, the commit and date range) and rewrites only the
# page's fuzzing section, the aggregate adds up across two folds, and a
# malformed ledger or aggregate is refused with a clear error and changes
# nothing.
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

# Folding: into a fresh aggregate, beside another tool's section.
totals="$dir/totals.json" page="$dir/RELIABILITY.md"
printf '{"format": 1, "torture": {"kept": 1}}\n' >"$totals"
printf '# Reliability\n\n<!-- begin torture -->\nkept\n<!-- end torture -->\n' >"$page"
bash "$ledger_sh" fold "$totals" "$page" "$ledger" || fail "fold exited $?"
total() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["fuzz"]; print(eval(sys.argv[2]))' "$totals" "$1"; }
[[ $(total 'd["targets"]["resp_parser"]') == "{'executions': 226589, 'failed': 1, 'runs': 2, 'seconds': 24}" ]] ||
  fail "resp_parser totals: $(total 'd["targets"]["resp_parser"]')"
[[ $(total 'd["targets"]["net"]["executions"]') == 1234567 ]] || fail "net totals: $(cat "$totals")"
[[ $(total 'd["targets"]["snapshot"]["runs"]') == 1 ]] || fail "no-count run: $(cat "$totals")"
# Ledger order: resp_parser ok, net ok, resp_parser failed, snapshot no-count.
[[ $(total 'd["clean_since_last_failure"]') == "{'libfuzzer': 0, 'net': 1234567}" ]] ||
  fail "clean stretch: $(total 'd["clean_since_last_failure"]')"
commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[[ $(total 'd["last"]["commit"]') == "$commit" ]] || fail "last commit: $(total 'd["last"]')"
[[ $(total 'd["first"]["date"]') =~ ^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T ]] || fail "first date: $(total 'd["first"]')"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["torture"] != {"kept": 1})' "$totals" ||
  fail "another section was changed: $(cat "$totals")"
grep -q '^| resp_parser | 2 | 226,589 | 24 | 1 |$' "$page" || fail "resp_parser row: $(cat "$page")"
grep -q '^| \*\*libFuzzer total\*\* | 3 | 226,589 | 29 | 1 |$' "$page" || fail "total row: $(cat "$page")"
grep -q '^Since the last failed run: 0 libFuzzer executions, 1,234,567 network frames.$' "$page" ||
  fail "clean stretch on the page: $(cat "$page")"
grep -q '^kept$' "$page" || fail "the torture section was changed: $(cat "$page")"

# A second clone's runs add to what the first folded; a clean run extends the stretch.
second="$dir/second.jsonl"
bash "$ledger_sh" record "$second" resp_parser "$dir/lf.log" 0 21 >/dev/null
bash "$ledger_sh" fold "$totals" "$page" "$second" || fail "second fold exited $?"
[[ $(total 'd["targets"]["resp_parser"]["runs"]') == 3 ]] || fail "runs after two folds: $(cat "$totals")"
[[ $(total 'd["clean_since_last_failure"]["libfuzzer"]') == 225589 ]] || fail "clean stretch after a clean run"
[[ $(grep -c 'begin fuzz' "$page") == 1 ]] || fail "the fuzzing section was doubled: $(cat "$page")"

# A malformed ledger line or aggregate: exit 2, a message naming it, nothing written.
cp "$totals" "$dir/before.json"
cp "$page" "$dir/before.md"
echo "garbage" >>"$second"
status=0
bash "$ledger_sh" fold "$totals" "$page" "$second" 2>"$dir/err" || status=$?
[[ $status -eq 2 ]] || fail "a corrupt ledger was folded (exit $status)"
grep -q "second.jsonl:2: not JSON" "$dir/err" || fail "the error does not name the line: $(cat "$dir/err")"
cmp -s "$totals" "$dir/before.json" && cmp -s "$page" "$dir/before.md" || fail "a refused fold wrote something"
for bad in '{"format": 1, "fuzz": {"targets": {"x": {"runs": -1}}}}' '{"fuzz": {}}' 'not json'; do
  echo "$bad" >"$totals"
  status=0
  bash "$ledger_sh" fold "$totals" "$page" "$ledger" 2>"$dir/err" || status=$?
  [[ $status -eq 2 ]] || fail "a malformed aggregate was accepted: $bad"
  grep -q 'totals.json' "$dir/err" || fail "the error does not name the file: $(cat "$dir/err")"
  [[ $(cat "$totals") == "$bad" ]] || fail "a malformed aggregate was rewritten"
done
cmp -s "$page" "$dir/before.md" || fail "a refused fold rewrote the page"
echo "fuzz_ledger_test: OK"
