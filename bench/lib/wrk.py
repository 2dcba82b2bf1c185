"""wrk runs with a Lua script that sends distinct JSON-RPC ids (a session may not reuse an id
while it is in flight), checks every answer and reports req/s, p50, p99 and error counts as one
JSON line from done()."""
import json
import os
import subprocess
import tempfile

LUA = r"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
%(headers)s
local prefix = [==[%(prefix)s]==]
local suffix = [==[%(suffix)s]==]
local expect = [==[%(expect)s]==]
%(prelude)s
local threads = {}
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end
function init(args)
  counter = 0
  bad = 0
  sample = ""
  %(init)s
end
%(request)s
function response(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then
    bad = bad + 1
    if sample == "" then
      sample = status .. " " .. (string.gsub(string.sub(body, 1, 200), "[^%%w%%p ]", "?"))
    end
  end
end
function done(summary, latency, requests)
  local bad_total, sample_any = 0, ""
  for _, t in ipairs(threads) do
    bad_total = bad_total + t:get("bad")
    if sample_any == "" then sample_any = t:get("sample") end
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"max_us":%%d,' ..
    '"bad_answers":%%d,"connect_errors":%%d,"read_errors":%%d,"write_errors":%%d,' ..
    '"status_errors":%%d,"timeouts":%%d,"sample":%%q}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, bad_total, e.connect, e.read, e.write, e.status, e.timeout, sample_any))
end
"""


REQUEST = r"""function request()
  counter = counter + 1
  if suffix == "" then return wrk.format(nil, nil, nil, prefix) end
  return wrk.format(nil, nil, nil, prefix .. (tid * 1000000000 + counter) .. suffix)
end"""


def lua_script(headers, body, id_marker=None, expect='"result"', prelude="", init="",
               request=REQUEST):
    """`body` is sent as is, or with `id_marker` replaced by a distinct integer per request.
    A caller that draws its own bodies passes `request` (a Lua request() function), with the
    locals it needs in `prelude` and per-thread setup in `init` (`tid` is the thread's index)."""
    if id_marker:
        prefix, suffix = body.split(id_marker, 1)
    else:
        prefix, suffix = body, ""
    hdrs = "\n".join(f'wrk.headers["{k}"] = [==[{v}]==]' for k, v in headers.items())
    return LUA % {"headers": hdrs, "prefix": prefix, "suffix": suffix, "expect": expect,
                  "prelude": prelude, "init": init, "request": request}


def run(url, script, connections, seconds, threads=None, timeout_s=10):
    """Runs wrk; returns dict(rps, p50_ms, p99_ms, max_ms, requests, errors, bad_answers...)."""
    threads = threads or (1 if connections == 1 else 2)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
        path = f.name
    try:
        out = subprocess.run(
            ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", f"--timeout={timeout_s}s",
             "-s", path, url], capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(path)
    line = next((l for l in out.stdout.splitlines() if l.startswith("WRKJSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk failed ({out.returncode}): {out.stdout}\n{out.stderr}")
    r = json.loads(line[8:])  # the sample holds printable ASCII only: %q is valid JSON
    secs = r["duration_us"] / 1e6
    errors = r["connect_errors"] + r["read_errors"] + r["write_errors"] + r["timeouts"]
    return {
        "connections": connections,
        "threads": threads,
        "seconds": round(secs, 2),
        "requests": r["requests"],
        "rps": r["requests"] / secs if secs > 0 else 0.0,
        "p50_ms": r["p50_us"] / 1000.0,
        "p99_ms": r["p99_us"] / 1000.0,
        "max_ms": r["max_us"] / 1000.0,
        "non_2xx": r["status_errors"],
        "socket_errors": errors,
        "bad_answers": r["bad_answers"],
        "bad_sample": r["sample"],
    }
