"""Round trips through a pipe: a stdio MCP server is initialized, then sent one tools/call at a
time (the next only after the answer), for a fixed time; also a pipelined burst (many requests
written before reading). Also spawn-to-first-answer time."""
import json
import statistics
import subprocess
import time

from . import procs

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
WINDOW = 32


def line(message):
    return (json.dumps(message) + "\n").encode()


class StdioServer:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.send(procs.initialize_request(0))
        self.receive()
        self.send(INITIALIZED)

    def send(self, message):
        self.proc.stdin.write(line(message))
        self.proc.stdin.flush()

    def receive(self):
        raw = self.proc.stdout.readline()
        if not raw:
            raise RuntimeError("stdio server closed its output")
        return json.loads(raw)

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def round_trips(argv, text, seconds, burst=2000):
    s = StdioServer(argv)
    try:
        rid = 1
        for _ in range(200):  # warm-up
            s.send(procs.tools_call(rid, text))
            assert "result" in s.receive()
            rid += 1
        lat = []
        end = time.perf_counter() + seconds
        while True:
            t0 = time.perf_counter()
            if t0 >= end:
                break
            s.send(procs.tools_call(rid, text))
            answer = s.receive()
            lat.append(time.perf_counter() - t0)
            if answer.get("id") != rid or "result" not in answer:
                raise RuntimeError(f"bad answer: {answer}")
            rid += 1
        total = sum(lat)
        # Pipelined: windows of WINDOW requests written at once, then their answers read (the
        # server allows 64 requests in flight per session; 32 x ~250 bytes fit the pipe buffers).
        t0 = time.perf_counter()
        for start in range(0, burst, WINDOW):
            n = min(WINDOW, burst - start)
            s.proc.stdin.write(b"".join(line(procs.tools_call(rid + start + i, text)) for i in range(n)))
            s.proc.stdin.flush()
            for _ in range(n):
                answer = s.receive()
                if "result" not in answer:
                    raise RuntimeError(f"bad pipelined answer: {answer}")
        pipelined = burst / (time.perf_counter() - t0)
        lat.sort()
        return {"round_trips": len(lat), "round_trips_per_s": len(lat) / total,
                "p50_us": lat[len(lat) // 2] * 1e6, "p99_us": lat[len(lat) * 99 // 100] * 1e6,
                "pipelined_per_s": pipelined, "rss_kib_after": procs.rss_kib(s.proc.pid)}
    finally:
        s.close()


def first_answer_ms(argv, text, runs):
    """Median wall time from spawn to the tools/call answer (initialize, initialized and the call
    are written at once)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        p.stdin.write(line(procs.initialize_request(0)) + line(INITIALIZED) +
                      line(procs.tools_call(1, text)))
        p.stdin.flush()
        got = 0
        while got < 2:
            if not p.stdout.readline():
                break
            got += 1
        times.append((time.perf_counter() - t0) * 1000.0)
        p.stdin.close()
        p.wait()
        if got < 2 and argv[0] != "cat":
            raise RuntimeError(f"{argv} gave no answer")
    return statistics.median(times)


def idle_and_loaded_rss(argv, text, requests=10000):
    """VmRSS after initialize, and after `requests` tools/call in windows of WINDOW."""
    s = StdioServer(argv)
    try:
        time.sleep(0.3)
        idle = procs.rss_kib(s.proc.pid)
        rid = 1
        for _ in range(requests // WINDOW):
            s.proc.stdin.write(b"".join(line(procs.tools_call(rid + i, text)) for i in range(WINDOW)))
            s.proc.stdin.flush()
            for _ in range(WINDOW):
                if "result" not in s.receive():
                    raise RuntimeError(f"{argv}: a request failed")
            rid += WINDOW
        return idle, procs.rss_kib(s.proc.pid)
    finally:
        s.close()
