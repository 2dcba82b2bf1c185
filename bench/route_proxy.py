#!/usr/bin/env python3
"""What `mcpclass route` adds (issue 18): one nginx (1 worker) plays the OpenAI-compatible
upstream, answering a fixed chat completion, and a second nginx server block proxies to it
(`proxy_pass` with keep-alive upstream connections) as the baseline proxy. In the same run,
alternating over rounds (medians):
  - latency at 1 connection: upstream direct, through route (rules; rules with signals and a
    decision; the learned default when its model files are cached), through nginx; "added" =
    route's p50/p99 - direct p50/p99;
  - throughput at --connections: route (rules, and rules with signals) ÷ nginx proxy_pass.
route_signals (issue 32) is the rules classifier behind a `routing` section whose one decision
reads a keyword signal, a domain signal (the classifier's category) and a PII signal (builtin
recognizers, e-mail allowed): every request computes all three, which the harness checks once
at startup (POST /v1/route/explain, then one forwarded request's signal counts in /metrics).

--tracing (issue 34, docs/tracing.md) adds route_rules with `telemetry.otlp` pointed at a
collector that is down: route_otlp_refused (its port refuses connections) and route_otlp_silent
(it accepts and never answers, so every export waits out its timeout and the queue overflows);
their throughput ÷ route_rules' (no exporter) and their exported/failed/dropped span counts.

usage: bench/route_proxy.py --cli build/mcpclass [--learned-config models/mmlu14.yaml]
                            [--seconds 3] [--rounds 3] [--connections 50] [--json OUT]
                            [--tracing]
       --smoke: 1 round of 1 s (checks the harness, not the figures)."""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import nginx, procs, wrk  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A realistic prompt: a few sentences, a math question (the domain signal), coursework words (the
# keyword signal) and an e-mail address, which the PII signal allows (the request is forwarded).
TEXT = ("I'm preparing for a calculus exam next week and got stuck on one problem from the "
        "practice set. What is the derivative of x squared times the sine of x, and how does the "
        "product rule apply here? Please show each step so I can follow the reasoning. My tutor "
        "asked me to forward the worked solution to maria.lopez@example.com afterwards.")
ANSWER = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "2x sin x + x^2 cos x"}}],
    "usage": {"prompt_tokens": 14, "completion_tokens": 9, "total_tokens": 23}},
    separators=(",", ":"))

NGINX_HTTP = """  upstream model {{ server 127.0.0.1:{upstream}; keepalive 64; }}
  server {{
    listen 127.0.0.1:{upstream};
    location / {{
      default_type application/json;
      return 200 '{answer}';
    }}
  }}
  server {{
    listen 127.0.0.1:{proxy};
    location / {{
      proxy_pass http://model;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}"""


# The embedded default's classifier and categories, with a decision that needs all three signals:
# an AND evaluates its conditions in order until one fails, and each of them holds for TEXT.
SIGNALS_ROUTING = """routing:
  reasoning: rules
  default_model: openai/gpt-oss-20b
  strategy: priority
  signals:
    keywords:
      - {name: coursework, operator: OR, keywords: [homework, exam, assignment, problem set]}
    domains:
      - {name: mathematics, mmlu_categories: [math]}
    pii:
      - {name: personal_data, pii_types_allowed: [EMAIL_ADDRESS], threshold: 0.5, source: builtin}
  decisions:
    - name: math_coursework
      priority: 100
      rules:
        operator: AND
        conditions:
          - {type: keyword, name: coursework}
          - {type: domain, name: mathematics}
          - {operator: NOT, conditions: [{type: pii, name: personal_data}]}
      modelRefs: [{model: openai/gpt-oss-20b, use_reasoning: true}]
"""
SIGNALS = {("keyword", "coursework"), ("domain", "mathematics"), ("pii", "personal_data")}
SIGNALS_DECISION = "math_coursework"


def start_nginx(tmp):
    d = os.path.join(tmp, "nginx")
    os.makedirs(d, exist_ok=True)
    upstream, proxy = procs.free_port(), procs.free_port()
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(nginx.conf(d, NGINX_HTTP.format(upstream=upstream, proxy=proxy, answer=ANSWER)))
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    server = procs.Server([binary, "-p", d, "-c", conf], ready=None, port=proxy)

    def answers():
        try:
            return procs.http_request(proxy, "POST", "/v1/chat/completions", "{}")[0] == 200
        except OSError:
            return False
    if not procs.wait_until(answers, 10):
        raise RuntimeError("nginx did not start: " + server.stderr())
    return server, upstream, proxy


def start_route(cli, tmp, name, base_config, upstream, extra=""):
    path = os.path.join(tmp, f"{name}.yaml")
    with open(path, "w") as f:
        if base_config:
            with open(base_config) as base:
                f.write(base.read() + "\n")
        f.write(extra)
        f.write("route:\n  models:\n    openai/gpt-oss-20b: {base_url: "
                f'"http://127.0.0.1:{upstream}/v1", reasoning: openai}}\n')
    return procs.Server([cli, "route", "--config", path, "--http", "127.0.0.1:0"],
                        ready=r"routing \d+ models on http://127\.0\.0\.1:(\d+)/")


def signal_counts(port):
    """mcpclass_route_signal_seconds_count by (type, signal) from GET /metrics."""
    _, _, text = procs.http_request(port, "GET", "/metrics")
    return {(m.group(1), m.group(2)): int(m.group(3)) for m in re.finditer(
        r'^mcpclass_route_signal_seconds_count\{type="([^"]+)",signal="([^"]+)"\} (\d+)',
        text, re.M)}


def decision_costs(port):
    """The mean in-process time of a routed request's evaluation (mcpclass_route_decision_seconds:
    text, signals, decision, rewrite) and of each computed signal, µs, from GET /metrics: the part
    of "added" that does not depend on the machine's scheduling."""
    _, _, text = procs.http_request(port, "GET", "/metrics")

    def mean(prefix, labels=""):
        total = re.search(rf"^{prefix}_sum{re.escape(labels)} (\S+)", text, re.M)
        count = re.search(rf"^{prefix}_count{re.escape(labels)} (\d+)", text, re.M)
        n = int(count.group(1)) if count else 0
        return round(float(total.group(1)) / n * 1e6, 2) if n else None

    out = {"decision_us": mean("mcpclass_route_decision_seconds")}
    labelled = r'^mcpclass_route_signal_seconds_count(\{type="([^"]+)",signal="([^"]+)"\})'
    for m in re.finditer(labelled, text, re.M):
        out[f"{m.group(2)}:{m.group(3)}_us"] = mean("mcpclass_route_signal_seconds", m.group(1))
    return out


def check_signals(port, body):
    """Fails unless route_signals computes the keyword, domain and PII signals for `body`, both
    in the explanation and on the forwarding path, and forwards the request by its decision."""
    status, _, text = procs.http_request(port, "POST", "/v1/route/explain", body)
    explained = json.loads(text) if status == 200 else {}
    computed = {(x["type"], x["name"]) for x in explained.get("signals", [])}
    if (explained.get("action"), explained.get("decision")) != ("forward", SIGNALS_DECISION) or \
            not SIGNALS <= computed:
        raise SystemExit(f"route_signals: the explanation lacks {sorted(SIGNALS - computed)} or "
                         f"does not forward by {SIGNALS_DECISION}: {status} {text[:600]}")
    before = signal_counts(port)
    status, headers, text = procs.http_request(port, "POST", "/v1/chat/completions", body)
    after = signal_counts(port)
    missing = sorted(k for k in SIGNALS if after.get(k, 0) != before.get(k, 0) + 1)
    if status != 200 or headers.get("x-vsr-selected-decision") != SIGNALS_DECISION or missing:
        raise SystemExit(f"route_signals: a forwarded request did not compute {missing} or was "
                         f"not routed by {SIGNALS_DECISION}: {status} {headers} {text[:300]}")
    return sorted(f"{t}:{n}" for t, n in computed)


def otlp_counts(port):
    """mcpclass_otlp_spans_*_total from GET /metrics."""
    _, _, text = procs.http_request(port, "GET", "/metrics")
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^mcpclass_otlp_spans_(\w+)_total (\d+)", text, re.M)}


def dead_collectors():
    """A port that refuses connections (bound, never listening) and one that accepts and never
    answers; the sockets stay open for the run."""
    refused, silent = socket.socket(), socket.socket()
    refused.bind(("127.0.0.1", 0))
    silent.bind(("127.0.0.1", 0))
    silent.listen(1024)
    return refused, silent


def telemetry_yaml(port):
    return (f'telemetry:\n  otlp: {{endpoint: "http://127.0.0.1:{port}/v1/traces", '
            "timeout: 1}\n")


def table(result, connections):
    """The figures as text: latency at 1 connection, added over direct, throughput vs nginx."""
    med, added, ratios = result["median"], result["added_ms"], result["ratios"]
    c = connections

    def cell(value, fmt):
        return "-" if value is None else format(value, fmt)

    rows = [("target", "p50 ms", "p99 ms", "+p50 ms", "+p99 ms", "rps c1", f"rps c{c}",
             f"÷ nginx c{c}")]
    for name in ("direct", "nginx_proxy", "route_rules", "route_signals", "route_learned",
                 "route_otlp_refused", "route_otlp_silent"):
        m1 = med.get(f"{name}@1")
        if m1 is None:
            continue
        a = added.get(name, {})
        mc = med.get(f"{name}@{c}", {})
        ratio = 1.0 if name == "nginx_proxy" else ratios.get(f"{name}_vs_nginx_rps_c{c}")
        rows.append((name, cell(m1["p50_ms"], ".3f"), cell(m1["p99_ms"], ".3f"),
                     cell(a.get("p50"), ".3f"), cell(a.get("p99"), ".3f"), cell(m1["rps"], ".0f"),
                     cell(mc.get("rps"), ".0f"), cell(ratio, ".3f")))
    return "\n".join(f"{r[0]:<19}" + "".join(f"{x:>13}" for x in r[1:]) for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--learned-config", default=os.path.join(ROOT, "models", "mmlu14.yaml"))
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--tracing", action="store_true",
                    help="also route_rules exporting spans to a dead collector")
    ap.add_argument("--json")
    ap.add_argument("--note", help="how the machine was during the run (kept in the JSON)")
    args = ap.parse_args()
    if args.smoke:
        args.seconds, args.rounds = 1, 1
    seconds = max(1, int(round(args.seconds)))
    body = json.dumps({"model": "auto", "messages": [{"role": "user", "content": TEXT}]})
    script = wrk.lua_script({}, body, expect='"chat.completion"')

    tmp = tempfile.mkdtemp(prefix="route-bench.")
    servers = []
    try:
        nginx, upstream, proxy = start_nginx(tmp)
        servers.append(nginx)
        rules = start_route(args.cli, tmp, "rules", None, upstream)
        servers.append(rules)
        with_signals = start_route(args.cli, tmp, "signals", None, upstream, SIGNALS_ROUTING)
        servers.append(with_signals)
        signals_checked = check_signals(with_signals.port, body)
        targets = {"direct": upstream, "nginx_proxy": proxy, "route_rules": rules.port,
                   "route_signals": with_signals.port}
        loaded = ("nginx_proxy", "route_rules", "route_signals")
        tracing = ()
        if args.tracing:
            collectors = dead_collectors()
            for name, sock in zip(("route_otlp_refused", "route_otlp_silent"), collectors):
                traced = start_route(args.cli, tmp, name, None, upstream,
                                     telemetry_yaml(sock.getsockname()[1]))
                servers.append(traced)
                targets[name] = traced.port
            tracing = ("route_otlp_refused", "route_otlp_silent")
            loaded += tracing
        learned_note = None
        try:
            learned = start_route(args.cli, tmp, "learned", args.learned_config, upstream)
            servers.append(learned)
            targets["route_learned"] = learned.port
        except (RuntimeError, OSError) as e:
            learned_note = f"skipped: {str(e).strip().splitlines()[-1]}"
        runs = {f"{name}@1": [] for name in targets}
        runs.update({f"{name}@{args.connections}": [] for name in loaded})
        for port in targets.values():  # warm-up: connections, pools, first model call
            wrk.run(f"http://127.0.0.1:{port}/v1/chat/completions", script, 1, 1)
        for r in range(args.rounds):
            for name, port in targets.items():
                runs[f"{name}@1"].append(
                    wrk.run(f"http://127.0.0.1:{port}/v1/chat/completions", script, 1, seconds))
            for name in loaded:
                runs[f"{name}@{args.connections}"].append(
                    wrk.run(f"http://127.0.0.1:{targets[name]}/v1/chat/completions", script,
                            args.connections, seconds))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        costs = {name: decision_costs(targets[name]) for name in ("route_rules", "route_signals")}
        spans = {name: otlp_counts(targets[name]) for name in tracing}
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    def med(key, field):
        return statistics.median(x[field] for x in runs[key])

    for key, xs in runs.items():
        bad = sum(x["bad_answers"] + x["non_2xx"] + x["socket_errors"] for x in xs)
        if bad:
            raise SystemExit(f"{key}: {bad} failed requests, e.g. {xs[0]['bad_sample']}")
    result = {"seconds": seconds, "rounds": args.rounds, "connections": args.connections,
              "text": TEXT, "signals_computed": signals_checked, "runs": runs, "median": {},
              "added_ms": {}, "ratios": {}, "in_process_us": costs}
    if args.note:
        result["note"] = args.note
    for key in runs:
        result["median"][key] = {f: round(med(key, f), 4) for f in ("rps", "p50_ms", "p99_ms")}
    for name in [t for t in targets if t != "direct"]:
        result["added_ms"][name] = {
            "p50": round(med(f"{name}@1", "p50_ms") - med("direct@1", "p50_ms"), 4),
            "p99": round(med(f"{name}@1", "p99_ms") - med("direct@1", "p99_ms"), 4)}
    c = args.connections
    for name in ("route_rules", "route_signals"):
        result["ratios"][f"{name}_vs_nginx_rps_c{c}"] = round(
            med(f"{name}@{c}", "rps") / med(f"nginx_proxy@{c}", "rps"), 3)
        result["ratios"][f"{name}_vs_nginx_rps_c1"] = round(
            med(f"{name}@1", "rps") / med("nginx_proxy@1", "rps"), 3)
    for name in tracing:
        result["ratios"][f"{name}_vs_route_rules_rps_c{c}"] = round(
            med(f"{name}@{c}", "rps") / med(f"route_rules@{c}", "rps"), 3)
        result["ratios"][f"{name}_vs_route_rules_rps_c1"] = round(
            med(f"{name}@1", "rps") / med("route_rules@1", "rps"), 3)
    if tracing:
        result["otlp_spans"] = spans
    # Issue 32's goal: keyword + domain + PII signals add at most 0.2 ms at p50 over direct.
    result["goal"] = {"route_signals_added_p50_ms_max": 0.2,
                      "met": result["added_ms"]["route_signals"]["p50"] <= 0.2}
    if learned_note:
        result["route_learned"] = learned_note
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(table(result, c))
    for name, cost in costs.items():
        print(f"{name} in process, mean µs: " + ", ".join(f"{k} {v}" for k, v in cost.items()))
    for name in tracing:
        print(f"{name}: rps ÷ route_rules c1 {result['ratios'][f'{name}_vs_route_rules_rps_c1']},"
              f" c{c} {result['ratios'][f'{name}_vs_route_rules_rps_c{c}']}; spans {spans[name]}")
    print(f"route_signals added p50 {result['added_ms']['route_signals']['p50']:.3f} ms: goal "
          f"<= 0.2 ms {'met' if result['goal']['met'] else 'NOT met'}")


if __name__ == "__main__":
    main()
