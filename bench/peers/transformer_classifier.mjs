// A Hugging Face sequence-classification checkpoint as a user would serve it from Node with ONNX
// Runtime: model.onnx (input_ids, attention_mask -> logits; bench/peers/
// make_transformer_checkpoints.py), token ids from the checkpoint's tokenizer.json by the
// reference Hugging Face tokenizers (npm `tokenizers`, pinned in tests/tokenizers/package.json),
// softmax of the logits, labels (config.json id2label) onto the configured categories by name,
// and mcpclass's routing policy and result contract (rules.mjs Routed). The peer of
// `kind: transformer` for bench/transformer_peer.py.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { createSession, feeds } from "./onnx_classifier.mjs";
import { Routed } from "./rules.mjs";

export const INPUTS = ["input_ids", "attention_mask"];

/** softmax of a row of logits (max subtracted first), as an Array. */
export function softmax(logits) {
  let top = -Infinity;
  for (const v of logits) top = Math.max(top, v);
  const weights = Array.from(logits, (v) => Math.exp(v - top));
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / sum);
}

/** The reference tokenizer of a tokenizer.json, truncating to `maxTokens` (specials included). */
export function loadTokenizer(path, maxTokens) {
  const root = fileURLToPath(new URL("../../tests/tokenizers/package.json", import.meta.url));
  const { Tokenizer } = createRequire(root)("tokenizers");
  const tokenizer = Tokenizer.fromFile(path);
  tokenizer.setTruncation(maxTokens);
  return tokenizer;
}

export class OnnxTransformerClassifier extends Routed {
  /**
   * @param config the JSON document of `mcpclass config` with classifier.kind transformer
   * @param dir    the checkpoint directory holding model.onnx, config.json and tokenizer.json
   * @param model  the export's file name in dir (model-int8.onnx: its dynamic-int8 rewrite)
   */
  static async load(config, dir, threads = 1, model = "model.onnx") {
    if (config.classifier.kind !== "transformer")
      throw new Error(`classifier.kind ${config.classifier.kind} is not "transformer"`);
    const checkpoint = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    const maxTokens = Math.min(config.classifier.max_tokens ?? 512, checkpoint.max_position_embeddings);
    const session = await createSession(join(dir, model), threads);
    return new OnnxTransformerClassifier(config, checkpoint, session, loadTokenizer(join(dir, "tokenizer.json"), maxTokens));
  }

  constructor(config, checkpoint, session, tokenizer) {
    super(config);
    this.session = session;
    this.tokenizer = tokenizer;
    const labels = Object.keys(checkpoint.id2label).sort((a, b) => a - b).map((k) => checkpoint.id2label[k]);
    this.map = labels.map((label) => {
      const i = this.names.indexOf(label);
      if (i < 0) throw new Error(`checkpoint label '${label}' is not a configured category`);
      return i;
    });
  }

  async probabilities(text) {
    const ids = (await this.tokenizer.encode(text)).getIds();
    const p = softmax((await this.session.run(feeds(ids, INPUTS), ["logits"])).logits.data);
    const probabilities = new Array(this.names.length).fill(0);
    for (let i = 0; i < this.map.length; ++i) probabilities[this.map[i]] = p[i];
    return probabilities;
  }

  async classify(text, withProbabilities) {
    return this.result(text, await this.probabilities(text), withProbabilities);
  }
}
