#!/usr/bin/env python3
"""The benchmark suite behind bench/run.sh (issue 8): in-process, HTTP (wrk) against nginx, a bare
Boost.Beast server and the official TypeScript SDK, stdio round trips against the SDK and an echo
floor, footprint, scaling. Writes report.json and report.md.
Every figure that depends on the machine is also given as a ratio against a baseline measured in
the same run: this 2-core machine is shared and noisy."""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import nginx as nginx_conf  # noqa: E402
from lib import procs, stdio_rtt, wrk  # noqa: E402
import report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = "What is the integral of x^2 from 0 to 3?"
# Texts on which the TypeScript peer must classify exactly like mcpclass before anything is timed.
AGREEMENT_TEXTS = [
    TEXT,
    "Can you help me solve this integral and explain the derivative of x^2 * sin(x) step by step?",
    "Explain photosynthesis and the role of chlorophyll in plant cells",
    "How do I reverse a linked list in Python? Show the algorithm and its complexity",
    "Who was the first emperor of Rome and what caused the fall of the empire?",
    "What are some good tips for sleeping better and reducing stress?",
    "hello",
    "When did the French Revolution begin, and why?",
    "Compare TCP and UDP for a web server behind a firewall; analyze latency vs bandwidth",
    "Solve 3x + 5 = 20",
    "Describe the water cycle: evaporation, condensation and precipitation in 1200 AD",
    "ünïcödé text about quantum gravity and black holes",
]


def log(*args):
    print("bench:", *args, file=sys.stderr, flush=True)


def ratio(a, b):
    return a / b if b else None


class Context:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="mcpbench.")
        self.config_json = os.path.join(self.tmp, "default.json")
        with open(self.config_json, "w") as f:
            f.write(subprocess.run([args.cli, "config"], check=True, capture_output=True,
                                   text=True).stdout)

    def peer(self, *extra):
        return ["node", os.path.join(ROOT, "bench/peers/server.mjs"), "--config", self.config_json,
                *extra]

    def mcpclass_http(self, config=None):
        argv = [self.args.cli, "serve", "--http", "127.0.0.1:0"]
        if config:
            argv += ["--config", config]
        return procs.Server(argv, ready=r"on http://127\.0\.0\.1:(\d+)/mcp")

    def write(self, name, content):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path


# --- in-process ----------------------------------------------------------------------------------

def section_inprocess(ctx):
    out = subprocess.run([ctx.args.bench_binary, "--iterations", str(ctx.args.iterations)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def learned_config(ctx):
    """models/mmlu14.yaml once models/setup.sh has prepared it (cached), else None and why."""
    if not ctx.args.torch_cli or not os.path.exists(ctx.args.torch_cli):
        return None, "no libtorch build (MCPCLASS_BENCH_TORCH_BUILD_DIR, ./build)"
    if not hasattr(ctx, "learned"):
        setup = subprocess.run([os.path.join(ROOT, "models/setup.sh"), ctx.args.torch_cli],
                               capture_output=True, text=True, timeout=3600)
        ctx.learned = ((os.path.join(ROOT, "models/mmlu14.yaml"), None) if setup.returncode == 0
                       else (None, "models/setup.sh failed: " + setup.stderr[-300:]))
    return ctx.learned


def section_learned(ctx):
    """Embedding classify (USE-lite + the MMLU-Pro head) per call: stdio round trips of the
    learned build, next to the same build's rule classifier (the pipe costs the same)."""
    config, why = learned_config(ctx)
    if config is None:
        return {"skipped": why}
    cli = ctx.args.torch_cli
    learned = stdio_rtt.round_trips([cli, "serve", "--stdio", "-c", config], TEXT,
                                    ctx.args.stdio_seconds, burst=100)
    rules = stdio_rtt.round_trips([cli, "serve", "--stdio"], TEXT, ctx.args.stdio_seconds, burst=100)
    log(f"learned: {learned['round_trips_per_s']:.0f} round trips/s, rules "
        f"{rules['round_trips_per_s']:.0f}")
    return {"learned": learned, "rules": rules,
            "p50_vs_rules": ratio(learned["p50_us"], rules["p50_us"])}


# --- HTTP ----------------------------------------------------------------------------------------

def rpc_body(text):
    body = json.dumps(procs.tools_call(0, text), separators=(",", ":"))
    return body.replace('"id":0', '"id":@ID@', 1)


NGINX_SERVER = """  server {{
    listen 127.0.0.1:{port};
    location / {{
      default_type application/json;
      return 200 '{body}';
    }}
  }}"""


def start_nginx(ctx, body):
    d = os.path.join(ctx.tmp, "nginx")
    os.makedirs(d, exist_ok=True)
    port = procs.free_port()
    escaped = body.replace("\\", "\\\\").replace("'", "\\'")
    conf = ctx.write("nginx/nginx.conf",
                     nginx_conf.conf(d, NGINX_SERVER.format(port=port, body=escaped)))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    server = procs.Server([nginx, "-p", d, "-c", conf], ready=None, port=port)
    if not procs.wait_until(lambda: _answers(port), 10):
        raise RuntimeError("nginx did not start: " + server.stderr())
    status, _, got = procs.http_request(port, "POST", "/mcp", rpc_body(TEXT).replace("@ID@", "1"))
    if status != 200 or got != body:
        raise RuntimeError(f"nginx answers {status} {got!r}, expected {body!r}")
    return server


def start_bare_beast(ctx, body):
    """bench/bare_beast.cpp: mcpclass's acceptor, threads and connection handling in Boost.Beast,
    answering the same fixed bytes as nginx; between the two it attributes each gap."""
    path = ctx.write("bare_beast_body.json", body)
    server = procs.Server([ctx.args.bare_beast, "--body-file", path],
                          ready=r"listening on http://127\.0\.0\.1:(\d+)")
    status, _, got = procs.http_request(server.port, "POST", "/mcp",
                                        rpc_body(TEXT).replace("@ID@", "1"))
    if status != 200 or got != body:
        server.stop()
        raise RuntimeError(f"bare Beast answers {status} {got!r}, expected {body!r}")
    return server


def _answers(port):
    try:
        procs.http_request(port, "GET", "/", timeout=1)
        return True
    except OSError:
        return False


def check_agreement(mc_port, mc_sid, ts_port, ts_sid):
    """The TypeScript peer must answer like mcpclass (same class, reasoning flag and model,
    confidence within 1e-9) on every sample text, or its timing would compare different work."""
    for i, text in enumerate(AGREEMENT_TEXTS):
        a, _, _ = procs.classify_over_http(mc_port, mc_sid, text, with_probabilities=True, rid=100 + i)
        b, _, _ = procs.classify_over_http(ts_port, ts_sid, text, with_probabilities=True, rid=100 + i)
        same = (a["class"] == b["class"] and a["use_reasoning"] == b["use_reasoning"]
                and a["model"] == b["model"] and abs(a["confidence"] - b["confidence"]) < 1e-9)
        if not same:
            raise RuntimeError(f"the TypeScript peer disagrees with mcpclass on {text!r}: {a} vs {b}")
    return len(AGREEMENT_TEXTS)


def section_http(ctx):
    a = ctx.args
    mc = ctx.mcpclass_http()
    ts = procs.Server(ctx.peer("--http", "127.0.0.1:0"), ready=r"listening on http://127\.0\.0\.1:(\d+)")
    nginx = beast = None
    try:
        mc_sid, mc_sse_sid = procs.open_session(mc.port), procs.open_session(mc.port)
        ts_sid = procs.open_session(ts.port, "/mcp")
        ts_sse_sid = procs.open_session(ts.port, "/mcp-sse")
        agreed = check_agreement(mc.port, mc_sid, ts.port, ts_sid)
        _, json_body, _ = procs.classify_over_http(mc.port, mc_sid, TEXT, rid=1)
        ver = {"MCP-Protocol-Version": procs.PROTOCOL_VERSION}
        # What each target answers, checked once before timing.
        probes = {
            "mcpclass SSE": (mc.port, "/mcp", {"Accept": "text/event-stream", "Mcp-Session-Id": mc_sse_sid}),
            "TS SDK SSE": (ts.port, "/mcp-sse", {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": ts_sse_sid}),
            "TS SDK JSON": (ts.port, "/mcp", {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": ts_sid}),
        }
        content_types = {}
        for name, (port, path, h) in probes.items():
            status, headers, body = procs.http_request(port, "POST", path,
                                                       rpc_body(TEXT).replace("@ID@", "2"), {**h, **ver})
            content_types[name] = headers.get("content-type", "")
            if status != 200 or '"class"' not in body:
                raise RuntimeError(f"{name}: {status} {body[:300]}")
        if not content_types["mcpclass SSE"].startswith("text/event-stream"):
            raise RuntimeError("mcpclass did not answer Accept: text/event-stream with SSE")
        if not content_types["TS SDK SSE"].startswith("text/event-stream"):
            raise RuntimeError("the TS SDK peer did not answer /mcp-sse with SSE")
        nginx = start_nginx(ctx, json_body)
        beast = start_bare_beast(ctx, json_body)

        body = rpc_body(TEXT)
        rest = json.dumps({"name": "classify_text", "arguments": {"text": TEXT}}, separators=(",", ":"))
        targets = [
            # key, label, server, port, path, headers, body, id marker, expected text
            ("nginx", "nginx, 1 worker, fixed JSON body", nginx, nginx.port, "/mcp", {}, body, "@ID@", '"result"'),
            ("bare_beast", "bare Boost.Beast, 2 threads, fixed JSON body", beast, beast.port, "/mcp", {},
             body, "@ID@", '"result"'),
            ("mcpclass_json", "mcpclass POST /mcp → JSON", mc, mc.port, "/mcp",
             {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": mc_sid, **ver}, body, "@ID@", '"result"'),
            ("ts_json", "TS SDK POST /mcp → JSON", ts, ts.port, "/mcp",
             {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": ts_sid, **ver}, body, "@ID@", '"result"'),
            ("mcpclass_sse", "mcpclass POST /mcp → SSE", mc, mc.port, "/mcp",
             {"Accept": "text/event-stream", "Mcp-Session-Id": mc_sse_sid, **ver}, body, "@ID@", '"result"'),
            ("ts_sse", "TS SDK POST /mcp → SSE", ts, ts.port, "/mcp-sse",
             {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": ts_sse_sid, **ver}, body, "@ID@", '"result"'),
            ("mcpclass_router", "mcpclass POST /mcp/tools/call", mc, mc.port, "/mcp/tools/call",
             {}, rest, None, '"class"'),
        ]
        idle = {"mcpclass": mc.rss(), "ts_sdk": ts.rss(), "nginx": nginx.rss(),
                "bare_beast": beast.rss()}
        peak = dict(idle)
        owner = {id(mc): "mcpclass", id(ts): "ts_sdk", id(nginx): "nginx", id(beast): "bare_beast"}
        # Rounds over every target and connection count, so a burst of load from elsewhere on
        # this shared machine hits one round of each rather than all runs of one target; each
        # figure is the run with the median req/s of its rounds.
        all_runs = {}
        for round_ in range(a.rounds):
            for c in a.conns:
                for key, label, server, port, path, headers, b, marker, expect in targets:
                    script = wrk.lua_script(headers, b, marker, expect)
                    sampler = procs.RssSampler(server.pid)
                    r = wrk.run(f"http://127.0.0.1:{port}{path}", script, c, a.seconds)
                    sampler.stop()
                    who = owner[id(server)]
                    peak[who] = max(peak[who], sampler.peak)
                    r.update(key=key, label=label, round=round_ + 1)
                    all_runs.setdefault((key, c), []).append(r)
                    log(f"http round {round_ + 1} {label} c={c}: {r['rps']:.0f} req/s p50 "
                        f"{r['p50_ms']:.3f} ms p99 {r['p99_ms']:.3f} ms errors "
                        f"{r['non_2xx'] + r['socket_errors'] + r['bad_answers']}")
                    time.sleep(0.2)
        runs, by = [], {}
        for c in a.conns:
            for key, *_ in targets:
                rounds = sorted(all_runs[(key, c)], key=lambda r: r["rps"])
                median = dict(rounds[len(rounds) // 2])
                median["rps_of_rounds"] = [round(r["rps"]) for r in all_runs[(key, c)]]
                median["errors_all_rounds"] = sum(r["non_2xx"] + r["socket_errors"] + r["bad_answers"]
                                                  for r in rounds)
                runs.append(median)
                by[(key, c)] = median
        if a.fail_on_errors:
            failed = [f"{r['label']} c={r['connections']}: {r['errors_all_rounds']} failed, e.g. "
                      f"{r['bad_sample']!r}" for r in runs if r["errors_all_rounds"]]
            if failed:
                raise RuntimeError("requests failed: " + "; ".join(failed))
        # Each ratio is taken within a round (the two runs minutes apart at most, usually
        # adjacent), then the median over the rounds: drifts in the machine's load cancel out.
        def per_round(num, den, c, field="rps"):
            values = sorted(ratio(x[field], y[field]) for x, y in
                            zip(all_runs[(num, c)], all_runs[(den, c)]) if y[field])
            return {"median": values[len(values) // 2], "min": values[0], "max": values[-1]}

        ratios = []
        for c in a.conns:
            ratios.append({
                "connections": c,
                "mcpclass_json_vs_nginx": per_round("mcpclass_json", "nginx", c),
                "mcpclass_router_vs_nginx": per_round("mcpclass_router", "nginx", c),
                # mcpclass ÷ nginx split in two: what MCP costs on top of Beast, and what Beast
                # and Asio cost against nginx.
                "mcpclass_json_vs_bare_beast": per_round("mcpclass_json", "bare_beast", c),
                "mcpclass_router_vs_bare_beast": per_round("mcpclass_router", "bare_beast", c),
                "bare_beast_vs_nginx": per_round("bare_beast", "nginx", c),
                "mcpclass_json_vs_ts_sdk_json": per_round("mcpclass_json", "ts_json", c),
                "mcpclass_sse_vs_ts_sdk_sse": per_round("mcpclass_sse", "ts_sse", c),
                "mcpclass_json_p99_vs_ts_sdk_json_p99": per_round("mcpclass_json", "ts_json", c, "p99_ms"),
            })
        return {"text": TEXT, "response_bytes": len(json_body), "seconds_per_run": a.seconds,
                "rounds": a.rounds,
                "agreement_texts": agreed, "content_types": content_types, "runs": runs,
                "ratios": ratios, "rss_kib_idle": idle, "rss_kib_peak_under_load": peak,
                "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
                "wrk": subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split(" [")[0].strip(),
                "nginx_version": subprocess.run([nginx.argv[0], "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]}
    finally:
        for s in (mc, ts, nginx, beast):
            if s:
                s.stop()


# --- stdio ---------------------------------------------------------------------------------------

def stdio_answer_template(ctx):
    """mcpclass's answer line to the benchmark's tools/call, its id replaced by @ID@: what the
    echo floor (bench/stdio_echo.c) writes back."""
    s = stdio_rtt.StdioServer([ctx.args.cli, "serve", "--stdio"])
    try:
        s.send(procs.tools_call(1, TEXT))
        answer = s.proc.stdout.readline().decode()
    finally:
        s.close()
    if '"id":1,' not in answer or '"result"' not in answer:
        raise RuntimeError(f"unexpected stdio answer: {answer!r}")
    return answer.replace('"id":1,', '"id":@ID@,', 1)


def section_stdio(ctx):
    seconds = ctx.args.stdio_seconds
    template = stdio_answer_template(ctx)
    echo_argv = [ctx.args.stdio_echo, ctx.write("stdio_echo_answer.txt", template)]
    mc = stdio_rtt.round_trips([ctx.args.cli, "serve", "--stdio"], TEXT, seconds)
    ts = stdio_rtt.round_trips(ctx.peer("--stdio"), TEXT, seconds)
    # The floor: the same driver, pipe and answer bytes with a server that does no work.
    echo = stdio_rtt.round_trips(echo_argv, TEXT, seconds)
    log(f"stdio round trips/s: mcpclass {mc['round_trips_per_s']:.0f}, TS SDK "
        f"{ts['round_trips_per_s']:.0f}, echo floor {echo['round_trips_per_s']:.0f}")
    return {"mcpclass": mc, "ts_sdk": ts, "echo_floor": echo,
            "answer_bytes": len(template.replace("@ID@", "1").rstrip("\n")),
            "round_trips_vs_ts_sdk": ratio(mc["round_trips_per_s"], ts["round_trips_per_s"]),
            "pipelined_vs_ts_sdk": ratio(mc["pipelined_per_s"], ts["pipelined_per_s"]),
            "round_trips_vs_echo_floor": ratio(mc["round_trips_per_s"], echo["round_trips_per_s"]),
            "pipelined_vs_echo_floor": ratio(mc["pipelined_per_s"], echo["pipelined_per_s"]),
            # mcpclass's own time per round trip: its p50 less the floor's.
            "p50_us_over_echo_floor": mc["p50_us"] - echo["p50_us"]}


# --- footprint -----------------------------------------------------------------------------------

def stripped_size(path):
    out = os.path.join(tempfile.mkdtemp(), "stripped")
    subprocess.run(["strip", "-o", out, path], check=True)
    size = os.path.getsize(out)
    os.unlink(out)
    return size


def shared_libraries(path):
    """Resolved shared libraries (ldd) and their total size."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        if "=>" in line:
            target = line.split("=>")[1].split("(")[0].strip()
            if target and os.path.exists(target):
                libs.append(os.path.realpath(target))
    return {"count": len(libs), "bytes": sum(os.path.getsize(l) for l in set(libs)),
            "torch_bytes": sum(os.path.getsize(l) for l in set(libs)
                               if any(k in os.path.basename(l) for k in ("torch", "c10", "sentencepiece")))}


def binary(path):
    return {"path": os.path.relpath(path, ROOT), "bytes": os.path.getsize(path),
            "stripped_bytes": stripped_size(path), "shared_libraries": shared_libraries(path)}


def process_footprint(name, argv, runs, requests=10000):
    first = stdio_rtt.first_answer_ms(argv, TEXT, runs)
    idle, loaded = stdio_rtt.idle_and_loaded_rss(argv, TEXT, requests)
    log(f"footprint {name}: first answer {first:.1f} ms, RSS idle {idle} KiB, loaded {loaded} KiB")
    return {"name": name, "first_answer_ms_median": first, "rss_kib_idle": idle,
            "rss_kib_loaded": loaded, "requests": requests}


def section_footprint(ctx):
    a = ctx.args
    runs = a.spawn_runs
    cat_ms = stdio_rtt.first_answer_ms(["cat"], TEXT, runs)
    rows = [process_footprint("mcpclass, rules (no libtorch)", [a.cli, "serve", "--stdio"], runs)]
    binaries = {"mcpclass (no libtorch, Release)": binary(a.cli),
                "libmcpclass_core.a (no libtorch, Release)": {"path": os.path.relpath(a.library, ROOT),
                                                          "bytes": os.path.getsize(a.library)}}
    torch_note = None
    if a.torch_cli and os.path.exists(a.torch_cli):
        binaries["mcpclass (learned build, RelWithDebInfo)"] = binary(a.torch_cli)
        rows.append(process_footprint("mcpclass, learned build, rules",
                                      [a.torch_cli, "serve", "--stdio"], max(3, runs // 3)))
        learned, why = learned_config(ctx)
        if learned:
            rows.append(process_footprint("mcpclass, learned default (native USE-lite + MMLU head)",
                                          [a.torch_cli, "serve", "--stdio", "-c", learned],
                                          max(3, runs // 5), requests=500))
        else:
            torch_note = why
    else:
        torch_note = "no libtorch build (MCPCLASS_BENCH_TORCH_BUILD_DIR, ./build)"
    rows.append(process_footprint("TS SDK peer (node)", ctx.peer("--stdio"), runs))
    for r in rows:
        r["first_answer_vs_cat"] = ratio(r["first_answer_ms_median"], cat_ms)
    return {"cat_first_answer_ms_median": cat_ms, "spawn_runs": runs, "processes": rows,
            "binaries": binaries, "note": torch_note}


# --- scaling -------------------------------------------------------------------------------------

def categories_config(n):
    """n categories (the last is the fallback 'general'), 10 keywords and 1 pattern each."""
    cats, rules = [], {}
    for i in range(n):
        name = "general" if i == n - 1 else f"topic{i}"
        cats.append({"name": name, "description": f"synthetic category {i}"})
        rules[name] = {"keywords": [f"word{i}x{j}" for j in range(8)] + [f"stem{i}q*", f"two{i} words"],
                       "patterns": [rf"\bcode{i}-\d+\b"]}
    return {"categories": cats, "classifier": {"kind": "rules", "fallback": "general", "rules": rules}}


SCALING_TEXT = ("Please compare word0x1 with word3x2 and stem2question, then look up code1-42 and "
                "explain two0 words in the context of algebra, history and biology. ")


def text_of(length):
    return (SCALING_TEXT * (length // len(SCALING_TEXT) + 1))[:length].rstrip() or "x"


def scaling_point(ctx, config_path, text, label):
    a = ctx.args
    text_path = ctx.write(f"text-{len(text)}.txt", text)
    inproc = json.loads(subprocess.run(
        [a.bench_binary, "--config", config_path, "--text-file", text_path, "--iterations",
         str(max(200, a.iterations // 10))], check=True, capture_output=True, text=True).stdout)
    server = ctx.mcpclass_http(config_path)
    try:
        sid = procs.open_session(server.port)
        headers = {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": sid,
                   "MCP-Protocol-Version": procs.PROTOCOL_VERSION}
        r = wrk.run(f"http://127.0.0.1:{server.port}/mcp",
                    wrk.lua_script(headers, rpc_body(text), "@ID@", '"result"'), a.scaling_conns,
                    a.scaling_seconds)
    finally:
        server.stop()
    cases = {c["name"]: c for c in inproc["cases"]}
    log(f"scaling {label}: {r['rps']:.0f} req/s, classify {cases['rule_classify']['median_ns']:.0f} ns")
    return {"label": label, "rps": r["rps"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"],
            "errors": r["non_2xx"] + r["socket_errors"] + r["bad_answers"],
            "classify_median_ns": cases["rule_classify"]["median_ns"],
            "tools_call_median_ns": cases["session_tools_call"]["median_ns"]}


def with_ratios(rows):
    for r in rows:
        r["rps_vs_first"] = ratio(r["rps"], rows[0]["rps"])
        r["classify_vs_first"] = ratio(r["classify_median_ns"], rows[0]["classify_median_ns"])
    return rows


def section_scaling(ctx):
    threads = []
    for n in (1, 2):
        cfg = ctx.write(f"threads-{n}.json", {"server": {"http": {"io_threads": n}}})
        row = scaling_point(ctx, cfg, TEXT, f"{n} I/O thread{'s' if n > 1 else ''}")
        row["io_threads"] = n
        threads.append(row)
    categories = []
    for n in (5, 50, 500):
        cfg = ctx.write(f"categories-{n}.json", categories_config(n))
        row = scaling_point(ctx, cfg, SCALING_TEXT.strip(), f"{n} categories ({n * 11} rules)")
        row.update(categories=n, rules=n * 11)
        categories.append(row)
    lengths = []
    for n in (10, 100, 1000, 10000):
        row = scaling_point(ctx, ctx.config_json, text_of(n), f"{n} characters")
        row["text_chars"] = n
        lengths.append(row)
    return {"connections": ctx.args.scaling_conns, "seconds_per_run": ctx.args.scaling_seconds,
            "io_threads": with_ratios(threads), "categories": with_ratios(categories),
            "text_length": with_ratios(lengths)}


SECTIONS = {"inprocess": section_inprocess, "learned": section_learned, "http": section_http,
            "stdio": section_stdio, "footprint": section_footprint, "scaling": section_scaling}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cli", required=True, help="mcpclass built without libtorch (Release)")
    p.add_argument("--bench-binary", required=True)
    p.add_argument("--library", required=True)
    p.add_argument("--bare-beast", default="", help="bench/bare_beast.cpp's binary (default: next "
                   "to --bench-binary)")
    p.add_argument("--stdio-echo", default="", help="bench/stdio_echo.c's binary (default: next "
                   "to --bench-binary)")
    p.add_argument("--torch-cli", default="", help="mcpclass built with libtorch (optional)")
    p.add_argument("--out", required=True, help="directory for report.json and report.md")
    p.add_argument("--seconds", type=int, default=2, help="per wrk run")
    p.add_argument("--conns", default="1,50,500")
    p.add_argument("--rounds", type=int, default=5, help="HTTP: rounds over all targets (median)")
    p.add_argument("--scaling-conns", type=int, default=50)
    p.add_argument("--scaling-seconds", type=int, default=3)
    p.add_argument("--stdio-seconds", type=float, default=3)
    p.add_argument("--spawn-runs", type=int, default=15)
    p.add_argument("--iterations", type=int, default=20000)
    p.add_argument("--only", default=",".join(SECTIONS))
    p.add_argument("--fail-on-errors", action="store_true",
                   help="fail when any HTTP request fails or gets a wrong answer (bench/smoke.sh)")
    a = p.parse_args()
    a.conns = [int(c) for c in a.conns.split(",")]
    bench_dir = os.path.dirname(os.path.abspath(a.bench_binary))
    a.bare_beast = a.bare_beast or os.path.join(bench_dir, "bare_beast")
    a.stdio_echo = a.stdio_echo or os.path.join(bench_dir, "stdio_echo")
    ctx = Context(a)
    started = time.monotonic()
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared with other work), "
                   f"{_cpu_model()}, Linux {platform.release()}",
        "command": "bench/run.sh",
        "git": subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                              capture_output=True, text=True).stdout.strip(),
    }
    try:
        for name in a.only.split(","):
            log(f"== {name}")
            t0 = time.monotonic()
            result[name] = SECTIONS[name](ctx)
            result[name + "_seconds"] = round(time.monotonic() - t0, 1)
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    result["total_seconds"] = round(time.monotonic() - started, 1)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    report.write(a.out)
    log(f"wrote {a.out}/report.md and report.json in {result['total_seconds']:.0f} s")


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
