#!/usr/bin/env bash
# generate-man.sh BINARY TEMPLATE VERSION OUTPUT: writes leasehold(1) from the
# hand-written TEMPLATE (name, description, files, see also) with
# @PROJECT_VERSION@ replaced by VERSION and the line @COMMANDS@ replaced by every subcommand's --help (nested subcommands too),
# so the page always matches the binary's real flags. Run at build time
# (packaging/CMakeLists.txt).
set -euo pipefail
bin=$1 template=$2 version=$3 out=$4

help_of() {  # help_of WORDS...: `leasehold WORDS --help`, with argv[0] = leasehold
  (exec -a leasehold "$bin" "$@" --help)
}

subcommands_of() {  # names listed under "Subcommands:" in a help text on stdin
  awk '/^Subcommands:$/ {in_list = 1; next} /^[^ ]/ {in_list = 0}
       in_list && /^  [a-z]/ {print $1}'
}

# Help text -> roff: "  name  description" rows become .TP entries, group
# titles become bold paragraphs. Backslashes and leading dots are escaped,
# and '-' in names is \- (a real hyphen-minus when copied).
to_roff() {
  awk '
    function esc(s) { gsub(/\\/, "\\e", s); sub(/^[.'\'']/, "\\\\\\&&", s); return s }
    function name(s) { s = esc(s); gsub(/-/, "\\-", s); return "\\fB" s "\\fR" }
    NR == 1 { print ".PP"; print esc($0); next }
    /^Usage: / { sub(/^Usage: /, ""); print ".PP"; print "Usage: " esc($0); next }
    /^$/ { next }
    substr($0, 1, 30) ~ /^ +$/ && substr($0, 31, 1) != " " { sub(/^ +/, ""); print esc($0); next }
    /^  [^ ]/ {
      print ".TP"
      if (length($0) > 30 && substr($0, 30, 1) == " " && substr($0, 31, 1) != " ") {
        n = substr($0, 3, 27); sub(/ +$/, "", n)
        print name(n); print esc(substr($0, 31))
      } else {
        n = substr($0, 3); sub(/ +$/, "", n); print name(n)
      }
      next
    }
    /^[^ ].*:$/ { print ".PP"; print "\\fB" esc($0) "\\fR"; next }
    { sub(/^ +/, ""); print ".PP"; print esc($0) }'
}

commands=$(mktemp)
trap 'rm -f "$commands"' EXIT
emit() {  # emit WORDS...: one .SS section per command, then its subcommands
  local text
  text=$(help_of "$@")
  printf '.SS "leasehold %s"\n' "$*" >>"$commands"
  printf '%s\n' "$text" | to_roff >>"$commands"
  local sub
  for sub in $(printf '%s\n' "$text" | subcommands_of); do emit "$@" "$sub"; done
}
for cmd in $(help_of | subcommands_of); do emit "$cmd"; done

awk -v commands="$commands" -v version="$version" '
  $0 == "@COMMANDS@" { while ((getline line < commands) > 0) print line; next }
  { gsub(/@PROJECT_VERSION@/, version); print }' "$template" >"$out.tmp"
mv "$out.tmp" "$out"
