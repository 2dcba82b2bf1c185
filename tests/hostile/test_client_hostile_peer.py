"""`mcpclass call` against a hostile MCP server (issue 28): the answer to its first POST is
chunked, then a chunk-size line (or a trailer section) that never ends. The client stops at
max_header_bytes with a message and a failure exit, its peak RSS within 32 MiB of a call that
fails at once (a closed port)."""
import os
import socket
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "route"))
from raw_upstream import ENDLESS, RawUpstream, send_endless  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(ROOT, "build", "mcpclass")


def call_peak_rss_kib(url):
    """Runs `mcpclass call <url> --list-tools`; returns (exit status, stderr, peak RSS KiB)."""
    proc = subprocess.Popen([BIN, "call", url, "--list-tools", "--transport", "streamable-http",
                             "--timeout", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, stderr, usage.ru_maxrss


@pytest.mark.parametrize("kind", sorted(ENDLESS))
def test_call_stops_an_endless_chunk_line_or_trailer(kind):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed = s.getsockname()[1]
    s.close()
    code, _, baseline = call_peak_rss_kib(f"http://127.0.0.1:{closed}/mcp")
    assert code != 0

    head, filler = ENDLESS[kind]
    up = RawUpstream(lambda sock, index: send_endless(sock, head, filler) and False).start()
    try:
        code, stderr, peak = call_peak_rss_kib(f"http://127.0.0.1:{up.port}/mcp")
    finally:
        up.stop()
    assert code != 0
    assert "max_header_bytes" in stderr, stderr
    grown_mib = (peak - baseline) / 1024
    assert grown_mib < 32, f"mcpclass call peaked {grown_mib:.0f} MiB above a failing call"
