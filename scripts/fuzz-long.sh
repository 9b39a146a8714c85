#!/usr/bin/env bash
# Long fuzzing (`make fuzz`, docs/fuzzing.md): runs each libFuzzer target,
# then the network fuzzer against the ASan server, SECONDS each and niced,
# records every run in LEDGER (under the build, scripts/fuzz-ledger.sh),
# then folds LEDGER into the aggregate TOTALS (docs/reliability/totals.json)
# and PAGE's fuzzing section (docs/RELIABILITY.md) and moves it aside to
# LEDGER's directory, folded/, so that no run is counted twice.
#   fuzz-long.sh BUILD_FUZZ BUILD_ASAN SECONDS LEDGER TOTALS PAGE TARGET...
# TARGET is a libFuzzer target name (resp_parser, ...), "net" or
# "net-numbers" (the network fuzzer's extreme-numbers mode, seeded from
# fuzz/corpus/net/extreme-numbers.txt; also against the ASan server). Logs go to
# BUILD_FUZZ/fuzz/logs/. Stops at the first failing run (after recording it)
# and exits 1; new inputs and crashes stay under BUILD_FUZZ/fuzz/work/.
set -euo pipefail
if (($# < 7)); then
  sed -n '8,13p' "$0" >&2
  exit 2
fi
build_fuzz=$1 build_asan=$2 seconds=$3 ledger=$4 totals=$5 page=$6
shift 6
mkdir -p "$(dirname "$ledger")"
here=$(cd "$(dirname "$0")" && pwd)
logs="$build_fuzz/fuzz/logs"
mkdir -p "$logs"
failed=0
for target in "$@"; do
  log="$logs/$target.log"
  start=$(date +%s)
  status=0
  if [[ "$target" == net || "$target" == net-numbers ]]; then
    mode=()
    [[ "$target" == net-numbers ]] && mode=(--extreme-numbers "$here/../fuzz/corpus/net/extreme-numbers.txt")
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      nice -n 19 "$build_asan/tests/fuzz/net_fuzzer" --seconds "$seconds" --build-dir "$build_asan" "${mode[@]}" \
      >"$log" 2>&1 || status=$?
  else
    nice -n 19 bash "$here/run-fuzzer.sh" "$build_fuzz/fuzz/fuzz_$target" "$target" "$seconds" \
      "$here/../fuzz" "$build_fuzz/fuzz/work" >"$log" 2>&1 || status=$?
  fi
  bash "$here/fuzz-ledger.sh" record "$ledger" "$target" "$log" "$status" "$(($(date +%s) - start))"
  if ((status != 0)); then
    echo "fuzz-long: $target FAILED (exit $status); its output: $log" >&2
    tail -30 "$log" >&2
    failed=1
    break
  fi
done
bash "$here/fuzz-ledger.sh" fold "$totals" "$page" "$ledger"
folded="$(dirname "$ledger")/folded"
mkdir -p "$folded"
mv "$ledger" "$folded/$(date -u +%Y%m%dT%H%M%SZ)-$(basename "$ledger")"
sed -n '/<!-- begin fuzz -->/,/<!-- end fuzz -->/p' "$page"
exit "$failed"
