// ONNX Runtime's probabilities of a sequence classifier (an export with input_ids,
// attention_mask -> logits, float32 or rewritten by quantize_onnx_int8.py) on given token ids,
// one text at a time (batch 1, as a server answers them): the ONNX Runtime rows of
// bench/accuracy/precision_accuracy.py. The ids are mcpclass's own (`mcpclass tokenize`), so the
// rows compare forward passes, not tokenizers.
//   node transformer_classify_ids.mjs --model M.onnx --ids IDS.jsonl --threads N
// IDS.jsonl: one JSON array of ids per line. Prints one JSON line per input: the softmax of its
// logits, in the model's label order.
import { readFileSync } from "node:fs";

import { createSession, feeds } from "./onnx_classifier.mjs";
import { INPUTS, softmax } from "./transformer_classifier.mjs";

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const session = await createSession(option("--model"), Number(option("--threads", "1")));
const lines = readFileSync(option("--ids"), "utf8").split("\n").filter(Boolean);
const out = [];
for (const line of lines) {
  const logits = (await session.run(feeds(JSON.parse(line), INPUTS), ["logits"])).logits.data;
  out.push(JSON.stringify(softmax(logits)));
}
process.stdout.write(out.join("\n") + "\n");
