// The comparison texts: the repository's labelled data and adversarial Unicode, deterministic
// (a seeded generator), so the reference and mcpclass see the same list on every run.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Fragments that stress the pipeline: combining marks, CJK, emoji ZWJ sequences, RTL, control
// characters, NBSP and other spaces, compatibility forms, casing oddities, special-token lookalikes.
export const FRAGMENTS = [
  'e\u0301', 'a\u0300\u0316', 'n\u0303o', 'A\u030A', 'Z\u0351\u0352\u0353a\u0354\u0355lgo', 'café', 'naïve', 'Ångström',
  'o\u0308\u0304', '\u0301leading mark', 'क्षत्रिय', 'ก่า', 'ﾊﾟ',
  '日本語のテキスト', '中文字符测试', '한국어 텍스트', '한', '𠀀𠀁𪜀', '㊙', '〜', '、。',
  '👨‍👩‍👧‍👦', '🏳️‍🌈', '👍🏽', '😀', '🥲', '🫠', '🧑🏿‍💻', '❤️', '#️⃣', '🇫🇷',
  'مرحبا بالعالم', 'שלום עולם', '\u200Frtl\u200E', '\u202Eevil\u202C', 'ع٣٤',
  '\u0000', '\u0007', '\u001B[31m', '\u007F', '\u0085', '\u200B', '\uFEFF', '\u00AD', '\uFFFD', '\u2028', '\uE000',
  '\u00A0', '\u2003', '\u3000', '\u2009', '\t', '\n', '\r\n', '   ', '\u1680', '\u202F', '\u205F', '\u180E', ' \n \n',
  'ＡＢＣ１２３', 'ﬁﬂ', '①②', 'Ⅻ', '½', 'x²', '™', 'ſ', 'İstanbul', 'ΣΑΣ', 'straße', 'ǅ', 'Ǆ', 'ẞ', '㎏', '…',
  "I'm", "you're", "WE'LL", "it's", "'s", "O'Neil's", 'don’t',
  '...', '!!!', '—', '“quotes”', '«»', '¿¡', '$\\frac{1}{2}$', '[x]', '<tag>', '&amp;', '@user', '#hash', '12,345.67', '٣', '³',
  '[CLS]', '[SEP]', '[MASK]', '[cls]', '[UNK]', '[PAD]', '[ PAD ]', '<s>', '</s>', '<mask>', '<unk>', '<pad>', '<<s>>', ' <mask> ',
  '<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>', '<bos>', '<eos>', '|||IP_ADDRESS|||', '|||ip_address|||', '▁', '▁▁x', 'Ġ',
];

// Texts on which mcpclass once differed, kept out of FRAGMENTS so that the seeded texts stay as
// they were. Noncharacters (Cn): BertNormalizer's clean_text kept them, mcpclass dropped them.
export const REGRESSIONS = ['\uFFFF nonchar', '\uFDD0 nonchar2', '\u0378 unassigned'];

function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function labelledTexts() {
  const rq = zlib.gunzipSync(fs.readFileSync(path.join(repo, 'models/data/router_queries.jsonl.gz')))
    .toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
  const mmlu = fs.readFileSync(path.join(repo, 'models/data/mmlu_pro_questions.jsonl'), 'utf8')
    .split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
  const csv = fs.readFileSync(path.join(repo, 'tests/data/training_data.csv'), 'utf8').split('\n').slice(1).filter(Boolean);
  return { rq, mmlu, csv };
}

/// `count` texts: about three quarters labelled data, the rest adversarial.
export function comparisonTexts(count = 20000, seed = 30) {
  const rand = mulberry32(seed);
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const { rq, mmlu, csv } = labelledTexts();
  const texts = ['', ' ', '\n', '\u00A0', 'a', ...FRAGMENTS, ...REGRESSIONS, ...csv];
  const labelled = Math.floor(count * 0.75);
  // Every other router query (they run to 59k) and every MMLU question up to the share.
  for (let i = 0; texts.length < labelled * 0.7 && i < rq.length; i += 2) texts.push(rq[i]);
  for (let i = 0; texts.length < labelled && i < mmlu.length; i++) texts.push(mmlu[i]);
  const seps = ['', ' ', '  ', '\n', '\u00A0', '\t', '\u3000'];
  while (texts.length < count) {
    const r = rand();
    if (r < 0.45) {
      // A labelled text with fragments spliced in at code-point boundaries.
      const cps = Array.from(pick(rq));
      for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) cps.splice(Math.floor(rand() * (cps.length + 1)), 0, pick(FRAGMENTS));
      texts.push(cps.join(''));
    } else if (r < 0.85) {
      const parts = [];
      for (let k = 1 + Math.floor(rand() * 6); k > 0; k--) parts.push(pick(FRAGMENTS));
      texts.push(parts.join(pick(seps)));
    } else if (r < 0.92) {
      // Very long words and whitespace runs.
      const unit = pick(['a', 'supercalifragilistic', '😀', '1234567890', 'é', '漢', 'ab ', ' ', '\n', '\u00A0', '-', '_']);
      texts.push(pick(['', 'x ']) + unit.repeat(10 + Math.floor(rand() * 140)) + pick(['', ' y', '!']));
    } else {
      texts.push(pick(mmlu).split(' ').reverse().join(pick(seps)));
    }
  }
  return texts;
}
