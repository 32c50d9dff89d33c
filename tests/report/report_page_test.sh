#!/usr/bin/env bash
# The HTML release report in headless Chromium, as one command for ctest:
#   tests/report/report_page_test.sh STAGEGATE WORK_DIR
# runs tests/testdata/run/report.yaml, writes its report, and opens it with
# tests/node/report_page_test.mjs (no console error, no request, every chart drawn).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../script_lib.sh"
start_test "$@"
require_browser
cp "$root/tests/testdata/run/report-sim.yaml" "$dir/"
run_testdata report
"$stagegate" --db "$dir/store.db" report "$run_id" --out "$dir/report" --format html > /dev/null
# Without scores: the CDF, latency and goodput against load, the timeline pair, the server's view
# (running and waiting; its KV cache).
node "$root/tests/node/report_page_test.mjs" "$dir/report/report.html" "$dir/report.png" 7
