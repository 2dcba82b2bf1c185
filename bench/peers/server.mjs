// The benchmark peer: the official TypeScript MCP SDK serving the same classifier as
// `mcpclass serve` (tools classify_text and list_categories), over Streamable HTTP or stdio.
//   node server.mjs --config CONFIG.json --http 127.0.0.1:0   prints "listening on http://HOST:PORT"
//   node server.mjs --config CONFIG.json --stdio
// CONFIG.json is what `mcpclass config` prints. The rule classifier (rules.mjs) by default; with
// --onnx DIR [--threads N] the learned default exported by export_onnx.py, run by ONNX Runtime
// with N intra-op threads (onnx_classifier.mjs; CONFIG.json from `mcpclass config -c
// models/mmlu14.yaml`); with --transformer DIR [--threads N] a Hugging Face checkpoint's
// model.onnx (transformer_classifier.mjs; CONFIG.json with classifier.kind transformer), or with
// --model-file NAME another export in DIR (model-int8.onnx). HTTP paths, stateful
// (Mcp-Session-Id) like mcpclass:
//   /mcp      answers POSTs with JSON bodies (enableJsonResponse: true)
//   /mcp-sse  answers POSTs with SSE streams (the SDK's default)
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { z } from "zod";

import { RuleClassifier } from "./rules.mjs";

function option(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const config = JSON.parse(readFileSync(option("--config"), "utf8"));
const onnxDir = option("--onnx") ?? option("--transformer");
const threads = Number(option("--threads") ?? 1);
const classifier = option("--transformer")
  ? await (await import("./transformer_classifier.mjs")).OnnxTransformerClassifier.load(config, onnxDir, threads,
      option("--model-file") ?? "model.onnx")
  : onnxDir
    ? await (await import("./onnx_classifier.mjs")).OnnxClassifier.load(config, onnxDir, threads)
    : new RuleClassifier(config);

function makeServer() {
  const server = new McpServer({ name: onnxDir ? "ts-sdk-onnx-peer" : "ts-sdk-rules-peer", version: "1.0.0" });
  server.registerTool(
    "classify_text",
    {
      title: "Classify text",
      description: "Classify text into one of the categories of list_categories.",
      inputSchema: { text: z.string(), with_probabilities: z.boolean().optional() },
      outputSchema: {
        class: z.number().int().min(0),
        confidence: z.number().min(0).max(1),
        model: z.string(),
        use_reasoning: z.boolean(),
        probabilities: z.array(z.number().min(0).max(1)).optional(),
        entropy: z.number().min(0).optional(),
      },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ text, with_probabilities }) => {
      const problem = classifier.textProblem(text);
      if (problem) return { content: [{ type: "text", text: problem }], isError: true };
      const result = await classifier.classify(text, with_probabilities === true);
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  server.registerTool(
    "list_categories",
    {
      title: "List categories",
      description: "List the categories classify_text chooses from.",
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async () => {
      const doc = { categories: classifier.names };
      return { content: [{ type: "text", text: JSON.stringify(doc) }], structuredContent: doc };
    },
  );
  return server;
}

if (process.argv.includes("--stdio")) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const [host, port] = (option("--http") ?? "127.0.0.1:0").split(":");
  const sessions = new Map(); // Mcp-Session-Id -> transport

  const readBody = (req) =>
    new Promise((resolve, reject) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      req.on("error", reject);
    });

  const fail = (res, status, message) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  };

  const http = createServer(async (req, res) => {
    try {
      const path = req.url.split("?")[0];
      if (path !== "/mcp" && path !== "/mcp-sse") return fail(res, 404, "not found");
      const body = req.method === "POST" ? JSON.parse(await readBody(req)) : undefined;
      const id = req.headers["mcp-session-id"];
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        if (id) return fail(res, 404, "unknown session");
        if (req.method !== "POST" || !isInitializeRequest(body)) return fail(res, 400, "no session");
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: path === "/mcp",
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) fail(res, 400, String(e));
    }
  });
  http.keepAliveTimeout = 65_000;
  http.listen(Number(port), host, () => {
    const a = http.address();
    process.stderr.write(`listening on http://${a.address}:${a.port}\n`);
  });
  const stop = () => http.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
