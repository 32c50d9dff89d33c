#!/usr/bin/env bash
# Fails when a function in the given folder (default src/) is longer than 80 lines, from its first
# line to its closing brace, as universal-ctags finds them. SQL migrations are exempt. A function
# listed in scripts/function-size-allowed.txt ("LINES FILE FUNCTION", written by --list) may keep
# the length it had when listed, and no more; one that shrank has its new length written in the
# list, and one split below the limit comes off it: the list only shrinks.
#
#   scripts/check-function-size.sh [FOLDER] [--allowed FILE]   check
#   scripts/check-function-size.sh --list [FOLDER]             print every function over the limit
set -euo pipefail
cd "$(dirname "$0")/.."

limit=80
allowed=scripts/function-size-allowed.txt
folder=src
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list=1 ;;
    --allowed) allowed="$2"; shift ;;
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

status=0
while read -r lines file function; do
  [ -n "$lines" ] || continue
  listed=$(awk -v f="$file" -v n="$function" '$2 == f && $3 == n { print $1 }' "$allowed" 2>/dev/null |
           head -n 1)
  if [ -z "$listed" ]; then
    echo "$file: $function is $lines lines, over $limit: split it"
    status=1
  elif [ "$lines" -gt "$listed" ]; then
    echo "$file: $function grew to $lines lines from $listed (over $limit, listed to shrink): split it"
    status=1
  elif [ "$lines" -lt "$listed" ]; then
    echo "$file: $function shrank to $lines lines from $listed: write $lines in $allowed" \
      "(--list prints them all), so that it cannot grow back"
    status=1
  fi
done <<< "$over"
# A listed function split below the limit comes off the list, so that it cannot grow back.
while read -r lines file function; do
  [ -n "$lines" ] || continue
  grep -qxF "$lines $file $function" <<< "$over" && continue
  if ! awk -v f="$file" -v n="$function" '$2 == f && $3 == n { found = 1 } END { exit !found }' \
         <<< "$over"; then
    echo "$file: $function is within $limit lines now (or gone): take it off $allowed"
    status=1
  fi
done < <(cat "$allowed" 2>/dev/null)
[ "$status" = 0 ] && echo "check-function-size: no function in $folder over $limit lines but" \
  "$(grep -c . "$allowed" 2>/dev/null || echo 0) listed in $allowed"
exit "$status"
