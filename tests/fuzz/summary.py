#!/usr/bin/env python3
"""Executions, speed, coverage and crashes per fuzz target from the logs of tests/fuzz/run.sh
(build-fuzz/<target>.log) and its crash artifacts, as JSON — for the benchmark report.
A run still going is read from its last status line; one stopped early (SIGINT) says so.
usage: tests/fuzz/summary.py [build-fuzz] > fuzz-long.json"""
import glob
import json
import os
import re
import sys

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build-fuzz")
out = {}
for log in sorted(glob.glob(os.path.join(build, "fuzz_*.log"))):
    target = os.path.basename(log)[:-4]
    text = open(log, errors="replace").read()
    stats = dict(re.findall(r"^stat::(\w+):\s+(\d+)", text, re.M))
    status = re.findall(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/\S+.*?exec/s: (\d+)", text, re.M)
    last = status[-1] if status else None
    executions = int(stats.get("number_of_executed_units", last[0] if last else 0))
    crashes = sorted(os.path.basename(p) for p in glob.glob(os.path.join(build, "artifacts", target + "-*")))
    out[target] = {
        "executions": executions,
        "exec_per_s": int(stats.get("average_exec_per_sec", last[4] if last else 0)),
        "coverage": int(last[1]) if last else None,
        "corpus": int(last[3]) if last else None,
        "finished": "number_of_executed_units" in stats and "run interrupted" not in text,
        "interrupted": "run interrupted" in text,
        "crashes": len(crashes),
        "crash_files": crashes,
        "sanitizer_report": bool(re.search(r"ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:", text)),
    }
json.dump(out, sys.stdout, indent=2)
print()
