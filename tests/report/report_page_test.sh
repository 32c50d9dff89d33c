#!/usr/bin/env bash
# The HTML release report in headless Chromium, as one command for ctest:
#   tests/report/report_page_test.sh STAGEGATE WORK_DIR
# runs tests/testdata/run/report.yaml, writes its report, and opens it with
# tests/node/report_page_test.mjs (no console error, no request, every chart drawn).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 STAGEGATE WORK_DIR" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
stagegate="$1"
dir="$2"
if [[ ! -f "$root/tests/node/node_modules/puppeteer-core/package.json" ]]; then
  echo "puppeteer-core is missing: run npm ci --prefix tests/node" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
sed "s#\.\./\.\./\.\./#$root/#" "$root/tests/testdata/run/report.yaml" > "$dir/report.yaml"
cp "$root/tests/testdata/run/report-sim.yaml" "$dir/"
"$stagegate" --quiet --db "$dir/store.db" run "$dir/report.yaml" --out "$dir/run" > /dev/null
run_id="$(sed -n 's/^ *"run_id": "\(.*\)",$/\1/p' "$dir/run/run.json")"
"$stagegate" --db "$dir/store.db" report "$run_id" --out "$dir/report" --format html > /dev/null
# Without scores: the CDF, latency and goodput against load, the timeline pair, the server's view.
node "$root/tests/node/report_page_test.mjs" "$dir/report/report.html" "$dir/report.png" 6
