#!/usr/bin/env bash
# Checks the demo's capacity finding against long fixed levels, with one command:
#   bench/capacity_check.sh [RATE ...]        (default: 10 12 13 14 15 16 req/s)
# Each rate runs the demo's tools stage (bench/capacity/tools-fixed-level.yaml: the demo's
# application, corpus, sampling and thresholds) for one long level (DURATION, default 60 s),
# judged as a sweep level is: thresholds, completions against arrivals, settled latency and
# server queue. Then the demo's own search runs on its tools stage alone. Prints one row a level
# and the search's finding; the figures go into docs/performance.md. Loopback only, bounded.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
cmake --build build --target stagegate > /dev/null

DURATION=${DURATION:-60}
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10 12 13 14 15 16)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/capacity"

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
echo "fixed levels of ${DURATION} s on the demo's tools stage:"
printf '%-8s %-9s %-11s %-9s %-9s %-13s %s\n' offered arrived completed "ttft p95" "e2e p95" verdict reason
for rate in "${rates[@]}"; do
  sed -e "s/RATE/$rate/" -e "s/DURATION/$DURATION/" -e "s|\.\./\.\./|$PWD/|" \
    bench/capacity/tools-fixed-level.yaml > "$work/capacity/level.yaml"
  build/stagegate --db "$work/store.db" run "$work/capacity/level.yaml" --out "$work/out-$rate" \
    > "$work/run-$rate.log" 2>&1 || true
  python3 - "$work/out-$rate/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for step in run["stages"][0]["steps"]:
    if step["phase"] != "sweep":
        continue
    j = step["judgement"]
    pace = j["sustained"]["pace"] or {}
    m = step["metrics"]
    p95 = lambda name: m[name].get("p95") if m[name]["count"] else None
    fmt = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"
    print(f'{step["level"]:<8g} {fmt(pace.get("arriving_rate"), 1):<9} '
          f'{fmt(pace.get("completed_rate"), 1):<11} {fmt(p95("ttft_ms")):<9} '
          f'{fmt(p95("e2e_ms")):<9} {j["verdict"]:<13} {j["reason"]}')
PY
done

echo "the demo's search on its tools stage:"
sed -n '/^  sweep:/,/^  overload:/p' scenarios/demo.yaml | sed '$d' > "$work/sweep.txt"
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
import os
text = open("bench/capacity/tools-fixed-level.yaml").read().replace("../../", os.getcwd() + "/")
sweep = open(f"{work}/sweep.txt").read()
start = text.index("  sweep:")
end = text.index("\n", text.index("}", start)) + 1
open(f"{work}/capacity/search.yaml", "w").write(text[:start] + sweep + text[end:])
PY
build/stagegate --db "$work/store.db" run "$work/capacity/search.yaml" --out "$work/out-search" \
  2>&1 | grep -E '^(capacity|  at|  search)' || true
