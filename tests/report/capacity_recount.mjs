// Counts the figures quoted at a run's sustained capacity again from requests.jsonl, and checks
// that the console, run.json and the report's cost agree with the recount to 1%:
//   node capacity_recount.mjs RUN_DIR REPORT_JSON CONSOLE_TXT SCENARIO_JSON
// RUN_DIR holds run.json and requests.jsonl; SCENARIO_JSON is `stagegate validate --json`'s
// output (its thresholds are the SLOs goodput counts). Prints one line, or fails naming what
// disagrees. A run whose final stage sustained no level has nothing to recount, and says so.
import fs from 'fs';

const [runDir, reportPath, consolePath, scenarioPath] = process.argv.slice(2);
const run = JSON.parse(fs.readFileSync(`${runDir}/run.json`, 'utf8'));
const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
const consoleText = fs.readFileSync(consolePath, 'utf8');
const scenario = JSON.parse(fs.readFileSync(scenarioPath, 'utf8')).scenario;
const fail = (message) => { console.error('capacity recount: ' + message); process.exit(1); };
const near = (a, b) => Math.abs(a - b) <= 0.01 * Math.max(Math.abs(a), Math.abs(b));

const stage = run.stages.at(-1);
const capacity = stage.capacity;
if (!capacity) fail(`the final stage (${stage.name}) has no capacity finding`);
if (capacity.holds_up_to === null) {
  console.log('capacity recount: no level was sustained, nothing to recount');
  process.exit(0);
}
const held = stage.steps.find((s) => s.phase === 'sweep' && s.level === capacity.holds_up_to);
if (!held) fail(`no sweep step at ${capacity.holds_up_to}`);
const w = capacity.window;
if (!w || w.counts !== 'arrivals') fail(`capacity window ${JSON.stringify(w)}`);

// The SLOs of the scenario's latency thresholds, each read from a record as goodput reads it.
const gap = (r) => {
  const t = r.chunk_times_ns || [];
  let longest = 0;
  for (let i = 1; i < t.length; ++i) longest = Math.max(longest, (t[i] - t[i - 1]) / 1e6);
  return longest;
};
const valueOf = {
  ttft: (r) => r.latency_ms.ttft, ttst: (r) => r.latency_ms.ttst, e2e: (r) => r.latency_ms.e2e,
  corrected: (r) => r.latency_ms.corrected, itl: gap,
};
const slos = {};
for (const t of scenario.thresholds.latency) {
  if (!valueOf[t.metric]) fail(`no recount for an SLO on ${t.metric}`);
  slos[t.metric] = Math.min(slos[t.metric] ?? Infinity, t.max_ms);
}
const meets = (r) => Object.entries(slos).every(([metric, max]) => {
  const v = valueOf[metric](r);
  return v !== null && v !== undefined && v <= max;
});

const records = fs.readFileSync(`${runDir}/requests.jsonl`, 'utf8').trim().split('\n')
  .map((line) => JSON.parse(line)).filter((r) => r.phase_id === held.phase_id && !r.warmup);
const lastArrival = Math.max(...records.map((r) => r.times_ns.intended));
const from = held.started_ns + w.from_s * 1e9, to = held.started_ns + w.to_s * 1e9;
let arrived = 0, answered = 0, denied = 0, met = 0, tokens = 0;
for (const r of records) {
  if (r.times_ns.intended < from || r.times_ns.intended > to) continue;
  ++arrived;
  if (r.times_ns.end === null || r.times_ns.end > lastArrival) continue;
  if (r.outcome === 'ok') {
    ++answered;
    tokens += r.tokens.output ?? 0;
    met += meets(r) ? 1 : 0;
  } else if (r.outcome === 'denied') {
    // The corpus's refusal tasks are the only ones the reference application denies, so each
    // denial is an expected one; a denial of any other task would show as a mismatch below.
    ++denied;
  }
}
const seconds = (to - from) / 1e9;
const rates = {
  answered: answered / seconds, completed: (answered + denied) / seconds,
  goodput: met / seconds, tokens: tokens / seconds,
};
const checks = [
  ['arrivals in the window', w.arrived, arrived],
  ['answers in the window', w.answered, answered],
  ['sustained rate', capacity.sustained_rate, rates.completed],
  ['goodput', capacity.goodput, rates.goodput],
  ['output tokens/s', capacity.output_tokens_per_s, rates.tokens],
  ['cost r at the sustained capacity', report.cost.at.sustained_capacity.rate_req_s, rates.answered],
];
for (const [name, quoted, recounted] of checks)
  if (!near(quoted, recounted)) fail(`${name}: quoted ${quoted}, recounted ${recounted}`);
// The console's line at the capacity quotes the same answered rate and goodput.
const line = consoleText.split('\n').find((l) => /^\s+at .*: .* answered req\/s/.test(l));
if (!line) fail('no capacity rates line on the console');
const [, shownAnswered] = line.match(/: ([\d.,]+) answered req\/s/);
const [, shownGoodput] = line.match(/goodput ([\d.,]+) req\/s/);
// The console rounds to 2 decimals: within 1%, or within its rounding.
const shown = (text, recounted) => {
  const value = parseFloat(text.replace(/,/g, ''));
  return near(value, recounted) || Math.abs(value - recounted) <= 0.005;
};
if (!shown(shownAnswered, rates.answered))
  fail(`console answered rate ${shownAnswered}, recounted ${rates.answered}`);
if (!shown(shownGoodput, rates.goodput))
  fail(`console goodput ${shownGoodput}, recounted ${rates.goodput}`);
console.log(`capacity recount: at ${capacity.holds_up_to}: ${answered} answered and ${denied} ` +
  `expected denials of ${arrived} arrivals in ${seconds.toFixed(3)} s; ${rates.answered.toFixed(3)} ` +
  `answered req/s, goodput ${rates.goodput.toFixed(3)}, ${rates.tokens.toFixed(1)} tokens/s: ` +
  'console, run.json and cost agree');
