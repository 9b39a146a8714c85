#!/usr/bin/env bash
# generate-completions.sh BINARY OUTDIR: when the binary has a `completion`
# subcommand, writes OUTDIR/leasehold (bash) and OUTDIR/_leasehold (zsh)
# from `leasehold completion bash|zsh`; without it, removes them. Then
# touches OUTDIR/stamp. Run at build time (packaging/CMakeLists.txt); the
# files are installed when present.
set -euo pipefail
bin=$1 out=$2
mkdir -p "$out"
rm -f "$out/leasehold" "$out/_leasehold"
if "$bin" --help | awk '/^Subcommands:$/ {in_list = 1; next} /^[^ ]/ {in_list = 0}
                        in_list && $1 == "completion" {found = 1} END {exit !found}'; then
  "$bin" completion bash >"$out/leasehold"
  "$bin" completion zsh >"$out/_leasehold"
fi
touch "$out/stamp"
