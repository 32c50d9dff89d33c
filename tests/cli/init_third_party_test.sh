#!/usr/bin/env bash
# From an empty folder to a report against a server no one on the team wrote, as one command for
# ctest:
#   tests/cli/init_third_party_test.sh STAGEGATE WORK_DIR
# starts @dwmkerr/mock-llm (an OpenAI-compatible mock, from tests/node) on loopback, runs
# `stagegate init` against it, validates the scenario, runs its bare stage and reports on it; then
# checks that init refuses to overwrite what it wrote.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../script_lib.sh"
start_test "$@"
mock="$root/tests/node/node_modules/@dwmkerr/mock-llm/dist/main.js"
if [[ ! -f "$mock" ]]; then
  echo "@dwmkerr/mock-llm is missing: run npm ci --prefix tests/node" >&2
  exit 1
fi

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
(cd "$dir" && HOST=127.0.0.1 PORT="$port" exec node "$mock" > "$dir/mock-llm.log" 2>&1) &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "server running" "$dir/mock-llm.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "server running" "$dir/mock-llm.log" || fail "mock-llm did not start: $(cat "$dir/mock-llm.log")"

# init, with the URL as users often paste it (with /v1).
"$stagegate" init "$dir/app" --target-url "http://127.0.0.1:$port/v1" --model gpt-4 \
  > "$dir/init.out" 2>&1 || fail "init exited $?: $(cat "$dir/init.out")"
cat "$dir/init.out"
for expected in \
  "model list (/v1/models): gpt-5.2 (gpt-4 is not among them)" \
  "model name gpt-4: accepted" \
  "streaming: works" \
  "usage in the stream: absent" \
  "/metrics: absent" \
  "adjusted: a comment on input.tokenizer"; do
  grep -qF -- "$expected" "$dir/init.out" || fail "init did not say: $expected"
done
grep -q "base_url: \"http://127.0.0.1:$port\"" "$dir/app/scenario.yaml" ||
  fail "the scenario's base_url is not the endpoint's root"
if grep -q "X-Sim\|sim_profile\|kind: sim" "$dir/app/scenario.yaml"; then
  fail "the scenario holds settings of the built-in sim"
fi

"$stagegate" validate "$dir/app/scenario.yaml" > "$dir/validate.out" ||
  fail "validate refused init's scenario: $(cat "$dir/validate.out")"

"$stagegate" --quiet --db "$dir/store.db" run "$dir/app/scenario.yaml" --only-stage bare \
  --out "$dir/run" > "$dir/run.out" 2>&1 || fail "run exited $?: $(cat "$dir/run.out")"
run_id="$(run_id_of "$dir/run")"
[[ -n "$run_id" ]] || fail "no run id in run.json"
# Every request of the measured phases was answered, and mock-llm echoes the prompt.
ok="$(grep -c '"outcome":"ok"' "$dir/run/requests.jsonl" || true)"
total="$(grep -c . "$dir/run/requests.jsonl")"
[[ "$ok" -gt 10 && "$ok" -eq "$total" ]] || fail "$ok of $total requests ok"
grep -q '"answer":"What is the difference between a password and a passphrase?"' \
  "$dir/run/requests.jsonl" || fail "no echoed answer in requests.jsonl"

"$stagegate" --db "$dir/store.db" report "$run_id" --out "$dir/report" > "$dir/report.out" ||
  fail "report exited $?"
grep -qF "$run_id" "$dir/report/report.md" || fail "the report does not name the run"
grep -qF "| bare steady: ttft p95 &lt;= 2000 ms | PASS |" "$dir/report/report.md" ||
  fail "the report has no bare steady TTFT check"
grep -qF "the corpus is not yet the team's own" "$dir/report/report.md" ||
  fail "the report does not say the corpus is init's examples"

# Never overwrite: a second init into the same folder is refused, and the scenario is unchanged.
before="$(sha256sum "$dir/app/scenario.yaml")"
if "$stagegate" init "$dir/app" --target-url "http://127.0.0.1:$port" --model other \
  > "$dir/init2.out" 2>&1; then
  fail "a second init into the same folder succeeded"
else
  code=$?
fi
[[ "$code" -eq 2 ]] || fail "a second init exited $code, not 2"
grep -qF "scenario.yaml exists; init never overwrites a file" "$dir/init2.out" ||
  fail "the refusal does not name the file: $(cat "$dir/init2.out")"
[[ "$(sha256sum "$dir/app/scenario.yaml")" == "$before" ]] || fail "the scenario changed"
echo "ok: init, validate, run --only-stage bare and report against mock-llm ($ok requests)"
