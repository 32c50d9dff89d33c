#!/usr/bin/env bash
# The main job's scenario end to end, as one command for ctest (about four minutes):
#   tests/report/demo_report_test.sh STAGEGATE WORK_DIR
# runs scenarios/demo.yaml, exports its answers to two scripted reviewers
# (tests/report/score_packets.mjs), imports their scores and writes the release report. The
# report must show all three conditions with their numbers and a verdict that is not pending
# (ready, or not ready when this machine was too busy for the latency thresholds) but for a
# capacity search that could not tell on a machine this busy, the quality condition must pass,
# and the HTML must carry every chart. The rates quoted at the sustained capacity (console,
# run.json, the cost) must agree with a recount from requests.jsonl (capacity_recount.mjs).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../script_lib.sh"
start_test "$@"
db=(--db "$dir/store.db")

"$stagegate" --quiet "${db[@]}" run "$root/scenarios/demo.yaml" --out "$dir/run" > "$dir/run.txt"
run_id="$(run_id_of "$dir/run")"
"$stagegate" "${db[@]}" export "$run_id" --reviewers 2 --per-item 2 --out "$dir/packets" > /dev/null
node "$root/tests/report/score_packets.mjs" "$dir/packets" "$dir/scores"
"$stagegate" "${db[@]}" import "$run_id" "$dir/scores/r1.jsonl" "$dir/scores/r2.jsonl"
status=0
"$stagegate" "${db[@]}" report "$run_id" --out "$dir/report" --gate > "$dir/report.txt" || status=$?
cat "$dir/report.txt"
if [[ $status -ne 0 && $status -ne 1 && $status -ne 4 ]]; then
  echo "report --gate exited $status: the verdict must be ready (0) or not ready (1)" >&2
  exit 1
fi
# Every figure at the sustained capacity, counted again from requests.jsonl over its window.
"$stagegate" validate --json "$root/scenarios/demo.yaml" > "$dir/scenario.json"
node "$root/tests/report/capacity_recount.mjs" "$dir/run" "$dir/report/report.json" \
  "$dir/run.txt" "$dir/scenario.json"
node - "$dir/report/report.json" "$dir/report/report.html" "$dir/report/report.md" <<'NODE'
const fs = require('fs');
const [json, html, md] = process.argv.slice(2).map((f) => fs.readFileSync(f, 'utf8'));
const report = JSON.parse(json);
const fail = (message) => { console.error('demo report: ' + message); process.exit(1); };
// Pending only for a capacity search that could not tell (a level too short on a busy machine).
const pending = report.checks.filter((c) => c.status === 'pending');
if (report.verdict === 'pending' && pending.some((c) => !/capacity: where responsiveness ends is known/.test(c.name)))
  fail(`verdict pending: ${pending.map((c) => c.name).join('; ')}`);
if (!['ready', 'not ready', 'pending'].includes(report.verdict)) fail(`verdict ${report.verdict}`);
if (!report.checks.some((c) => /capacity: where responsiveness ends is known/.test(c.name)))
  fail('no capacity check');
if (report.conditions.quality.status !== 'pass') fail(`quality ${report.conditions.quality.status}`);
const quality = report.conditions.quality.summary;
if (quality.answers.scored < 40) fail(`${quality.answers.scored} answers scored`);
if (!report.checks.some((c) => c.condition === 'responsiveness' && /ttft p95 <= 1500 ms/.test(c.name)))
  fail('no TTFT threshold check');
for (const probe of ['access denial probe contractor-reads-salary-bands', 'tool outage probe ticket-service-down'])
  if (!report.checks.some((c) => c.name === probe)) fail(`no check for ${probe}`);
const charts = (html.match(/<svg/g) || []).length;
if (charts !== 8) fail(`${charts} charts in the HTML, expected 8`);
// The server's own series under the TTFT timeline: its queue, and its KV cache.
const ttftAt = html.indexOf('-title">TTFT p95 second by second');
const serverAt = html.indexOf('-title">The server&#39;s requests running and waiting');
const cacheAt = html.indexOf('-title">KV cache and GPU utilisation');
if (ttftAt < 0 || serverAt < ttftAt || cacheAt < serverAt)
  fail(`server series not under the TTFT chart (${ttftAt}, ${serverAt}, ${cacheAt})`);
// What saturated first, named from the sweep's telemetry: a series at a level the sweep ran.
const saturation = report.saturation;
if (!saturation || !saturation.sentence || /^not known/.test(saturation.sentence))
  fail(`what saturated first: ${JSON.stringify(saturation)}`);
if (!md.includes('What saturated first: ' + saturation.sentence.replace(/>/g, '&gt;')))
  fail('no "What saturated first" in the Markdown');
if (saturation.series !== null) {
  const levels = report.conditions.responsiveness.stages.at(-1).steps
    .filter((s) => s.phase === 'sweep').map((s) => s.level);
  if (!levels.includes(saturation.level)) fail(`saturated at ${saturation.level}, not a level run`);
}
for (const section of ['Condition 1: responsiveness', 'Condition 2: quality', 'Condition 3: recoverability', 'Where acceptable responsiveness ends: ', 'thresholds hold up to'])
  if (!md.includes(section)) fail(`no "${section}" in the Markdown`);
console.log(`demo report: ${report.verdict}; ${quality.answers.scored} answers scored; ${charts} charts; ` +
  `what saturated first: ${saturation.sentence}`);
NODE
