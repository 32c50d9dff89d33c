#!/usr/bin/env bash
# scripts/check-function-size.sh: src/ passes it, and on a sample folder it names the function of
# 81 lines (not the one of 80), lets a listed one keep its length, fails one that grew, and asks
# for a shrunk one's new length and for one no longer over the limit to come off the list.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$root/scripts/check-function-size.sh"
sample=tests/testdata/function_size/src  # as the script sees it, from the checkout
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

"$check" || fail "src/ fails the check"

: > "$work/none.txt"
out=$("$check" "$sample" --allowed "$work/none.txt") && fail "an unlisted function of 81 lines passed"
[[ "$out" == *"sample::TooLong is 81 lines, over 80"* ]] || fail "it did not name TooLong"
[[ "$out" != *JustRight* ]] || fail "it named a function of 80 lines"

echo "81 tests/testdata/function_size/src/sample.cc sample::TooLong" > "$work/listed.txt"
"$check" "$sample" --allowed "$work/listed.txt" || fail "a listed function at its length failed"

echo "80 tests/testdata/function_size/src/sample.cc sample::TooLong" > "$work/shorter.txt"
out=$("$check" "$sample" --allowed "$work/shorter.txt") && fail "a listed function that grew passed"
[[ "$out" == *"grew to 81 lines from 80"* ]] || fail "it did not say TooLong grew: $out"

echo "90 tests/testdata/function_size/src/sample.cc sample::TooLong" > "$work/longer.txt"
out=$("$check" "$sample" --allowed "$work/longer.txt") && fail "a listed function that shrank passed"
[[ "$out" == *"shrank to 81 lines from 90: write 81"* ]] || fail "it did not ask for 81: $out"

cp "$work/listed.txt" "$work/stale.txt"
echo "85 tests/testdata/function_size/src/sample.cc sample::JustRight" >> "$work/stale.txt"
out=$("$check" "$sample" --allowed "$work/stale.txt") && fail "a listed function now short passed"
[[ "$out" == *"sample::JustRight is within 80 lines now (or gone): take it off"* ]] ||
  fail "it did not ask for JustRight to come off the list: $out"
echo "PASSED"
