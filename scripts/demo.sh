#!/usr/bin/env bash
# The main job on the built-in reference application: installs what is missing, builds stagegate in
# Release, and runs the furthest step that exists today on scenarios/demo.yaml. Ends with the path
# of what it produced.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
cmake --build build --target stagegate

# `stagegate run` does not exist yet. The furthest real steps are: validate the demo scenario, its
# corpus and rubric; then profile the reference application, serving the demo corpus, at rising
# request rates around its knee (about 10 requests/s of 128-token answers).
mkdir -p reports
build/stagegate validate scenarios/demo.yaml

sim_log=$(mktemp)
build/stagegate sim --port 0 --corpus corpus/service-desk > "$sim_log" &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null || true; rm -f "$sim_log"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$sim_log" && break
  sleep 0.05
done
url=$(sed -n 's/^sim listening on \(http:[^ ]*\).*/\1/p' "$sim_log")
[ -n "$url" ] || { echo "the reference application did not start" >&2; exit 3; }

build/stagegate profile --url "$url/v1" --model sim-assistant --corpus corpus/service-desk \
  --request-rate 4,8,12 --duration 15 --arrival poisson --extra-inputs min_tokens:64 \
  --header "X-Sim-Retrieval: on" --slo ttft_ms:1000,e2e_ms:6000 --out reports/demo-profile
echo "reports/demo-profile/profile.json"
