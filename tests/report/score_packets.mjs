// Scripted reviewers for the demo report test:
//   node tests/report/score_packets.mjs PACKETS_DIR OUT_DIR
// fills in every reviewer-rN.jsonl packet of an export and writes OUT_DIR/rN.jsonl. Every reviewer
// gives an item the same levels (4 or 5 by the answer's length, 1 for a 0/1 criterion), so the
// reviewers agree and the answers pass the demo rubric.
import fs from 'node:fs';
import path from 'node:path';

const [packets, out] = process.argv.slice(2);
fs.mkdirSync(out, {recursive: true});
for (const name of fs.readdirSync(packets).filter((f) => /^reviewer-r\d+\.jsonl$/.test(f))) {
  const lines = fs.readFileSync(path.join(packets, name), 'utf8').split('\n').filter((l) => l);
  const header = JSON.parse(lines[0]);
  const top = Object.fromEntries(header.rubric.criteria.map((c) => [c.id, Math.max(...c.levels.map((l) => l.level))]));
  const scored = lines.map((line, i) => {
    if (i === 0) return line;
    const item = JSON.parse(line);
    for (const criterion of Object.keys(item.scores))
      item.scores[criterion] = top[criterion] <= 1 ? top[criterion] : top[criterion] - (item.answer.length % 2);
    item.seconds = 25;
    return JSON.stringify(item);
  });
  fs.writeFileSync(path.join(out, name.replace('reviewer-', '')), scored.join('\n') + '\n');
}
