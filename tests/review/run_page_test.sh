#!/usr/bin/env bash
# The reviewer page's browser test, as one command for ctest:
#   tests/review/run_page_test.sh WRITE_REVIEWER_PAGE WORK_DIR [EXPECTED_ITEMS]
# writes WORK_DIR/reviewer_page.html from tests/review/packet.json with the write_reviewer_page
# binary, then drives it in headless Chromium (tests/node/reviewer_page_test.mjs); the downloaded
# scores are left in WORK_DIR/downloads.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 WRITE_REVIEWER_PAGE WORK_DIR [EXPECTED_ITEMS]" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
writer="$1"
dir="$2"
shift 2

source "$root/tests/script_lib.sh"
require_browser

mkdir -p "$dir/downloads"
"$writer" "$root/tests/review/packet.json" "$dir/reviewer_page.html"
exec node "$root/tests/node/reviewer_page_test.mjs" "$dir/reviewer_page.html" "$dir/downloads" "$@"
