#!/usr/bin/env bash
# Builds stagegate and its tests (Debug, assertions on) and runs the whole suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --tests
# The official openai npm client (the client-compatibility test), puppeteer-core (which drives
# Debian's chromium in the reviewer page's test), kubernetes-models (the Kubernetes API schemas
# the k8s manifests are checked against) and @dwmkerr/mock-llm (a third-party OpenAI-compatible
# server that `stagegate init` is tested against), in a test-only folder.
if [ ! -f tests/node/node_modules/openai/package.json ] ||
   [ ! -f tests/node/node_modules/puppeteer-core/package.json ] ||
   [ ! -f tests/node/node_modules/kubernetes-models/package.json ] ||
   [ ! -f tests/node/node_modules/@dwmkerr/mock-llm/package.json ]; then
  npm ci --prefix tests/node --no-audit --no-fund
fi
source scripts/ccache.sh
# Debug, assertions on, with -g1: line tables for backtraces and gdb's stepping, without the rest
# of the debug information, which took an eighth of each source's compile time (docs/testing.md).
# Configure a build of your own with -g to see variables in gdb.
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1" \
  "${launcher[@]}" > /dev/null
cmake --build build-test
ctest --test-dir build-test --output-on-failure -j "$(nproc)"
