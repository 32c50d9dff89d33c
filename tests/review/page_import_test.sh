#!/usr/bin/env bash
# From a run to imported scores through the reviewer page, as one command for ctest:
#   tests/review/page_import_test.sh STAGEGATE WORK_DIR
# runs tests/testdata/run/review.yaml, exports its answers to one reviewer, scores four items in
# headless Chromium (tests/node/reviewer_page_test.mjs), and imports the page's download.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../script_lib.sh"
start_test "$@"
require_browser
mkdir -p "$dir/downloads"
run_testdata review
"$stagegate" --db "$dir/store.db" export "$run_id" --reviewers 1 --per-item 1 --out "$dir/packets"

STAGEGATE_ANY_PACKET=1 node "$root/tests/node/reviewer_page_test.mjs" \
  "$dir/packets/reviewer-r1.html" "$dir/downloads" 4

download=("$dir"/downloads/scores-r1-*.jsonl)
imported="$("$stagegate" --db "$dir/store.db" import "$run_id" "${download[0]}")"
echo "$imported"
# The page test judges the first item usable after correction and the second usable as it is.
expected="imported 4 scored items: 16 scores added, 0 replaced, 0 unchanged
usability judgements: 2 added, 0 replaced, 0 unchanged"
if [[ "$imported" != "$expected" ]]; then
  echo "expected: $expected" >&2
  exit 1
fi

# The judgements reach the quality summary: one of two usable as it is, one after correction.
quality="$("$stagegate" --db "$dir/store.db" quality "$run_id")"
echo "$quality"
want="  usability, assistant (2 reviewer judgements): usable as it is 0.5 (95% Wilson interval 0.09 to 0.91), after correction 0.5, not usable 0"
if ! grep -qF -- "$want" <<<"$quality"; then
  echo "expected the line: $want" >&2
  exit 1
fi
