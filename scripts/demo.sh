#!/usr/bin/env bash
# The main job on the built-in reference application: installs what is missing, builds stagegate in
# Release, and runs the demo scenario (every stage, steady and burst load, a sweep to where
# responsiveness ends, overload and recovery) against the reference application that
# `stagegate run` starts in-process, then writes its release report. Ends with the path of the
# report (pending until reviewers' scores are imported: see the README).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
cmake --build build --target stagegate

mkdir -p reports
build/stagegate validate scenarios/demo.yaml
# The run's last line is the path of its run.json: reports/<run id>/run.json.
findings="$(build/stagegate run scenarios/demo.yaml | tee /dev/stderr | tail -n 1)"
run_id="$(basename "$(dirname "$findings")")"
build/stagegate report "$run_id" >&2
echo "reports/$run_id/report.html"
