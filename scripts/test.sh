#!/usr/bin/env bash
# Builds stagegate and its tests (Debug, assertions on) and runs the whole suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Debug > /dev/null
cmake --build build-test
ctest --test-dir build-test --output-on-failure -j "$(nproc)"
