// Trains the tokenizer.json fixtures of tests/tokenizers with the reference library (npm
// `tokenizers`, pinned in package.json) on text of the repository, then sets each file's
// normalizer / pre-tokenizer / post-processor / added-token blocks to those of a real model
// family's published tokenizer.json. Vocabularies are small (trained on a few hundred lines) so
// the files stay small; special tokens take the first ids (the real files' ids differ).
//
//   node make_fixtures.mjs [NAME...]   # writes fixtures/NAME.json (default: all)
//
// The default trainer of each model is used (the Node binding exposes no trainer options). The
// trainers break frequency ties in hash order, so a rerun writes equivalent, not identical, files.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import tk from 'tokenizers';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const out = path.join(here, 'fixtures');
fs.mkdirSync(out, { recursive: true });

// Training text: the first lines of the labelled router queries and MMLU-Pro questions.
function corpus(lines) {
  const rq = zlib.gunzipSync(fs.readFileSync(path.join(repo, 'models/data/router_queries.jsonl.gz')))
    .toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
  const mmlu = fs.readFileSync(path.join(repo, 'models/data/mmlu_pro_questions.jsonl'), 'utf8')
    .split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
  const text = [...rq.slice(0, lines), ...mmlu.slice(0, lines / 4)].join('\n');
  const file = path.join(os.tmpdir(), `mcpclass-tokenizer-corpus-${process.pid}-${lines}.txt`);
  fs.writeFileSync(file, text);
  return file;
}

function train(model, normalizer, preTokenizer, lines) {
  const t = new tk.Tokenizer(model);
  if (normalizer) t.setNormalizer(normalizer);
  if (preTokenizer) t.setPreTokenizer(preTokenizer);
  const file = corpus(lines);
  t.train([file]);
  fs.unlinkSync(file);
  const tmp = path.join(os.tmpdir(), `mcpclass-tokenizer-${process.pid}.json`);
  t.save(tmp);
  const doc = JSON.parse(fs.readFileSync(tmp, 'utf8'));
  fs.unlinkSync(tmp);
  return doc;
}

// Puts `specials` at ids 0.. and shifts the trained vocabulary after them; appends `extra`
// tokens (byte-level alphabet, byte-fallback bytes) missing from it.
function withSpecials(vocab, specials, extra = []) {
  const v = {};
  let id = 0;
  for (const s of specials) v[s] = id++;
  for (const [k] of Object.entries(vocab).sort((a, b) => a[1] - b[1])) if (!(k in v)) v[k] = id++;
  for (const k of extra) if (!(k in v)) v[k] = id++;
  return v;
}

function added(content, id, o = {}) {
  return {
    id, content, single_word: false, lstrip: o.lstrip ?? false, rstrip: false,
    normalized: o.normalized ?? false, special: o.special ?? true,
  };
}

function template(single, specials) {
  return {
    type: 'TemplateProcessing',
    single: single.map((s) => (s === '$A' ? { Sequence: { id: 'A', type_id: 0 } } : { SpecialToken: { id: s, type_id: 0 } })),
    pair: [...single.map((s) => (s === '$A' ? { Sequence: { id: 'A', type_id: 0 } } : { SpecialToken: { id: s, type_id: 0 } }))],
    special_tokens: Object.fromEntries(specials.map(([s, id]) => [s, { id: s, ids: [id], tokens: [s] }])),
  };
}

const only = process.argv.slice(2);

function write(name, doc) {
  if (only.length > 0 && !only.includes(name)) return;
  // The reference must load what we wrote: round-trip through it.
  tk.Tokenizer.fromString(JSON.stringify(doc));
  fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(doc));
  console.log(`${name}: ${Object.keys(doc.model.vocab).length} tokens, ${fs.statSync(path.join(out, `${name}.json`)).size} bytes`);
}

const byteLevelAlphabet = tk.byteLevelAlphabet();
const byteFallback = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);

// --- bert-base-uncased / bert-base-cased: BertNormalizer, BertPreTokenizer, WordPiece, [CLS] $A [SEP].
for (const [name, lowercase] of [['bert-uncased', true], ['bert-cased', false]]) {
  const doc = train(tk.WordPiece.empty(), tk.bertNormalizer({ lowercase }), tk.bertPreTokenizer(), 250);
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  doc.model.vocab = withSpecials(doc.model.vocab, specials);
  doc.added_tokens = specials.map((s, i) => added(s, i));
  doc.normalizer = { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase };
  doc.pre_tokenizer = { type: 'BertPreTokenizer' };
  doc.post_processor = template(['[CLS]', '$A', '[SEP]'], [['[CLS]', 2], ['[SEP]', 3]]);
  doc.decoder = { type: 'WordPiece', prefix: '##', cleanup: true };
  write(name, doc);
}

// --- roberta-base: no normalizer, ByteLevel (GPT-2 regex), BPE, RobertaProcessing. roberta-base's
// added tokens are normalized=true except <mask> (lstrip, normalized=false).
{
  const doc = train(tk.BPE.empty(), null, tk.byteLevelPreTokenizer(false, true), 160);
  const specials = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'];
  doc.model.vocab = withSpecials(doc.model.vocab, specials, byteLevelAlphabet);
  doc.added_tokens = specials.map((s, i) => (s === '<mask>' ? added(s, i, { lstrip: true }) : added(s, i, { normalized: true })));
  doc.normalizer = null;
  doc.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  doc.post_processor = { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: false };
  doc.decoder = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  write('roberta', doc);
  // GPT-2 / BART style: a space put in front of the text, kept out of the first offsets.
  doc.pre_tokenizer = { ...doc.pre_tokenizer, add_prefix_space: true };
  doc.post_processor = { ...doc.post_processor, add_prefix_space: true };
  write('roberta-prefix-space', doc);
}

// --- ModernBERT-base: the OLMo / GPT-NeoX byte-level BPE (NFC normalizer, ByteLevel), [CLS] $A
// [SEP], the OLMo PII placeholders as non-special added tokens. Not verified against the
// published file: the NFC normalizer and the placeholders' normalized=true are from memory.
{
  const doc = train(tk.BPE.empty(), tk.nfcNormalizer(), tk.byteLevelPreTokenizer(false, true), 160);
  const specials = ['|||IP_ADDRESS|||', '<|padding|>', '<|endoftext|>', '[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]', '|||EMAIL_ADDRESS|||', '|||PHONE_NUMBER|||'];
  doc.model.vocab = withSpecials(doc.model.vocab, specials, byteLevelAlphabet);
  doc.added_tokens = specials.map((s, i) => {
    if (s.startsWith('|||')) return added(s, i, { normalized: true, special: false });
    if (s === '[MASK]') return added(s, i, { lstrip: true });
    return added(s, i);
  });
  doc.normalizer = { type: 'NFC' };
  doc.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  doc.post_processor = template(['[CLS]', '$A', '[SEP]'], [['[CLS]', 4], ['[SEP]', 5]]);
  doc.decoder = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  write('modernbert', doc);
}

// --- Gemma / mmBERT: BPE over whole text with spaces replaced by "▁" (no pre-tokenizer),
// byte_fallback, fuse_unk, <0x..> byte tokens; <bos> $A <eos> (mmBERT's template: from memory).
{
  const replaceSpace = { type: 'Replace', pattern: { String: ' ' }, content: '▁' };
  const doc = train(tk.BPE.empty(), tk.replace(' ', '▁'), null, 40);
  const specials = ['<pad>', '<eos>', '<bos>', '<unk>', '<mask>', '[multimodal]'];
  doc.model.vocab = withSpecials(doc.model.vocab, specials, byteFallback);
  doc.model.unk_token = '<unk>';
  doc.model.byte_fallback = true;
  doc.model.fuse_unk = true;
  doc.added_tokens = specials.map((s, i) => added(s, i));
  doc.normalizer = replaceSpace;
  doc.pre_tokenizer = null;
  doc.post_processor = template(['<bos>', '$A', '<eos>'], [['<bos>', 2], ['<eos>', 1]]);
  doc.decoder = {
    type: 'Sequence',
    decoders: [
      { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
      { type: 'ByteFallback' }, { type: 'Fuse' },
    ],
  };
  write('gemma', doc);
}

// --- Llama-3: no normalizer; Split (the Llama-3 regex, Isolated) then ByteLevel without its own
// regex; BPE with ignore_merges; ByteLevel (no trimming) then <|begin_of_text|> $A.
{
  const llama3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const doc = train(tk.BPE.empty(), null, tk.byteLevelPreTokenizer(false, true), 160);
  const specials = ['<|begin_of_text|>', '<|end_of_text|>', '<|reserved_special_token_0|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'];
  doc.model.vocab = withSpecials(doc.model.vocab, specials, byteLevelAlphabet);
  doc.model.ignore_merges = true;
  doc.added_tokens = specials.map((s, i) => added(s, i));
  doc.normalizer = null;
  doc.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: llama3 }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  };
  doc.post_processor = {
    type: 'Sequence',
    processors: [
      { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      template(['<|begin_of_text|>', '$A'], [['<|begin_of_text|>', 0]]),
    ],
  };
  doc.decoder = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  write('llama3', doc);
}

// --- xlm-roberta-base: Precompiled normalizer (sentencepiece's charsmap), WhitespaceSplit then
// Metaspace, Unigram with <unk> at id 3, <s> $A </s>. XLM-R's real charsmap is sentencepiece's
// nmt_nfkc (237 KB); this fixture's is compiled by sentencepiece's own builder (spm_train, Debian
// package `sentencepiece`) from the same kind of rules on a subset of the code points, so the file
// stays small: NFKC of the compatibility blocks, compositions of decomposed Latin letters, and
// nmt's whitespace rules.
{
  const charsmap = precompiledCharsmap();
  const doc = train(tk.Unigram.empty(), tk.precompiled(Array.from(charsmap)),
    tk.sequencePreTokenizer([tk.whitespaceSplitPreTokenizer(), tk.metaspacePreTokenizer('▁', 'always', true)]), 250);
  const specials = ['<s>', '<pad>', '</s>', '<unk>'];
  doc.model.vocab = [...specials.map((s) => [s, 0.0]), ...doc.model.vocab.filter(([p]) => !specials.includes(p)), ['<mask>', 0.0]];
  doc.model.unk_id = 3;
  doc.model.byte_fallback = false;
  doc.added_tokens = [...specials.map((s, i) => added(s, i)), added('<mask>', doc.model.vocab.length - 1, { lstrip: true })];
  doc.normalizer = { type: 'Precompiled', precompiled_charsmap: Buffer.from(charsmap).toString('base64') };
  doc.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [
      { type: 'WhitespaceSplit' },
      { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    ],
  };
  doc.post_processor = template(['<s>', '$A', '</s>'], [['<s>', 0], ['</s>', 2]]);
  doc.decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  write('xlmr', doc);
}

// --- deberta-v3-base (and its fine-tunes, e.g. the prompt-injection detectors) as transformers'
// DebertaV2Converter writes it: Strip, the Precompiled charsmap, runs of spaces replaced by one;
// Metaspace (prepend "always"); Unigram with [PAD] [CLS] [SEP] [UNK] at ids 0-3 and [MASK] last;
// [CLS] $A [SEP], pairs [CLS] $A [SEP] $B:1 [SEP]:1.
{
  const charsmap = precompiledCharsmap();
  const doc = train(tk.Unigram.empty(), tk.precompiled(Array.from(charsmap)),
    tk.metaspacePreTokenizer('▁', 'always', true), 250);
  const specials = ['[PAD]', '[CLS]', '[SEP]', '[UNK]'];
  doc.model.vocab = [...specials.map((s) => [s, 0.0]), ...doc.model.vocab.filter(([p]) => !specials.includes(p)), ['[MASK]', 0.0]];
  doc.model.unk_id = 3;
  doc.model.byte_fallback = false;
  doc.added_tokens = [...specials.map((s, i) => added(s, i)), added('[MASK]', doc.model.vocab.length - 1)];
  doc.normalizer = {
    type: 'Sequence',
    normalizers: [
      { type: 'Strip', strip_left: true, strip_right: true },
      { type: 'Precompiled', precompiled_charsmap: Buffer.from(charsmap).toString('base64') },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
    ],
  };
  doc.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }],
  };
  const cls = { SpecialToken: { id: '[CLS]', type_id: 0 } };
  const sep = (type) => ({ SpecialToken: { id: '[SEP]', type_id: type } });
  doc.post_processor = {
    type: 'TemplateProcessing',
    single: [cls, { Sequence: { id: 'A', type_id: 0 } }, sep(0)],
    pair: [cls, { Sequence: { id: 'A', type_id: 0 } }, sep(0), { Sequence: { id: 'B', type_id: 1 } }, sep(1)],
    special_tokens: {
      '[CLS]': { id: '[CLS]', ids: [1], tokens: ['[CLS]'] },
      '[SEP]': { id: '[SEP]', ids: [2], tokens: ['[SEP]'] },
    },
  };
  doc.decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  write('deberta-v3', doc);
}

// The charsmap sentencepiece compiles from a rule TSV ("src code points<TAB>dst code points").
function precompiledCharsmap() {
  const hex = (s) => Array.from(s).map((c) => c.codePointAt(0).toString(16).toUpperCase()).join(' ');
  const rules = new Map();
  const ranges = [[0xa0, 0x24f], [0x2b0, 0x2ff], [0x1e00, 0x1eff], [0x2000, 0x206f], [0x2070, 0x218f],
    [0x2460, 0x24ff], [0x3000, 0x30ff], [0x3200, 0x33ff], [0xf900, 0xfaff], [0xfb00, 0xfb4f],
    [0xfe30, 0xfe6f], [0xff00, 0xffef], [0x1d400, 0x1d4ff], [0x1f100, 0x1f1ff]];
  for (const [a, b] of ranges) {
    for (let cp = a; cp <= b; cp++) {
      const s = String.fromCodePoint(cp);
      const n = s.normalize('NFKC');
      if (n !== s && n.length > 0) rules.set(hex(s), hex(n));
      // Decomposed spellings compose, as in nmt_nfkc.
      const d = s.normalize('NFD');
      if (d !== s && Array.from(d).length > 1) rules.set(hex(d), hex(n));
    }
  }
  for (const cp of [0x09, 0x0a, 0x0c, 0x0d, 0x1680, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028, 0x2029, 0xfeff, 0xfffd])
    rules.set(hex(String.fromCodePoint(cp)), '20');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpclass-charsmap-'));
  const tsv = path.join(dir, 'rules.tsv');
  fs.writeFileSync(tsv, [...rules].map(([s, d]) => `${s}\t${d}`).join('\n') + '\n');
  const text = path.join(dir, 'text.txt');
  fs.writeFileSync(text, 'the quick brown fox jumps over the lazy dog\nabcdefghijklmnopqrstuvwxyz\n');
  const run = spawnSync('spm_train', [`--input=${text}`, `--model_prefix=${dir}/m`, '--model_type=char',
    '--vocab_size=30', '--hard_vocab_limit=false', '--minloglevel=2', `--normalization_rule_tsv=${tsv}`]);
  if (run.status !== 0) throw new Error(`spm_train failed (apt-get install sentencepiece): ${run.stderr}`);
  const model = fs.readFileSync(`${dir}/m.model`);
  fs.rmSync(dir, { recursive: true });
  // ModelProto.normalizer_spec (3) → NormalizerSpec.precompiled_charsmap (2).
  return protoField(protoField(model, 3), 2);
}

function protoField(buf, want) {
  let i = 0;
  const varint = () => {
    let r = 0, s = 0;
    for (;;) {
      const b = buf[i++];
      r += (b & 0x7f) * 2 ** s;
      s += 7;
      if (!(b & 0x80)) return r;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const wire = key % 8;
    if (wire === 0) varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const n = varint();
      if (Math.floor(key / 8) === want) return buf.subarray(i, i + n);
      i += n;
    } else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
  throw new Error(`protobuf field ${want} missing`);
}

// --- Components no family above uses, each against the reference too: WordLevel with NMT, NFKC,
// Lowercase, Strip, Punctuation, Digits; WordLevel with NFD, StripAccents, a regex Replace,
// Prepend, Whitespace, CharDelimiterSplit and Split in every behaviour (and invert); BPE with a
// continuing-subword prefix and an end-of-word suffix behind NFKD and Metaspace (prepend "first").
{
  const doc = train(tk.WordLevel.empty(), tk.sequenceNormalizer([tk.nfkcNormalizer(), tk.lowercase()]),
    tk.sequencePreTokenizer([tk.whitespaceSplitPreTokenizer(), tk.punctuationPreTokenizer(), tk.digitsPreTokenizer(true)]), 300);
  const specials = ['[UNK]', '[CLS]', '[SEP]'];
  doc.model.vocab = withSpecials(doc.model.vocab, specials);
  doc.model.unk_token = '[UNK]';
  doc.added_tokens = specials.map((s, i) => added(s, i));
  doc.normalizer = { type: 'Sequence', normalizers: [{ type: 'Nmt' }, { type: 'NFKC' }, { type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: true }] };
  doc.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Punctuation', behavior: 'Contiguous' }, { type: 'Digits', individual_digits: true }] };
  doc.post_processor = { type: 'BertProcessing', sep: ['[SEP]', 2], cls: ['[CLS]', 1] };
  write('misc-wordlevel-a', doc);
}
{
  const doc = train(tk.WordLevel.empty(), tk.sequenceNormalizer([tk.nfdNormalizer(), tk.stripAccentsNormalizer()]),
    tk.whitespacePreTokenizer(), 300);
  doc.model.vocab = withSpecials(doc.model.vocab, ['<unk>']);
  doc.model.unk_token = '<unk>';
  doc.added_tokens = [added('<unk>', 0), added('stop word', doc.model.vocab.length ?? Object.keys(doc.model.vocab).length, { normalized: true, special: false, rstrip: true })];
  doc.model.vocab['stop word'] = Object.keys(doc.model.vocab).length;
  doc.added_tokens[1].id = doc.model.vocab['stop word'];
  doc.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Prepend', prepend: '>' }] };
  doc.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Whitespace' },
      { type: 'CharDelimiterSplit', delimiter: '-' },
      { type: 'Split', pattern: { String: "'" }, behavior: 'MergedWithPrevious', invert: false },
      { type: 'Split', pattern: { Regex: '\\d+' }, behavior: 'MergedWithNext', invert: false },
      { type: 'Split', pattern: { Regex: '[aeiou]' }, behavior: 'Contiguous', invert: true },
      { type: 'Split', pattern: { String: 'x' }, behavior: 'Removed', invert: false },
      { type: 'Digits', individual_digits: false },
    ],
  };
  doc.post_processor = null;
  write('misc-wordlevel-b', doc);
}
{
  // A hand-made BPE: each frequent word is merged left to right, "##" on continuing pieces and
  // "</w>" on the last one, so vocabulary and merges are consistent.
  const words = new Map();
  for (const line of fs.readFileSync(corpus(200), 'utf8').split('\n'))
    for (const w of line.normalize('NFKD').toLowerCase().split(/\s+/).filter(Boolean)) words.set('▁' + w, (words.get('▁' + w) ?? 0) + 1);
  const vocab = { '<unk>': 0 };
  const merges = [];
  const add = (t) => { if (!(t in vocab)) vocab[t] = Object.keys(vocab).length; };
  for (const w of words.keys()) {
    const cs = Array.from(w);
    cs.forEach((c, i) => add((i ? '##' : '') + c + (i === cs.length - 1 ? '</w>' : '')));
  }
  const seen = new Set();
  for (const [w] of [...words].sort((a, b) => b[1] - a[1]).slice(0, 300)) {
    const cs = Array.from(w);
    let left = cs[0];
    for (let i = 1; i < cs.length; i++) {
      const right = '##' + cs[i] + (i === cs.length - 1 ? '</w>' : '');
      const merged = left + right.slice(2);
      const key = `${left} ${right}`;
      if (!seen.has(key)) {
        seen.add(key);
        add(merged);
        merges.push([left, right]);
      }
      left = merged;
    }
  }
  const doc = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added('<unk>', 0)],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true },
    post_processor: null,
    decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: '##', end_of_word_suffix: '</w>', fuse_unk: true, byte_fallback: false, ignore_merges: false, vocab, merges },
  };
  write('misc-bpe-affixes', doc);
}
