#!/usr/bin/env bash
# The main job on the built-in reference application: installs what is missing, builds stagegate in
# Release, and runs the furthest step that exists today on scenarios/demo.yaml. Ends with the path
# of what it produced.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
cmake --build build --target stagegate

# `stagegate run` does not exist yet: the furthest real step is validation of the demo scenario,
# its corpus and rubric. Its canonical form and fingerprint are what this job produces.
mkdir -p reports
build/stagegate validate scenarios/demo.yaml
build/stagegate validate --json scenarios/demo.yaml > reports/demo-validation.json
echo "reports/demo-validation.json"
