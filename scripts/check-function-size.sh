#!/usr/bin/env bash
# Fails when a function in the given folder (default src/) is longer than 80 lines, from its first
# line to its closing brace, as universal-ctags finds them, naming each. SQL migrations are exempt.
#
#   scripts/check-function-size.sh [FOLDER]          check
#   scripts/check-function-size.sh --list [FOLDER]   print every function over the limit
set -euo pipefail
cd "$(dirname "$0")/.."

limit=80
folder=src
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list=1 ;;
    *) folder="$1" ;;
  esac
  shift
done
command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q 'Universal Ctags' || {
  echo "check-function-size: needs universal-ctags (scripts/test-packages.txt)" >&2
  exit 2
}

# "LINES FILE FUNCTION" for each function over the limit, longest first; FUNCTION is its class
# or namespace and name (lambdas are counted in the function that holds them; Migrations is the
# SQL).
over=$(ctags -R --languages=C++ --kinds-C++=f --fields=+neZ -x \
         --_xformat='%{end} %{line} %F %{scope} %N' "$folder" |
       awk -v limit="$limit" '
         $NF ~ /^__anon/ { next }
         { n = $1 - $2 + 1
           scope = (NF == 5) ? $4 : ""
           gsub(/__anon[0-9a-f]+(::)?/, "", scope); sub(/::$/, "", scope); sub(/.*::/, "", scope)
           name = (scope == "" ? "" : scope "::") $NF
           if (n > limit && $NF != "Migrations") print n, $3, name }' |
       sort -k1,1nr -k2,2 -k3,3)
if [ "$list" = 1 ]; then
  [ -z "$over" ] || echo "$over"
  exit 0
fi

if [ -n "$over" ]; then
  while read -r lines file function; do
    echo "$file: $function is $lines lines, over $limit: split it"
  done <<< "$over"
  exit 1
fi
echo "check-function-size: no function in $folder is over $limit lines (SQL migrations exempt)"
