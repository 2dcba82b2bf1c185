"""The result cache against texts chosen to be large (issue 28, item 8). Run with the rest of
tests/hostile by ctest `hostile.process`; standard library only.

- 1,500 distinct texts of 10,000 four-byte code points (the longest max_text_length allows, 40 KB
  each) with `server.cache: {entries: 5000}`: RSS grows less than 32 MiB, because the default
  `max_bytes` bounds the cache, and /metrics counts the evictions.
"""
import json

from test_hostile import BIN, MIB, procs, rules_server  # noqa: F401  (BIN: MCPCLASS_BIN)

BIG = "\U0001F600" * 9_990  # plus a ten-digit prefix: 10,000 code points, 40 KB of UTF-8


def classify(port, text):
    body = json.dumps({"name": "classify_text", "arguments": {"text": text}},
                      ensure_ascii=False).encode()
    status, _, answer = procs.http_request(port, "POST", "/mcp/tools/call", body, timeout=60)
    assert status == 200, answer[:200]


def test_large_texts_cannot_pin_memory_in_the_result_cache(tmp_path):
    server = rules_server(tmp_path, server_settings={"cache": {"entries": 5000}})
    try:
        for i in range(50):  # the allocator's working set for 40 KB requests
            classify(server.port, f"{i:010d}" + BIG)
        before = procs.rss_kib(server.pid)
        for i in range(50, 1550):
            classify(server.port, f"{i:010d}" + BIG)
        grown_mib = (procs.rss_kib(server.pid) - before) / 1024
        # Without max_bytes: 5,000 entries of ~43 KB could take 209 MiB; here 1,500 take 60 MiB.
        assert grown_mib < 32, f"RSS grew {grown_mib:.0f} MiB over 1,500 cached 40 KB texts"
        print(f"RSS +{grown_mib:.1f} MiB over 1,500 texts of 40 KB; "
              f"cache {procs.metric(server.port, 'mcpclass_cache_bytes') / MIB:.1f} MiB, "
              f"{procs.metric(server.port, 'mcpclass_cache_entries'):.0f} entries, "
              f"{procs.metric(server.port, 'mcpclass_cache_evictions_total'):.0f} evictions")
        assert procs.metric(server.port, "mcpclass_cache_evictions_total") > 0
        assert procs.metric(server.port, "mcpclass_cache_bytes") <= 16 * MIB
        assert server.alive()
    finally:
        server.stop()
