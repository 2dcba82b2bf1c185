#!/usr/bin/env python3
"""What `mcpclass route` adds (issue 18): one nginx (1 worker) plays the OpenAI-compatible
upstream, answering a fixed chat completion, and a second nginx server block proxies to it
(`proxy_pass` with keep-alive upstream connections) as the baseline proxy. In the same run,
alternating over rounds (medians):
  - latency at 1 connection: upstream direct, through route (rules, and the learned default when
    its model files are cached), through nginx; "added" = route's p50/p99 - direct p50/p99;
  - throughput at --connections: route (rules) ÷ nginx proxy_pass.

usage: bench/route_proxy.py --cli build/mcpclass [--learned-config models/mmlu14.yaml]
                            [--seconds 3] [--rounds 3] [--connections 50] [--json OUT]
       --smoke: 1 round of 1 s (checks the harness, not the figures)."""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import nginx, procs, wrk  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = "What is the derivative of x squared times the sine of x?"
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


def start_route(cli, tmp, name, base_config, upstream):
    path = os.path.join(tmp, f"{name}.yaml")
    with open(path, "w") as f:
        if base_config:
            with open(base_config) as base:
                f.write(base.read() + "\n")
        f.write("route:\n  models:\n    openai/gpt-oss-20b: {base_url: "
                f'"http://127.0.0.1:{upstream}/v1", reasoning: openai}}\n')
    return procs.Server([cli, "route", "--config", path, "--http", "127.0.0.1:0"],
                        ready=r"routing \d+ models on http://127\.0\.0\.1:(\d+)/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--learned-config", default=os.path.join(ROOT, "models", "mmlu14.yaml"))
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--json")
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
        targets = {"direct": upstream, "nginx_proxy": proxy, "route_rules": rules.port}
        learned_note = None
        try:
            learned = start_route(args.cli, tmp, "learned", args.learned_config, upstream)
            servers.append(learned)
            targets["route_learned"] = learned.port
        except (RuntimeError, OSError) as e:
            learned_note = f"skipped: {str(e).strip().splitlines()[-1]}"
        runs = {f"{name}@1": [] for name in targets}
        runs.update({f"{name}@{args.connections}": [] for name in ("nginx_proxy", "route_rules")})
        for port in targets.values():  # warm-up: connections, pools, first model call
            wrk.run(f"http://127.0.0.1:{port}/v1/chat/completions", script, 1, 1)
        for r in range(args.rounds):
            for name, port in targets.items():
                runs[f"{name}@1"].append(
                    wrk.run(f"http://127.0.0.1:{port}/v1/chat/completions", script, 1, seconds))
            for name in ("nginx_proxy", "route_rules"):
                runs[f"{name}@{args.connections}"].append(
                    wrk.run(f"http://127.0.0.1:{targets[name]}/v1/chat/completions", script,
                            args.connections, seconds))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
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
              "text": TEXT, "runs": runs, "median": {}, "added_ms": {}, "ratios": {}}
    for key in runs:
        result["median"][key] = {f: round(med(key, f), 4) for f in ("rps", "p50_ms", "p99_ms")}
    for name in [t for t in targets if t != "direct"]:
        result["added_ms"][name] = {
            "p50": round(med(f"{name}@1", "p50_ms") - med("direct@1", "p50_ms"), 4),
            "p99": round(med(f"{name}@1", "p99_ms") - med("direct@1", "p99_ms"), 4)}
    c = args.connections
    result["ratios"][f"route_rules_vs_nginx_rps_c{c}"] = round(
        med(f"route_rules@{c}", "rps") / med(f"nginx_proxy@{c}", "rps"), 3)
    result["ratios"]["route_rules_vs_nginx_rps_c1"] = round(
        med("route_rules@1", "rps") / med("nginx_proxy@1", "rps"), 3)
    if learned_note:
        result["route_learned"] = learned_note
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(json.dumps({"median": result["median"], "added_ms": result["added_ms"],
                      "ratios": result["ratios"]}, indent=2))


if __name__ == "__main__":
    main()
