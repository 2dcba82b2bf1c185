// Encodes the comparison texts with the reference library and with `mcpclass tokenize --batch`,
// and fails naming the first text whose ids or offsets differ. With --pairs, sentence pairs
// (each text with another of the texts) as encode(text, text_pair) encodes them: ids, token
// types and offsets; with --max-length too, the pair truncated together (longest first).
//
//   node compare.mjs MCPCLASS_BIN FIXTURE.json [--count N] [--max-length N --stride S] [--pairs]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import tk from 'tokenizers';
import { comparisonTexts } from './texts.mjs';

const [bin, fixture, ...rest] = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = rest.indexOf(name);
  return i >= 0 ? Number(rest[i + 1]) : fallback;
};
const count = opt('--count', 20000);
const maxLength = opt('--max-length', 0);
const stride = opt('--stride', 0);
const pairs = rest.includes('--pairs');
const texts = comparisonTexts(count);
// Each text with one further on: short with long, empty with non-empty, scripts mixed.
const partner = (i) => texts[(i * 7 + 3) % texts.length];

// Reference offsets count characters (code points); mcpclass's count bytes of the UTF-8 text.
function byteOffsets(text) {
  const at = [0];
  let b = 0;
  for (const ch of text) {
    b += Buffer.byteLength(ch, 'utf8');
    at.push(b);
  }
  return at;
}

function simplify(e, at) {
  const out = { ids: e.getIds(), offsets: e.getOffsets().map(([s, t]) => [at[s], at[t]]) };
  const over = e.getOverflowing();
  if (over.length) out.overflowing = over.map((o) => simplify(o, at));
  return out;
}

const json = fs.readFileSync(fixture, 'utf8');
const tokenizer = tk.Tokenizer.fromString(json);
const t0 = process.hrtime.bigint();
let encoded;
if (pairs) {
  if (maxLength) tokenizer.setTruncation(maxLength, { strategy: 'LongestFirst' });
  encoded = await Promise.all(texts.map((t, i) => tokenizer.encode(t, partner(i))));
} else if (!maxLength) {
  encoded = await tokenizer.encodeBatch(texts);
} else {
  // The windows come from the reference's own Encoding.truncate and post-processor, applied to
  // the encoding before post-processing (a copy without post_processor gives it). Not from
  // setTruncation(): in 0.23 it first cuts the text to max_length tokens, so at most one
  // overflowing window survives however long the text is.
  const raw = tk.Tokenizer.fromString(JSON.stringify({ ...JSON.parse(json), post_processor: null }));
  const added = (await tokenizer.encode('')).getLength();  // the special tokens alone
  encoded = await Promise.all((await raw.encodeBatch(texts)).map((e) => {
    e.truncate(maxLength - added, stride, 'right');
    return tokenizer.postProcess(e, undefined, true);
  }));
}
const refSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
// A pair's offsets index its own text: the first text's tokens, then the second's.
function pairSimplify(e, i) {
  const [first, second] = [byteOffsets(texts[i]), byteOffsets(partner(i))];
  const seq = e.getSequenceIds();
  const offsets = e.getOffsets().map(([s, t], k) => {
    const at = seq[k] === 1 ? second : first;
    return [at[s], at[t]];
  });
  return { ids: e.getIds(), type_ids: e.getTypeIds(), offsets };
}
const reference = pairs ? encoded.map(pairSimplify)
  : encoded.map((e, i) => simplify(e, byteOffsets(texts[i])));

const args = ['tokenize', '--tokenizer', fixture, '--batch', '--offsets'];
if (maxLength) args.push('--max-length', String(maxLength), '--stride', String(stride));
const run = spawnSync(bin, args, {
  input: texts.map((t, i) => JSON.stringify(pairs ? [t, partner(i)] : t)).join('\n') + '\n',
  maxBuffer: 1 << 30,
  encoding: 'utf8',
});
if (run.status !== 0) {
  console.error(`mcpclass tokenize exited ${run.status}: ${run.stderr}`);
  process.exit(1);
}
const ours = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
if (ours.length !== texts.length) {
  console.error(`mcpclass gave ${ours.length} results for ${texts.length} texts`);
  process.exit(1);
}
const strip = (o) => {
  if (pairs) return { ids: o.ids, type_ids: o.type_ids, offsets: o.offsets ?? [] };
  const s = { ids: o.ids, offsets: o.offsets ?? [] };
  if (o.overflowing) s.overflowing = o.overflowing.map(strip);
  return s;
};
let mismatches = 0;
for (let i = 0; i < texts.length; i++) {
  const a = JSON.stringify(reference[i]);
  const b = JSON.stringify(ours[i].error ? ours[i] : strip(ours[i]));
  if (a !== b) {
    if (mismatches === 0) {
      console.error(`FIRST DIFFERENCE at text ${i}: ${JSON.stringify(texts[i])}`);
      console.error(`  reference tokens: ${JSON.stringify(encoded[i].getTokens())}`);
      console.error(`  reference: ${a}`);
      console.error(`  mcpclass:  ${JSON.stringify(ours[i])}`);
    }
    mismatches++;
  }
}
const name = fixture.split('/').pop();
console.log(`${name}: ${texts.length - mismatches}/${texts.length} ${pairs ? 'pairs identical (ids, token types and offsets)' : 'texts identical (ids and offsets)'}` +
  `${maxLength ? `, max_length ${maxLength} stride ${stride}` : ''}; reference batch ${refSeconds.toFixed(2)} s`);
process.exit(mismatches === 0 ? 0 : 1);
