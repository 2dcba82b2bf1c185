// An OTLP/HTTP trace receiver for the tracing tests: POST /v1/traces bodies are decoded as
// ExportTraceServiceRequest with the protobufjs module that @opentelemetry/otlp-proto-exporter-base
// generates from the official opentelemetry-proto definitions (package.json pins it), so a
// payload that does not follow them fails here (answered 400 and counted), not in a hand-written
// reader. GET /spans answers every span received so far as JSON (ids in hex, the resource's
// attributes and the scope beside each); GET /errors the decode failures.
// Prints its port on stdout.
import http from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js");
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const spans = [];
const errors = [];
const hex = (bytes) => Buffer.from(bytes ?? []).toString("hex");
const value = (any) => any?.stringValue ?? any?.intValue?.toString() ?? any?.boolValue ?? null;
const attributes = (list) => Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

function take(body, contentType) {
  if (contentType !== "application/x-protobuf") throw new Error(`content-type ${contentType}`);
  const request = Request.decode(body);
  const problem = Request.verify(request);
  if (problem) throw new Error(problem);
  for (const rs of request.resourceSpans) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        spans.push({
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId),
          traceState: s.traceState ?? "", name: s.name, kind: s.kind,
          start: s.startTimeUnixNano.toString(), end: s.endTimeUnixNano.toString(),
          attributes: attributes(s.attributes), status: s.status?.code ?? 0,
          statusMessage: s.status?.message ?? "", resource,
          scope: { name: ss.scope?.name, version: ss.scope?.version },
        });
      }
    }
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/v1/traces") {
      try {
        take(Buffer.concat(chunks), req.headers["content-type"]);
        res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end();
      } catch (e) {
        errors.push(String(e));
        res.writeHead(400).end(String(e));
      }
      return;
    }
    const body = req.url === "/spans" ? spans : req.url === "/errors" ? errors : null;
    if (body === null) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
