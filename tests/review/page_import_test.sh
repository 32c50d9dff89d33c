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
expected="imported 4 scored items: 16 scores added, 0 replaced, 0 unchanged"
if [[ "$imported" != "$expected" ]]; then
  echo "expected: $expected" >&2
  exit 1
fi
