#!/usr/bin/env python3
"""A misbehaving stdio MCP classification server for the remote-classifier tests.

FAKE_MODE selects how classify_text misbehaves:
  ok         answers correctly (class 0 "math", confidence 0.9)
  slow       answers after FAKE_DELAY_MS milliseconds (default 5000); detect_pii too
  malformed  answers with probabilities that do not sum to 1 and a class out of range
  notjson    answers with text that is not JSON
  die        exits (status 3) instead of answering
  lowconf    answers "science" with confidence 0.4 (below the default threshold)
  changing   every list_categories call adds a category ("v1", "v2", ...); a text containing
             "notify" makes the server send notifications/tools/list_changed before answering
detect_pii answers the transformers pipeline's span shape (code point offsets, no byte offsets):
every "Zoë" of the text is a PERSON; FAKE_MODE badspans reports a span past the text's end;
FAKE_MODE grouped reports US SSNs (ddd-dd-dddd) and e-mail addresses instead, grouped by label
(every SSN first, then every address), as a span tool may order them.
Only the standard library is used; one JSON-RPC message per line.
"""
import json
import os
import sys
import time

MODE = os.environ.get("FAKE_MODE", "ok")
DELAY = int(os.environ.get("FAKE_DELAY_MS", "5000")) / 1000.0
CATEGORIES = ["math", "science", "other"]
category_calls = 0


def categories():
    global category_calls
    if MODE != "changing":
        return CATEGORIES
    category_calls += 1
    return CATEGORIES + ["v%d" % category_calls]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def text_result(req_id, payload):
    text = payload if isinstance(payload, str) else json.dumps(payload)
    send({"jsonrpc": "2.0", "id": req_id, "result": {"content": [{"type": "text", "text": text}], "isError": False}})


def classify(req_id, text):
    if MODE == "changing":
        if "notify" in text:
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        n = len(CATEGORIES) + 1
        text_result(req_id, {"class": 0, "confidence": 0.9, "model": "fake-model", "use_reasoning": False,
                             "probabilities": [0.9] + [0.1 / (n - 1)] * (n - 1)})
        return
    if MODE == "slow":
        time.sleep(DELAY)
    if MODE == "die":
        sys.stderr.write("fake server: dying mid-call\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "malformed":
        text_result(req_id, {"class": 7, "confidence": 0.9, "model": "m", "use_reasoning": False,
                             "probabilities": [0.5, 0.2, 0.1]})
        return
    if MODE == "notjson":
        text_result(req_id, "this is not json")
        return
    low = MODE == "lowconf"
    klass = 1 if low else 0
    confidence = 0.4 if low else 0.9
    probs = [0.3, 0.4, 0.3] if low else [0.9, 0.05, 0.05]
    text_result(req_id, {"class": klass, "confidence": confidence, "model": "fake-model",
                         "use_reasoning": False, "probabilities": probs})


def grouped_spans(text):
    import re
    spans = []
    for label, pattern in [("US_SSN", r"\b\d{3}-\d{2}-\d{4}\b"), ("EMAIL_ADDRESS", r"[\w.]+@[\w.]+\w")]:
        for m in re.finditer(pattern, text):
            spans.append({"entity_group": label, "score": 0.99, "word": m.group(0),
                          "start": m.start(), "end": m.end()})
    return spans


def detect_pii(req_id, text):
    if MODE == "slow":
        time.sleep(DELAY)
    if MODE == "grouped":
        text_result(req_id, {"spans": grouped_spans(text), "aggregation": "simple"})
        return
    spans = []
    at = text.find("Zoë")
    while at >= 0:
        spans.append({"entity_group": "PERSON", "score": 0.97, "word": "Zoë", "start": at,
                      "end": at + 3})
        at = text.find("Zoë", at + 1)
    if MODE == "badspans":
        spans.append({"entity_group": "PERSON", "score": 0.5, "word": "?", "start": 2,
                      "end": len(text) + 5})
    text_result(req_id, {"spans": spans, "aggregation": "simple"})


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, req_id = msg.get("method"), msg.get("id")
    if req_id is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": req_id, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-classifier", "version": "1.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": req_id, "result": {"tools": [
            {"name": "list_categories", "description": "List categories", "inputSchema": {"type": "object"}},
            {"name": "categorize_text", "description": "Puts text into a category", "inputSchema": {"type": "object"}},
            {"name": "detect_pii", "description": "Finds people", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "list_categories":
            text_result(req_id, {"categories": categories()})
        elif name == "detect_pii":
            detect_pii(req_id, msg["params"].get("arguments", {}).get("text", ""))
        else:
            classify(req_id, msg["params"].get("arguments", {}).get("text", ""))
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": req_id, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": req_id, "error": {"code": -32601, "message": "Method not found"}})
