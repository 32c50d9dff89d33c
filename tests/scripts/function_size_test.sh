#!/usr/bin/env bash
# scripts/check-function-size.sh: src/ passes it, and on a sample folder it names the function of
# 81 lines and not the one of 80, and fails.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$root/scripts/check-function-size.sh"
sample=tests/testdata/function_size/src  # as the script sees it, from the checkout
fail() { echo "FAILED: $*"; exit 1; }

"$check" || fail "src/ fails the check"

out=$("$check" "$sample") && fail "a function of 81 lines passed"
[[ "$out" == *"sample::TooLong is 81 lines, over 80"* ]] || fail "it did not name TooLong: $out"
[[ "$out" != *JustRight* ]] || fail "it named a function of 80 lines"
out=$("$check" --list "$sample")
[[ "$out" == "81 tests/testdata/function_size/src/sample.cc sample::TooLong" ]] ||
  fail "--list did not print TooLong alone: $out"
echo "PASSED"
