// ONNX Runtime's forward pass of the USE-lite encoder alone (encoder.onnx of export_onnx.py), one
// text per session.run as the peer calls it: the counterpart of bench/learned/
// bench_encoder_forward.cpp (the native encoder on the same ids), run by bench/onnx_peer.py.
//   node encoder_forward.mjs --model DIR/encoder.onnx --texts TEXTS.json --threads N --repeat R
//                            [--ids-out IDS.jsonl]
// Tokenises TEXTS.json (a JSON array of strings) with the USE tokenizer, truncated to 128 ids,
// writes the ids (one JSON array a line) to --ids-out, runs a warm-up pass, then times R passes
// of `await session.run(feeds)` (the feeds built beforehand) and prints one JSON line.
import { readFileSync, writeFileSync } from "node:fs";
import * as ort from "onnxruntime-node";

import { createSession, feeds, loadTokenizer } from "./onnx_classifier.mjs";

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const threads = Number(option("--threads", "1"));
const repeat = Number(option("--repeat", "3"));
const tokenizer = loadTokenizer();
const rows = JSON.parse(readFileSync(option("--texts"), "utf8")).map((t) => tokenizer.encode(t).slice(0, 128));
if (option("--ids-out")) writeFileSync(option("--ids-out"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
const session = await createSession(option("--model"), threads);
const inputs = rows.map(feeds);
for (const f of inputs) await session.run(f); // warm-up

const lat = [];
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
for (let k = 0; k < repeat; ++k)
  for (const f of inputs) {
    const s = process.hrtime.bigint();
    await session.run(f);
    lat.push(Number(process.hrtime.bigint() - s) / 1e3);
  }
const totalUs = Number(process.hrtime.bigint() - t0) / 1e3;
const cpu = process.cpuUsage(cpu0);
lat.sort((a, b) => a - b);
const at = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];
const tokens = rows.reduce((n, r) => n + r.length, 0);
process.stdout.write(
  JSON.stringify({
    engine: "onnxruntime-node",
    ort_version: ort.env.versions?.common ?? null,
    threads,
    texts: rows.length,
    mean_tokens: Math.round((10 * tokens) / rows.length) / 10,
    calls: lat.length,
    mean_us: Math.round(10 * (totalUs / lat.length)) / 10,
    p50_us: Math.round(10 * at(0.5)) / 10,
    p99_us: Math.round(10 * at(0.99)) / 10,
    process_cpu_us_per_call: Math.round((10 * (cpu.user + cpu.system)) / lat.length) / 10,
  }) + "\n",
);
