// Tokens per second of the reference tokenizers (transformers.js's, @lenml/tokenizers) on one
// core, for the ratio in docs/performance.md. bench/tokenize_bench.sh runs it.
// Usage: node tokenize_bench.mjs ROUNDS TEXT_FILE PACKAGE...
import { readFileSync } from 'node:fs';

const [rounds, textPath, ...packages] = process.argv.slice(2);
const text = readFileSync(textPath, 'utf8');
for (const name of packages) {
  const loadStart = performance.now();
  const tokenizer = (await import(name)).fromPreTrained();
  const start = performance.now();
  let tokens = 0;
  for (let round = 0; round < Number(rounds); ++round)
    tokens += tokenizer.encode(text, { add_special_tokens: false }).length;
  const seconds = (performance.now() - start) / 1000;
  console.log(`${name}\t${tokens / Number(rounds)} tokens a round\t` +
              `${Math.round(tokens / seconds)} tokens/s\tloaded in ` +
              `${((start - loadStart) / 1000).toFixed(2)} s`);
}
