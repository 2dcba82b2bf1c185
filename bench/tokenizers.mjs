// Tokenizer speed, one thread: mcpclass (bench_tokenizer, encode() per text) against the
// reference Hugging Face tokenizers' batch encode (npm `tokenizers`, pinned in
// tests/tokenizers/package.json) with RAYON_NUM_THREADS=1, on the same 10,000 labelled texts,
// in the same run. Writes tokenizers.json and tokenizers.md into MCPCLASS_BENCH_OUT (default
// bench/results); bench/run.sh runs it as its `tokenizers` section.
//
//   RAYON_NUM_THREADS=1 node bench/tokenizers.mjs BUILD_DIR
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const require = createRequire(path.join(root, 'tests/tokenizers/package.json'));
if (process.env.RAYON_NUM_THREADS !== '1') {
  console.error('run with RAYON_NUM_THREADS=1 (the reference must use one thread)');
  process.exit(2);
}
const tk = require('tokenizers');
const { labelledTexts } = await import(path.join(root, 'tests/tokenizers/texts.mjs'));
const build = path.resolve(process.argv[2] ?? path.join(root, 'build'));
const RUNS = 5;

const texts = labelledTexts().rq.slice(0, 10000);
const textsFile = path.join(os.tmpdir(), `mcpclass-bench-tokenizer-${process.pid}.jsonl`);
fs.writeFileSync(textsFile, texts.map((t) => JSON.stringify(t)).join('\n') + '\n');
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

const rows = [];
for (const name of ['bert-uncased', 'roberta', 'llama3', 'xlmr']) {
  const fixture = path.join(root, 'tests/tokenizers/fixtures', `${name}.json`);
  const tokenizer = tk.Tokenizer.fromFile(fixture);
  await tokenizer.encodeBatch(texts);  // warm-up
  const ref = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    await tokenizer.encodeBatch(texts);
    ref.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const ours = JSON.parse(execFileSync(path.join(build, 'bench', 'bench_tokenizer'),
    [fixture, textsFile, String(RUNS)], { encoding: 'utf8' }));
  const refUs = (median(ref) / texts.length) * 1e6;
  const oursUs = (median(ours.seconds) / texts.length) * 1e6;
  rows.push({ fixture: name, texts: texts.length, tokens: ours.tokens, reference_us_per_text: refUs,
    mcpclass_us_per_text: oursUs, reference_seconds: ref, mcpclass_seconds: ours.seconds });
  console.log(`${name}: mcpclass ${oursUs.toFixed(2)} µs/text, reference batch ${refUs.toFixed(2)} µs/text`);
}
fs.unlinkSync(textsFile);

const out = process.env.MCPCLASS_BENCH_OUT || path.join(root, 'bench/results');
const date = new Date().toISOString();
const version = require('tokenizers/package.json').version;
fs.writeFileSync(path.join(out, 'tokenizers.json'), JSON.stringify({ date, reference: `tokenizers ${version} (npm)`, node: process.version, cpus: os.cpus().length, rows }, null, 2) + '\n');
const md = [
  '# Tokenizers: mcpclass vs the reference, one thread',
  '',
  `${date} · ${os.cpus()[0].model}, ${os.cpus().length} CPUs (shared) · \`RAYON_NUM_THREADS=1 node bench/tokenizers.mjs\``,
  '',
  `Encoding the first 10,000 texts of models/data/router_queries.jsonl.gz (median of ${RUNS} runs after a warm-up): mcpclass \`encode()\` per text (bench/bench_tokenizer.cpp) against the reference's \`encodeBatch\` (tokenizers ${version}, npm, Node ${process.version}), in the same run. Ids and offsets agree on every text (ctest tokenizers.reference.*).`,
  '',
  '| fixture | mcpclass µs/text | reference batch µs/text | reference ÷ mcpclass |',
  '|---|---:|---:|---:|',
  ...rows.map((r) => `| ${r.fixture} | ${r.mcpclass_us_per_text.toFixed(2)} | ${r.reference_us_per_text.toFixed(2)} | ${(r.reference_us_per_text / r.mcpclass_us_per_text).toFixed(2)} |`),
  '',
].join('\n');
fs.writeFileSync(path.join(out, 'tokenizers.md'), md);
