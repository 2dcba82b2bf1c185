// ONNX Runtime's session.run of a sequence classifier (model.onnx of bench/peers/
// make_transformer_checkpoints.py), batch 1, on given token ids: the counterpart of
// bench/learned/bench_transformer.cpp for bench/transformer_peer.py.
//   node transformer_forward.mjs --model M.onnx --ids IDS.json --threads N --repeat R
// IDS.json: {"name": [ids...], ...}. Per name: a warm-up run, then R timed runs of
// `await session.run(feeds)` (feeds built beforehand); prints one JSON line
// {"name": {tokens, p50_us, p90_us, mean_us, logits}, ...}.
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";

import { createSession, feeds } from "./onnx_classifier.mjs";
import { INPUTS } from "./transformer_classifier.mjs";

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const threads = Number(option("--threads", "1"));
const repeat = Number(option("--repeat", "20"));
const rows = JSON.parse(readFileSync(option("--ids"), "utf8"));
const session = await createSession(option("--model"), threads);
const out = { engine: "onnxruntime-node", ort_version: ort.env.versions?.common ?? null, threads };
for (const [name, ids] of Object.entries(rows)) {
  const input = feeds(ids, INPUTS);
  const logits = Array.from((await session.run(input)).logits.data); // warm-up
  const lat = [];
  for (let k = 0; k < repeat; ++k) {
    const s = process.hrtime.bigint();
    await session.run(input);
    lat.push(Number(process.hrtime.bigint() - s) / 1e3);
  }
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  lat.sort((a, b) => a - b);
  const at = (q) => Math.round(10 * lat[Math.min(lat.length - 1, Math.floor(q * lat.length))]) / 10;
  out[name] = { tokens: ids.length, repeat, p50_us: at(0.5), p90_us: at(0.9), mean_us: Math.round(10 * mean) / 10, logits };
}
process.stdout.write(JSON.stringify(out) + "\n");
