// Trains the tokenizer.json fixtures of tests/tokenizers with the reference library (npm
// `tokenizers`, pinned in package.json) on text of the repository, then sets each file's
// normalizer / pre-tokenizer / post-processor / added-token blocks to those of a real model
// family's published tokenizer.json. Vocabularies are small (trained on a few hundred lines) so
// the files stay small; special tokens take the first ids (the real files' ids differ).
//
//   node make_fixtures.mjs            # writes fixtures/*.json
//
// The default trainer of each model is used (the Node binding exposes no trainer options). The
// trainers break frequency ties in hash order, so a rerun writes equivalent, not identical, files.
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

function write(name, doc) {
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
