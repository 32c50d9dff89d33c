#!/usr/bin/env bash
# The main job on the built-in reference application: installs what is missing, builds stagegate in
# Release, and runs the demo scenario (every stage, steady and burst load, a sweep to where
# responsiveness ends, overload and recovery) against the reference application that
# `stagegate run` starts in-process. Ends with the path of the run's findings.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
cmake --build build --target stagegate

mkdir -p reports
build/stagegate validate scenarios/demo.yaml
# Its last line is the path of run.json.
build/stagegate run scenarios/demo.yaml
