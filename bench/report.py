"""Markdown rendering of bench/results/report.json (written by bench/suite.py).
`bench/report.py [DIR]` re-renders DIR/report.md (default bench/results), carrying in the figures
of the long runs whose JSON sits beside it: soak.json (tests/load/soak.py --json),
fuzz-long.json (tests/fuzz/summary.py after tests/fuzz/run-long.sh), cache.json
(bench/cache_zipf.py --json), onnx.json (bench/onnx_peer.py, the `onnx` section of
bench/run.sh) and profile.json (bench/profile_http.py, the `profile` section)."""
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_zipf  # noqa: E402


def f(v, digits=0):
    if v is None:
        return "—"
    if isinstance(v, (int, float)):
        return f"{v:,.{digits}f}"
    return str(v)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


def render_inprocess(r):
    inproc = r["inprocess"]
    md = [f"## In-process (per call, {inproc['request_bytes']}-byte `tools/call` request)", "",
          "Baselines on the same request text in the same run: `memcpy` of it, and Boost.JSON "
          "parse + serialize of it.", ""]
    md += table(["case", "median ns", "p99 ns", "allocations/call", "÷ memcpy", "÷ JSON parse+serialize"],
                [[c["name"], f(c["median_ns"]), f(c["p99_ns"]), f(c["allocations_per_call"], 1),
                  f(c["median_vs_memcpy"], 1), f(c["median_vs_json_parse_serialize"], 2)]
                 for c in inproc["cases"]])
    md += ["`session_tools_call` = `Session::handle` of a `tools/call classify_text` text: JSON-RPC "
           "parse, dispatch, input-schema check, rule classify, result serialization (inline "
           "executor).", ""]
    learned = r.get("learned")
    if learned:
        md += ["Embedding classify (the learned default: native USE-lite encoder on oneDNN + the "
               "14-category MMLU-Pro head; learned build, 1 thread), per call as stdio round trips next to the same binary's rule "
               "classifier (the pipe costs both the same):", ""]
        if "skipped" in learned:
            md += [f"skipped: {learned['skipped']}", ""]
        else:
            md += table(["classifier", "round trips/s", "p50 µs", "p99 µs"],
                        [[name, f(x["round_trips_per_s"]), f(x["p50_us"]), f(x["p99_us"])]
                         for name, x in (("learned (embedding + head)", learned["learned"]),
                                         ("rules", learned["rules"]))])
            md += [f"learned ÷ rules, p50: {f(learned['p50_vs_rules'], 1)}×", ""]
    return md


def render_http(h):
    md = ["## HTTP: `classify_text` over keep-alive connections (wrk)", "",
          f"{h['wrk']}, nginx {h['nginx_version']}, node {h['node']}; {h['seconds_per_run']} s per run, "
          f"{h.get('rounds', 1)} rounds over all targets, each figure from the round with the median "
          "req/s (all rounds' req/s in report.json); client and servers share the 2 CPUs. One MCP session per target (protocol "
          "2025-06-18), every request a distinct JSON-RPC id, every answer checked by the wrk "
          f"script. Request text: \"{h['text']}\"; JSON answer {h['response_bytes']} bytes.", "",
          "- **nginx**: 1 worker, `return 200` of mcpclass's JSON answer (same bytes): the ceiling of "
          "this box for a keep-alive request/response.",
          "- **bare Beast**: `bench/bare_beast.cpp`, a Boost.Beast server set up like mcpclass's "
          "(2 I/O threads on one io_context, accept onto a strand, TCP_NODELAY, the same timeouts, "
          "parser limits and response headers) returning the same bytes: `mcpclass ÷ bare Beast` "
          "is what the MCP work costs, `bare Beast ÷ nginx` what Beast and Asio cost on this box.",
          "- **TS SDK**: `@modelcontextprotocol/sdk` 1.32.2 `StreamableHTTPServerTransport` on "
          "node:http (`bench/peers/server.mjs`) serving the same rule classifier (same keywords, "
          f"patterns, routing; agreement checked on {h['agreement_texts']} texts first); "
          "`enableJsonResponse` for JSON, the SDK default (SSE) for SSE.",
          "- **mcpclass**: `mcpclass serve --http` (Release, no libtorch, 2 I/O threads). SSE = "
          "`Accept: text/event-stream`.", ""]
    rows = []
    for r in h["runs"]:
        errs = r.get("errors_all_rounds", r["non_2xx"] + r["socket_errors"] + r["bad_answers"])
        rows.append([r["label"], r["connections"], f(r["rps"]), f(r["p50_ms"], 3), f(r["p99_ms"], 3),
                     errs])
    md += table(["target", "conns", "req/s", "p50 ms", "p99 ms", "errors (all rounds)"], rows)
    md += ["Ratios of req/s (> 1: mcpclass is faster), each taken within a round and given as the "
           "median over the rounds, with the range of the rounds:", ""]

    def rr(x):
        return f"**{f(x['median'], 2)}** ({f(x['min'], 2)}–{f(x['max'], 2)})"
    md += table(["conns", "mcpclass JSON ÷ nginx", "mcpclass /mcp/tools/call ÷ nginx",
                 "mcpclass JSON ÷ TS SDK JSON", "mcpclass SSE ÷ TS SDK SSE",
                 "p99 latency: mcpclass JSON ÷ TS SDK JSON"],
                [[x["connections"], rr(x["mcpclass_json_vs_nginx"]), rr(x["mcpclass_router_vs_nginx"]),
                  rr(x["mcpclass_json_vs_ts_sdk_json"]), rr(x["mcpclass_sse_vs_ts_sdk_sse"]),
                  rr(x["mcpclass_json_p99_vs_ts_sdk_json_p99"])] for x in h["ratios"]])
    if "bare_beast_vs_nginx" in h["ratios"][0]:
        md += ["The gap to nginx, attributed: mcpclass ÷ bare Beast (the MCP work: sessions, "
               "JSON-RPC, classify, metrics) times bare Beast ÷ nginx (Beast and Asio against "
               "nginx's event loop), each per round as above:", ""]
        md += table(["conns", "mcpclass JSON ÷ bare Beast", "mcpclass /mcp/tools/call ÷ bare Beast",
                     "bare Beast ÷ nginx", "mcpclass JSON ÷ nginx"],
                    [[x["connections"], rr(x["mcpclass_json_vs_bare_beast"]),
                      rr(x["mcpclass_router_vs_bare_beast"]), rr(x["bare_beast_vs_nginx"]),
                      rr(x["mcpclass_json_vs_nginx"])] for x in h["ratios"]])
    return md


def render_stdio(s):
    md = ["## stdio: round trips through a pipe", "",
          "A Python driver writes one `tools/call` and waits for its answer before the next "
          "(sequential round trips), then 2,000 in windows of 32 written at once (pipelined; the "
          "server takes 64 requests in flight per session).", ""]
    rows = []
    for key, name in (("mcpclass", "mcpclass serve --stdio"), ("ts_sdk", "TS SDK StdioServerTransport"),
                      ("echo_floor", "echo floor (bench/stdio_echo.c)")):
        x = s.get(key)
        if x is None:
            continue
        rows.append([name, f(x["round_trips_per_s"]), f(x["p50_us"]), f(x["p99_us"]),
                     f(x["pipelined_per_s"])])
    md += table(["server", "round trips/s", "p50 µs", "p99 µs", "pipelined answers/s"], rows)
    md += [f"mcpclass ÷ TS SDK: round trips {f(s['round_trips_vs_ts_sdk'], 2)}×, pipelined "
           f"{f(s['pipelined_vs_ts_sdk'], 2)}×.", ""]
    if "echo_floor" in s:
        md += [f"The echo floor answers each request line with mcpclass's answer line "
               f"({s['answer_bytes']} bytes, the request's id spliced in) and does nothing else: "
               "the pipe, the driver and the process switches. mcpclass ÷ echo floor: round trips "
               f"**{f(s['round_trips_vs_echo_floor'], 2)}×**, pipelined "
               f"{f(s['pipelined_vs_echo_floor'], 2)}×; mcpclass's own time per round trip "
               f"(p50 less the floor's p50): {f(s['p50_us_over_echo_floor'], 1)} µs.", ""]
    return md


def render_footprint(fp, http):
    md = ["## Footprint", "",
          f"Spawn → first `tools/call` answer over stdio (initialize, initialized and the call written "
          f"at once), median of {fp['spawn_runs']} runs (fewer for the learned build), against `cat` on the same input "
          f"({f(fp['cat_first_answer_ms_median'], 2)} ms: the cost of any process). RSS after "
          "initialize, and after N requests (pipelined in windows of 32).", ""]
    md += table(["process", "first answer ms", "÷ cat", "RSS idle KiB", "RSS after N requests KiB", "N"],
                [[p["name"], f(p["first_answer_ms_median"], 1), f(p["first_answer_vs_cat"], 1),
                  f(p["rss_kib_idle"]), f(p["rss_kib_loaded"]), f(p["requests"])]
                 for p in fp["processes"]])
    if fp.get("note"):
        md += [f"Note: {fp['note']}", ""]
    if http:
        idle, peak = http["rss_kib_idle"], http["rss_kib_peak_under_load"]
        md += ["HTTP servers during the HTTP runs above (VmRSS sampled every 0.2 s):", ""]
        md += table(["server", "RSS idle KiB", "RSS peak under load KiB"],
                    [[n, f(idle[k]), f(peak[k])] for k, n in
                     (("mcpclass", "mcpclass serve --http"), ("ts_sdk", "TS SDK peer (node)"),
                      ("nginx", "nginx (1 worker; master not counted)"),
                      ("bare_beast", "bare Beast (bench/bare_beast.cpp)")) if k in idle])
    rows = []
    for name, b in fp["binaries"].items():
        libs = b.get("shared_libraries")
        rows.append([name, f(b["bytes"]), f(b.get("stripped_bytes")),
                     f(libs["bytes"]) if libs else "—", f(libs["torch_bytes"]) if libs else "—"])
    md += table(["binary", "bytes", "stripped bytes", "shared libraries loaded (bytes)",
                 "of which libtorch/c10/sentencepiece"], rows)
    return md


def render_scaling(s):
    md = ["## Scaling", "",
          f"HTTP: wrk, {s['connections']} connections, POST /mcp (JSON), {s['seconds_per_run']} s per "
          "point; in-process: median per call (`mcpclass_bench --config --text-file`). Ratios "
          "against the first row of each table (same run).", ""]
    header = ["", "req/s", "÷ first", "p99 ms", "classify ns (in-process)", "÷ first",
              "tools/call ns (in-process)", "errors"]

    def rows(items):
        return [[x["label"], f(x["rps"]), f(x["rps_vs_first"], 2), f(x["p99_ms"], 3),
                 f(x["classify_median_ns"]), f(x["classify_vs_first"], 2),
                 f(x["tools_call_median_ns"]), x["errors"]] for x in items]
    md += ["By I/O threads (default config):", ""] + table(header, rows(s["io_threads"]))
    md += ["By number of categories (synthetic configs: 10 keywords and 1 pattern per category; "
           "same text):", ""] + table(header, rows(s["categories"]))
    md += ["By text length (default config):", ""] + table(header, rows(s["text_length"]))
    return md


def render_soak(s):
    fig = s["figures"]
    load, sessions = fig["load"], fig["sessions"]
    main = load["main"]
    total = sum(x["requests"] for x in main)
    errors = sum(x["non_2xx"] + x["socket_errors"] + x["bad_answers"] for x in main)
    p = fig["params"]
    md = ["## Load and soak (`tests/load/soak.py`, full size)", "",
          f"{s['date']}, `{p['command']}`: {p['streams']} open SSE streams while "
          f"{p['connections']} keep-alive connections (half JSON-RPC, half router dialect) ran "
          f"{p['seconds']} s after a warm-up; then {p['sessions']:,} sessions opened and abandoned, "
          "twice, and evicted by the idle timeout. Every check of the script passed.", ""]
    md += table(["figure", "value"], [
        ["requests (main run)", f(total)],
        ["non-2xx + socket errors + bad answers", errors],
        ["RSS after warm-up → end (KiB)", f"{f(load['rss_kib_warm'])} → {f(load['rss_kib_end'])} "
                                          f"({load['rss_growth'] * 100:+.2f}%)"],
    ] + [[f"round {i + 1}: heap in use base → with sessions → after eviction (KiB)",
          f"{f(sessions['heap_bytes_baseline'] / 1024)} → {f(x['heap_bytes_with_sessions'] / 1024)} → "
          f"{f(x['heap_bytes_after_eviction'] / 1024)}"] for i, x in enumerate(sessions["rounds"])]
      + [[f"round {i + 1}: RSS base → with sessions → after eviction (KiB)",
          f"{f(sessions['rss_kib_baseline'])} → {f(x['rss_kib_with_sessions'])} → "
          f"{f(x['rss_kib_after_eviction'])}"] for i, x in enumerate(sessions["rounds"])])
    return md


def render_fuzz(fz):
    md = ["## Fuzzing, long run (`tests/fuzz/run-long.sh`, nice 19)", "",
          f"{fz['date']}: executions per target (goal ≥ 10M each; the slow targets, the config loader "
          "and the engine at a few hundred executions per second at nice 19 on this shared machine, "
          "would need 7-10 hours each and were stopped where they stood), coverage, crashes.", ""]
    def state(x):
        return ("10M reached" if x["finished"] else
                "stopped early (SIGINT)" if x.get("interrupted") else "still running")
    md += table(["target", "executions", "exec/s", "coverage (edges)", "corpus", "run", "crashes"],
                [[t, f(x["executions"]), f(x["exec_per_s"]), f(x["coverage"]), f(x["corpus"]),
                  state(x), x["crashes"]] for t, x in fz["figures"].items()])
    return md


def render_onnx(o):
    """The learned default against the same model in ONNX Runtime behind the TS SDK (onnx.json)."""
    x = o["figures"]
    v = x["versions"]
    threads = x["threads"]
    md = ["## Learned default vs a TS SDK + ONNX Runtime peer on the same model", "",
          f"{o['date']}, `bench/onnx_peer.py` (the `onnx` section of bench/run.sh), "
          f"{threads} intra-op thread(s) on both sides. The peer: USE-lite and the trained head "
          f"exported to one ONNX graph (bench/peers/export_onnx.py, opset {x['export']['opset']}, "
          f"torch {x['export']['torch']}; the encoder within "
          f"{x['export']['encoder_vs_tfjs_max_abs_diff']:.1g} of the TF.js reference), run by "
          f"onnxruntime-node {v['onnxruntime_node']} (CPU, `intraOpNumThreads` {threads}), "
          f"tokenised by the original USE tokenizer in JavaScript (@energetic-ai/embeddings "
          f"{v['tokenizer']}), served by @modelcontextprotocol/sdk {v['sdk']} "
          f"`StreamableHTTPServerTransport` (JSON answers) on node {v['node']}, with mcpclass's "
          "routing policy and result contract (bench/peers/server.mjs --onnx). mcpclass: "
          f"`mcpclass serve -c models/mmlu14.yaml` (classifier.threads {threads}, precision auto: "
          "bfloat16 matmuls on this AVX-512 BF16 CPU).", ""]
    p, a = x["probabilities"], x["agreement"]
    md += [f"- **Same model**: on the {p['texts']} reference texts the peer's probabilities are within "
           f"{p['max_abs_diff_vs_f32']:.1g} of mcpclass's at `precision: f32` (the same float32 "
           f"arithmetic; {p['max_abs_diff_vs_served']:.1g} of mcpclass as served, bf16).",
           f"- **Agreement**: {a['same_class']} of {a['texts']} held-out MMLU-Pro questions "
           f"({100 * a['share']:.1f}%) get the same class (accuracy against the labels: mcpclass "
           f"{100 * a['accuracy_mcpclass']:.1f}%, peer {100 * a['accuracy_peer']:.1f}%)"
           + ("." if a["same_class"] == a["texts"] else
              "; differences come from bf16 vs float32 near ties and from tokenizer ties."), ""]

    def rr(r):
        return f"**{f(r['median'], 2)}** ({f(r['min'], 2)}–{f(r['max'], 2)})"
    md += [f"`tools/call classify_text` over POST /mcp, one session each, the same request bytes "
           f"(\"{x['text']}\"), wrk {x['seconds_per_run']} s per run, {x['rounds']} rounds "
           "alternating the two servers; each figure from the round with the median req/s, each "
           "ratio taken within a round (median and range of the rounds):", ""]
    rows = []
    for h in x["http"]:
        for key, name in (("mcpclass", "mcpclass"), ("onnx_peer", "TS SDK + ONNX Runtime")):
            r = h[key]
            rows.append([name, h["connections"], f(r["rps"]), f(r["p50_ms"], 2), f(r["p99_ms"], 2),
                         r["errors_all_rounds"]])
    md += table(["server", "conns", "req/s", "p50 ms", "p99 ms", "errors (all rounds)"], rows)
    md += ["Ratios: req/s > 1 and latency < 1 mean mcpclass is faster.", ""]
    md += table(["conns", "req/s: mcpclass ÷ peer", "p50: mcpclass ÷ peer", "p99: mcpclass ÷ peer"],
                [[h["connections"], rr(h["rps_ratio"]), rr(h["p50_ratio"]), rr(h["p99_ratio"])]
                 for h in x["http"]])
    idle, peak = x["rss_kib_idle"], x["rss_kib_peak_under_load"]
    md += [f"RSS idle → peak under load: mcpclass {f(idle['mcpclass'])} → {f(peak['mcpclass'])} KiB, "
           f"peer {f(idle['onnx_peer'])} → {f(peak['onnx_peer'])} KiB.", ""]
    fw = x["forward"]
    if "skipped" in fw:
        md += [f"Encoder forward: skipped ({fw['skipped']}).", ""]
        return md
    md += [f"The encoder's forward pass alone, batch 1, {fw['texts']} held-out questions "
           f"({fw['mean_tokens']} tokens on average) × {fw['repeat']}, the same token ids on both "
           f"sides, {threads} thread(s), {len(fw['rounds']['ort'])} rounds alternating (median "
           "round; ratios per round): `await session.run()` in Node "
           "(bench/peers/encoder_forward.mjs) against `encode_tokens` of the native encoder "
           "(bench/learned/bench_encoder_forward.cpp), at the served precision and at float32 "
           "(ONNX Runtime's arithmetic).", ""]
    med = fw["median"]
    md += table(["engine", "mean µs", "p50 µs", "p99 µs", "CPU µs per call"],
                [[name, f(med[k]["mean_us"]), f(med[k]["p50_us"]), f(med[k]["p99_us"]),
                  f(med[k].get("calling_thread_cpu_us_per_call", med[k].get("process_cpu_us_per_call")))]
                 for k, name in (("ort", "ONNX Runtime (onnxruntime-node, float32)"),
                                 ("native", "native, precision auto (bf16 here)"),
                                 ("native_f32", "native, float32"))])
    md += [f"native ÷ ONNX Runtime, mean time per forward: {rr(fw['native_vs_ort_mean'])} at the "
           f"served precision, {rr(fw['native_f32_vs_ort_mean'])} at float32 (p50: "
           f"{rr(fw['native_vs_ort_p50'])}, {rr(fw['native_f32_vs_ort_p50'])}). CPU µs: the native "
           "harness counts its calling thread (oneDNN runs on it at 1 thread), the Node harness its "
           "whole process.", ""]
    c1 = next((h for h in x["http"] if h["connections"] == 1), None)
    c32 = next((h for h in x["http"] if h["connections"] == 32), None)
    md += ["Goals of issue 16 for this section:", ""]
    md += table(["figure", "measured", "goal"], [
        ["learned default over HTTP ÷ TS SDK + ONNX Runtime peer, c1 req/s",
         f(c1["rps_ratio"]["median"], 2) if c1 else "—", "≥ 1.5"],
        ["learned default over HTTP ÷ TS SDK + ONNX Runtime peer, c32 req/s",
         f(c32["rps_ratio"]["median"], 2) if c32 else "—", "≥ 2"],
        ["encoder forward time, native ÷ ONNX Runtime, same threads (served precision)",
         f(fw["native_vs_ort_mean"]["median"], 2), "≤ 0.8"],
        ["the same at float32 on both sides", f(fw["native_f32_vs_ort_mean"]["median"], 2), "—"],
        ["classes agreeing on held-out questions", f"{100 * a['share']:.1f}%", "≥ 97%"]])
    return md


def render_profile(pr):
    """Where a request's CPU goes (profile.json, bench/profile_http.py)."""
    x = pr["figures"]
    t = x["targets"]
    names = {"mcpclass_json": "mcpclass POST /mcp → JSON", "mcpclass_router": "mcpclass POST /mcp/tools/call",
             "bare_beast": "bare Beast, fixed answer"}
    groups = list(t["mcpclass_json"]["groups_us_per_request"])
    md = ["## Profile: where a request's CPU goes", "",
          f"{pr['date']}, `bench/profile_http.py` (the `profile` section of bench/run.sh): wrk at "
          f"{x['connections']} keep-alive connections for {x['seconds']} s per target and round "
          f"({x.get('rounds', 1)} rounds; each row is its round with the median CPU per request) while `perf record` "
          f"samples the server at {x['frequency_hz']} Hz ({x['perf']}). CPU per request = the server "
          "process's utime + stime over the run ÷ requests answered, split by perf's self-time "
          "share of each shared object (Release build without frame pointers: self time only).", ""]
    md += table(["target", "req/s", "CPU µs/request"] + groups,
                [[names.get(k, k), f(v["rps"]), f(v["cpu_us_per_request"], 1)] +
                 [f(v["groups_us_per_request"][g], 1) for g in groups] for k, v in t.items()])
    extra = t["mcpclass_json"]["cpu_us_per_request"] - t["bare_beast"]["cpu_us_per_request"]
    parts = sorted(((t["mcpclass_json"]["groups_us_per_request"][g] -
                     t["bare_beast"]["groups_us_per_request"][g], g) for g in groups), reverse=True)
    md += ["", f"mcpclass's JSON path spends {f(extra, 1)} µs of CPU per request more than bare Beast: "
           + ", ".join(f"{g} {d:+.1f}" for d, g in parts) + ".", "",
           "Top symbols by self time, mcpclass POST /mcp → JSON:", ""]
    md += table(["% of samples", "symbol"],
                [[f(y["percent"], 2), "`" + y["symbol"][:100] + "`"]
                 for y in t["mcpclass_json"]["top_symbols"][:15]])
    return md + [""]


def render_goals(r):
    """Issue 16's goals, each with today's figure from the sections below ("—": not in this run)."""
    rows = []

    def goal(name, value, target, met, digits=2):
        rows.append([name, "—" if value is None else f(value, digits), target,
                     "—" if value is None or met is None else ("met" if met(value) else "not met")])

    h = r.get("http")
    if h:
        ratio = {x["connections"]: x for x in h["ratios"]}
        run = {(x["key"], x["connections"]): x for x in h["runs"]}
        med = lambda c, key: ratio[c][key]["median"] if c in ratio else None  # noqa: E731
        goal("`classify_text` over /mcp (JSON), c50 ÷ nginx", med(50, "mcpclass_json_vs_nginx"), "≥ 0.8",
             lambda v: v >= 0.8)
        goal("POST /mcp/tools/call, c50 ÷ nginx", med(50, "mcpclass_router_vs_nginx"), "≥ 0.9",
             lambda v: v >= 0.9)
        goal("/mcp (JSON), c500 ÷ nginx", med(500, "mcpclass_json_vs_nginx"), "≥ 0.7", lambda v: v >= 0.7)
        sse, ngx = run.get(("mcpclass_sse", 50)), run.get(("nginx", 50))
        goal("/mcp answered as SSE, c50 ÷ nginx (median runs)",
             sse["rps"] / ngx["rps"] if sse and ngx else None, "≥ 0.6", lambda v: v >= 0.6)
        js = run.get(("mcpclass_json", 50))
        goal("p99 at c50 ÷ nginx's p99 (median runs)", js["p99_ms"] / ngx["p99_ms"] if js and ngx else None,
             "≤ 1.0", lambda v: v <= 1.0)
        goal("for scale: bare Beast ÷ nginx, c50 (the same acceptor and threads, fixed bytes)",
             med(50, "bare_beast_vs_nginx"), "—", None)
    cases = {c["name"]: c for c in r.get("inprocess", {}).get("cases", [])}
    if "session_tools_call" in cases:
        c = cases["session_tools_call"]
        goal("`Session::handle` of a `tools/call`, µs", c["median_ns"] / 1000, "≤ 2", lambda v: v <= 2, 1)
        goal("… allocations per call", c["allocations_per_call"], "≤ 30", lambda v: v <= 30, 0)
    if "rule_classify_40" in cases:
        c = cases["rule_classify_40"]
        goal("rule classify, 40-character query, µs", c["median_ns"] / 1000, "≤ 1", lambda v: v <= 1, 1)
        goal("… allocations per call", c["allocations_per_call"], "≤ 5", lambda v: v <= 5, 0)
    if "rule_classify" in cases:
        c = cases["rule_classify"]
        goal("for scale: rule classify, the 91-character query that matches patterns, µs",
             c["median_ns"] / 1000, "—", None, 1)
        goal("… allocations per call", c["allocations_per_call"], "—", None, 0)
    if "stdio" in r:
        goal("stdio round trips ÷ echo floor", r["stdio"]["round_trips_vs_echo_floor"], "≥ 0.8",
             lambda v: v >= 0.8)
    o = r.get("onnx", {}).get("figures")
    if o:
        c = {x["connections"]: x for x in o["http"]}
        if 1 in c and 32 in c:
            goal("learned default over HTTP, c32 ÷ c1 throughput", c[32]["mcpclass"]["rps"] / c[1]["mcpclass"]["rps"],
                 "≥ 5", lambda v: v >= 5)
            goal("learned default over HTTP ÷ TS SDK + ONNX Runtime peer, c1", c[1]["rps_ratio"]["median"], "≥ 1.5",
                 lambda v: v >= 1.5)
            goal("… c32", c[32]["rps_ratio"]["median"], "≥ 2", lambda v: v >= 2)
        goal("encoder forward, native ÷ ONNX Runtime, same threads",
             o["forward"]["native_vs_ort_mean"]["median"], "≤ 0.8", lambda v: v <= 0.8)
    if not rows:
        return []
    return ["## Issue 16 goals: today's figures", "",
            "From the sections below (each its own run; the HTTP and in-process rows come from the "
            "full `bench/run.sh` run dated at the top). What stands in the way of the HTTP and "
            "in-process rows: the profile section (where a request's CPU goes); of c32 ÷ c1: "
            "`bench_encoder_forward` with BATCH (one forward pass of 16–64 texts costs as much per "
            "text as one of a single text on this CPU, so batching cannot raise throughput).", ""] + table(["goal", "today", "target", ""], rows)


def render(r):
    md = ["# mcpclass benchmark report", "",
          f"{r['date']} · {r['machine']} · git {r['git']} · `{r['command']}` "
          f"({f(r.get('total_seconds'))} s)", "",
          "Absolute numbers depend on what else this shared machine was doing; compare the "
          "ratios, which are measured against baselines in the same run.", ""]
    md += render_goals(r)
    if "http" in r:
        md += render_http(r["http"])
    if "stdio" in r:
        md += render_stdio(r["stdio"])
    if "inprocess" in r:
        md += render_inprocess(r)
    if "onnx" in r:
        md += render_onnx(r["onnx"])
    if "profile" in r:
        md += render_profile(r["profile"])
    if "footprint" in r:
        md += render_footprint(r["footprint"], r.get("http"))
    if "scaling" in r:
        md += render_scaling(r["scaling"])
    if "soak" in r:
        md += render_soak(r["soak"])
    if "fuzz_long" in r:
        md += render_fuzz(r["fuzz_long"])
    if "cache" in r:
        md += [cache_zipf.markdown(r["cache"]["figures"]),
               f"(bench/cache_zipf.py --json bench/results/cache.json, {r['cache']['date']})", ""]
    return "\n".join(md) + "\n"


def write(out):
    """Re-renders out/report.md from out/report.json plus the long runs' JSON beside it."""
    with open(os.path.join(out, "report.json")) as f:
        r = json.load(f)
    for key, name in (("soak", "soak.json"), ("fuzz_long", "fuzz-long.json"),
                      ("cache", "cache.json"), ("onnx", "onnx.json"),
                      ("profile", "profile.json")):
        path = os.path.join(out, name)
        if os.path.exists(path):
            with open(path) as f:
                r[key] = {"file": name, "figures": json.load(f),
                          "date": datetime.datetime.fromtimestamp(
                              os.path.getmtime(path), datetime.timezone.utc).isoformat(timespec="seconds")}
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(r, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(render(r))


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else
          os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
